/* SPDX-License-Identifier: MIT */
/**
 * @file test_incoming.c
 * Malformed and unexpected packets (src/core/incoming.c, engine input):
 * each is dropped and counted by reason, a real RPC running at the same
 * time completes unharmed, and RPC_UNKNOWN replies are rate-limited.
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

#define REQ_LEN 100000
#define MAX_MSG 1000000

/** A crafted packet and where it goes. */
struct bad_pkt {
	const char *what;
	int to;               /**< 0 = client engine, 1 = server engine */
	bool stranger;        /**< from 10.9.9.9 instead of the real peer */
	uint8_t buf[700];
	size_t len;
	int reason;           /**< expected HOMA_DROP_* */
};

/** base() - A packet of @type between the pair's ports (direction per @to_server). */
static struct homa_pkt base(uint8_t type, bool to_server, uint64_t sender_id)
{
	struct homa_pkt k;

	memset(&k, 0, sizeof(k));
	k.type = type;
	k.sport = to_server ? 4000 : 4001;
	k.dport = to_server ? 4001 : 4000;
	k.sender_id = sender_id;
	return k;
}

/** data() - A DATA packet of @n payload bytes at @off of a @mlen-byte message. */
static struct homa_pkt data(bool to_server, uint64_t sender_id, uint32_t mlen, uint32_t off,
			    uint32_t n)
{
	static const uint8_t junk[2000];
	struct homa_pkt k = base(HOMA_PKT_DATA, to_server, sender_id);

	k.u.data.message_length = mlen;
	k.u.data.incoming = mlen;
	k.u.data.offset = off;
	k.u.data.payload = junk;
	k.u.data.payload_len = n;
	return k;
}

/** add() - Append case @what: encode @k (or keep raw bytes if @k is NULL). */
static struct bad_pkt *add(struct bad_pkt *list, int *n, const char *what, int to, bool stranger,
			   const struct homa_pkt *k, int reason)
{
	struct bad_pkt *b = &list[(*n)++];
	int len;

	memset(b, 0, sizeof(*b));
	b->what = what;
	b->to = to;
	b->stranger = stranger;
	b->reason = reason;
	if (k) {
		len = homa_wire_encode(k, b->buf, sizeof(b->buf));
		assert_true(len > 0);
		b->len = (size_t)len;
	}
	return b;
}

/**
 * corpus() - Every kind of bad packet, aimed at a pair where client RPC
 * @cid (server id @cid ^ 1) is in progress. Return: number of cases.
 */
static int corpus(struct bad_pkt *l, uint64_t cid)
{
	struct homa_pkt k;
	struct bad_pkt *b;
	int n = 0;

	b = add(l, &n, "10 bytes", 1, false, NULL, HOMA_DROP_TRUNCATED);
	memset(b->buf, 0x10, 10);
	b->len = 10;
	k = data(true, cid, REQ_LEN, 0, 100);
	b = add(l, &n, "DATA cut in its header", 1, false, &k, HOMA_DROP_TRUNCATED);
	b->len = 40;
	k = base(HOMA_PKT_GRANT, false, cid ^ 1);
	b = add(l, &n, "GRANT cut short", 0, false, &k, HOMA_DROP_TRUNCATED);
	b->len = 30;
	k = base(HOMA_PKT_ACK, true, cid);
	b = add(l, &n, "ACK cut short", 1, false, &k, HOMA_DROP_TRUNCATED);
	b->len = 79;
	k = base(HOMA_PKT_BUSY, true, cid);
	b = add(l, &n, "type 0x30", 1, false, &k, HOMA_DROP_BAD_TYPE);
	b->buf[11] = 0x30;
	b = add(l, &n, "type 0x0f", 0, false, &k, HOMA_DROP_BAD_TYPE);
	b->buf[11] = 0x0f;
	k = data(true, cid, 50, 0, 100);
	add(l, &n, "DATA longer than its message", 1, false, &k, HOMA_DROP_BAD_OFFSET);
	k = data(true, cid, REQ_LEN, REQ_LEN, 1);
	add(l, &n, "DATA offset at message end", 1, false, &k, HOMA_DROP_BAD_OFFSET);
	k = data(true, cid, REQ_LEN, 0xffffff00u, 0x200);
	add(l, &n, "DATA offset wrapping 2^32", 1, false, &k, HOMA_DROP_BAD_OFFSET);
	k = data(true, cid, REQ_LEN, 0, 1);
	b = add(l, &n, "DATA without payload", 1, false, &k, HOMA_DROP_BAD_OFFSET);
	b->len = HOMA_DATA_HDR_LEN;
	k = base(HOMA_PKT_GRANT, false, cid ^ 1);
	k.u.grant.priority = 7;
	b = add(l, &n, "GRANT priority 9", 0, false, &k, HOMA_DROP_BAD_FIELD);
	b->buf[32] = 9;
	k = base(HOMA_PKT_RESEND, true, cid);
	b = add(l, &n, "RESEND priority 200", 1, false, &k, HOMA_DROP_BAD_FIELD);
	b->buf[36] = 200;
	k = base(HOMA_PKT_ACK, true, cid);
	b = add(l, &n, "ACK with 6 acks", 1, false, &k, HOMA_DROP_BAD_FIELD);
	b->buf[29] = 6;
	k = base(HOMA_PKT_START_MSG, true, cid + 1000);
	add(l, &n, "START_MSG of 0 bytes", 1, false, &k, HOMA_DROP_BAD_FIELD);
	k = base(HOMA_PKT_NEED_ACK, false, cid);
	add(l, &n, "NEED_ACK with a client id", 0, false, &k, HOMA_DROP_BAD_FIELD);
	k = base(HOMA_PKT_GRANT, false, cid ^ 1);
	k.u.grant.offset = REQ_LEN + 1;
	add(l, &n, "GRANT past the message", 0, false, &k, HOMA_DROP_BAD_OFFSET);
	k = data(true, cid + 2000, MAX_MSG + 1, 0, 100);
	add(l, &n, "DATA above max_message", 1, false, &k, HOMA_DROP_TOO_LONG);
	k = base(HOMA_PKT_START_MSG, true, cid + 2002);
	k.u.start.message_length = 0xffffffffu;
	add(l, &n, "START_MSG above max_message", 1, false, &k, HOMA_DROP_TOO_LONG);
	k = data(true, cid, REQ_LEN + 1, 0, 100);
	add(l, &n, "DATA changing the length", 1, false, &k, HOMA_DROP_LENGTH_CHANGED);
	k = data(true, cid, REQ_LEN, 0, 100);
	k.dport = 4999;
	add(l, &n, "DATA to another port", 1, false, &k, HOMA_DROP_WRONG_PORT);
	k = base(HOMA_PKT_GRANT, false, cid ^ 1);
	k.dport = 1;
	add(l, &n, "GRANT to another port", 0, false, &k, HOMA_DROP_WRONG_PORT);
	k = data(false, 1000, 100, 0, 100);
	add(l, &n, "request to a client", 0, false, &k, HOMA_DROP_NOT_SERVER);
	k = data(false, cid ^ 1 ^ 200, 100, 0, 100);
	add(l, &n, "response for no RPC", 0, false, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_GRANT, false, cid ^ 1 ^ 200);
	add(l, &n, "GRANT for no RPC", 0, false, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_GRANT, true, cid + 300);
	add(l, &n, "GRANT for no server RPC", 1, false, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_RESEND, true, cid + 400);
	add(l, &n, "RESEND for no RPC", 1, false, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_BUSY, false, cid ^ 1 ^ 500);
	add(l, &n, "BUSY for no RPC", 0, false, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_RPC_UNKNOWN, false, cid ^ 1 ^ 600);
	add(l, &n, "RPC_UNKNOWN for no RPC", 0, false, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_RPC_UNKNOWN, true, cid + 700);
	add(l, &n, "RPC_UNKNOWN for no server RPC", 1, false, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_ACK, true, cid + 800);
	k.u.ack.num_acks = 2;
	k.u.ack.acks[0].client_id = cid + 802;
	k.u.ack.acks[0].server_port = 4001;
	k.u.ack.acks[1].client_id = cid; /* real, but not finished: not freed */
	k.u.ack.acks[1].server_port = 4001;
	add(l, &n, "ACK for no finished RPC", 1, false, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_CUTOFFS, false, 0);
	add(l, &n, "CUTOFFS from a stranger", 0, true, &k, HOMA_DROP_UNKNOWN_RPC);
	k = base(HOMA_PKT_GRANT, false, cid ^ 1);
	k.u.grant.offset = 1000;
	add(l, &n, "GRANT from a stranger", 0, true, &k, HOMA_DROP_UNKNOWN_RPC);
	k = data(true, cid, REQ_LEN, 0, 100);
	add(l, &n, "request DATA from a stranger to a non-server port", 0, true, &k,
	    HOMA_DROP_WRONG_PORT);
	return n;
}

