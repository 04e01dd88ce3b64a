/* SPDX-License-Identifier: MIT */
/**
 * @file test_outgoing.c
 * The sender (src/core/outgoing.c): SRPT among outgoing messages, the
 * pacer and its FIFO share, unscheduled and scheduled priorities, incast
 * control, and the tx budget.
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

static uint8_t big[300000];

/** engine() - A client engine at 10.0.0.1:4000 with settings @s. */
static homa_engine *engine(const struct homa_settings *s)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	homa_engine *e;

	assert_int_equal(homa_engine_new(&e, s, &a, 4000, NULL, 0), 0);
	return e;
}

/** request() - Queue a @len-byte request to 10.0.0.2:4001 at @now. Return: its id. */
static uint64_t request(homa_engine *e, size_t len, uint64_t now)
{
	homa_addr srv = homa_addr_ipv4(0x0a000002);
	struct homa_iov iov = {big, len};
	uint64_t id;

	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, len, now, &id), 0);
	return id;
}

/** next_data() - Take the next packet; it must be DATA. Return: its message length. */
static uint32_t next_data(homa_engine *e, uint64_t now, struct th_pkt *k)
{
	assert_true(th_take(e, now, k) > 0 && k->ok);
	assert_int_equal(k->k.type, HOMA_PKT_DATA);
	return k->k.u.data.message_length;
}

/**
 * homa_output_data__srpt_short_first() - A short message queued while a
 * long one is being paced out goes next, and the long one resumes after it.
 */
static void homa_output_data__srpt_short_first(void **state)
{
	struct homa_settings s;
	struct th_pkt k;
	homa_engine *e;
	uint64_t now = 0;
	int sent = 0;

	homa_settings_default(&s);
	s.pacer_fifo_fraction = 0;
	e = engine(&s);
	request(e, 100000, 0);
	while (th_take(e, 0, &k) > 0)
		sent++;
	assert_true(sent >= 5 && sent <= 20); /* the pacer stopped it */
	request(e, 3000, 0);
	now = homa_engine_next_deadline(e);
	assert_int_equal(next_data(e, now, &k), 3000);
	assert_int_equal(k.k.u.data.offset, 0);
	now += 1000000;
	assert_int_equal(next_data(e, now, &k), 3000);
	assert_int_equal(next_data(e, now, &k), 3000);
	assert_int_equal(k.k.u.data.payload_len, 3000 - 2 * 1416);
	assert_int_equal(next_data(e, now, &k), 100000);
	assert_int_equal(k.k.u.data.offset, (uint32_t)sent * 1416);
	homa_engine_free(e);
}

/**
 * homa_engine_has_output() is false on an idle engine, true while a
 * request's packets wait (also while the pacer holds them back, as in
 * pacer_holds_nic_queue) and false again once everything went out: a host
 * skips the output call and its clock reading exactly then.
 */
static void homa_engine_has_output__idle_queued_sent(void **state)
{
	struct homa_settings s;
	struct th_pkt k;
	homa_engine *e;

	(void)state;
	homa_settings_default(&s);
	s.link_mbps = 1000;
	e = engine(&s);
	assert_false(homa_engine_has_output(e));
	request(e, 100000, 0);
	assert_true(homa_engine_has_output(e));
	for (int i = 0; i < 5; i++)  /* the four-packet bound's first burst */
		assert_int_equal(next_data(e, 0, &k), 100000);
	assert_int_equal(th_take(e, 0, &k), 0);
	assert_false(homa_engine_want_output(e, 0));
	assert_true(homa_engine_has_output(e));  /* held by the pacer, not done */
	homa_engine_free(e);

	e = engine(NULL);
	request(e, 100, 0);
	assert_true(homa_engine_has_output(e));
	while (th_take(e, 0, &k) > 0)
		;
	assert_false(homa_engine_has_output(e));
	assert_int_equal(th_take(e, 1000000, &k), 0);
	homa_engine_free(e);
}

