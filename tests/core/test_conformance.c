/* SPDX-License-Identifier: MIT */
/**
 * @file test_conformance.c
 * Code and comment agree for include/homa/engine.h and include/homa/wire.h:
 * the test reads both headers (tests/api/doc_codes.c), drives every
 * HOMA_API function into each error its comment lists and into its
 * documented answer to misuse (NULL arguments, out-of-range values,
 * calls in the wrong state, buffers too small), and fails if a call
 * returns something its comment does not say, a documented code is not
 * provoked here or accounted for, or a function has no case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doc_codes.h"
#include "harness.h"
#include "homa/engine.h"
#include "homa/wire.h"

/* ---- helpers ---- */

/** Allocation hooks that fail once @left allocations were made. */
static int alloc_left;

/** failing_alloc() - malloc() while alloc_left lasts, then NULL. */
static void *failing_alloc(void *ctx, size_t size)
{
	(void)ctx;
	return alloc_left-- > 0 ? malloc(size) : NULL;
}

/** failing_free() - free(). */
static void failing_free(void *ctx, void *ptr, size_t size)
{
	(void)ctx;
	(void)size;
	free(ptr);
}

static const struct homa_alloc failing = {failing_alloc, failing_free, NULL};

/** new_engine() - An engine on 10.0.0.1:4000 with settings @s (NULL: defaults). */
static homa_engine *new_engine(const struct homa_settings *s)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	homa_engine *e = NULL;

	assert_int_equal(homa_engine_new(&e, s, &a, 4000, NULL, 0), 0);
	return e;
}

/** send1() - Send a @len-byte request from @e to 10.0.0.2:4001. Return: its result. */
static int send1(homa_engine *e, size_t len, uint64_t *id)
{
	static uint8_t buf[4096];
	struct homa_iov iov = {buf, len};
	homa_addr dst = homa_addr_ipv4(0x0a000002);

	return homa_engine_send_request(e, &dst, 4001, &iov, 1, 0, 0, id);
}

/**
 * served() - A pair whose server holds one delivered request (its id in
 * *@id, its message released) and no other.
 */
static void served(struct th_pair *p, const struct homa_settings *s, uint64_t *id)
{
	struct homa_event ev;
	uint64_t cid;

	th_pair_init(p, s);
	assert_int_equal(send1(p->e[0], 100, &cid), 0);
	th_pair_run(p, 1000000);
	assert_int_equal(homa_engine_next_event(p->e[1], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	homa_engine_msg_release(p->e[1], ev.msg);
	*id = ev.id;
}

/* ---- addresses ---- */

static int addr_ipv4(void)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);

	return homa_addr_is_ipv4(&a) && homa_addr_get_ipv4(&a) == 0x7f000001 ? 0 : 1;
}

static int addr_is_ipv4_null(void) { return homa_addr_is_ipv4(NULL) ? 1 : 0; }
static int addr_get_ipv4_null(void) { return (int)homa_addr_get_ipv4(NULL); }

static int addr_equal_null(void)
{
	homa_addr a = homa_addr_ipv4(1);

	return homa_addr_equal(NULL, &a) || homa_addr_equal(&a, NULL) ||
	       homa_addr_equal(NULL, NULL);
}

/** addr_format_misuse() - NULL address: ""; a short buffer: cut, NUL-terminated. */
static int addr_format_misuse(void)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	char buf[8] = "xxxxxxx";  /* not empty: a NULL address must write "" over it */

	if (homa_addr_format(NULL, buf, sizeof(buf)) != buf || buf[0])
		return 1;
	if (homa_addr_format(&a, NULL, 46) != NULL)
		return 2;
	homa_addr_format(&a, buf, 5);
	return strcmp(buf, "10.0") ? 3 : 0;
}

/* ---- creation and settings ---- */

static int new_null(void)
{
	homa_addr a = homa_addr_ipv4(1);

	return homa_engine_new(NULL, NULL, &a, 1, NULL, 0);
}

static int new_port0(void)
{
	homa_addr a = homa_addr_ipv4(1);
	homa_engine *e;

	return homa_engine_new(&e, NULL, &a, 0, NULL, 0);
}

static int new_bad_settings(void)
{
	struct homa_settings s;
	homa_addr a = homa_addr_ipv4(1);
	homa_engine *e;

	homa_settings_default(&s);
	s.mtu = 1;
	return homa_engine_new(&e, &s, &a, 1, NULL, 0);
}

static int new_nomem(void)
{
	homa_addr a = homa_addr_ipv4(1);
	homa_engine *e;

	alloc_left = 2;
	return homa_engine_new(&e, NULL, &a, 1, &failing, 0);
}