/** A copy of the first packet that crossed the wire. */
struct first_pkt {
	uint8_t buf[2000];
	size_t len;
};

/** keep_first() - Filter that drops nothing and keeps a copy of packet 0. */
static bool keep_first(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct first_pkt *f = ctx;

	if (n == 0 && len <= sizeof(f->buf)) {
		memcpy(f->buf, pkt, len);
		f->len = len;
	}
	return false;
}

/**
 * homa_engine_input__malformed_corpus() - While a 100 kB echo RPC is in
 * flight, every packet of the corpus is given to the client or server
 * engine: each is dropped with the expected reason (return value and
 * stats.drops), and the RPC then completes once, bit-exact, with no
 * restart, abort or retransmission. Afterwards a late copy of the
 * request's first packet is refused as completed (at-most-once).
 */
static void homa_engine_input__malformed_corpus(void **state)
{
	static struct bad_pkt list[64];
	static uint8_t req[REQ_LEN];
	homa_addr stranger = homa_addr_ipv4(0x0a090909);
	struct homa_iov iov = {req, REQ_LEN};
	struct homa_stats st[2], after;
	struct homa_settings s;
	struct homa_event ev;
	struct first_pkt first;
	struct th_pair p;
	uint64_t id;
	int n, i;

	homa_settings_default(&s);
	s.max_message = MAX_MSG;
	th_pair_init(&p, &s);
	p.filter = keep_first;
	p.filter_ctx = &first;
	p.echo = true;
	p.logging = false;
	th_pattern(req, REQ_LEN, 5);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 9, 0, &id), 0);
	th_pair_run(&p, 5000); /* part of the request is at the server */
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 0);
	n = corpus(list, id);
	for (i = 0; i < n; i++) {
		struct bad_pkt *b = &list[i];
		const homa_addr *src = b->stranger ? &stranger : &p.addr[1 - b->to];
		int r;

		homa_engine_stats(p.e[b->to], &st[b->to]);
		r = homa_engine_input(p.e[b->to], src, b->buf, b->len, p.now);
		if (r != HOMA_INPUT_DROPPED + b->reason)
			fail_msg("%s: got %d, want drop %s", b->what, r, homa_drop_reason_name(b->reason));
		homa_engine_stats(p.e[b->to], &after);
		if (after.drops[b->reason] != st[b->to].drops[b->reason] + 1)
			fail_msg("%s: not counted as %s", b->what, homa_drop_reason_name(b->reason));
	}
	th_pair_run(&p, 1000000000);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 5, id, REQ_LEN));
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
	for (i = 0; i < 2; i++) {
		homa_engine_stats(p.e[i], &after);
		assert_int_equal(after.rpc_restarts, 0);
		assert_int_equal(after.rpcs_aborted, 0);
		assert_int_equal(after.retransmitted_bytes, 0);
		assert_int_equal(after.active_rpcs, 0);
	}
	homa_engine_stats(p.e[1], &after);
	assert_int_equal(after.server_requests_received, 1);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], first.buf, first.len, p.now),
			 HOMA_INPUT_DROPPED + HOMA_DROP_COMPLETED);
	th_pair_run(&p, 1000000000);
	homa_engine_stats(p.e[1], &after);
	assert_int_equal(after.server_requests_received, 1);
	assert_int_equal(after.active_rpcs, 0);
	th_pair_free(&p);
}

/** resend_from() - A RESEND for unknown server RPC @id from @src to the server. Return: input result. */
static int resend_from(struct th_pair *p, const homa_addr *src, uint64_t id)
{
	struct homa_pkt k = base(HOMA_PKT_RESEND, true, id);
	uint8_t buf[64];
	int len = homa_wire_encode(&k, buf, sizeof(buf));

	return homa_engine_input(p->e[1], src, buf, (size_t)len, p->now);
}

/** unknown_replies() - RPC_UNKNOWN packets the server emits now. */
static int unknown_replies(struct th_pair *p)
{
	struct th_pkt k;
	int n = 0;

	while (th_take(p->e[1], p->now, &k) > 0)
		n += k.k.type == HOMA_PKT_RPC_UNKNOWN;
	return n;
}

/**
 * homa_ctl_reply_unknown__rate_limited() - Forged RESENDs for RPCs that
 * do not exist, ten from one host within one tick, draw at most 4
 * RPC_UNKNOWN replies; the rest are counted as suppressed. In the next
 * tick replies are allowed again.
 */
static void homa_ctl_reply_unknown__rate_limited(void **state)
{
	homa_addr forger = homa_addr_ipv4(0x0a090909);
	struct homa_stats st;
	struct th_pair p;
	uint64_t id;

	th_pair_init(&p, NULL);
	for (id = 2; id < 22; id += 2)
		assert_int_equal(resend_from(&p, &forger, id),
				 HOMA_INPUT_DROPPED + HOMA_DROP_UNKNOWN_RPC);
	assert_int_equal(unknown_replies(&p), 4);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.unknown_replies_suppressed, 6);
	assert_int_equal(st.drops[HOMA_DROP_UNKNOWN_RPC], 10);
	p.now += 5 * 1000000;
	homa_engine_on_timer(p.e[1], p.now);
	for (id = 2; id < 22; id += 2)
		resend_from(&p, &forger, id);
	assert_true(unknown_replies(&p) >= 1);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.active_rpcs, 0);
	th_pair_free(&p);
}