/**
 * homa_engine_output__pacer_holds_nic_queue() - At 1 Gbps a full packet
 * takes 12304 ns on the wire (1472 + 66 bytes of framing), so the backlog
 * bound is its floor of four packets (49216 ns), above max_nic_queue_ns =
 * 5000. The first five packets go at once (each is sent while the backlog
 * is at most the bound). The pacer then wants to be called when one packet
 * is left (5 * 12304 - 12304 ns), and that call sends four more; output
 * before 12304 ns, when the backlog first drops to the bound, returns 0.
 */
static void homa_engine_output__pacer_holds_nic_queue(void **state)
{
	struct homa_settings s;
	struct homa_stats st;
	struct th_pkt k;
	homa_engine *e;

	homa_settings_default(&s);
	s.link_mbps = 1000;
	e = engine(&s);
	request(e, 100000, 0);
	assert_true(homa_engine_want_output(e, 0));
	for (int i = 0; i < 5; i++) {
		assert_int_equal(next_data(e, 0, &k), 100000);
		assert_int_equal(k.len, 1472);
		assert_int_equal(k.k.u.data.offset, (uint32_t)i * 1416);
	}
	assert_int_equal(th_take(e, 0, &k), 0);
	assert_false(homa_engine_want_output(e, 0));
	assert_int_equal(homa_engine_next_deadline(e), 4 * 12304);
	assert_int_equal(th_take(e, 12303, &k), 0);
	assert_false(homa_engine_want_output(e, 4 * 12304 - 1));
	assert_true(homa_engine_want_output(e, 4 * 12304));
	for (int i = 5; i < 9; i++) {
		assert_int_equal(next_data(e, 4 * 12304, &k), 100000);
		assert_int_equal(k.k.u.data.offset, (uint32_t)i * 1416);
	}
	assert_int_equal(th_take(e, 4 * 12304, &k), 0);
	assert_int_equal(homa_engine_next_deadline(e), 8 * 12304);
	homa_engine_stats(e, &st);
	assert_true(st.pacer_throttled_ns > 0);
	assert_int_equal(st.pkts_sent[0], 9);
	homa_engine_free(e);
}

/**
 * homa_engine_output__pacer_fast_link_uses_setting() - At 25 Gbps two
 * packets take 984 ns, less than max_nic_queue_ns = 5000: the setting is
 * the bound, and a 100 KB message goes out in a burst of about 5000 ns of
 * link time (5000 / 492 + 1 = 11 packets) before the pacer holds it.
 */
static void homa_engine_output__pacer_fast_link_uses_setting(void **state)
{
	struct homa_settings s;
	struct th_pkt k;
	homa_engine *e;
	int sent = 0;

	homa_settings_default(&s);
	e = engine(&s);
	request(e, 100000, 0);
	while (th_take(e, 0, &k) > 0)
		sent++;
	assert_int_equal(sent, 11);
	homa_engine_free(e);
}

/** fifo_order() - L (200000 B, older) and S (20000 B): letters of the first 10 packets' messages. */
static void fifo_order(uint32_t fraction, char *out)
{
	struct homa_settings s;
	struct th_pkt k;
	homa_engine *e;
	uint64_t now = 1;
	int i;

	homa_settings_default(&s);
	s.pacer_fifo_fraction = fraction;
	e = engine(&s);
	request(e, 200000, 0);
	request(e, 20000, 1);
	for (i = 0; i < 10; i++, now += 1000000)
		out[i] = next_data(e, now, &k) == 20000 ? 'S' : 'L';
	out[10] = 0;
	homa_engine_free(e);
}

/**
 * homa_output_data__pacer_fifo_share() - pacer_fifo_fraction 500 per mille:
 * once the credit covers a full packet, every other packet goes to the
 * oldest message instead of the shortest; with 0 the shortest has it all.
 */
static void homa_output_data__pacer_fifo_share(void **state)
{
	char order[11];

	fifo_order(0, order);
	assert_string_equal(order, "SSSSSSSSSS");
	fifo_order(500, order);
	assert_string_equal(order, "SSLSLSLSLS");
}

/** cutoffs_pkt() - A CUTOFFS packet from 10.0.0.2:4001 with {.., max, 5000, 1000, 100}, version 7. */
static int cutoffs_pkt(uint8_t *buf)
{
	struct homa_pkt c;

	memset(&c, 0, sizeof(c));
	c.type = HOMA_PKT_CUTOFFS;
	c.sport = 4001;
	c.dport = 4000;
	c.u.cutoffs.cutoffs[4] = 0xffffffffu;
	c.u.cutoffs.cutoffs[5] = 5000;
	c.u.cutoffs.cutoffs[6] = 1000;
	c.u.cutoffs.cutoffs[7] = 100;
	c.u.cutoffs.version = 7;
	return homa_wire_encode(&c, buf, 100);
}