static int hash_key_null(void)
{
	homa_engine *e = new_engine(NULL);
	int r = homa_engine_set_hash_key(e, NULL);

	homa_engine_free(e);
	return r ? r : homa_engine_set_hash_key(NULL, (const uint8_t *)"0123456789abcdef");
}

static int hash_key_late(void)
{
	homa_engine *e = new_engine(NULL);
	uint64_t id;
	int r;

	assert_int_equal(send1(e, 10, &id), 0);
	r = homa_engine_set_hash_key(e, (const uint8_t *)"0123456789abcdef");
	homa_engine_free(e);
	return r;
}

static int free_null(void)
{
	homa_engine_free(NULL);
	return 0;
}

static int set_settings_bad(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_settings s;
	int r;

	homa_settings_default(&s);
	s.max_rpcs = 0;
	r = homa_engine_set_settings(e, &s);
	if (r == HOMA_EINVAL && homa_engine_settings(e)->max_rpcs == 0)
		r = 1;  /* the old ones must stay */
	homa_engine_free(e);
	return r;
}

static int set_settings_null(void) { return homa_engine_set_settings(NULL, NULL); }
static int settings_null(void) { return homa_engine_settings(NULL) != NULL; }
static int rx_priority_null(void) { return homa_engine_rx_priority(NULL, 100) != 0; }

static int set_hooks_null(void)
{
	homa_engine_set_hooks(NULL, NULL);
	return 0;
}

static int set_ack_pool_null(void)
{
	homa_engine_set_ack_pool(NULL, NULL);
	return 0;
}

/** ack_pool_misuse() - A NULL engine is ignored; a pool without take is no pool. */
static int ack_pool_misuse(void)
{
	struct homa_ack_pool half = {NULL, NULL, NULL};
	homa_engine *e = new_engine(NULL);

	homa_engine_set_ack_pool(NULL, &half);
	homa_engine_set_ack_pool(e, &half);
	homa_engine_set_ack_pool(e, NULL);
	homa_engine_free(e);
	return 0;
}

static int set_server_null(void)
{
	homa_engine_set_server(NULL, true);
	return 0;
}

static int rx_alloc_bad(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_alloc a = {failing_alloc, NULL, NULL};
	int r = homa_engine_set_rx_alloc(e, &a);

	homa_engine_free(e);
	return r;
}

static int port_null(void) { return homa_engine_port(NULL); }

/* ---- sending ---- */

static int send_null(void)
{
	homa_engine *e = new_engine(NULL);
	uint64_t id;
	int r = homa_engine_send_request(e, NULL, 4001, NULL, 0, 0, 0, &id);

	homa_engine_free(e);
	return r;
}

static int send_wrap(void)
{
	static uint8_t b[2];
	struct homa_iov iov[2] = {{b, SIZE_MAX}, {b, 2}};
	homa_addr dst = homa_addr_ipv4(2);
	homa_engine *e = new_engine(NULL);
	uint64_t id;
	int r = homa_engine_send_request(e, &dst, 1, iov, 2, 0, 0, &id);

	homa_engine_free(e);
	return r;
}

static int send_too_long(void)
{
	struct homa_settings s;
	homa_engine *e;
	uint64_t id;
	int r;

	homa_settings_default(&s);
	s.max_message = 1000;
	e = new_engine(&s);
	r = send1(e, 1001, &id);
	homa_engine_free(e);
	return r;
}

static int send_full(void)
{
	struct homa_settings s;
	homa_engine *e;
	uint64_t id;
	int r;

	homa_settings_default(&s);
	s.max_tx_buffered = 3000;
	e = new_engine(&s);
	assert_int_equal(send1(e, 2000, &id), 0);
	r = send1(e, 2000, &id);
	homa_engine_free(e);
	return r;
}

static int send_nomem(void)
{
	homa_addr a = homa_addr_ipv4(1);
	homa_engine *e;
	uint64_t id;
	int r = HOMA_ENOMEM;

	/* find how many allocations creation takes, then fail the send's */
	for (int n = 1; n < 64 && r == HOMA_ENOMEM; n++) {
		alloc_left = n;
		if (homa_engine_new(&e, NULL, &a, 4000, &failing, 0))
			continue;
		alloc_left = 0;
		r = send1(e, 100, &id);
		homa_engine_free(e);
		break;
	}
	return r;
}

static int send_shut(void)
{
	homa_engine *e = new_engine(NULL);
	uint64_t id;
	int r;

	homa_engine_shutdown(e, 0);
	r = send1(e, 10, &id);
	homa_engine_free(e);
	return r;
}