/** forged_data_from() - A first DATA packet (1000 of 5000 bytes, cutoff version 0) from @src. */
static void forged_data_from(struct th_pair *p, const homa_addr *src, uint64_t id)
{
	struct homa_pkt k = data(true, id, 5000, 0, 1000);
	uint8_t buf[1200];
	int len = homa_wire_encode(&k, buf, sizeof(buf));

	assert_true(len > 0);
	homa_engine_input(p->e[1], src, buf, (size_t)len, p->now);
}

/** replies_of() - Packets of @type the server emits now. */
static int replies_of(struct th_pair *p, uint8_t type)
{
	struct th_pkt k;
	int n = 0;

	while (th_take(p->e[1], p->now, &k) > 0)
		n += k.ok && k.k.type == type;
	return n;
}

/**
 * homa_ctl_stranger_ok__bounds_replies() - Thirty strangers (no whole
 * message came from them, we started no RPC to them) each send a RESEND
 * for an unknown RPC within one tick: HOMA_STRANGER_REPLIES RPC_UNKNOWNs
 * answer them (30 before the budget: 4 per host was the only limit). The
 * genuine client, once an RPC of it completed, still gets its
 * RPC_UNKNOWN in the same tick. Forged first DATA packets with stale
 * cutoffs from thirty more strangers draw HOMA_STRANGER_REPLIES CUTOFFS in
 * the next tick (30 before). A tick later strangers get replies again.
 */
static void homa_ctl_stranger_ok__bounds_replies(void **state)
{
	struct th_pair p;
	uint32_t i;

	(void)state;
	th_pair_init(&p, NULL);
	p.logging = false;
	p.echo = true;
	assert_true(th_echo_rpc(&p, 7));
	replies_of(&p, 0);
	for (i = 0; i < 30; i++) {
		homa_addr forger = homa_addr_ipv4(0x0b000000 + i);

		resend_from(&p, &forger, 2 + 2 * i);
	}
	assert_int_equal(resend_from(&p, &p.addr[0], 1000000),
			 HOMA_INPUT_DROPPED + HOMA_DROP_UNKNOWN_RPC);
	assert_int_equal(replies_of(&p, HOMA_PKT_RPC_UNKNOWN), HOMA_STRANGER_REPLIES + 1);
	assert_int_equal(p.e[1]->stranger_refused, 30 - HOMA_STRANGER_REPLIES);
	p.now += 1000000;
	for (i = 0; i < 30; i++) {
		homa_addr forger = homa_addr_ipv4(0x0c000000 + i);

		forged_data_from(&p, &forger, 2);
	}
	assert_int_equal(replies_of(&p, HOMA_PKT_CUTOFFS), HOMA_STRANGER_REPLIES);
	p.now += 1000000;
	for (i = 0; i < 3; i++) {
		homa_addr forger = homa_addr_ipv4(0x0d000000 + i);

		resend_from(&p, &forger, 2);
	}
	assert_int_equal(replies_of(&p, HOMA_PKT_RPC_UNKNOWN), 3);
	th_pair_free(&p);
}

/** Context of drop_first_request(): whether the request's first DATA was dropped. */
struct first_drop {
	bool done;
};

/** drop_first_request() - th_filter: drop the client's first DATA packet (a lost request). */
static bool drop_first_request(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct first_drop *d = ctx;
	struct homa_pkt k;

	(void)n;
	if (d->done || from != 0 || homa_wire_decode(pkt, len, &k) || k.type != HOMA_PKT_DATA)
		return false;
	d->done = true;
	return true;
}

/**
 * stranger_ok__newcomer_under_flood() - A new client's first request is
 * lost while strangers spend the server's HOMA_STRANGER_REPLIES at the
 * start of every tick (nine forged RESENDs from nine hosts each
 * millisecond): the server has no reply left for the newcomer's RESENDs,
 * so RPC_UNKNOWN never came and the RPC timed out (HOMA_ETIMEDOUT after
 * timeout_ticks). The client sends its short request again beside its
 * RESEND once a probe went unanswered; the whole request makes it a
 * known peer and the response comes within a few resend intervals.
 */
static void stranger_ok__newcomer_under_flood(void **state)
{
	struct first_drop fd = {false};
	struct homa_stats st;
	uint8_t buf[100];
	struct homa_iov iov = {buf, sizeof(buf)};
	struct homa_event ev;
	struct th_pair p;
	uint64_t id = 0, ms, got = 0;
	int n = 0;

	(void)state;
	th_pair_init(&p, NULL);
	p.logging = false;
	p.echo = true;
	p.filter = drop_first_request;
	p.filter_ctx = &fd;
	th_pattern(buf, sizeof(buf), 5);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 5,
						  p.now, &id), 0);
	for (ms = 0; ms < 400 && !n; ms++) {
		p.now = ms * 1000000;
		for (uint32_t i = 0; i < HOMA_STRANGER_REPLIES + 1; i++) {
			homa_addr forger = homa_addr_ipv4(0x0b000000 + i);

			resend_from(&p, &forger, 2 + 2 * (ms * 16 + i));
		}
		th_pair_run(&p, 999999);
		n = homa_engine_next_event(p.e[0], &ev);
		got = ms;
	}
	assert_true(fd.done);
	assert_int_equal(n, 1);
	assert_int_equal(ev.error, 0); /* HOMA_ETIMEDOUT at 100 ms before */
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_true(th_check_pattern(ev.msg, 5));
	homa_engine_msg_release(p.e[0], ev.msg);
	/* first probe after resend_ticks, the request again at the next */
	assert_true(got <= 3 * p.e[0]->s.resend_ticks + p.e[0]->s.resend_interval);
	assert_true(p.e[1]->stranger_refused > 0);
	homa_engine_stats(p.e[0], &st);
	assert_true(st.requests_resent >= 1);
	th_pair_free(&p);
}

/**
 * handle_need_ack__strangers_within_budget() - Thirty strangers each send
 * a NEED_ACK for an RPC we never had, within one tick: at the next tick
 * HOMA_STRANGER_REPLIES ACKs leave (30 before the budget: one per host).
 */
static void handle_need_ack__strangers_within_budget(void **state)
{
	struct th_pair p;
	uint32_t i;

	(void)state;
	th_pair_init(&p, NULL);
	p.logging = false;
	for (i = 0; i < 30; i++) {
		homa_addr forger = homa_addr_ipv4(0x0b000000 + i);
		struct homa_pkt k = base(HOMA_PKT_NEED_ACK, false, 3 + 2 * (uint64_t)i);
		uint8_t buf[64];
		int len = homa_wire_encode(&k, buf, sizeof(buf));

		homa_engine_input(p.e[0], &forger, buf, (size_t)len, p.now);
	}
	p.now += 1000000;
	homa_engine_on_timer(p.e[0], p.now);
	{
		struct th_pkt k;
		int acks = 0;

		while (th_take(p.e[0], p.now, &k) > 0)
			acks += k.ok && k.k.type == HOMA_PKT_ACK;
		assert_int_equal(acks, HOMA_STRANGER_REPLIES);
	}
	th_pair_free(&p);
}