/**
 * homa_unsched_priority__from_peer_cutoffs() - Unscheduled bytes go at
 * the level the receiver's CUTOFFS give for the message length (and DATA
 * carries that cutoff version); granted bytes at the GRANT's priority.
 */
static void homa_unsched_priority__from_peer_cutoffs(void **state)
{
	homa_addr srv = homa_addr_ipv4(0x0a000002);
	struct homa_settings s;
	struct homa_pkt g;
	struct th_pkt k;
	uint8_t buf[100];
	uint64_t now = 0, id_long;
	homa_engine *e;
	int len, i;

	homa_settings_default(&s);
	s.unsched_bytes = 3000;
	s.pacer_fifo_fraction = 0;
	e = engine(&s);
	request(e, 3000, 0);
	len = cutoffs_pkt(buf);
	assert_int_equal(homa_engine_input(e, &srv, buf, (size_t)len, 0), 0);
	request(e, 50, 0);
	request(e, 1000, 0);
	id_long = request(e, 100000, 0);
	assert_int_equal(next_data(e, now, &k), 50);
	assert_int_equal(k.tx.priority, 7);
	assert_int_equal(k.k.u.data.cutoff_version, 7);
	assert_int_equal(next_data(e, now, &k), 1000);
	assert_int_equal(k.tx.priority, 6);
	for (i = 0; i < 3; i++) {
		assert_int_equal(next_data(e, now, &k), 3000);
		assert_int_equal(k.tx.priority, 5);
	}
	for (i = 0; i < 3; i++) {
		assert_int_equal(next_data(e, now, &k), 100000);
		assert_int_equal(k.tx.priority, 4);
	}
	assert_int_equal(k.k.u.data.offset + k.k.u.data.payload_len, 3000);
	assert_int_equal(th_take(e, now, &k), 0); /* the rest needs grants */
	memset(&g, 0, sizeof(g));
	g.type = HOMA_PKT_GRANT;
	g.sport = 4001;
	g.dport = 4000;
	g.sender_id = id_long ^ 1;
	g.u.grant.offset = 10000;
	g.u.grant.priority = 2;
	len = homa_wire_encode(&g, buf, sizeof(buf));
	now = 1000000;
	assert_int_equal(homa_engine_input(e, &srv, buf, (size_t)len, now), 0);
	assert_int_equal(next_data(e, now, &k), 100000);
	assert_int_equal(k.k.u.data.offset, 3000);
	assert_int_equal(k.tx.priority, 2);
	assert_int_equal(k.k.u.data.incoming, 10000);
	homa_engine_free(e);
}

/** take_reply() - Server replies to request event @ev with @len pattern bytes. */
static void take_reply(struct th_pair *p, const struct homa_event *ev, size_t len)
{
	struct homa_iov iov = {big, len};

	th_pattern(big, len, 77);
	assert_int_equal(homa_engine_send_reply(p->e[1], ev->id, &iov, 1, p->now), 0);
	homa_engine_msg_release(p->e[1], ev->msg);
}

/**
 * fill_data__incast_flag() - With incast_threshold 2 a client's third
 * outstanding RPC to one server marks its request HOMA_EXT_INCAST; the
 * server then sends that response's first incast_unsched_bytes only and
 * waits for grants, while a normal response goes out whole.
 */