/** drop_server() - Filter: the server's packets never arrive. */
static bool drop_server(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	(void)ctx, (void)pkt, (void)len, (void)n;
	return from == 1;
}

/** send_peer_dead() - After an RPC to a silent port timed out, the next one is refused. */
static int send_peer_dead(void)
{
	struct homa_settings s;
	struct homa_event ev;
	struct th_pair p;
	uint64_t id;
	int r;

	homa_settings_default(&s);
	s.resend_ticks = 2;
	s.timeout_ticks = 6;
	th_pair_init(&p, &s);
	p.filter = drop_server;
	assert_int_equal(send1(p.e[0], 100, &id), 0);
	for (int t = 0; t < 100 && !homa_engine_next_event(p.e[0], &ev); t++)
		th_pair_run(&p, s.tick_ns);  /* no further than the tick of the timeout */
	assert_int_equal(ev.error, HOMA_ETIMEDOUT);
	r = send1(p.e[0], 100, &id);
	th_pair_free(&p);
	return r;
}

static int send_ref_zero_port(void)
{
	static uint8_t b[4];
	struct homa_iov iov = {b, 4};
	homa_addr dst = homa_addr_ipv4(2);
	homa_engine *e = new_engine(NULL);
	uint64_t id;
	int r = homa_engine_send_request_ref(e, &dst, 0, &iov, 1, 0, 0, &id);

	homa_engine_free(e);
	return r;
}

static int iov_length_wrap(void)
{
	static uint8_t b[2];
	struct homa_iov iov[2] = {{b, SIZE_MAX}, {b, 2}};
	uint64_t len;

	return homa_iov_length(iov, 2, &len);
}

static int iov_length_null_base(void)
{
	struct homa_iov iov = {NULL, 3};
	uint64_t len;

	return homa_iov_length(&iov, 1, &len);
}

static int build_null(void)
{
	struct homa_iov iov = {"x", 1};

	return homa_msg_build(NULL, &iov, 1, NULL);
}

/** build_huge() - 2^32 bytes: refused before a byte is read. */
static int build_huge(void)
{
	struct homa_iov iov = {"x", (size_t)1 << 32};
	homa_msg *m;

	return homa_msg_build(NULL, &iov, 1, &m);
}

static int build_nomem(void)
{
	struct homa_iov iov = {"x", 1};
	homa_msg *m;

	alloc_left = 0;
	return homa_msg_build(&failing, &iov, 1, &m);
}

static int done_calls;

/** count_done() - A done callback that counts its calls. */
static void count_done(void *ctx)
{
	(void)ctx;
	done_calls++;
}

/** build_ref_huge() - Refused, and @done is not called. */
static int build_ref_huge(void)
{
	struct homa_iov iov = {"x", (size_t)1 << 32};
	homa_msg *m;
	int r;

	done_calls = 0;
	r = homa_msg_build_ref(NULL, &iov, 1, count_done, NULL, &m);
	return done_calls ? 1 : r;
}

static int discard_null(void)
{
	homa_msg_discard(NULL, NULL);
	return 0;
}

static int send_msg_null(void)
{
	homa_engine *e = new_engine(NULL);
	homa_addr dst = homa_addr_ipv4(2);
	uint64_t id;
	int r = homa_engine_send_request_msg(e, &dst, 1, NULL, 0, 0, &id);

	homa_engine_free(e);
	return r;
}

/** reply_msg_unknown() - Refused: the caller still owns the message. */
static int reply_msg_unknown(void)
{
	struct homa_iov iov = {"x", 1};
	homa_engine *e = new_engine(NULL);
	homa_msg *m;
	int r;

	assert_int_equal(homa_msg_build(NULL, &iov, 1, &m), 0);
	r = homa_engine_send_reply_msg(e, 7, m, 0);
	homa_msg_discard(NULL, m);
	homa_engine_free(e);
	return r;
}

static int reply_msg_null(void) { return homa_engine_send_reply_msg(NULL, 1, NULL, 0); }

static int reply_unknown(void)
{
	struct homa_iov iov = {"x", 1};
	homa_engine *e = new_engine(NULL);
	int r = homa_engine_send_reply(e, 7, &iov, 1, 0);

	homa_engine_free(e);
	return r;
}

/** reply_case() - Reply @len bytes (@iovcnt pieces) twice if @twice, with @s. */
static int reply_case(const struct homa_settings *s, size_t len, int iovcnt, bool twice)
{
	static uint8_t b[4096];
	struct homa_iov iov = {b, len};
	struct th_pair p;
	uint64_t id;
	int r;

	served(&p, s, &id);
	r = homa_engine_send_reply(p.e[1], id, &iov, iovcnt, 0);
	if (twice && r == 0)
		r = homa_engine_send_reply(p.e[1], id, &iov, iovcnt, 0);
	th_pair_free(&p);
	return r;
}