/**
 * homa_ctl_send__queue_cap() - With max_control_queue 16, thirty
 * RESENDs for unknown RPCs from thirty hosts in one tick queue at most 16
 * RPC_UNKNOWN replies (the rest are dropped: every control packet is
 * repeated by a timer if it matters); the engine stays usable. The server
 * started an RPC to each host first, so none is a stranger (the
 * strangers' budget would stop the replies before the queue fills).
 */
static void homa_ctl_send__queue_cap(void **state)
{
	struct homa_settings s;
	struct homa_stats st;
	struct th_pair p;
	uint32_t i;

	homa_settings_default(&s);
	s.max_control_queue = 16;
	th_pair_init(&p, &s);
	for (i = 0; i < 30; i++) {
		homa_addr host = homa_addr_ipv4(0x0b000000 + i);
		uint8_t b = 1;
		struct homa_iov iov = {&b, 1};
		uint64_t id;

		assert_int_equal(homa_engine_send_request(p.e[1], &host, 4000, &iov, 1, 0, p.now,
							  &id), 0);
	}
	for (i = 0; i < 30; i++) {
		homa_addr forger = homa_addr_ipv4(0x0b000000 + i);

		resend_from(&p, &forger, 2 + 2 * i);
	}
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.control_queue, 16);
	assert_int_equal(unknown_replies(&p), 16);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.control_queue, 0);
	assert_int_equal(st.drops[HOMA_DROP_UNKNOWN_RPC], 30);
	th_pair_free(&p);
}

/** A pool of real packets recorded from a lossy exchange, with their direction. */
struct pool {
	int n;
	int from[600];
	size_t len[600];
	uint8_t buf[600][1500];
	uint64_t cnt;
};

/** record() - Filter: keep a copy of each packet; drop every 7th. */
static bool record(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct pool *pl = ctx;

	if (pl->n < 600 && len <= sizeof(pl->buf[0])) {
		pl->from[pl->n] = from;
		pl->len[pl->n] = len;
		memcpy(pl->buf[pl->n], pkt, len);
		pl->n++;
	}
	return n % 7 == 3;
}

/** send_sizes() - The client sends requests of 1 B, 3 kB, 50 kB and 200 kB. */
static void send_sizes(struct th_pair *p)
{
	static const size_t sizes[] = {1, 3000, 50000, 200000};
	static uint8_t buf[200000];
	size_t i;

	for (i = 0; i < 4; i++) {
		struct homa_iov iov = {buf, sizes[i]};
		uint64_t id;
		int r = homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, i, p->now, &id);

		assert_true(r == 0 || r == HOMA_EAGAIN || r == HOMA_EPEERDEAD);
	}
}

/** check_msgin() - Reassembly state of @in is self-consistent. */
static void check_msgin(const struct homa_msgin *in)
{
	uint64_t missing = 0;
	uint32_t i, prev = 0;

	if (!in->msg)
		return;
	assert_true(in->recv_end <= in->length);
	for (i = 0; i < in->ngaps; i++) {
		assert_true(in->gaps[i].start >= prev);
		assert_true(in->gaps[i].start < in->gaps[i].end);
		assert_true(in->gaps[i].end <= in->recv_end);
		missing += in->gaps[i].end - in->gaps[i].start;
		prev = in->gaps[i].end;
	}
	assert_int_equal(in->received, in->recv_end - missing);
}

/** check_engine() - Bookkeeping of @e is consistent (RPC tables, grants, reservations, tx budget). */
static void check_engine(const homa_engine *e)
{
	uint64_t n = 0, reserved = 0, spare = 0, counted = 0, outstanding = 0, tx = 0;
	const struct homa_link *pos;

	for (pos = e->all_rpcs.next; pos != &e->all_rpcs; pos = pos->next) {
		const struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, all_link);

		n++;
		reserved += r->ev_reserved;
		check_msgin(&r->in);
		if (r->out.msg)
			tx += r->out.msg->charged;
		assert_true(r->out.next_xmit <= r->out.length);
	}
	assert_int_equal(n, e->rpcs.count);
	assert_int_equal(n, e->handles.count);
	for (pos = e->spare_events.next; pos != &e->spare_events; pos = pos->next)
		spare++;
	assert_int_equal(spare, reserved);
	for (pos = e->grantable.next; pos != &e->grantable; pos = pos->next) {
		const struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, in.grant_link);

		counted += r->in.counted;
		outstanding += r->in.outstanding;
	}
	assert_int_equal(counted, e->total_incoming);
	assert_int_equal(outstanding, e->outstanding_msgs);
	assert_int_equal(tx, e->tx_buffered);
	assert_true(e->ctl_count <= e->ctl_cap);
}