static void fill_data__incast_flag(void **state)
{
	struct homa_settings s;
	struct homa_event ev[3];
	struct th_pkt k[3], r, inc;
	struct th_pair p;
	int i, n;

	homa_settings_default(&s);
	s.incast_threshold = 2;
	s.incast_unsched_bytes = 1400;
	th_pair_init(&p, &s);
	request(p.e[0], 100, 0);                 /* 1 outstanding */
	next_data(p.e[0], 0, &k[0]);
	assert_int_equal(k[0].k.ext & HOMA_EXT_INCAST, 0);
	request(p.e[0], 100, 0);
	request(p.e[0], 100, 0);                 /* 3 outstanding > 2 */
	next_data(p.e[0], 0, &k[1]);
	next_data(p.e[0], 0, &k[2]);
	assert_int_equal(k[1].k.ext & HOMA_EXT_INCAST, HOMA_EXT_INCAST);
	assert_int_equal(k[2].k.ext & HOMA_EXT_INCAST, HOMA_EXT_INCAST);
	for (i = 0; i < 3; i++) {
		assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], k[i].buf, (size_t)k[i].len, 0), 0);
		assert_int_equal(homa_engine_next_event(p.e[1], &ev[i]), 1);
	}
	while (th_take(p.e[1], 0, &r) > 0)
		; /* CUTOFFS */
	take_reply(&p, &ev[0], 20000);
	/* these 15 packets are not delivered: the client recovers them with RESENDs */
	for (n = 0; th_take(p.e[1], p.now, &r) > 0; n++) {
		assert_int_equal(r.k.u.data.incoming, 20000);
		p.now += 1000000;
	}
	assert_int_equal(n, 15);
	take_reply(&p, &ev[2], 20000);
	assert_int_equal(next_data(p.e[1], p.now, &inc), 20000);
	assert_int_equal(inc.k.u.data.payload_len, 1400);
	assert_int_equal(inc.k.u.data.incoming, 1400);
	assert_int_equal(th_take(p.e[1], p.now + 1000000, &r), 0);
	assert_int_equal(homa_engine_input(p.e[0], &p.addr[1], inc.buf, (size_t)inc.len, p.now), 0);
	take_reply(&p, &ev[1], 20000);
	p.logging = false;
	th_pair_run(&p, 100000000);
	for (i = 0; i < 3; i++)
		assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 77, 0, TH_ANY_LEN));
	th_pair_free(&p);
}

/**
 * check_message__tx_budget() - Sends that would pass max_tx_buffered are
 * refused with HOMA_EAGAIN (and counted); once completed RPCs release
 * their buffers the same send is accepted. The same holds for replies.
 */
static void check_message__tx_budget(void **state)
{
	struct homa_iov iov = {big, 60000};
	struct homa_settings s;
	struct homa_event ev[2];
	struct homa_stats st;
	struct th_pair p;
	uint64_t id;
	int i;

	homa_settings_default(&s);
	s.max_tx_buffered = 100000;
	th_pair_init(&p, &s);
	p.logging = false;
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 1, 0, &id), 0);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 2, 0, &id), HOMA_EAGAIN);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.sends_refused, 1);
	assert_true(st.tx_buffered_bytes >= 60000);
	iov.len = 30000;
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 3, 0, &id), 0);
	th_pair_run(&p, 100000000);
	for (i = 0; i < 2; i++)
		assert_int_equal(homa_engine_next_event(p.e[1], &ev[i]), 1);
	iov.len = 60000;
	assert_int_equal(homa_engine_send_reply(p.e[1], ev[0].id, &iov, 1, p.now), 0);
	assert_int_equal(homa_engine_send_reply(p.e[1], ev[1].id, &iov, 1, p.now), HOMA_EAGAIN);
	th_pair_run(&p, 100000000); /* first reply delivered, acked, freed */
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.tx_buffered_bytes, 0);
	assert_int_equal(homa_engine_send_reply(p.e[1], ev[1].id, &iov, 1, p.now), 0);
	homa_engine_msg_release(p.e[1], ev[0].msg);
	homa_engine_msg_release(p.e[1], ev[1].msg);
	th_pair_run(&p, 100000000);
	for (i = 0; i < 2; i++) {
		struct homa_event r;

		assert_int_equal(homa_engine_next_event(p.e[0], &r), 1);
		assert_int_equal(r.type, HOMA_EV_RESPONSE);
		homa_engine_msg_release(p.e[0], r.msg);
	}
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.tx_buffered_bytes, 0);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 4, p.now, &id), 0);
	th_pair_free(&p);
}

/** Counters of drop_some_data(). */
struct drop_count {
	int seen;    /**< client packets seen */
	int dropped; /**< of them dropped */
};