static int reply_twice(void) { return reply_case(NULL, 10, 1, true); }
static int reply_no_iov(void) { return reply_case(NULL, 10, 0, false); }

static int reply_too_long(void)
{
	struct homa_settings s;

	homa_settings_default(&s);
	s.max_message = 1000;
	return reply_case(&s, 1001, 1, false);
}

/** reply_full() - A reply that does not fit beside a queued request. */
static int reply_full(void)
{
	static uint8_t b[4096];
	struct homa_iov iov = {b, 2000};
	struct homa_settings s;
	struct th_pair p;
	homa_addr dst = homa_addr_ipv4(0x0a000009);
	uint64_t id, other;
	int r;

	homa_settings_default(&s);
	s.max_tx_buffered = 3000;
	served(&p, &s, &id);
	assert_int_equal(homa_engine_send_request(p.e[1], &dst, 9, &iov, 1, 0, 0, &other), 0);
	r = homa_engine_send_reply(p.e[1], id, &iov, 1, 0);
	th_pair_free(&p);
	return r;
}

/** reply_nomem() - The server's allocations fail once the request is delivered. */
static int reply_nomem(void)
{
	static uint8_t b[4096];
	struct homa_iov iov = {b, 2000};
	homa_addr ca = homa_addr_ipv4(1), sa = homa_addr_ipv4(2);
	homa_engine *c, *s;
	uint8_t pkt[2048];
	struct homa_event ev;
	struct homa_tx tx;
	uint64_t id;
	int n, r;

	assert_int_equal(homa_engine_new(&c, NULL, &ca, 4000, NULL, 0), 0);
	alloc_left = 1000;
	assert_int_equal(homa_engine_new(&s, NULL, &sa, 4001, &failing, 0), 0);
	homa_engine_set_server(s, true);
	assert_int_equal(homa_engine_send_request(c, &sa, 4001, &iov, 1, 0, 0, &id), 0);
	while ((n = homa_engine_output(c, 0, pkt, sizeof(pkt), &tx)) > 0)
		homa_engine_input(s, &ca, pkt, (size_t)n, 0);
	assert_int_equal(homa_engine_next_event(s, &ev), 1);
	alloc_left = 0;
	r = homa_engine_send_reply(s, ev.id, &iov, 1, 0);
	alloc_left = 1000;
	homa_engine_msg_release(s, ev.msg);
	homa_engine_free(s);
	homa_engine_free(c);
	return r;
}

static int abort_unknown(void)
{
	homa_engine *e = new_engine(NULL);
	int r = homa_engine_abort(e, 2, 0);

	homa_engine_free(e);
	return r;
}

static int abort_null(void) { return homa_engine_abort(NULL, 2, 0); }

static int shutdown_null(void)
{
	homa_engine_shutdown(NULL, 0);
	return 0;
}

/* ---- packets in and out ---- */

static int input_null(void)
{
	homa_engine *e = new_engine(NULL);
	homa_addr a = homa_addr_ipv4(2);
	int r = homa_engine_input(e, &a, NULL, 40, 0);

	homa_engine_free(e);
	return r;
}

/** input_garbage() - Hostile bytes are dropped with a reason, never an error. */
static int input_garbage(void)
{
	homa_engine *e = new_engine(NULL);
	homa_addr a = homa_addr_ipv4(2);
	uint8_t buf[64];
	int r;

	memset(buf, 0xee, sizeof(buf));
	r = homa_engine_input(e, &a, buf, sizeof(buf), 0);
	homa_engine_free(e);
	return r == HOMA_INPUT_DROPPED + HOMA_DROP_BAD_TYPE ? 0 : 1;
}

static int lend_bad(void)
{
	struct homa_rx_lend lend = {NULL, NULL};
	homa_engine *e = new_engine(NULL);
	homa_addr a = homa_addr_ipv4(2);
	uint8_t buf[64] = {0};
	bool kept;
	int r = homa_engine_input_lend(e, &a, buf, sizeof(buf), 0, &lend, &kept);

	if (r == HOMA_EINVAL)
		r = homa_engine_input_lend(e, &a, buf, sizeof(buf), 0, NULL, NULL);
	homa_engine_free(e);
	return r;
}

static int unreach_null(void)
{
	homa_engine *e = new_engine(NULL);
	int r = homa_engine_unreachable(e, NULL, HOMA_UNREACH_PORT, NULL, 0, 0);

	homa_engine_free(e);
	return r;
}