/** rnd32() - xorshift. */
static uint32_t rnd32(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/** mutate() - Damage a copy of a recorded packet in one of several ways. Return: its length. */
static size_t mutate(uint8_t *b, size_t len, uint32_t *x)
{
	uint32_t r = rnd32(x), off;

	switch (r % 6) {
	case 0: /* flip bits in the header */
		b[rnd32(x) % (len < 64 ? len : 64)] ^= (uint8_t)(1u << (rnd32(x) % 8));
		break;
	case 1: /* truncate */
		return rnd32(x) % len;
	case 2: /* another type */
		b[11] = (uint8_t)(0x10 + rnd32(x) % 10);
		break;
	case 3: /* a random 32-bit field among offsets/lengths */
		off = (uint32_t[]){4, 28, 32, 52}[rnd32(x) % 4];
		if (off + 4 <= len) {
			uint32_t v = rnd32(x) % 3 ? rnd32(x) % 300000 : rnd32(x);

			b[off] = (uint8_t)(v >> 24); b[off + 1] = (uint8_t)(v >> 16);
			b[off + 2] = (uint8_t)(v >> 8); b[off + 3] = (uint8_t)v;
		}
		break;
	case 4: /* the other side's id, or a neighbour's */
		b[27] ^= (uint8_t)(1 + rnd32(x) % 4);
		break;
	default: /* several random bytes anywhere */
		for (off = 0; off < 4; off++)
			b[rnd32(x) % len] = (uint8_t)rnd32(x);
		break;
	}
	return len;
}

/**
 * mutation_fuzz() - Real packets of a lossy exchange,
 * damaged at random (bit flips, truncation, other types, random offsets
 * and lengths, other ids), are fed by the thousand to a client and a
 * server that are running real RPCs at the same time. After every packet
 * the engine's bookkeeping is consistent; nothing crashes (run under
 * ASan in CI builds with HOMA_SANITIZE); afterwards fresh RPCs complete.
 * TH_SEED=n in the environment picks another mutation sequence.
 */
static void mutation_fuzz(bool start_msg)
{
	static struct pool pl;
	struct homa_settings s;
	struct homa_event ev;
	struct th_pair p;
	uint32_t x = getenv("TH_SEED") ? (uint32_t)atoi(getenv("TH_SEED")) : 2026;
	int i, done = 0;

	homa_settings_default(&s);
	s.unsched_bytes = 10000;
	s.start_msg = start_msg;
	th_pair_init(&p, &s);
	p.echo = true;
	p.logging = false;
	pl.n = 0;
	p.filter = record;
	p.filter_ctx = &pl;
	send_sizes(&p);
	th_pair_run(&p, 2000000000ull);
	th_pair_free(&p);
	assert_true(pl.n > 100);

	th_pair_init(&p, &s);
	p.echo = true;
	p.logging = false;
	for (i = 0; i < 20000; i++) {
		int k = (int)(rnd32(&x) % (uint32_t)pl.n), to = 1 - pl.from[k];
		uint8_t b[1500];
		size_t len;

		if (i % 2000 == 0)
			send_sizes(&p);
		memcpy(b, pl.buf[k], pl.len[k]);
		len = mutate(b, pl.len[k], &x);
		homa_engine_input(p.e[to], &p.addr[1 - to], b, len, p.now);
		check_engine(p.e[to]);
		if (i % 50 == 0) {
			th_pair_run(&p, 1000000);
			check_engine(p.e[0]);
			check_engine(p.e[1]);
			while (homa_engine_next_event(p.e[0], &ev))
				homa_engine_msg_release(p.e[0], ev.msg);
		}
	}
	/* the engines still work: a new client completes fresh RPCs */
	th_pair_run(&p, 3000000000ull);
	while (homa_engine_next_event(p.e[0], &ev))
		homa_engine_msg_release(p.e[0], ev.msg);
	homa_engine_free(p.e[0]);
	assert_int_equal(homa_engine_new(&p.e[0], &s, &p.addr[0], 4100, NULL, p.now), 0);
	p.port[0] = 4100;
	send_sizes(&p);
	th_pair_run(&p, 2000000000ull);
	while (homa_engine_next_event(p.e[0], &ev)) {
		assert_int_equal(ev.type, HOMA_EV_RESPONSE);
		homa_engine_msg_release(p.e[0], ev.msg);
		done++;
	}
	assert_int_equal(done, 4);
	check_engine(p.e[1]);
	th_pair_free(&p);
}

/** homa_engine_input__mutation_fuzz() - The fuzz above with unscheduled data. */
static void homa_engine_input__mutation_fuzz(void **state)
{
	mutation_fuzz(false);
}

/** homa_engine_input__mutation_fuzz_start_msg() - The same in START_MSG mode. */
static void homa_engine_input__mutation_fuzz_start_msg(void **state)
{
	mutation_fuzz(true);
}

/** drop_requests() - th_filter: drop every client DATA packet while *@ctx is true. */
static bool drop_requests(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct homa_pkt k;

	(void)n;
	return *(bool *)ctx && from == 0 && !homa_wire_decode(pkt, len, &k) &&
	       k.type == HOMA_PKT_DATA;
}

/**
 * lossy_server() - An echo pair whose server answered one 100-byte RPC,
 * then loses every request packet (@drop is set): a second RPC is sent.
 * Return: the second RPC's id.
 */
static uint64_t lossy_server(struct th_pair *p, bool *drop)
{
	static uint8_t req[100];
	struct homa_iov iov = {req, sizeof(req)};
	struct homa_event ev;
	uint64_t id;

	th_pair_init(p, NULL);
	p->filter = drop_requests;
	p->filter_ctx = drop;
	p->echo = true;
	p->logging = false;
	*drop = false;
	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, 1,
						  p->now, &id), 0);
	th_pair_run(p, 1000000);
	assert_int_equal(homa_engine_next_event(p->e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	homa_engine_msg_release(p->e[0], ev.msg);
	*drop = true;
	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, 2,
						  p->now, &id), 0);
	return id;
}

/**
 * restart__ours_restarts_for_a_timeout() - A server of ours that never
 * answered this client loses every request packet (a flood overflowing
 * its receive buffer before it served anything): its plain RPC_UNKNOWN
 * means a lost request, not a port that does not serve (that one says
 * HOMA_EXT_NOSERVER), so the request restarts past max_restarts for
 * timeout_ticks and completes once the loss stops; kept lost, it fails
 * with HOMA_EABANDONED within two timeouts. It failed after max_restarts
 * restarts, a few resend intervals (16 honest RPCs of
 * hardening_rt_flood under ASan).
 */
static void restart__ours_restarts_for_a_timeout(void **state)
{
	static uint8_t req[100];
	struct homa_iov iov = {req, sizeof(req)};
	const struct homa_settings *s;
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	bool drop = true;
	uint64_t id, t0;

	(void)state;
	for (int lost_for_good = 0; lost_for_good < 2; lost_for_good++) {
		th_pair_init(&p, NULL);
		p.filter = drop_requests;
		p.filter_ctx = &drop;
		p.echo = true;
		p.logging = false;
		drop = true;
		s = homa_engine_settings(p.e[0]);
		assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1,
							  1, p.now, &id), 0);
		t0 = p.now;
		th_pair_run(&p, (uint64_t)s->timeout_ticks * s->tick_ns / 2);
		homa_engine_stats(p.e[0], &st);
		assert_true(st.rpc_restarts > s->max_restarts);
		assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
		drop = lost_for_good;
		while (homa_engine_next_event(p.e[0], &ev) == 0 &&
		       p.now - t0 < 2ull * s->timeout_ticks * s->tick_ns)
			th_pair_run(&p, s->tick_ns);
		assert_true(ev.id == id);
		if (lost_for_good) {
			assert_int_equal(ev.type, HOMA_EV_ERROR);
			assert_int_equal(ev.error, HOMA_EABANDONED);
			assert_true(p.now - t0 >= (uint64_t)s->timeout_ticks * s->tick_ns);
		} else {
			assert_int_equal(ev.type, HOMA_EV_RESPONSE);
			homa_engine_msg_release(p.e[0], ev.msg);
		}
		th_pair_free(&p);
	}
}

/**
 * restart__serving_port_not_capped() - A port that answered a request
 * within timeout_ticks serves: when it loses the next request again and
 * again (a flood overflowing its receive buffer), each RPC_UNKNOWN
 * restarts the request past max_restarts, and once the loss stops the RPC
 * completes (it failed after max_restarts restarts).
 */
static void restart__serving_port_not_capped(void **state)
{
	const struct homa_settings *s;
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	bool drop;
	uint64_t id;

	(void)state;
	id = lossy_server(&p, &drop);
	s = homa_engine_settings(p.e[0]);
	th_pair_run(&p, (uint64_t)s->timeout_ticks * s->tick_ns / 2);
	homa_engine_stats(p.e[0], &st);
	assert_true(st.rpc_restarts > s->max_restarts);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
	drop = false;
	th_pair_run(&p, 100 * s->tick_ns);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_true(ev.id == id);
	homa_engine_msg_release(p.e[0], ev.msg);
	th_pair_free(&p);
}