/** drop_some_data() - Filter: drop the 3rd and 20th packets the client sends. */
static bool drop_some_data(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct drop_count *d = ctx;

	(void)pkt;
	(void)len;
	(void)n;
	if (from != 0)
		return false;
	d->seen++;
	if (d->seen != 3 && d->seen != 20)
		return false;
	d->dropped++;
	return true;
}

/**
 * homa_engine_send_request_ref__reads_caller_bytes() - A request sent by
 * reference from three uneven pieces arrives bit-exact, including the
 * retransmitted packets, and carries the bytes as they are at send time
 * (changed after the call: the engine kept no copy); it is charged to
 * the tx budget like a copied one, and the budget is released at the end.
 */
static void homa_engine_send_request_ref__reads_caller_bytes(void **state)
{
	static uint8_t buf[200000];
	struct homa_iov iov[3] = {{buf, 1000}, {buf + 1000, 50001}, {buf + 51001, 148999}};
	struct homa_iov whole = {big, sizeof(buf)};
	struct homa_stats st, copied;
	struct homa_event ev;
	struct th_pair p;
	uint64_t id, ref_id;
	struct drop_count dropped = {0, 0};

	(void)state;
	th_pair_init(&p, NULL);
	p.logging = false;
	p.filter = drop_some_data;
	p.filter_ctx = &dropped;
	th_pattern(buf, sizeof(buf), 1);
	assert_int_equal(homa_engine_send_request_ref(p.e[0], &p.addr[1], p.port[1], iov, 3,
						      7, 0, &ref_id), 0);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(homa_engine_send_request(p.e[1], &p.addr[0], p.port[0], &whole, 1,
						  8, 0, &id), 0);
	homa_engine_stats(p.e[1], &copied);
	assert_true(st.tx_buffered_bytes == copied.tx_buffered_bytes);
	homa_engine_abort(p.e[1], id, 0);
	th_pattern(buf, sizeof(buf), 2);
	th_pair_run(&p, 1000000000);
	assert_int_equal(dropped.dropped, 2);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	assert_int_equal(homa_msg_length(ev.msg), sizeof(buf));
	assert_true(th_check_pattern(ev.msg, 2));
	homa_engine_stats(p.e[0], &st);
	assert_true(st.retransmitted_bytes > 0);
	assert_int_equal(homa_engine_abort(p.e[0], ref_id, p.now), 0);
	homa_engine_msg_release(p.e[1], ev.msg);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.tx_buffered_bytes, 0);
	th_pair_free(&p);
}

/** homa_rpc_new__max_rpcs() - The RPC cap refuses new requests with HOMA_EAGAIN. */
static void homa_rpc_new__max_rpcs(void **state)
{
	struct homa_settings s;
	struct homa_stats st;
	homa_addr srv = homa_addr_ipv4(0x0a000002);
	struct homa_iov iov = {big, 10};
	homa_engine *e;
	uint64_t id;

	homa_settings_default(&s);
	s.max_rpcs = 2;
	e = engine(&s);
	request(e, 10, 0);
	request(e, 10, 0);
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, 0, 0, &id), HOMA_EAGAIN);
	homa_engine_stats(e, &st);
	assert_int_equal(st.sends_refused, 1);
	assert_int_equal(st.active_rpcs, 2);
	homa_engine_free(e);
}

/**
 * fill_data__piggybacked_ack() - A completed RPC's ack rides in the next
 * request's first DATA packet to the same server port, and the server
 * frees the finished RPC on it (no ACK packet needed).
 */