/** unreach_forged() - A report quoting no RPC of ours ends nothing. */
static int unreach_forged(void)
{
	homa_engine *e = new_engine(NULL);
	homa_addr a = homa_addr_ipv4(2);
	uint8_t q[HOMA_COMMON_LEN];
	int r;

	memset(q, 0x5a, sizeof(q));
	r = homa_engine_unreachable(e, &a, HOMA_UNREACH_PORT, q, sizeof(q), 0);
	homa_engine_free(e);
	return r;
}

static int output_small(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_tx tx;
	uint8_t buf[16];
	uint64_t id;
	int r;

	assert_int_equal(send1(e, 100, &id), 0);
	r = homa_engine_output(e, 0, buf, sizeof(buf), &tx);
	homa_engine_free(e);
	return r;
}

static int output_null(void)
{
	homa_engine *e = new_engine(NULL);
	uint8_t buf[16];
	int r = homa_engine_output(e, 0, buf, sizeof(buf), NULL);

	homa_engine_free(e);
	return r;
}

static int output_ref_null(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_tx tx;
	uint8_t buf[2048];
	int r = homa_engine_output_ref(e, 0, buf, sizeof(buf), &tx, NULL);

	homa_engine_free(e);
	return r;
}

static int output_refs_none(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_iov ref[2];
	struct homa_tx tx;
	uint8_t buf[2048];
	int r = homa_engine_output_refs(e, 0, buf, sizeof(buf), &tx, ref, 0);

	homa_engine_free(e);
	return r;
}

static int output_sent_null(void)
{
	homa_engine_output_sent(NULL);
	return 0;
}

/* ---- timers and events ---- */

static int deadline_null(void) { return homa_engine_next_deadline(NULL) != UINT64_MAX; }
static int wake_by_null(void) { return homa_engine_wake_by(NULL) != UINT64_MAX; }
static int want_output_null(void) { return homa_engine_want_output(NULL, 0); }
static int has_output_null(void) { return homa_engine_has_output(NULL); }

static int on_timer_null(void)
{
	homa_engine_on_timer(NULL, 5);
	return 0;
}

static int next_event_null(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_event ev;
	int r = homa_engine_next_event(NULL, &ev) + homa_engine_next_event(e, NULL);

	homa_engine_free(e);
	return r;
}

/* ---- messages ---- */

static int msg_length_null(void) { return (int)homa_msg_length(NULL); }

static int msg_segment_misuse(void)
{
	struct homa_iov iov = {"abc", 3};
	const uint8_t *p = NULL;
	homa_msg *m;
	size_t n;

	assert_int_equal(homa_msg_build(NULL, &iov, 1, &m), 0);
	n = homa_msg_segment(NULL, 0, &p) + homa_msg_segment(m, 0, NULL) +
	    homa_msg_segment(m, 3, &p);
	homa_msg_discard(NULL, m);
	return (int)n;
}

static int msg_copy_misuse(void)
{
	struct homa_iov iov = {"abc", 3};
	char out[8];
	homa_msg *m;
	size_t n;

	assert_int_equal(homa_msg_build(NULL, &iov, 1, &m), 0);
	n = homa_msg_copy(NULL, 0, out, 3) + homa_msg_copy(m, 0, NULL, 3) +
	    homa_msg_copy(m, 5, out, 3);
	homa_msg_discard(NULL, m);
	return (int)n;
}

static int msg_release_null(void)
{
	homa_engine *e = new_engine(NULL);

	homa_engine_msg_release(e, NULL);
	homa_engine_msg_release(NULL, NULL);
	homa_engine_free(e);
	return 0;
}

static int msg_adopt_null(void)
{
	homa_engine *e = new_engine(NULL);

	homa_engine_msg_adopt(e, NULL);
	homa_engine_msg_adopt(NULL, NULL);
	homa_engine_free(e);
	return 0;
}

static int reserve_id_null(void) { return (int)homa_engine_reserve_id(NULL, true); }
static int replies_pending_null(void) { return (int)homa_engine_replies_pending(NULL); }

static int peer_heard_null(void)
{
	homa_engine *e = new_engine(NULL);
	homa_addr a = homa_addr_ipv4(2);
	uint64_t t;
	bool r = homa_engine_peer_heard(NULL, &a, &t) || homa_engine_peer_heard(e, NULL, &t) ||
		 homa_engine_peer_heard(e, &a, NULL);

	homa_engine_free(e);
	return r;
}

static int peer_waiting_null(void)
{
	uint32_t probes = 9;
	uint32_t n = homa_engine_peer_waiting(NULL, NULL, 1, &probes);

	return (int)(n + probes);
}

static int announce_null(void)
{
	homa_engine_announce_requests(NULL, true);
	return 0;
}