/**
 * restart__cap_returns_when_port_stops_answering() - The same server
 * losing every request for good: once timeout_ticks passed without an
 * answer from the port, the cap applies again and the RPC fails with
 * HOMA_EABANDONED (the port serves but dropped the request), within two
 * timeouts (not after max_restarts
 * restarts, while the port's answer was recent).
 */
static void restart__cap_returns_when_port_stops_answering(void **state)
{
	const struct homa_settings *s;
	struct homa_event ev;
	struct th_pair p;
	uint64_t id, t0;
	bool drop;

	(void)state;
	id = lossy_server(&p, &drop);
	s = homa_engine_settings(p.e[0]);
	t0 = p.now;
	while (homa_engine_next_event(p.e[0], &ev) == 0 &&
	       p.now - t0 < 2ull * s->timeout_ticks * s->tick_ns)
		th_pair_run(&p, s->tick_ns);
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_true(ev.id == id);
	assert_int_equal(ev.error, HOMA_EABANDONED);
	assert_true(p.now - t0 >= (uint64_t)s->timeout_ticks * s->tick_ns / 2);
	th_pair_free(&p);
}

/**
 * next_of() - The next event of engine @e whose type is @type, discarding
 * none: fails the test if the next event is another one.
 */
static void next_of(homa_engine *e, uint8_t type, struct homa_event *ev)
{
	assert_int_equal(homa_engine_next_event(e, ev), 1);
	assert_int_equal(ev->type, type);
}

/**
 * restart__busy_port_serves() - A server whose application is slow holds
 * request A unanswered (its port answers A's RESENDs with BUSY) while
 * every packet of request X is lost for two timeouts: X restarts again
 * and again, and completes once the loss stops. A port that answers BUSY
 * for one of our requests serves; only a completed response counted as
 * that before, so X failed with HOMA_EABANDONED after max_restarts (one
 * RPC of 16,000 in runtime_loopback_udp, when the server's threads fell
 * behind under load and its receive buffer overflowed).
 */
static void restart__busy_port_serves(void **state)
{
	static uint8_t req[100];
	struct homa_iov iov = {req, sizeof(req)};
	const struct homa_settings *s;
	struct homa_event a, x, ev;
	struct homa_stats st;
	struct th_pair p;
	uint64_t ida, idx;
	bool drop = false;

	(void)state;
	th_pair_init(&p, NULL);
	p.filter = drop_requests;
	p.filter_ctx = &drop;
	p.logging = false;
	s = homa_engine_settings(p.e[0]);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 1,
						  p.now, &ida), 0);
	th_pair_run(&p, 10 * s->tick_ns);
	next_of(p.e[1], HOMA_EV_REQUEST, &a);
	drop = true;
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 2,
						  p.now, &idx), 0);
	th_pair_run(&p, 2ull * s->timeout_ticks * s->tick_ns);
	homa_engine_stats(p.e[0], &st);
	assert_true(st.rpc_restarts > s->max_restarts);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
	drop = false;
	th_pair_run(&p, 20 * s->tick_ns);
	next_of(p.e[1], HOMA_EV_REQUEST, &x);
	assert_int_equal(homa_engine_send_reply(p.e[1], a.id, &iov, 1, p.now), 0);
	assert_int_equal(homa_engine_send_reply(p.e[1], x.id, &iov, 1, p.now), 0);
	homa_engine_msg_release(p.e[1], a.msg);
	homa_engine_msg_release(p.e[1], x.msg);
	th_pair_run(&p, 20 * s->tick_ns);
	for (int i = 0; i < 2; i++) {
		next_of(p.e[0], HOMA_EV_RESPONSE, &ev);
		assert_true(ev.id == ida || ev.id == idx);
		homa_engine_msg_release(p.e[0], ev.msg);
	}
	th_pair_free(&p);
}

/** drop_all_requests() - th_filter: the client's packets never reach the server. */
static bool drop_all_requests(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	(void)ctx;
	(void)pkt;
	(void)len;
	(void)n;
	return from == 0;
}

/**
 * restart__stale_unknowns_count_once() - A client RESENT a lost request
 * several times before a slow server answered the queue of RESENDs with
 * RPC_UNKNOWNs in one burst: that is one loss, one restart, not one per
 * RPC_UNKNOWN. Before, each restarted the request again, so a port not
 * yet seen serving (early in runtime_loopback_udp under load) failed the
 * RPC with HOMA_EABANDONED after max_restarts + 1 answers to RESENDs that
 * were all about the first send.
 */
static void restart__stale_unknowns_count_once(void **state)
{
	static uint8_t req[100];
	struct homa_iov iov = {req, sizeof(req)};
	const struct homa_settings *s;
	struct homa_event ev;
	struct homa_stats st;
	struct homa_pkt k;
	struct th_pair p;
	uint8_t buf[128];
	uint64_t id;
	int len, resends;

	(void)state;
	th_pair_init(&p, NULL);
	p.filter = drop_all_requests;
	p.logging = false;
	s = homa_engine_settings(p.e[0]);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 1,
						  p.now, &id), 0);
	th_pair_run(&p, (uint64_t)(s->resend_ticks + 4 * s->resend_interval) * s->tick_ns);
	homa_engine_stats(p.e[0], &st);
	resends = (int)st.resends_sent;
	assert_true(resends > (int)s->max_restarts);
	k = base(HOMA_PKT_RPC_UNKNOWN, false, id ^ 1);
	k.sport = p.port[1];
	k.dport = p.port[0];
	for (int i = 0; i < resends; i++) {
		len = homa_wire_encode(&k, buf, sizeof(buf));
		assert_true(len > 0);
		homa_engine_input(p.e[0], &p.addr[1], buf, (size_t)len, p.now);
	}
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpc_restarts, 1);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
	th_pair_free(&p);
}

/**
 * forge_requests() - @n DATA packets from 10.7.7.7, each opening a new
 * @mlen-byte request (distinct ids, 1000 bytes at offset 0), into the
 * server. Return: how many were dropped with HOMA_DROP_PEER_LIMIT.
 */
static int forge_requests(struct th_pair *p, int n, uint32_t mlen, uint64_t first_id)
{
	homa_addr liar = homa_addr_ipv4(0x0a070707);
	uint8_t buf[1600];
	int i, limited = 0;

	for (i = 0; i < n; i++) {
		struct homa_pkt k = data(true, first_id + 2 * (uint64_t)i, mlen, 0,
					 mlen < 1000 ? mlen : 1000);
		int len = homa_wire_encode(&k, buf, sizeof(buf));

		assert_true(len > 0);
		limited += homa_engine_input(p->e[1], &liar, buf, (size_t)len, p->now) ==
			   HOMA_INPUT_DROPPED + HOMA_DROP_PEER_LIMIT;
	}
	return limited;
}