static void fill_data__piggybacked_ack(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct th_pkt k;
	struct th_pair p;
	uint64_t id1;

	th_pair_init(&p, NULL);
	p.echo = true;
	id1 = request(p.e[0], 100, 0);
	/* move packets without running timers (which would send an ACK) */
	while (th_take(p.e[0], p.now, &k) > 0 || th_take(p.e[1], p.now, &k) > 0) {
		int from = k.tx.dport == 4001 ? 0 : 1;
		struct homa_event sev;

		homa_engine_input(p.e[1 - from], &p.addr[from], k.buf, (size_t)k.len, p.now);
		while (homa_engine_next_event(p.e[1], &sev)) {
			struct homa_iov iov = {big, 10};

			assert_int_equal(homa_engine_send_reply(p.e[1], sev.id, &iov, 1, p.now), 0);
			homa_engine_msg_release(p.e[1], sev.msg);
		}
	}
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.id, id1);
	homa_engine_msg_release(p.e[0], ev.msg);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.active_rpcs, 1); /* finished, waiting for the ack */
	request(p.e[0], 100, p.now);
	assert_int_equal(next_data(p.e[0], p.now, &k), 100);
	assert_true(k.k.u.data.ack.client_id == id1);
	assert_int_equal(k.k.u.data.ack.server_port, 4001);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], k.buf, (size_t)k.len, p.now), 0);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.acks_received, 1);
	assert_int_equal(st.active_rpcs, 1); /* only the new request */
	assert_int_equal(st.pkts_recv[HOMA_PKT_ACK - HOMA_PKT_FIRST], 0);
	th_pair_free(&p);
}

/**
 * move_echo() - Move packets between the pair without running timers
 * (which would send ACKs), the server answering every request with 10
 * bytes as it completes.
 */
static void move_echo(struct th_pair *p)
{
	struct th_pkt k;

	while (th_take(p->e[0], p->now, &k) > 0 || th_take(p->e[1], p->now, &k) > 0) {
		int from = k.tx.dport == 4001 ? 0 : 1;
		struct homa_event sev;

		homa_engine_input(p->e[1 - from], &p->addr[from], k.buf, (size_t)k.len, p->now);
		while (homa_engine_next_event(p->e[1], &sev)) {
			struct homa_iov iov = {big, 10};

			assert_int_equal(homa_engine_send_reply(p->e[1], sev.id, &iov, 1, p->now), 0);
			homa_engine_msg_release(p->e[1], sev.msg);
		}
	}
}

/** take_responses() - Take and release @n responses the client has. */
static void take_responses(homa_engine *e, int n)
{
	struct homa_event ev;

	for (int i = 0; i < n; i++) {
		assert_int_equal(homa_engine_next_event(e, &ev), 1);
		homa_engine_msg_release(e, ev.msg);
	}
}

/**
 * add_ack__held_for_next_requests() - A client that finishes 16 RPCs to
 * one server port at once keeps all 16 acks for its next requests to
 * carry (HOMA_PEER_ACKS): no ACK packet goes out before the tick (with
 * room for 5, as in the Linux module, 3 ACK packets do, one per wake-up
 * of a client with 32 RPCs in flight), and the next 16 requests' first
 * DATA packets carry the 16 acks.
 */
static void add_ack__held_for_next_requests(void **state)
{
	struct homa_stats st;
	struct th_pair p;

	th_pair_init(&p, NULL);
	p.echo = true;
	for (int i = 0; i < 16; i++)
		request(p.e[0], 100, 0);
	move_echo(&p);
	take_responses(p.e[0], 16);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.pkts_recv[HOMA_PKT_ACK - HOMA_PKT_FIRST], 0);
	assert_int_equal(st.active_rpcs, 16); /* finished, waiting for their acks */
	for (int i = 0; i < 16; i++)
		request(p.e[0], 100, p.now);
	move_echo(&p);
	take_responses(p.e[0], 16);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.acks_received, 16);
	assert_int_equal(st.pkts_recv[HOMA_PKT_ACK - HOMA_PKT_FIRST], 0);
	assert_int_equal(st.active_rpcs, 16); /* the second 16 */
	th_pair_free(&p);
}

/**
 * need_ack() - Hand @p's client a NEED_ACK from the server for its RPC
 * @id (the server's reply was done and no ack came back yet).
 */
static void need_ack(struct th_pair *p, uint64_t id)
{
	struct homa_pkt k;
	uint8_t buf[64];
	int len;

	memset(&k, 0, sizeof(k));
	k.type = HOMA_PKT_NEED_ACK;
	k.sport = 4001;
	k.dport = homa_engine_port(p->e[0]);
	k.sender_id = id ^ 1;
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_true(len > 0);
	homa_engine_input(p->e[0], &p->addr[1], buf, (size_t)len, p->now);
}