static int rx_progress_unknown(void)
{
	homa_engine *e = new_engine(NULL);
	int64_t r = homa_engine_rx_progress(e, 3, NULL);

	homa_engine_free(e);
	return (int)r;
}

static int defer_copies_bad(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_rx_copy c[1];
	int r = homa_engine_defer_copies(e, c, 0, NULL);

	homa_engine_free(e);
	return r;
}

static int copies_done_null(void)
{
	struct homa_rx_copy c[1] = {{0}};

	homa_engine_copies_done(NULL, c, 1);
	return 0;
}

static int rpc_peer_unknown(void) { return homa_engine_rpc_peer(NULL, 2, NULL, NULL); }

static int count_drop_range(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_stats st;

	homa_engine_count_drop(e, HOMA_DROP_REASONS, 1);
	homa_engine_count_drop(e, -1, 1);
	homa_engine_count_drop(NULL, 0, 1);
	homa_engine_stats(e, &st);
	homa_engine_free(e);
	for (int i = 0; i < HOMA_DROP_REASONS; i++)
		if (st.drops[i])
			return 1;
	return 0;
}

static int stats_null(void)
{
	homa_engine *e = new_engine(NULL);
	struct homa_stats st;

	memset(&st, 0x55, sizeof(st));
	homa_engine_stats(NULL, &st);
	homa_engine_stats(e, NULL);
	homa_engine_free(e);
	return st.active_rpcs || st.drops[0];
}

static int state_sizes_null(void)
{
	size_t r = 0;

	homa_engine_state_sizes(NULL, NULL);
	homa_engine_state_sizes(&r, NULL);
	return r ? 0 : 1;
}

/* ---- wire.h ---- */

static int decode_truncated(void)
{
	uint8_t b[10] = {0};
	struct homa_pkt k;

	return homa_wire_decode(b, sizeof(b), &k);
}

static int decode_null(void)
{
	struct homa_pkt k;
	uint8_t b[64] = {0};

	return homa_wire_decode(NULL, 64, &k) == HOMA_EINVAL ? homa_wire_decode(b, 64, NULL) : 1;
}

static int decode_why_type(void)
{
	enum homa_wire_error why = HOMA_WIRE_OK;
	uint8_t b[64] = {0};
	struct homa_pkt k;
	int r;

	b[11] = 0xee;
	r = homa_wire_decode_why(b, sizeof(b), &k, &why);
	return why == HOMA_WIRE_BAD_TYPE ? r : 1;
}

static int encode_small(void)
{
	struct homa_pkt k = {.type = HOMA_PKT_GRANT};
	uint8_t b[HOMA_GRANT_LEN - 1];

	return homa_wire_encode(&k, b, sizeof(b));
}

static int encode_type(void)
{
	struct homa_pkt k = {.type = 0xee};
	uint8_t b[64];

	return homa_wire_encode(&k, b, sizeof(b));
}

static int encode_null(void)
{
	struct homa_pkt k = {.type = HOMA_PKT_DATA};
	uint8_t b[128];

	k.u.data.payload_len = 10;  /* and no payload */
	return homa_wire_encode(NULL, b, sizeof(b)) == HOMA_EINVAL &&
	       homa_wire_encode(&k, NULL, 0) == HOMA_EINVAL ? homa_wire_encode(&k, b, sizeof(b)) : 1;
}

/** encode_past_int() - A DATA packet whose length does not fit the int result. */
static int encode_past_int(void)
{
	static uint8_t payload[16];
	struct homa_pkt k = {.type = HOMA_PKT_DATA};
	uint8_t b[128];

	k.u.data.payload = payload;
	k.u.data.payload_len = 0x80000000u;
	return homa_wire_encode(&k, b, SIZE_MAX);
}

static int header_len_unknown(void) { return (int)homa_wire_header_len(0xee); }

static int acks_port_short(void)
{
	uint8_t b[HOMA_COMMON_LEN] = {0};

	b[11] = HOMA_PKT_ACK;
	return homa_wire_acks_port(NULL, 100, 1) || homa_wire_acks_port(b, sizeof(b), 0);
}

static int type_name_unknown(void) { return strcmp(homa_wire_type_name(0xee), "UNKNOWN"); }