/**
 * peer_limit__partial_requests_bounded() - One host, a stranger, opening
 * 500 requests it never finishes gets HOMA_STRANGER_PARTIAL_MSGS of them;
 * the rest are dropped and counted as HOMA_DROP_PEER_LIMIT. A one-packet
 * request of the same host still gets in, and an honest 100 kB RPC from
 * another host completes. (Every forged request used to become an RPC and
 * a message.)
 */
static void peer_limit__partial_requests_bounded(void **state)
{
	struct homa_iov iov = {NULL, 0};
	static uint8_t req[REQ_LEN];
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	uint64_t id;

	(void)state;
	th_pair_init(&p, NULL);
	p.echo = true;
	assert_int_equal(forge_requests(&p, 500, 200000, 1000), 500 - HOMA_STRANGER_PARTIAL_MSGS);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.drops[HOMA_DROP_PEER_LIMIT], 500 - HOMA_STRANGER_PARTIAL_MSGS);
	assert_int_equal(st.active_rpcs, HOMA_STRANGER_PARTIAL_MSGS);
	assert_string_equal(homa_drop_reason_name(HOMA_DROP_PEER_LIMIT), "peer_limit");
	assert_int_equal(forge_requests(&p, 1, 500, 9000), 0); /* whole: accepted */
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.server_requests_received, 1);
	iov.base = req;
	iov.len = sizeof(req);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 1,
						  p.now, &id), 0);
	th_pair_run(&p, 1000000000);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	homa_engine_msg_release(p.e[0], ev.msg);
	th_pair_free(&p);
}

/**
 * peer_limit__stranger_until_proven() - A stranger host gets
 * HOMA_STRANGER_PARTIAL_MSGS partly received requests; once one whole
 * message came from it (a one-packet request), it may hold up to
 * HOMA_PEER_PARTIAL_MSGS like any proven host. (Before the stranger's
 * limit it got HOMA_PEER_PARTIAL_MSGS from the first packet.)
 */
static void peer_limit__stranger_until_proven(void **state)
{
	enum { MORE = 100 };
	struct th_pair p;

	(void)state;
	th_pair_init(&p, NULL);
	assert_int_equal(forge_requests(&p, HOMA_STRANGER_PARTIAL_MSGS + 1, 200000, 1000), 1);
	assert_int_equal(forge_requests(&p, 1, 500, 9000), 0); /* whole: proves the host */
	assert_int_equal(forge_requests(&p, MORE, 200000, 20000),
			 MORE - (HOMA_PEER_PARTIAL_MSGS - HOMA_STRANGER_PARTIAL_MSGS));
	th_pair_free(&p);
}

/**
 * peer_limit__slot_frees_when_request_completes() - The limit counts
 * requests partly received: once one of the host's requests completes,
 * the host may open another. (The stranger's limit is set to the proven
 * host's here, so completing a request, which proves the host, changes
 * the limit by nothing.)
 */
static void peer_limit__slot_frees_when_request_completes(void **state)
{
	homa_addr liar = homa_addr_ipv4(0x0a070707);
	struct homa_settings s;
	uint8_t buf[1600];
	struct th_pair p;
	struct homa_pkt k;
	int len;

	(void)state;
	homa_settings_default(&s);
	s.max_stranger_partial_msgs = HOMA_PEER_PARTIAL_MSGS;
	th_pair_init(&p, &s);
	assert_int_equal(forge_requests(&p, HOMA_PEER_PARTIAL_MSGS + 1, 2000, 1000), 1);
	k = data(true, 1000, 2000, 1000, 1000); /* the rest of the first one */
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_int_equal(homa_engine_input(p.e[1], &liar, buf, (size_t)len, p.now), 0);
	assert_int_equal(forge_requests(&p, 2, 2000, 5000), 1);
	th_pair_free(&p);
}

/** Forged requests partial_limit__many_hosts_bounded() injects. */
#define FORGED_HOSTS 5000

/**
 * forge_from_hosts() - @n DATA packets into @p's server, each opening a
 * 200 kB request (1000 bytes at offset 0) from its own address
 * 10.8.x.y. Return: how many were dropped with HOMA_DROP_PARTIAL_LIMIT.
 */
static int forge_from_hosts(struct th_pair *p, int n)
{
	uint8_t buf[1600];
	int i, limited = 0;

	for (i = 0; i < n; i++) {
		homa_addr liar = homa_addr_ipv4(0x0a080000u + (uint32_t)i);
		struct homa_pkt k = data(true, 7000 + 2 * (uint64_t)i, 200000, 0, 1000);
		int len = homa_wire_encode(&k, buf, sizeof(buf));

		assert_true(len > 0);
		limited += homa_engine_input(p->e[1], &liar, buf, (size_t)len, p->now) ==
			   HOMA_INPUT_DROPPED + HOMA_DROP_PARTIAL_LIMIT;
	}
	return limited;
}

/** State of flood_mid_request(). */
struct mid_flood {
	struct th_pair *p;
	int limited;     /**< forged requests dropped as HOMA_DROP_PARTIAL_LIMIT */
	bool done;
};

/**
 * flood_mid_request() - Pair filter: when the client's second packet
 * crosses (the server holds the honest request partly received), inject
 * FORGED_HOSTS forged requests from as many hosts. Drops nothing.
 */
static bool flood_mid_request(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct mid_flood *f = ctx;

	(void)pkt;
	(void)len;
	(void)n;
	if (from == 0 && !f->done && f->p->e[1]->partial_in == 1) {
		f->done = true;
		f->limited = forge_from_hosts(f->p, FORGED_HOSTS);
	}
	return false;
}

/**
 * partial_limit__many_hosts_bounded() - A server in the middle of an
 * honest 100 kB request gets 5000 forged partial requests, each from its
 * own address. settings.max_partial_msgs (1024) bounds them across hosts:
 * 1023 are opened, the rest are dropped as HOMA_DROP_PARTIAL_LIMIT before
 * any peer is created, the sorted grant list never holds more than 1024
 * messages, and the honest request is granted and answered. (The
 * per-host bound let every forged host in: 5001 RPCs and peers.)
 */
static void partial_limit__many_hosts_bounded(void **state)
{
	struct homa_iov iov = {NULL, 0};
	static uint8_t req[REQ_LEN];
	struct mid_flood f = {0};
	struct homa_event ev;
	struct homa_stats st;
	struct homa_settings s;
	struct homa_link *pos;
	struct th_pair p;
	int listed = 0;
	uint64_t id;

	(void)state;
	homa_settings_default(&s);
	th_pair_init(&p, &s);
	p.echo = true;
	f.p = &p;
	p.filter = flood_mid_request;
	p.filter_ctx = &f;
	iov.base = req;
	iov.len = sizeof(req);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 1,
						  p.now, &id), 0);
	th_pair_run(&p, 1000);
	assert_true(f.done);
	assert_int_equal(f.limited, FORGED_HOSTS - ((int)s.max_partial_msgs - 1));
	for (pos = p.e[1]->grantable.next; pos != &p.e[1]->grantable; pos = pos->next)
		listed++;
	assert_true(listed <= (int)s.max_partial_msgs);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.drops[HOMA_DROP_PARTIAL_LIMIT], f.limited);
	assert_int_equal(st.active_rpcs, s.max_partial_msgs);
	assert_true(st.peers <= s.max_partial_msgs + 1);
	assert_string_equal(homa_drop_reason_name(HOMA_DROP_PARTIAL_LIMIT), "partial_limit");
	th_pair_run(&p, 1000000000);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_int_equal(homa_msg_length(ev.msg), REQ_LEN);
	homa_engine_msg_release(p.e[0], ev.msg);
	th_pair_free(&p);
}