/**
 * handle_need_ack__owed_once() - A NEED_ACK for an RPC whose ack the
 * client already owes (its next request has not left yet) adds no second
 * copy: the two next requests carry the two owed acks and none is left
 * behind. With a copy, the copy took a slot and rode a later request
 * in place of a newer ack, so the server kept that request's finished
 * reply one request (or until the client's tick) longer.
 */
static void handle_need_ack__owed_once(void **state)
{
	struct homa_peer *peer;
	struct homa_stats st;
	struct th_pair p;
	uint64_t id;

	(void)state;
	th_pair_init(&p, NULL);
	p.echo = true;
	id = request(p.e[0], 100, 0);
	request(p.e[0], 100, 0);
	move_echo(&p);
	take_responses(p.e[0], 2);
	peer = homa_peer_find(p.e[0], &p.addr[1]);
	assert_non_null(peer);
	assert_int_equal(peer->num_acks, 2);
	need_ack(&p, id);
	assert_int_equal(peer->num_acks, 2);
	request(p.e[0], 100, p.now);
	request(p.e[0], 100, p.now);
	move_echo(&p);
	take_responses(p.e[0], 2);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.acks_received, 2);
	assert_int_equal(st.active_rpcs, 2); /* the second two, finished */
	assert_int_equal(peer->num_acks, 2); /* their acks, nothing older */
	th_pair_free(&p);
}

/**
 * sent_unsched() - Send a @len-byte request with unsched_bytes 3000 (two
 * 1416-byte packets and 168 bytes of a third) and take every DATA packet
 * it sends without a grant; each must announce @incoming. Return: the
 * bytes sent, and in @last the last packet's payload length.
 */
static uint32_t sent_unsched(size_t len, uint32_t incoming, uint32_t *last)
{
	struct homa_settings s;
	struct th_pkt k;
	uint64_t now = 0;
	uint32_t sent = 0;
	homa_engine *e;

	homa_settings_default(&s);
	s.unsched_bytes = 3000;
	e = engine(&s);
	request(e, len, 0);
	while (th_take(e, now, &k) > 0) {
		assert_true(k.ok);
		assert_int_equal(k.k.type, HOMA_PKT_DATA);
		assert_int_equal(k.k.u.data.incoming, incoming);
		sent += k.k.u.data.payload_len;
		*last = k.k.u.data.payload_len;
		now += 1000000;
	}
	homa_engine_free(e);
	return sent;
}

/**
 * homa_msgout_attach__whole_last_packet() - A request whose last packet
 * starts inside the unscheduled window goes out whole without a grant
 * (3100 and 4248 bytes with unsched_bytes 3000: the old engine sent 3000
 * and waited a GRANT round trip for the tail). A request longer than the
 * window in whole packets (4249 bytes) still sends exactly unsched_bytes.
 */
static void homa_msgout_attach__whole_last_packet(void **state)
{
	uint32_t last = 0;

	(void)state;
	assert_int_equal(sent_unsched(3100, 3100, &last), 3100);
	assert_int_equal(last, 3100 - 2 * 1416);
	assert_int_equal(sent_unsched(4248, 4248, &last), 4248);
	assert_int_equal(last, 1416);
	assert_int_equal(sent_unsched(4249, 3000, &last), 3000);
	assert_int_equal(last, 3000 - 2 * 1416);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_output_data__srpt_short_first),
		cmocka_unit_test(homa_engine_output__pacer_holds_nic_queue),
		cmocka_unit_test(homa_engine_has_output__idle_queued_sent),
		cmocka_unit_test(homa_engine_output__pacer_fast_link_uses_setting),
		cmocka_unit_test(homa_output_data__pacer_fifo_share),
		cmocka_unit_test(homa_unsched_priority__from_peer_cutoffs),
		cmocka_unit_test(fill_data__incast_flag),
		cmocka_unit_test(check_message__tx_budget),
		cmocka_unit_test(homa_rpc_new__max_rpcs),
		cmocka_unit_test(homa_engine_send_request_ref__reads_caller_bytes),
		cmocka_unit_test(fill_data__piggybacked_ack),
		cmocka_unit_test(add_ack__held_for_next_requests),
		cmocka_unit_test(handle_need_ack__owed_once),
		cmocka_unit_test(homa_msgout_attach__whole_last_packet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
