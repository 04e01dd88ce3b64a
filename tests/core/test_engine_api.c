/* SPDX-License-Identifier: MIT */
/**
 * @file test_engine_api.c
 * The public engine API (src/core/engine.c): documented error codes for
 * misuse, shutdown, homa_strerror, allocation hooks (all memory through
 * them, failures handled and everything freed), state sizes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "internal.h"

static uint8_t big[200000];

/** new_pair_engines() - Client (10.0.0.1:4000) and serving server (10.0.0.2:4001), default settings. */
static void two(homa_engine **c, homa_engine **s, const struct homa_settings *set)
{
	homa_addr a = homa_addr_ipv4(0x0a000001), b = homa_addr_ipv4(0x0a000002);

	assert_int_equal(homa_engine_new(c, set, &a, 4000, NULL, 0), 0);
	assert_int_equal(homa_engine_new(s, set, &b, 4001, NULL, 0), 0);
	homa_engine_set_server(*s, true);
}

/** move_all() - Deliver everything @from wants to send now to @to. */
static void move_all(homa_engine *from, const homa_addr *src, homa_engine *to, uint64_t now)
{
	struct th_pkt k;

	while (th_take(from, now, &k) > 0)
		homa_engine_input(to, src, k.buf, (size_t)k.len, now);
}

/** homa_engine_new__bad_args() - NULL out/local, port 0 and bad settings give HOMA_EINVAL. */
static void homa_engine_new__bad_args(void **state)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	struct homa_settings s;
	homa_engine *e = NULL;

	assert_int_equal(homa_engine_new(NULL, NULL, &a, 1, NULL, 0), HOMA_EINVAL);
	assert_int_equal(homa_engine_new(&e, NULL, NULL, 1, NULL, 0), HOMA_EINVAL);
	assert_int_equal(homa_engine_new(&e, NULL, &a, 0, NULL, 0), HOMA_EINVAL);
	homa_settings_default(&s);
	s.mtu = 10;
	assert_int_equal(homa_engine_new(&e, &s, &a, 1, NULL, 0), HOMA_EINVAL);
	assert_null(e);
	assert_int_equal(homa_engine_new(&e, NULL, &a, 1, NULL, 0), 0);
	assert_int_equal(homa_engine_port(e), 1);
	homa_engine_free(e);
	homa_engine_free(NULL);
}