/**
 * limits_applied() - A server with settings @first: one stranger forging 8
 * requests has @dropped1 of them dropped (HOMA_DROP_PEER_LIMIT); with
 * @then applied through homa_engine_set_settings(), 4 more have @dropped2.
 */
static void limits_applied(const struct homa_settings *first, int dropped1,
			   const struct homa_settings *then, int dropped2)
{
	struct th_pair p;

	th_pair_init(&p, first);
	assert_int_equal(forge_requests(&p, 8, 200000, 1000), dropped1);
	assert_int_equal(homa_engine_set_settings(p.e[1], then), 0);
	assert_int_equal(forge_requests(&p, 4, 200000, 5000), dropped2);
	th_pair_free(&p);
}

/**
 * refused_outside_range() - Settings @s (valid) with *@field, one of its
 * limits of partly received requests, at 0 or at max_partial_msgs + 1
 * fail validation (0 naming @name); at max_partial_msgs they pass.
 */
static void refused_outside_range(struct homa_settings *s, uint32_t *field, const char *name)
{
	const char *why = NULL;

	*field = 0;
	assert_int_equal(homa_settings_validate(s, &why), HOMA_EINVAL);
	assert_non_null(strstr(why, name));
	*field = s->max_partial_msgs + 1;
	assert_int_equal(homa_settings_validate(s, NULL), HOMA_EINVAL);
	*field = s->max_partial_msgs;
	assert_int_equal(homa_settings_validate(s, NULL), 0);
}

/**
 * peer_limit__setting() - settings.max_peer_partial_msgs replaces the
 * built-in 64 (for a stranger too, when below its own limit), and a
 * change through homa_engine_set_settings() applies to the next request;
 * bad values are refused by validation.
 */
static void peer_limit__setting(void **state)
{
	struct homa_settings a, b;

	(void)state;
	homa_settings_default(&a);
	assert_int_equal(a.max_peer_partial_msgs, HOMA_PEER_PARTIAL_MSGS);
	a.max_peer_partial_msgs = 5;
	b = a;
	b.max_peer_partial_msgs = 7;
	limits_applied(&a, 3, &b, 2);
	refused_outside_range(&a, &a.max_peer_partial_msgs, "max_peer_partial_msgs");
	a.max_peer_partial_msgs = 1;
	a.max_partial_msgs = 0;
	assert_int_equal(homa_settings_validate(&a, NULL), HOMA_EINVAL);
}

/**
 * peer_limit__stranger_setting() - settings.max_stranger_partial_msgs
 * replaces the built-in 16 for strangers, and one above
 * max_peer_partial_msgs acts as that; 0 and values above max_partial_msgs
 * are refused by validation.
 */
static void peer_limit__stranger_setting(void **state)
{
	struct homa_settings a, b;

	(void)state;
	homa_settings_default(&a);
	assert_int_equal(a.max_stranger_partial_msgs, HOMA_STRANGER_PARTIAL_MSGS);
	a.max_stranger_partial_msgs = 3;
	b = a;
	b.max_stranger_partial_msgs = 200;
	b.max_peer_partial_msgs = 6;
	limits_applied(&a, 5, &b, 1);
	refused_outside_range(&a, &a.max_stranger_partial_msgs, "max_stranger_partial_msgs");
}

/**
 * announce__requests_already_arriving() - Announcements turned on while
 * a request is partly here announce it at once (HOMA_EV_REQUEST_BEGIN
 * with its length), not at its next packet; the packet after that does
 * not announce it again, a request started later is announced at its
 * first packet, and a request already whole is not announced.
 * homa_engine_rx_progress() gives each announced request's bytes so far.
 */
static void announce__requests_already_arriving(void **state)
{
	uint8_t buf[1600];
	struct homa_event ev;
	struct th_pair p;
	struct homa_pkt k;
	int len;

	(void)state;
	th_pair_init(&p, NULL);
	k = data(true, 1000, 2000, 0, 1000); /* half of a 2000-byte request */
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], buf, (size_t)len, p.now), 0);
	k = data(true, 1002, 500, 0, 500); /* a whole one */
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], buf, (size_t)len, p.now), 0);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST); /* the whole one, delivered */
	homa_engine_msg_release(p.e[1], ev.msg);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 0);

	homa_engine_announce_requests(p.e[1], true);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST_BEGIN);
	assert_int_equal(homa_engine_rx_progress(p.e[1], ev.id, NULL), 1000);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 0);
	homa_engine_announce_requests(p.e[1], true); /* on already: nothing new */
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 0);

	k = data(true, 1004, 3000, 0, 1000); /* a new request: announced at its first packet */
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], buf, (size_t)len, p.now), 0);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST_BEGIN);
	assert_int_equal(homa_engine_rx_progress(p.e[1], ev.id, NULL), 1000);
	k = data(true, 1000, 2000, 1000, 500); /* more of the first: not announced again */
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], buf, (size_t)len, p.now), 0);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 0);
	th_pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_engine_input__malformed_corpus),
		cmocka_unit_test(peer_limit__partial_requests_bounded),
		cmocka_unit_test(peer_limit__stranger_until_proven),
		cmocka_unit_test(peer_limit__slot_frees_when_request_completes),
		cmocka_unit_test(partial_limit__many_hosts_bounded),
		cmocka_unit_test(peer_limit__setting),
		cmocka_unit_test(peer_limit__stranger_setting),
		cmocka_unit_test(homa_ctl_reply_unknown__rate_limited),
		cmocka_unit_test(homa_ctl_send__queue_cap),
		cmocka_unit_test(homa_ctl_stranger_ok__bounds_replies),
		cmocka_unit_test(handle_need_ack__strangers_within_budget),
		cmocka_unit_test(stranger_ok__newcomer_under_flood),
		cmocka_unit_test(homa_engine_input__mutation_fuzz),
		cmocka_unit_test(homa_engine_input__mutation_fuzz_start_msg),
		cmocka_unit_test(restart__ours_restarts_for_a_timeout),
		cmocka_unit_test(restart__serving_port_not_capped),
		cmocka_unit_test(restart__cap_returns_when_port_stops_answering),
		cmocka_unit_test(restart__busy_port_serves),
		cmocka_unit_test(restart__stale_unknowns_count_once),
		cmocka_unit_test(announce__requests_already_arriving),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