static const struct doc_case engine_cases[] = {
	DOC_ANSWER(homa_addr_ipv4, addr_ipv4),
	DOC_ANSWER(homa_addr_is_ipv4, addr_is_ipv4_null),
	DOC_ANSWER(homa_addr_get_ipv4, addr_get_ipv4_null),
	DOC_ANSWER(homa_addr_equal, addr_equal_null),
	DOC_ANSWER(homa_addr_format, addr_format_misuse),
	DOC_CASE(homa_engine_new, HOMA_EINVAL, new_null),
	DOC_CASE(homa_engine_new, HOMA_EINVAL, new_port0),
	DOC_CASE(homa_engine_new, HOMA_EINVAL, new_bad_settings),
	DOC_CASE(homa_engine_new, HOMA_ENOMEM, new_nomem),
	DOC_CASE(homa_engine_set_hash_key, HOMA_EINVAL, hash_key_null),
	DOC_CASE(homa_engine_set_hash_key, HOMA_EINVAL, hash_key_late),
	DOC_ANSWER(homa_engine_free, free_null),
	DOC_CASE(homa_engine_set_settings, HOMA_EINVAL, set_settings_bad),
	DOC_CASE(homa_engine_set_settings, HOMA_EINVAL, set_settings_null),
	DOC_ANSWER(homa_engine_settings, settings_null),
	DOC_ANSWER(homa_engine_rx_priority, rx_priority_null),
	DOC_ANSWER(homa_engine_set_hooks, set_hooks_null),
	DOC_ANSWER(homa_engine_set_ack_pool, set_ack_pool_null),
	DOC_ANSWER(homa_engine_set_ack_pool, ack_pool_misuse),
	DOC_ANSWER(homa_engine_set_server, set_server_null),
	DOC_CASE(homa_engine_set_rx_alloc, HOMA_EINVAL, rx_alloc_bad),
	DOC_ANSWER(homa_engine_port, port_null),
	DOC_CASE(homa_engine_send_request, HOMA_EINVAL, send_null),
	DOC_CASE(homa_engine_send_request, HOMA_EINVAL, send_wrap),
	DOC_CASE(homa_engine_send_request, HOMA_EMSGSIZE, send_too_long),
	DOC_CASE(homa_engine_send_request, HOMA_EAGAIN, send_full),
	DOC_CASE(homa_engine_send_request, HOMA_ENOMEM, send_nomem),
	DOC_CASE(homa_engine_send_request, HOMA_ESHUTDOWN, send_shut),
	DOC_CASE(homa_engine_send_request, HOMA_EPEERDEAD, send_peer_dead),
	DOC_CASE(homa_engine_send_request_ref, HOMA_EINVAL, send_ref_zero_port),
	DOC_CASE(homa_iov_length, HOMA_EINVAL, iov_length_wrap),
	DOC_CASE(homa_iov_length, HOMA_EINVAL, iov_length_null_base),
	DOC_CASE(homa_msg_build, HOMA_EINVAL, build_null),
	DOC_CASE(homa_msg_build, HOMA_EMSGSIZE, build_huge),
	DOC_CASE(homa_msg_build, HOMA_ENOMEM, build_nomem),
	DOC_CASE(homa_msg_build_ref, HOMA_EMSGSIZE, build_ref_huge),
	DOC_ANSWER(homa_msg_discard, discard_null),
	DOC_CASE(homa_engine_send_request_msg, HOMA_EINVAL, send_msg_null),
	DOC_CASE(homa_engine_send_reply_msg, HOMA_ENOTFOUND, reply_msg_unknown),
	DOC_CASE(homa_engine_send_reply_msg, HOMA_EINVAL, reply_msg_null),
	DOC_CASE(homa_engine_send_reply, HOMA_ENOTFOUND, reply_unknown),
	DOC_CASE(homa_engine_send_reply, HOMA_ESTATE, reply_twice),
	DOC_CASE(homa_engine_send_reply, HOMA_EINVAL, reply_no_iov),
	DOC_CASE(homa_engine_send_reply, HOMA_EMSGSIZE, reply_too_long),
	DOC_CASE(homa_engine_send_reply, HOMA_EAGAIN, reply_full),
	DOC_CASE(homa_engine_send_reply, HOMA_ENOMEM, reply_nomem),
	DOC_CASE(homa_engine_abort, HOMA_ENOTFOUND, abort_unknown),
	DOC_CASE(homa_engine_abort, HOMA_EINVAL, abort_null),
	DOC_ANSWER(homa_engine_shutdown, shutdown_null),
	DOC_CASE(homa_engine_input, HOMA_EINVAL, input_null),
	DOC_ANSWER(homa_engine_input, input_garbage),
	DOC_CASE(homa_engine_input_lend, HOMA_EINVAL, lend_bad),
	DOC_CASE(homa_engine_defer_copies, HOMA_EINVAL, defer_copies_bad),
	DOC_ANSWER(homa_engine_copies_done, copies_done_null),
	DOC_CASE(homa_engine_unreachable, HOMA_EINVAL, unreach_null),
	DOC_ANSWER(homa_engine_unreachable, unreach_forged),
	DOC_CASE(homa_engine_output, HOMA_ENOSPC, output_small),
	DOC_CASE(homa_engine_output, HOMA_EINVAL, output_null),
	DOC_CASE(homa_engine_output_ref, HOMA_EINVAL, output_ref_null),
	DOC_CASE(homa_engine_output_refs, HOMA_EINVAL, output_refs_none),
	DOC_ANSWER(homa_engine_output_sent, output_sent_null),
	DOC_ANSWER(homa_engine_next_deadline, deadline_null),
	DOC_ANSWER(homa_engine_wake_by, wake_by_null),
	DOC_ANSWER(homa_engine_want_output, want_output_null),
	DOC_ANSWER(homa_engine_has_output, has_output_null),
	DOC_ANSWER(homa_engine_on_timer, on_timer_null),
	DOC_ANSWER(homa_engine_next_event, next_event_null),
	DOC_ANSWER(homa_msg_length, msg_length_null),
	DOC_ANSWER(homa_msg_segment, msg_segment_misuse),
	DOC_ANSWER(homa_msg_copy, msg_copy_misuse),
	DOC_ANSWER(homa_engine_msg_release, msg_release_null),
	DOC_ANSWER(homa_engine_msg_adopt, msg_adopt_null),
	DOC_ANSWER(homa_engine_reserve_id, reserve_id_null),
	DOC_ANSWER(homa_engine_replies_pending, replies_pending_null),
	DOC_ANSWER(homa_engine_peer_heard, peer_heard_null),
	DOC_ANSWER(homa_engine_peer_waiting, peer_waiting_null),
	DOC_ANSWER(homa_engine_announce_requests, announce_null),
	DOC_CASE(homa_engine_rx_progress, HOMA_ENOTFOUND, rx_progress_unknown),
	DOC_CASE(homa_engine_rpc_peer, HOMA_ENOTFOUND, rpc_peer_unknown),
	DOC_ANSWER(homa_engine_count_drop, count_drop_range),
	DOC_ANSWER(homa_engine_stats, stats_null),
	DOC_ANSWER(homa_engine_state_sizes, state_sizes_null),
};