/** homa_engine_send_request__bad_args() - Every misuse of send_request gives its documented code. */
static void homa_engine_send_request__bad_args(void **state)
{
	homa_addr dst = homa_addr_ipv4(0x0a000002);
	struct homa_iov two_pieces[2] = {{big, 600}, {big, 401}};
	struct homa_iov empty[2] = {{big, 0}, {NULL, 0}};
	struct homa_iov nullbase = {NULL, 5};
	struct homa_iov ok = {big, 10};
	struct homa_settings s;
	struct homa_stats st;
	homa_engine *c, *srv;
	uint64_t id = 0;

	homa_settings_default(&s);
	s.max_message = 1000;
	two(&c, &srv, &s);
	assert_int_equal(homa_engine_send_request(NULL, &dst, 1, &ok, 1, 0, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_request(c, NULL, 1, &ok, 1, 0, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_request(c, &dst, 0, &ok, 1, 0, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_request(c, &dst, 1, &ok, 1, 0, 0, NULL), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_request(c, &dst, 1, NULL, 1, 0, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_request(c, &dst, 1, &ok, 0, 0, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_request(c, &dst, 1, &ok, -1, 0, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_request(c, &dst, 1, &nullbase, 1, 0, 0, &id), HOMA_EINVAL);
	/* an empty message is valid: one DATA packet without payload */
	assert_int_equal(homa_engine_send_request(c, &dst, 1, empty, 2, 0, 0, &id), 0);
	homa_engine_abort(c, id, 0);
	assert_int_equal(homa_engine_send_request(c, &dst, 1, two_pieces, 2, 0, 0, &id), HOMA_EMSGSIZE);
	two_pieces[1].len = 400;
	assert_int_equal(homa_engine_send_request(c, &dst, 1, two_pieces, 2, 0, 0, &id), 0);
	assert_int_equal(id & 1, 0);
	homa_engine_stats(c, &st);
	assert_int_equal(st.active_rpcs, 1);
	assert_int_equal(st.client_rpcs_started, 2);
	homa_engine_free(c);
	homa_engine_free(srv);
}

/** deliver_request() - Client sends @len bytes; the server gets it. Return: the server's event. */
static struct homa_event deliver_request(homa_engine *c, homa_engine *s, size_t len, uint64_t *cid)
{
	homa_addr ca = homa_addr_ipv4(0x0a000001), sa = homa_addr_ipv4(0x0a000002);
	struct homa_iov iov = {big, len};
	struct homa_event ev;

	assert_int_equal(homa_engine_send_request(c, &sa, 4001, &iov, 1, 0, 0, cid), 0);
	move_all(c, &ca, s, 0);
	assert_int_equal(homa_engine_next_event(s, &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	assert_int_equal(ev.id & 1, 1);
	return ev;
}

/**
 * homa_engine_rpc_peer__both_sides() - A server RPC names its client's
 * address and port, a client RPC its server's; unknown ids and a NULL
 * engine give HOMA_ENOTFOUND.
 */
static void homa_engine_rpc_peer__both_sides(void **state)
{
	homa_addr ca = homa_addr_ipv4(0x0a000001), sa = homa_addr_ipv4(0x0a000002), got;
	struct homa_settings set;
	struct homa_event ev;
	homa_engine *c, *s;
	uint16_t port = 0;
	uint64_t cid;

	homa_settings_default(&set);
	two(&c, &s, &set);
	ev = deliver_request(c, s, 100, &cid);
	assert_int_equal(homa_engine_rpc_peer(s, ev.id, &got, &port), 0);
	assert_true(homa_addr_equal(&got, &ca));
	assert_int_equal(port, 4000);
	assert_int_equal(homa_engine_rpc_peer(c, cid, &got, &port), 0);
	assert_true(homa_addr_equal(&got, &sa));
	assert_int_equal(port, 4001);
	assert_int_equal(homa_engine_rpc_peer(s, ev.id, NULL, NULL), 0);
	assert_int_equal(homa_engine_rpc_peer(s, ev.id + 2000, &got, &port), HOMA_ENOTFOUND);
	assert_int_equal(homa_engine_rpc_peer(NULL, ev.id, &got, &port), HOMA_ENOTFOUND);
	homa_engine_msg_release(s, ev.msg);
	homa_engine_free(c);
	homa_engine_free(s);
}

/**
 * homa_engine_send_reply__misuse() - Unknown id and client ids give
 * HOMA_ENOTFOUND; a request not yet complete or already answered gives
 * HOMA_ESTATE; bad messages give HOMA_EINVAL / HOMA_EMSGSIZE.
 */
static void homa_engine_send_reply__misuse(void **state)
{
	homa_addr ca = homa_addr_ipv4(0x0a000001), sa = homa_addr_ipv4(0x0a000002);
	struct homa_iov ok = {big, 10}, huge = {big, 1001};
	struct homa_settings set;
	struct homa_event ev;
	homa_engine *c, *s;
	uint64_t cid, cid2;
	struct th_pkt k;

	homa_settings_default(&set);
	set.max_message = 1000;
	two(&c, &s, &set);
	ev = deliver_request(c, s, 100, &cid);
	assert_int_equal(homa_engine_send_reply(NULL, ev.id, &ok, 1, 0), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_reply(s, ev.id + 2000, &ok, 1, 0), HOMA_ENOTFOUND);
	assert_int_equal(homa_engine_send_reply(c, cid, &ok, 1, 0), HOMA_ENOTFOUND); /* a client id */
	assert_int_equal(homa_engine_send_reply(s, ev.id, NULL, 1, 0), HOMA_EINVAL);
	assert_int_equal(homa_engine_send_reply(s, ev.id, &huge, 1, 0), HOMA_EMSGSIZE);
	assert_int_equal(homa_engine_send_reply(s, ev.id, &ok, 1, 0), 0);
	assert_int_equal(homa_engine_send_reply(s, ev.id, &ok, 1, 0), HOMA_ESTATE);
	homa_engine_msg_release(s, ev.msg);
	/* a request still arriving: its server RPC exists but was not delivered */
	assert_int_equal(homa_engine_send_request(c, &sa, 4001, &ok, 1, 0, 0, &cid2), 0);
	set.unsched_bytes = 1000;
	assert_int_equal(homa_engine_set_settings(c, &set), 0);
	{
		struct homa_iov part = {big, 900};
		uint64_t cid3;

		assert_int_equal(homa_engine_send_request(c, &sa, 4001, &part, 1, 0, 0, &cid3), 0);
	}
	while (th_take(c, 0, &k) > 0)
		if (k.k.type == HOMA_PKT_DATA && k.k.u.data.message_length == 900 && k.k.u.data.offset == 0)
			break;
	assert_int_equal(k.k.u.data.message_length, 900);
	k.k.u.data.payload_len = 100; /* only the first 100 bytes arrive */
	k.len = homa_wire_encode(&k.k, k.buf, sizeof(k.buf));
	assert_int_equal(homa_engine_input(s, &ca, k.buf, (size_t)k.len, 0), 0);
	assert_int_equal(homa_engine_send_reply(s, ev.id + 2, &ok, 1, 0), HOMA_ESTATE);
	assert_true(homa_engine_rx_progress(s, ev.id + 2, NULL) >= 100);
	assert_int_equal(homa_engine_rx_progress(s, ev.id + 2000, NULL), HOMA_ENOTFOUND);
	homa_engine_free(c);
	homa_engine_free(s);
}

/**
 * homa_engine_abort__misuse_and_effect() - Unknown ids give
 * HOMA_ENOTFOUND; an aborted client RPC reports no event and its late
 * response is dropped (with the CUTOFFS that came along: no RPC is left
 * with that server to take them); an aborted server RPC can no longer be answered.
 */
static void homa_engine_abort__misuse_and_effect(void **state)
{
	homa_addr sa = homa_addr_ipv4(0x0a000002);
	struct homa_iov ok = {big, 10};
	struct homa_event ev, none;
	struct homa_stats st;
	homa_engine *c, *s;
	uint64_t cid;

	two(&c, &s, NULL);
	assert_int_equal(homa_engine_abort(NULL, 2, 0), HOMA_EINVAL);
	assert_int_equal(homa_engine_abort(c, 2, 0), HOMA_ENOTFOUND);
	ev = deliver_request(c, s, 100, &cid);
	assert_int_equal(homa_engine_abort(c, cid, 0), 0);
	assert_int_equal(homa_engine_abort(c, cid, 0), HOMA_ENOTFOUND);
	assert_int_equal(homa_engine_send_reply(s, ev.id, &ok, 1, 0), 0);
	homa_engine_msg_release(s, ev.msg);
	move_all(s, &sa, c, 0);
	assert_int_equal(homa_engine_next_event(c, &none), 0);
	homa_engine_stats(c, &st);
	assert_int_equal(st.rpcs_aborted, 1);
	assert_int_equal(st.drops[HOMA_DROP_UNKNOWN_RPC], 2);
	assert_int_equal(st.active_rpcs, 0);
	ev = deliver_request(c, s, 100, &cid);
	assert_int_equal(homa_engine_abort(s, ev.id, 0), 0);
	assert_int_equal(homa_engine_send_reply(s, ev.id, &ok, 1, 0), HOMA_ENOTFOUND);
	homa_engine_msg_release(s, ev.msg);
	homa_engine_free(c);
	homa_engine_free(s);
}

/**
 * homa_engine_input__drops_are_not_errors() - A dropped packet returns
 * HOMA_INPUT_DROPPED + its reason, a positive number that no HOMA_E* code
 * can be mistaken for.
 */
static void homa_engine_input__drops_are_not_errors(void **state)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	uint8_t buf[64] = {0};
	homa_engine *c, *s;

	(void)state;
	two(&c, &s, NULL);
	assert_int_equal(homa_engine_input(s, &a, buf, 4, 0),
			 HOMA_INPUT_DROPPED + HOMA_DROP_TRUNCATED);
	buf[11] = 0x7f;
	assert_int_equal(homa_engine_input(s, &a, buf, sizeof(buf), 0),
			 HOMA_INPUT_DROPPED + HOMA_DROP_BAD_TYPE);
	homa_engine_free(c);
	homa_engine_free(s);
}

/** homa_engine_io__bad_args() - input/output/next_event/release with NULL or small buffers. */
static void homa_engine_io__bad_args(void **state)
{
	homa_addr a = homa_addr_ipv4(0x0a000001), sa = homa_addr_ipv4(0x0a000002);
	struct homa_iov ok = {big, 3000};
	uint8_t buf[2000];
	struct homa_event ev;
	struct homa_tx tx;
	homa_engine *c, *s;
	uint64_t id;

	two(&c, &s, NULL);
	assert_int_equal(homa_engine_input(NULL, &a, buf, 10, 0), HOMA_EINVAL);
	assert_int_equal(homa_engine_input(c, NULL, buf, 10, 0), HOMA_EINVAL);
	assert_int_equal(homa_engine_input(c, &a, NULL, 10, 0), HOMA_EINVAL);
	assert_int_equal(homa_engine_output(NULL, 0, buf, sizeof(buf), &tx), HOMA_EINVAL);
	assert_int_equal(homa_engine_output(c, 0, NULL, sizeof(buf), &tx), HOMA_EINVAL);
	assert_int_equal(homa_engine_output(c, 0, buf, sizeof(buf), NULL), HOMA_EINVAL);
	assert_int_equal(homa_engine_output(c, 0, buf, sizeof(buf), &tx), 0); /* nothing to send */
	assert_int_equal(homa_engine_send_request(c, &sa, 4001, &ok, 1, 0, 0, &id), 0);
	assert_int_equal(homa_engine_output(c, 0, buf, 1000, &tx), HOMA_ENOSPC);
	assert_int_equal(homa_engine_output(c, 0, buf, sizeof(buf), &tx), 1472); /* nothing lost */
	assert_int_equal(tx.type, HOMA_PKT_DATA);
	assert_int_equal(tx.dport, 4001);
	assert_true(homa_addr_equal(&tx.dst, &sa));
	homa_engine_input(s, &a, buf, (size_t)1472, 0);
	assert_int_equal(homa_engine_output(s, 0, buf, 20, &tx), HOMA_ENOSPC); /* CUTOFFS is 62 */
	assert_int_equal(homa_engine_output(s, 0, buf, 62, &tx), 62);
	assert_int_equal(homa_engine_next_event(NULL, &ev), 0);
	assert_int_equal(homa_engine_next_event(c, NULL), 0);
	homa_engine_msg_release(c, NULL);
	homa_engine_msg_release(NULL, NULL);
	assert_int_equal(homa_engine_rx_progress(NULL, 1, NULL), HOMA_ENOTFOUND);
	homa_engine_free(c);
	homa_engine_free(s);
}

/**
 * homa_engine_shutdown__fails_outstanding() - Shutdown reports every
 * outstanding client RPC as an HOMA_ESHUTDOWN error event, frees server
 * RPCs silently, refuses later sends with HOMA_ESHUTDOWN and stops serving.
 */
static void homa_engine_shutdown__fails_outstanding(void **state)
{
	homa_addr ca = homa_addr_ipv4(0x0a000001), sa = homa_addr_ipv4(0x0a000002);
	struct homa_iov ok = {big, 10};
	struct homa_event ev, sev;
	struct homa_stats st;
	homa_engine *c, *s;
	uint64_t ids[3], id, seen = 0;
	int i;

	two(&c, &s, NULL);
	sev = deliver_request(c, s, 100, &ids[0]);
	for (i = 1; i < 3; i++)
		assert_int_equal(homa_engine_send_request(c, &sa, 4001, &ok, 1, (uint64_t)i, 0, &ids[i]), 0);
	homa_engine_shutdown(c, 5);
	for (i = 0; i < 3; i++) {
		int k;

		assert_int_equal(homa_engine_next_event(c, &ev), 1);
		assert_int_equal(ev.type, HOMA_EV_ERROR);
		assert_int_equal(ev.error, HOMA_ESHUTDOWN);
		for (k = 0; k < 3; k++)
			if (ev.id == ids[k])
				seen |= 1u << k;
	}
	assert_int_equal(seen, 7);
	assert_int_equal(homa_engine_next_event(c, &ev), 0);
	homa_engine_stats(c, &st);
	assert_int_equal(st.active_rpcs, 0);
	assert_int_equal(homa_engine_send_request(c, &sa, 4001, &ok, 1, 0, 5, &id), HOMA_ESHUTDOWN);
	/* server side: the delivered request is freed; its message stays valid until released */
	homa_engine_shutdown(s, 5);
	homa_engine_stats(s, &st);
	assert_int_equal(st.active_rpcs, 0);
	assert_int_equal(homa_engine_next_event(s, &ev), 0);
	assert_int_equal(homa_msg_length(sev.msg), 100);
	assert_int_equal(homa_engine_send_reply(s, sev.id, &ok, 1, 5), HOMA_ENOTFOUND);
	homa_engine_msg_release(s, sev.msg);
	homa_engine_set_server(s, true);
	{
		homa_engine *c2;

		assert_int_equal(homa_engine_new(&c2, NULL, &ca, 4002, NULL, 0), 0);
		assert_int_equal(homa_engine_send_request(c2, &sa, 4001, &ok, 1, 0, 0, &id), 0);
		move_all(c2, &ca, s, 6);
		homa_engine_stats(s, &st);
		assert_int_equal(st.drops[HOMA_DROP_NOT_SERVER], 1);
		homa_engine_free(c2);
	}
	homa_engine_free(c);
	homa_engine_free(s);
}

/**
 * homa_strerror__every_code() - Every code has its own text; unknown codes
 * (the gaps between the ranges, past the last one, positive) say so.
 */
static void homa_strerror__every_code(void **state)
{
	static const int ranges[][2] = {{0, HOMA_EALREADY}, {HOMA_ENOASSOC, HOMA_EHANDSHAKE}};
	const char *seen[64];
	int code, k, n = 0;

	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++)
		for (code = ranges[r][0]; code >= ranges[r][1]; code--) {
			const char *t = homa_strerror(code);

			assert_non_null(t);
			assert_true(strlen(t) > 3);
			assert_string_not_equal(t, "unknown homa error");
			for (k = 0; k < n; k++)
				assert_string_not_equal(t, seen[k]);
			seen[n++] = t;
		}
	assert_string_equal(homa_strerror(HOMA_EALREADY - 1), "unknown homa error");
	assert_string_equal(homa_strerror(HOMA_ENOASSOC + 1), "unknown homa error");
	assert_string_equal(homa_strerror(HOMA_EHANDSHAKE - 1), "unknown homa error");
	assert_string_equal(homa_strerror(1), "unknown homa error");
	assert_string_equal(homa_drop_reason_name(HOMA_DROP_TRUNCATED), "truncated");
	assert_string_equal(homa_drop_reason_name(HOMA_DROP_REASONS), "unknown");
	assert_string_equal(homa_drop_reason_name(-1), "unknown");
	for (code = 0; code < HOMA_DROP_REASONS; code++)
		assert_string_not_equal(homa_drop_reason_name(code), "unknown");
}

/** homa_engine_state_sizes__reported() - Sizes match the structures and the rx budget charge. */
static void homa_engine_state_sizes__reported(void **state)
{
	homa_addr sa = homa_addr_ipv4(0x0a000002);
	struct homa_iov ok = {big, 10};
	size_t rpc = 0, peer = 0;
	struct homa_stats st;
	homa_engine *c, *s;
	uint64_t id;

	homa_engine_state_sizes(&rpc, &peer);
	assert_int_equal(rpc, sizeof(struct homa_rpc));
	assert_int_equal(peer, sizeof(struct homa_peer));
	assert_true(rpc > 0 && rpc < 400);
	assert_true(peer > 0 && peer < 360);
	homa_engine_state_sizes(NULL, NULL);
	two(&c, &s, NULL);
	assert_int_equal(homa_engine_send_request(c, &sa, 4001, &ok, 1, 0, 0, &id), 0);
	homa_engine_stats(c, &st);
	assert_int_equal(st.rx_buffered_bytes, rpc); /* RPC state counts against the rx budget */
	assert_int_equal(st.peers, 1);
	homa_engine_free(c);
	homa_engine_free(s);
}

/* ---- allocation hooks ---- */

/** Counting allocator; fails allocations from fail_from on (all, or only that one). */
struct counting {
	uint64_t allocs, frees, failed, bad_sizes;
	int64_t live;
	int64_t fail_from;   /**< -1: never fail */
	bool only_one;       /**< fail just allocation number fail_from */
};

/** c_alloc() - Allocate with a size header so frees can be checked. */
static void *c_alloc(void *ctx, size_t size)
{
	struct counting *c = ctx;
	uint64_t n = c->allocs + c->failed;
	uint8_t *p;

	if (c->fail_from >= 0 && n >= (uint64_t)c->fail_from &&
	    (!c->only_one || n == (uint64_t)c->fail_from)) {
		c->failed++;
		return NULL;
	}
	p = malloc(size + 16);
	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	c->allocs++;
	c->live += (int64_t)size;
	return p + 16;
}

/** c_free() - Free, checking the size the engine passes. */
static void c_free(void *ctx, void *ptr, size_t size)
{
	struct counting *c = ctx;
	uint8_t *p = (uint8_t *)ptr - 16;
	size_t was;

	memcpy(&was, p, sizeof(was));
	if (was != size)
		c->bad_sizes++;
	c->frees++;
	c->live -= (int64_t)was;
	free(p);
}

/** Outcome of the echo RPCs under an allocator. */
struct outcome {
	int new_err;     /**< first homa_engine_new error (0 if both created) */
	int sent;        /**< requests accepted */
	int events;      /**< client events */
	int responses;   /**< of which bit-exact responses */
	uint64_t server_runs;
};

/** lossy() - Filter: drop every 9th packet, so holes, RESENDs and retransmissions happen. */
static bool lossy(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	return n % 9 == 4;
}

/**
 * serve_step() - The server application: take the next request and answer
 * it with its own bytes; a reply refused for memory is retried on the
 * next step (the RPC waits in service meanwhile).
 */
static void serve_step(struct th_pair *p, struct homa_event *pending, bool *have)
{
	static uint8_t copy[300000];
	struct homa_iov iov = {copy, 0};
	int r;

	if (!*have)
		*have = homa_engine_next_event(p->e[1], pending) == 1;
	if (!*have)
		return;
	iov.len = homa_msg_length(pending->msg);
	assert_int_equal(homa_msg_copy(pending->msg, 0, copy, iov.len), iov.len);
	r = homa_engine_send_reply(p->e[1], pending->id, &iov, 1, p->now);
	assert_true(r == 0 || r == HOMA_ENOMEM || r == HOMA_EAGAIN);
	if (r == 0) {
		homa_engine_msg_release(p->e[1], pending->msg);
		*have = false;
	}
}

/** start_pair() - Create both engines with allocators @ha. Return: 0 or the error. */
static int start_pair(struct th_pair *p, struct homa_alloc *ha)
{
	int i, err = 0;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < 2 && !err; i++) {
		p->addr[i] = homa_addr_ipv4(0x0a000001 + (uint32_t)i);
		p->port[i] = (uint16_t)(4000 + i);
		err = homa_engine_new(&p->e[i], NULL, &p->addr[i], p->port[i], &ha[i], 0);
		assert_true(err == 0 || err == HOMA_ENOMEM);
	}
	if (!err)
		homa_engine_set_server(p->e[1], true);
	return err;
}

/**
 * run_echo() - Three echo RPCs (1 B, 100 kB, 300 kB) under 1-in-9 packet
 * loss between engines using allocators @ac (client) and @as (server),
 * for 2 s of simulated time; engines are freed at the end.
 */
static struct outcome run_echo(struct counting *ac, struct counting *as)
{
	static const size_t sizes[3] = {1, 100000, 300000};
	static uint8_t req[300000];
	struct homa_alloc ha[2] = {{c_alloc, c_free, ac}, {c_alloc, c_free, as}};
	struct homa_event ev, pending;
	struct homa_stats st;
	struct outcome o;
	struct th_pair p;
	bool have = false;
	uint64_t id;
	int i, r;

	memset(&o, 0, sizeof(o));
	o.new_err = start_pair(&p, ha);
	if (o.new_err) {
		th_pair_free(&p);
		return o;
	}
	p.filter = lossy;
	for (i = 0; i < 3; i++) {
		struct homa_iov iov = {req, sizes[i]};

		th_pattern(req, sizes[i], (uint32_t)i + 1);
		r = homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, (uint64_t)i + 1, 0, &id);
		assert_true(r == 0 || r == HOMA_ENOMEM || r == HOMA_EAGAIN);
		o.sent += r == 0;
	}
	while (p.now < 2000000000ull) {
		uint64_t before = p.now;

		th_pair_run(&p, 1000000);
		serve_step(&p, &pending, &have);
		if (!have && homa_engine_next_deadline(p.e[0]) == UINT64_MAX &&
		    homa_engine_next_deadline(p.e[1]) == UINT64_MAX)
			break; /* both idle: nothing more can happen */
		if (p.now == before)
			p.now += 1000000;
	}
	if (have)
		homa_engine_msg_release(p.e[1], pending.msg);
	while (homa_engine_next_event(p.e[0], &ev)) {
		o.events++;
		if (ev.type == HOMA_EV_RESPONSE) {
			o.responses += homa_msg_length(ev.msg) == sizes[ev.cookie - 1] &&
				       th_check_pattern(ev.msg, (uint32_t)ev.cookie);
			homa_engine_msg_release(p.e[0], ev.msg);
		}
	}
	homa_engine_stats(p.e[1], &st);
	o.server_runs = st.server_requests_received;
	th_pair_free(&p);
	return o;
}

/** balanced() - The allocator saw every block freed, with the right sizes. */
static void balanced(const struct counting *c, const char *who, int64_t n)
{
	if (c->allocs != c->frees || c->live != 0 || c->bad_sizes)
		fail_msg("%s allocator (fail_from %lld): %llu allocs, %llu frees, %lld live, %llu bad sizes",
			 who, (long long)n, (unsigned long long)c->allocs,
			 (unsigned long long)c->frees, (long long)c->live,
			 (unsigned long long)c->bad_sizes);
}

/**
 * homa_alloc__all_memory_through_hooks() - Three echo RPCs under loss with
 * counting allocators complete, allocate through them, and free everything.
 */
static void homa_alloc__all_memory_through_hooks(void **state)
{
	struct counting ac = {.fail_from = -1}, as = {.fail_from = -1};
	struct outcome o = run_echo(&ac, &as);

	assert_int_equal(o.new_err, 0);
	assert_int_equal(o.sent, 3);
	assert_int_equal(o.events, 3);
	assert_int_equal(o.responses, 3);
	assert_int_equal(o.server_runs, 3);
	assert_true(ac.allocs >= 5);
	assert_true(as.allocs >= 5);
	balanced(&ac, "client", -1);
	balanced(&as, "server", -1);
}

/**
 * homa_alloc__failures_never_crash_or_leak() - For every N, first one
 * allocation (number N) fails on one side, then every allocation from N
 * on: creation or sending returns HOMA_ENOMEM, or packets are dropped;
 * nothing crashes, and after homa_engine_free() every block is freed.
 * After a single failure every RPC sent ends with exactly one event (a
 * bit-exact response, or an error), and the server runs each at most once.
 */
static void homa_alloc__failures_never_crash_or_leak(void **state)
{
	struct counting ref_c = {.fail_from = -1}, ref_s = {.fail_from = -1};
	int64_t n, total;
	int side, mode;

	run_echo(&ref_c, &ref_s);
	total = (int64_t)(ref_c.allocs > ref_s.allocs ? ref_c.allocs : ref_s.allocs) + 2;
	for (mode = 0; mode < 2; mode++) {
		for (side = 0; side < 2; side++) {
			for (n = 0; n < total; n++) {
				struct counting ac = {.fail_from = -1}, as = {.fail_from = -1};
				struct counting *bad = side ? &as : &ac;
				struct outcome o;

				bad->fail_from = n;
				bad->only_one = mode == 0;
				o = run_echo(&ac, &as);
				balanced(&ac, "client", n);
				balanced(&as, "server", n);
				assert_true(o.server_runs <= 3);
				assert_true(o.events <= o.sent);
				if (mode == 0 && !o.new_err && o.events != o.sent)
					fail_msg("single failure of %s allocation %lld: %d RPCs sent, %d ended",
						 side ? "server" : "client", (long long)n, o.sent, o.events);
			}
		}
	}
}

/**
 * homa_engine_set_rx_alloc__payload_through_hooks() - With payload hooks
 * set, a 150,000-byte request's bytes land in three pieces from them
 * (64 KiB, 64 KiB, the 18,928-byte rest), the message's segments are
 * those very pieces, and releasing the message frees them with their
 * sizes. The engine's other memory never goes through them; misuse is
 * HOMA_EINVAL.
 */
static void homa_engine_set_rx_alloc__payload_through_hooks(void **state)
{
	homa_addr ca = homa_addr_ipv4(0x0a000001), sa = homa_addr_ipv4(0x0a000002);
	struct counting rx = {.fail_from = -1};
	struct homa_alloc hooks = {c_alloc, c_free, &rx}, half = {c_alloc, NULL, &rx};
	struct homa_iov iov = {big, 150000};
	struct homa_event ev;
	homa_engine *c, *s;
	const uint8_t *p;
	uint64_t cid;

	two(&c, &s, NULL);
	assert_int_equal(homa_engine_set_rx_alloc(NULL, &hooks), HOMA_EINVAL);
	assert_int_equal(homa_engine_set_rx_alloc(s, &half), HOMA_EINVAL);
	assert_int_equal(homa_engine_set_rx_alloc(s, &hooks), 0);
	th_pattern(big, 150000, 7);
	assert_int_equal(homa_engine_send_request(c, &sa, 4001, &iov, 1, 0, 1000, &cid), 0);
	for (uint64_t now = 1000; now < 1000 + 200 * 100000; now += 100000) {
		move_all(c, &ca, s, now);
		move_all(s, &sa, c, now);
	}
	assert_int_equal(homa_engine_set_rx_alloc(s, NULL), HOMA_EINVAL); /* holds an RPC */
	assert_int_equal(homa_engine_next_event(s, &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	assert_true(th_check_pattern(ev.msg, 7));
	assert_int_equal(rx.allocs, 3);
	assert_int_equal(rx.live, 150000);
	for (size_t off = 0; off < 150000; off += HOMA_RX_CHUNK) {
		size_t n = homa_msg_segment(ev.msg, off, &p);
		const uint8_t *hdr = p - 16;
		size_t was;

		memcpy(&was, hdr, sizeof(was)); /* c_alloc's header: the piece is the hook's */
		assert_int_equal(n, 150000 - off < HOMA_RX_CHUNK ? 150000 - off : HOMA_RX_CHUNK);
		assert_int_equal(was, n);
	}
	homa_engine_msg_release(s, ev.msg);
	assert_int_equal(rx.frees, 3);
	balanced(&rx, "payload", -1);
	homa_engine_free(c);
	homa_engine_free(s);
}

/**
 * homa_engine_time__step_back_is_clamped() - A caller's clock that steps
 * back (read before a lock, or not monotonic) does not move the engine's
 * time back: a response delivered "1 us before" the request was sent
 * counts a round trip of 0, not one of 2^64 - 1000 ns, and the engine's
 * time stays at the latest it saw.
 */
static void homa_engine_time__step_back_is_clamped(void **state)
{
	homa_addr ca = homa_addr_ipv4(0x0a000001), sa = homa_addr_ipv4(0x0a000002);
	const uint64_t t0 = 10000000000ull;
	struct homa_iov iov = {big, 10};
	struct homa_event ev;
	struct homa_stats st;
	homa_engine *c, *s;
	uint64_t cid;

	two(&c, &s, NULL);
	assert_int_equal(homa_engine_send_request(c, &sa, 4001, &iov, 1, 0, t0, &cid), 0);
	move_all(c, &ca, s, t0);
	assert_int_equal(homa_engine_next_event(s, &ev), 1);
	assert_int_equal(homa_engine_send_reply(s, ev.id, &iov, 1, t0), 0);
	homa_engine_msg_release(s, ev.msg);
	move_all(s, &sa, c, t0 - 1000);
	assert_int_equal(c->now, t0);
	assert_int_equal(homa_engine_next_event(c, &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	homa_engine_msg_release(c, ev.msg);
	homa_engine_stats(c, &st);
	assert_int_equal(st.rpc_latency_hist[0], 1);
	assert_int_equal(st.rpc_latency_hist[HOMA_HIST_BUCKETS - 1], 0);
	homa_engine_on_timer(c, 5);
	assert_int_equal(c->now, t0);
	homa_engine_free(c);
	homa_engine_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_engine_new__bad_args),
		cmocka_unit_test(homa_engine_send_request__bad_args),
		cmocka_unit_test(homa_engine_send_reply__misuse),
		cmocka_unit_test(homa_engine_abort__misuse_and_effect),
		cmocka_unit_test(homa_engine_time__step_back_is_clamped),
		cmocka_unit_test(homa_engine_input__drops_are_not_errors),
		cmocka_unit_test(homa_engine_io__bad_args),
		cmocka_unit_test(homa_engine_shutdown__fails_outstanding),
		cmocka_unit_test(homa_strerror__every_code),
		cmocka_unit_test(homa_engine_state_sizes__reported),
		cmocka_unit_test(homa_engine_rpc_peer__both_sides),
		cmocka_unit_test(homa_alloc__all_memory_through_hooks),
		cmocka_unit_test(homa_alloc__failures_never_crash_or_leak),
		cmocka_unit_test(homa_engine_set_rx_alloc__payload_through_hooks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