static const struct doc_case wire_cases[] = {
	DOC_CASE(homa_wire_decode, HOMA_EPROTO, decode_truncated),
	DOC_CASE(homa_wire_decode, HOMA_EINVAL, decode_null),
	DOC_CASE(homa_wire_decode_why, HOMA_EPROTO, decode_why_type),
	DOC_CASE(homa_wire_encode, HOMA_ENOSPC, encode_small),
	DOC_CASE(homa_wire_encode, HOMA_EINVAL, encode_type),
	DOC_CASE(homa_wire_encode, HOMA_EINVAL, encode_null),
	DOC_CASE(homa_wire_encode, HOMA_EINVAL, encode_past_int),
	DOC_ANSWER(homa_wire_header_len, header_len_unknown),
	DOC_ANSWER(homa_wire_acks_port, acks_port_short),
	DOC_ANSWER(homa_wire_type_name, type_name_unknown),
};

static const struct doc_elsewhere elsewhere[] = {
	{"homa_engine_send_request_ref", "*", "as homa_engine_send_request(): the same start_request()"},
	{"homa_engine_send_request_msg", "*", "as homa_engine_send_request(): the same start_request()"},
	{"homa_engine_send_reply_msg", "*", "as homa_engine_send_reply(): the same send_reply()"},
	{"homa_msg_build_ref", "*", "as homa_msg_build(): the same out_length() and allocation"},
	{"homa_wire_decode_why", "*", "as homa_wire_decode(): the same decode()"},
	{"homa_engine_shutdown", "HOMA_ESHUTDOWN", "void: the error its events carry (test_engine_api.c)"},
	{"homa_engine_unreachable", "HOMA_ENOSERVER", "the error of the RPCs it ends (test_interop.c)"},
	{"homa_engine_msg_release", "HOMA_EALREADY", "names homa_message_release()'s code (tests/api)"},
};

/** conformance__engine_h() - engine.h's functions against their comments. */
static void conformance__engine_h(void **state)
{
	(void)state;
	doc_assert_header(ENGINE_H_PATH, 45, engine_cases, DOC_N(engine_cases), elsewhere, DOC_N(elsewhere));
}

/** conformance__wire_h() - wire.h's functions against their comments. */
static void conformance__wire_h(void **state)
{
	(void)state;
	doc_assert_header(WIRE_H_PATH, 6, wire_cases, DOC_N(wire_cases), elsewhere, DOC_N(elsewhere));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conformance__engine_h),
		cmocka_unit_test(conformance__wire_h),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
