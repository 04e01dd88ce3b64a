/* SPDX-License-Identifier: MIT */
/**
 * @file test_timer.c
 * The timer (src/core/timer.c): timeouts after a server or client crash
 * within timeout_ticks, dead peers, NEED_ACK for a lost ack, repeated
 * START_MSG, and BUSY keeping a long server call alive.
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

#define TICK 1000000ull
/** Slack allowed past timeout_ticks * tick_ns: tick alignment plus one tick. */
#define SLACK (2 * TICK)

static uint8_t big[200000];

/** Filter state: once crashed, nothing crosses the wire. */
struct crash {
	bool crashed;
	int drop_type;     /**< also drop the first packet of this type (0 = none) */
	int drop_from;     /**< ... sent by this side */
	bool dropped_one;
};

/** crash_filter() - Drop everything after the crash, and the chosen single packet. */
static bool crash_filter(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct crash *c = ctx;

	if (c->crashed)
		return true;
	if (c->drop_type && !c->dropped_one && from == c->drop_from && len > 11 &&
	    pkt[11] == c->drop_type) {
		c->dropped_one = true;
		return true;
	}
	return false;
}

/** setup() - A pair with the crash filter; logging off. */
static void setup(struct th_pair *p, struct crash *c, const struct homa_settings *s)
{
	th_pair_init(p, s);
	memset(c, 0, sizeof(*c));
	p->filter = crash_filter;
	p->filter_ctx = c;
	p->logging = false;
}

/** send() - Client sends @len pattern bytes. Return: the id. */
static uint64_t send(struct th_pair *p, size_t len)
{
	struct homa_iov iov = {big, len};
	uint64_t id;

	th_pattern(big, len, 11);
	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, 1,
						  p->now, &id), 0);
	return id;
}

/** reply() - The server answers its next request event with @len bytes. */
static void reply(struct th_pair *p, size_t len)
{
	struct homa_iov iov = {big, len};
	struct homa_event ev;

	assert_int_equal(homa_engine_next_event(p->e[1], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	th_pattern(big, len, 11);
	assert_int_equal(homa_engine_send_reply(p->e[1], ev.id, &iov, 1, p->now), 0);
	homa_engine_msg_release(p->e[1], ev.msg);
}

/** active() - The server's live RPCs. */
static uint64_t active(struct th_pair *p, int side)
{
	struct homa_stats st;

	homa_engine_stats(p->e[side], &st);
	return st.active_rpcs;
}

/** wait_client_event() - Run tick by tick until the client has an event (max @limit ns). */
static bool wait_client_event(struct th_pair *p, uint64_t limit, struct homa_event *ev)
{
	uint64_t end = p->now + limit;

	while (p->now < end) {
		if (homa_engine_next_event(p->e[0], ev))
			return true;
		th_pair_run(p, TICK);
		if (p->now < end && homa_engine_next_deadline(p->e[0]) == UINT64_MAX &&
		    homa_engine_next_deadline(p->e[1]) == UINT64_MAX)
			p->now += TICK;
	}
	return homa_engine_next_event(p->e[0], ev);
}

/** wait_server_idle() - Run tick by tick until the server has no RPC (max @limit ns). */
static void wait_server_idle(struct th_pair *p, uint64_t limit)
{
	uint64_t end = p->now + limit;

	while (active(p, 1) && p->now < end)
		th_pair_run(p, TICK);
}

/**
 * homa_timer_tick__server_crash() - The server dies after receiving the
 * request: the client's RPC fails with HOMA_ETIMEDOUT no later than
 * timeout_ticks * tick_ns (plus two ticks) after the server's last packet
 * and not much earlier; a new request to that server port fails at once
 * with HOMA_EPEERDEAD (one to another port of the host does not), and is
 * accepted again a few ticks later.
 */
static void homa_timer_tick__server_crash(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	struct crash c;
	struct homa_iov iov = {big, 10};
	uint64_t id, id2, crash_at;

	setup(&p, &c, NULL);
	id = send(&p, 1000);
	th_pair_run(&p, 1000); /* request and CUTOFFS cross */
	crash_at = p.now;
	c.crashed = true;
	assert_true(wait_client_event(&p, 200 * TICK, &ev));
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_int_equal(ev.error, HOMA_ETIMEDOUT);
	assert_int_equal(ev.id, id);
	assert_true(p.now - crash_at <= 100 * TICK + SLACK);
	assert_true(p.now - crash_at >= 99 * TICK);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpcs_timed_out, 1);
	assert_int_equal(st.peers_declared_dead, 1);
	assert_true(st.resends_sent >= 10);
	assert_int_equal(st.active_rpcs, 0);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 0,
						  p.now, &id2), HOMA_EPEERDEAD);
	/* death is per (address, port): other ports of that host are not refused */
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], (uint16_t)(p.port[1] + 1),
						  &iov, 1, 0, p.now, &id2), 0);
	th_pair_run(&p, 6 * TICK);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 0,
						  p.now, &id2), 0);
	th_pair_free(&p);
}

/**
 * homa_timer_tick__dead_port_expires_without_ticks() - After a timeout
 * marks a server port dead, an application that keeps sending to it
 * (each send refused at once, so no RPC exists and the host may run no
 * tick meanwhile) is accepted again once resend_ticks of engine time
 * passed. (Death counted ticks: with no tick the port stayed dead for
 * good, and homa-flood's client had every later request refused.)
 */
static void homa_timer_tick__dead_port_expires_without_ticks(void **state)
{
	struct homa_event ev;
	struct th_pair p;
	struct crash c;
	struct homa_iov iov = {big, 10};
	uint64_t id, id2;

	setup(&p, &c, NULL);
	id = send(&p, 1000);
	th_pair_run(&p, 1000);
	c.crashed = true;
	assert_true(wait_client_event(&p, 200 * TICK, &ev));
	assert_int_equal(ev.error, HOMA_ETIMEDOUT);
	assert_int_equal(ev.id, id);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 0,
						  p.now, &id2), HOMA_EPEERDEAD);
	for (int i = 1; i <= 6; i++)
		assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1,
							  0, p.now + (uint64_t)i * TICK / 2, &id2),
				 HOMA_EPEERDEAD);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 0,
						  p.now + 6 * TICK, &id2), 0);
	th_pair_free(&p);
}

/**
 * homa_timer_tick__client_crash_while_reply_waits_for_grants() - The
 * client dies after its request; the server's 100 kB reply needs grants
 * that never come: the server frees the RPC and its buffers within the
 * timeout bound.
 */
static void homa_timer_tick__client_crash_while_reply_waits_for_grants(void **state)
{
	struct homa_stats st;
	struct th_pair p;
	struct crash c;
	uint64_t crash_at;

	setup(&p, &c, NULL);
	send(&p, 1000);
	th_pair_run(&p, 1000);
	reply(&p, 100000);
	crash_at = p.now;
	c.crashed = true;
	wait_server_idle(&p, 200 * TICK);
	assert_int_equal(active(&p, 1), 0);
	assert_true(p.now - crash_at <= 100 * TICK + SLACK);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.tx_buffered_bytes, 0);
	assert_int_equal(st.rx_buffered_bytes, 0);
	assert_int_equal(st.rpcs_timed_out, 1);
	th_pair_free(&p);
}

/**
 * homa_timer_tick__client_crash_mid_request() - The client dies while
 * sending a 150 kB request: the server asks for the rest with RESENDs,
 * then frees the partial request within the timeout bound.
 */
static void homa_timer_tick__client_crash_mid_request(void **state)
{
	struct homa_stats st;
	struct th_pair p;
	struct crash c;
	uint64_t crash_at;

	setup(&p, &c, NULL);
	send(&p, 150000);
	th_pair_run(&p, 3000);
	homa_engine_stats(p.e[1], &st);
	assert_true(st.rx_buffered_bytes > 0);
	assert_int_equal(st.server_requests_received, 0);
	crash_at = p.now;
	c.crashed = true;
	wait_server_idle(&p, 200 * TICK);
	assert_int_equal(active(&p, 1), 0);
	assert_true(p.now - crash_at <= 100 * TICK + SLACK);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.rx_buffered_bytes, 0);
	assert_true(st.resends_sent >= 10);
	th_pair_free(&p);
}

/**
 * homa_timer_tick__client_crash_before_ack() - The client dies after the
 * reply arrived but before acking it: the server asks with NEED_ACK,
 * then frees the finished RPC within the timeout bound.
 */
static void homa_timer_tick__client_crash_before_ack(void **state)
{
	struct homa_stats st;
	struct th_pkt k;
	struct th_pair p;
	struct crash c;
	uint64_t crash_at;

	setup(&p, &c, NULL);
	send(&p, 1000);
	th_pair_run(&p, 1000);
	reply(&p, 1000);
	assert_true(th_take(p.e[1], p.now, &k) > 0 && k.ok);
	assert_int_equal(k.k.type, HOMA_PKT_DATA);
	crash_at = p.now;
	c.crashed = true;
	wait_server_idle(&p, 200 * TICK);
	assert_int_equal(active(&p, 1), 0);
	assert_true(p.now - crash_at <= 100 * TICK + SLACK);
	homa_engine_stats(p.e[1], &st);
	assert_true(st.pkts_sent[HOMA_PKT_NEED_ACK - HOMA_PKT_FIRST] >= 5);
	th_pair_free(&p);
}

/**
 * homa_timer_tick__need_ack_after_lost_ack() - The client's ACK is lost:
 * request_ack_ticks later the server sends NEED_ACK, the client answers
 * with an ACK and the server frees the RPC.
 */
static void homa_timer_tick__need_ack_after_lost_ack(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	struct crash c;
	const char *lost, *need, *ack;

	setup(&p, &c, NULL);
	p.logging = true;
	p.echo = true;
	c.drop_type = HOMA_PKT_ACK;
	c.drop_from = 0;
	send(&p, 100);
	th_pair_run(&p, 50 * TICK);
	lost = strstr(p.log, "c>s ACK p7 DROPPED");
	assert_non_null(lost);
	need = strstr(lost, "s>c NEED_ACK p7; c>s ACK p7");
	assert_non_null(need);
	ack = strstr(need, "; ");
	assert_string_equal(ack, "; c>s ACK p7"); /* nothing after */
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.active_rpcs, 0);
	assert_int_equal(st.acks_received, 1);
	assert_int_equal(st.pkts_sent[HOMA_PKT_NEED_ACK - HOMA_PKT_FIRST], 1);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	homa_engine_msg_release(p.e[0], ev.msg);
	th_pair_free(&p);
}

/**
 * homa_timer_tick__start_msg_repeated() - In START_MSG mode the first
 * START_MSG is lost: the client repeats it after resend_ticks, the server
 * grants, and the RPC completes.
 */
static void homa_timer_tick__start_msg_repeated(void **state)
{
	struct homa_settings s;
	struct homa_stats st;
	struct th_pair p;
	struct crash c;

	homa_settings_default(&s);
	s.start_msg = true;
	s.unsched_bytes = 10000;
	setup(&p, &c, &s);
	p.logging = true;
	p.echo = true;
	c.drop_type = HOMA_PKT_START_MSG;
	c.drop_from = 0;
	send(&p, 50000);
	th_pair_run(&p, 100 * TICK);
	assert_non_null(strstr(p.log, "c>s START_MSG p7 DROPPED; c>s START_MSG p7; s>c GRANT"));
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.start_msgs_resent, 1);
	assert_int_equal(st.rpc_restarts, 0);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 11, 0, TH_ANY_LEN));
	th_pair_free(&p);
}

/**
 * homa_timer_tick__busy_keeps_long_call_alive() - The server application
 * holds the request three times longer than the timeout: the client's
 * RESENDs draw BUSY answers, nothing times out, and the late reply arrives.
 */
static void homa_timer_tick__busy_keeps_long_call_alive(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	struct crash c;
	uint64_t id;

	setup(&p, &c, NULL);
	id = send(&p, 1000);
	th_pair_run(&p, 300 * TICK);
	assert_true(p.now >= 299 * TICK);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
	homa_engine_stats(p.e[1], &st);
	assert_true(st.busy_sent >= 20);
	reply(&p, 5000);
	th_pair_run(&p, 10 * TICK);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 11, id, TH_ANY_LEN));
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpcs_timed_out, 0);
	th_pair_free(&p);
}

/**
 * homa_engine_peer_waiting__counts_unanswered_probes() - A client RPC whose
 * server works on the request waits, but its RESENDs are answered (BUSY):
 * few unanswered probes. Once the server goes silent they pile up; an
 * aborted RPC no longer waits. Another port of the host has none.
 */
static void homa_engine_peer_waiting__counts_unanswered_probes(void **state)
{
	struct th_pair p;
	struct crash c;
	uint32_t probes = 99;
	uint64_t id;

	(void)state;
	setup(&p, &c, NULL);
	assert_int_equal(homa_engine_peer_waiting(p.e[0], &p.addr[1], p.port[1], &probes), 0);
	assert_int_equal(probes, 0);
	id = send(&p, 100);
	th_pair_run(&p, 50 * TICK);    /* the server holds the request: BUSY answers */
	assert_int_equal(homa_engine_peer_waiting(p.e[0], &p.addr[1], p.port[1], &probes), 1);
	assert_true(probes < 2);
	assert_int_equal(homa_engine_peer_waiting(p.e[0], &p.addr[1], p.port[1] + 1, NULL), 0);
	c.crashed = true;
	th_pair_run(&p, 50 * TICK);
	assert_int_equal(homa_engine_peer_waiting(p.e[0], &p.addr[1], p.port[1], &probes), 1);
	assert_true(probes >= 5);
	assert_int_equal(homa_engine_abort(p.e[0], id, p.now), 0);
	assert_int_equal(homa_engine_peer_waiting(p.e[0], &p.addr[1], p.port[1], &probes), 0);
	assert_int_equal(probes, 0);
	assert_int_equal(homa_engine_peer_waiting(NULL, &p.addr[1], p.port[1], &probes), 0);
	th_pair_free(&p);
}

/**
 * homa_engine_abort__server_abort_fails_client() - The server application
 * aborts a request it received. The client's RESEND draws an RPC_UNKNOWN
 * marked HOMA_EXT_FINISHED, and the client fails the RPC with
 * HOMA_EABANDONED a few ticks later instead of restarting it (the restart
 * would be refused as completed, forever); the server ran it once.
 */
static void homa_engine_abort__server_abort_fails_client(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	struct crash c;
	uint64_t id, t0;

	setup(&p, &c, NULL);
	p.logging = true;
	id = send(&p, 100);
	th_pair_run(&p, 1000);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 1);
	assert_int_equal(homa_engine_abort(p.e[1], ev.id, p.now), 0);
	homa_engine_msg_release(p.e[1], ev.msg);
	t0 = p.now;
	assert_true(wait_client_event(&p, 50 * TICK, &ev));
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_int_equal(ev.error, HOMA_EABANDONED);
	assert_int_equal(ev.id, id);
	assert_true(p.now - t0 <= 7 * TICK);
	assert_non_null(strstr(p.log, "c>s RESEND 40000@0 p7; s>c RPC_UNKNOWN p7"));
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpc_restarts, 0);
	assert_int_equal(st.active_rpcs, 0);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.server_requests_received, 1);
	assert_int_equal(st.active_rpcs, 0);
	th_pair_free(&p);
}

/**
 * handle_unknown__unflagged_restarts() - An RPC_UNKNOWN without the
 * FINISHED flag (a server that lost its state) still restarts the request,
 * which then completes.
 */
static void handle_unknown__unflagged_restarts(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	struct crash c;
	uint64_t id;

	setup(&p, &c, NULL);
	id = send(&p, 100);
	th_pair_run(&p, 1000);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 1);
	homa_engine_msg_release(p.e[1], ev.msg);
	/* the server restarts with no memory of the RPC */
	homa_engine_free(p.e[1]);
	assert_int_equal(homa_engine_new(&p.e[1], NULL, &p.addr[1], p.port[1], NULL, p.now), 0);
	homa_engine_set_server(p.e[1], true);
	p.echo = true;
	assert_true(wait_client_event(&p, 50 * TICK, &ev));
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_int_equal(ev.id, id);
	assert_true(th_check_pattern(ev.msg, 11));
	homa_engine_msg_release(p.e[0], ev.msg);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpc_restarts, 1);
	th_pair_free(&p);
}

/** RESENDs seen on the wire: when and for which RPC. */
struct resend_log {
	struct th_pair *p;
	int n;
	uint64_t at[64];
	uint64_t id[64];
};

/** log_resends() - Filter: record the client's RESENDs, then drop everything (server is dead). */
static bool log_resends(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct resend_log *r = ctx;
	struct homa_pkt k;

	if (from == 0 && r->n < 64 && homa_wire_decode(pkt, len, &k) == 0 &&
	    k.type == HOMA_PKT_RESEND) {
		r->at[r->n] = r->p->now;
		r->id[r->n] = k.sender_id;
		r->n++;
	}
	return true;
}

/**
 * homa_timer_tick__one_resend_per_peer_rotated() - Three RPCs wait on a
 * dead server: the client sends at most one RESEND to it per tick, and
 * the RESENDs rotate over the three RPCs.
 */
static void homa_timer_tick__one_resend_per_peer_rotated(void **state)
{
	struct resend_log r;
	struct th_pair p;
	struct crash c;
	uint64_t ids[3];
	int i, k, count[3] = {0, 0, 0};

	setup(&p, &c, NULL);
	for (i = 0; i < 3; i++)
		ids[i] = send(&p, 100);
	th_pair_run(&p, 1000);
	memset(&r, 0, sizeof(r));
	r.p = &p;
	p.filter = log_resends;
	p.filter_ctx = &r;
	th_pair_run(&p, 40 * TICK);
	assert_true(r.n >= 9);
	for (i = 1; i < r.n; i++)
		assert_true(r.at[i] >= r.at[i - 1] + TICK); /* never two in one tick */
	for (i = 0; i < 9; i++)
		for (k = 0; k < 3; k++)
			count[k] += r.id[i] == ids[k];
	for (k = 0; k < 3; k++)
		assert_int_equal(count[k], 3);
	th_pair_free(&p);
}

/** Server S and two client processes A (port 4000) and B (port 4002) on one host. */
struct host3 {
	homa_engine *s, *a, *b;
	homa_addr client_host, server_host;
	uint64_t now;
	bool a_dead;
	struct homa_event a_req;  /**< A's request at the server, if delivered */
	bool have_a_req;
};

/** h3_move() - Deliver every packet the three engines want to send; S echoes B's requests. */
static void h3_move(struct host3 *h)
{
	struct homa_event ev;
	struct th_pkt k;
	bool any = true;

	while (any) {
		any = false;
		while (th_take(h->s, h->now, &k) > 0) {
			any = true;
			if (k.tx.dport == 4002)
				homa_engine_input(h->b, &h->server_host, k.buf, (size_t)k.len, h->now);
			else if (!h->a_dead)
				homa_engine_input(h->a, &h->server_host, k.buf, (size_t)k.len, h->now);
		}
		while (!h->a_dead && th_take(h->a, h->now, &k) > 0) {
			any = true;
			homa_engine_input(h->s, &h->client_host, k.buf, (size_t)k.len, h->now);
		}
		while (th_take(h->b, h->now, &k) > 0) {
			any = true;
			homa_engine_input(h->s, &h->client_host, k.buf, (size_t)k.len, h->now);
		}
		while (homa_engine_next_event(h->s, &ev)) {
			struct homa_iov iov = {big, homa_msg_length(ev.msg)};

			if (ev.peer_port != 4002) {
				h->a_req = ev;
				h->have_a_req = true;
				continue;
			}
			assert_int_equal(homa_engine_send_reply(h->s, ev.id, &iov, 1, h->now), 0);
			homa_engine_msg_release(h->s, ev.msg);
		}
	}
}

/** a_rpcs_at_server() - Server RPCs that belong to process A. */
static int a_rpcs_at_server(struct host3 *h)
{
	struct homa_link *pos;
	int n = 0;

	for (pos = h->s->all_rpcs.next; pos != &h->s->all_rpcs; pos = pos->next)
		n += homa_container_of(pos, struct homa_rpc, all_link)->dport == 4000;
	return n;
}

/**
 * dead_process_on_live_host() - Process A dies with an RPC at the server
 * while process B on the same host keeps talking to the server: the
 * server frees A's RPC within timeout_ticks plus a few ticks (its own
 * probes go unanswered), and B is unharmed.
 * @a_len: A's request length; @reply_len: if not 0, the server answers A
 * with that many bytes before A dies (a short reply then waits for an
 * ack, a long one for grants).
 */
static void dead_process_on_live_host(size_t a_len, size_t reply_len)
{
	struct homa_iov ia = {big, a_len}, ib = {big, 100}, ir = {big, reply_len};
	bool reply = reply_len > 0;
	struct homa_event ev;
	struct host3 h;
	uint64_t id, died;
	int b_done = 0;

	memset(&h, 0, sizeof(h));
	h.client_host = homa_addr_ipv4(0x0a000001);
	h.server_host = homa_addr_ipv4(0x0a000002);
	assert_int_equal(homa_engine_new(&h.s, NULL, &h.server_host, 4001, NULL, 0), 0);
	assert_int_equal(homa_engine_new(&h.a, NULL, &h.client_host, 4000, NULL, 0), 0);
	assert_int_equal(homa_engine_new(&h.b, NULL, &h.client_host, 4002, NULL, 0), 0);
	homa_engine_set_server(h.s, true);
	assert_int_equal(homa_engine_send_request(h.a, &h.server_host, 4001, &ia, 1, 0, 0, &id), 0);
	h.now = 1000;
	h3_move(&h); /* at most the unscheduled part of a long request crosses */
	assert_int_equal(h.have_a_req, reply);
	if (reply) {
		assert_int_equal(homa_engine_send_reply(h.s, h.a_req.id, &ir, 1, h.now), 0);
		homa_engine_msg_release(h.s, h.a_req.msg);
	}
	h.a_dead = true;
	h3_move(&h);
	assert_int_equal(a_rpcs_at_server(&h), 1);
	died = h.now;
	while (h.now < died + 300 * TICK && a_rpcs_at_server(&h)) {
		h.now += TICK;
		if ((h.now / TICK) % 3 == 0)
			assert_int_equal(homa_engine_send_request(h.b, &h.server_host, 4001, &ib, 1, 0,
								  h.now, &id), 0);
		homa_engine_on_timer(h.s, h.now);
		homa_engine_on_timer(h.b, h.now);
		h3_move(&h);
		while (homa_engine_next_event(h.b, &ev)) {
			assert_int_equal(ev.type, HOMA_EV_RESPONSE);
			homa_engine_msg_release(h.b, ev.msg);
			b_done++;
		}
	}
	assert_int_equal(a_rpcs_at_server(&h), 0);
	assert_true(h.now - died <= 100 * TICK + SLACK + 5 * TICK);
	assert_true(b_done >= 25);
	homa_engine_free(h.s);
	homa_engine_free(h.a);
	homa_engine_free(h.b);
}

/** homa_timer_tick__dead_process_live_host_request() - A's half-received request is freed. */
static void homa_timer_tick__dead_process_live_host_request(void **state)
{
	dead_process_on_live_host(150000, 0);
}

/** homa_timer_tick__dead_process_live_host_unacked_reply() - A's answered, never acked RPC is freed. */
static void homa_timer_tick__dead_process_live_host_unacked_reply(void **state)
{
	dead_process_on_live_host(1000, 1000);
}

/** homa_timer_tick__dead_process_live_host_reply_awaiting_grants() - A's long reply waiting for grants is freed. */
static void homa_timer_tick__dead_process_live_host_reply_awaiting_grants(void **state)
{
	dead_process_on_live_host(1000, 150000);
}

/**
 * homa_engine_wake_by__tick_may_wait_half() - With a request in flight and
 * the pacer idle, the tick is due one tick after the send, and a sleeping
 * host may wake up to half a tick later. Without the leeway the second
 * check fails; with nothing pending both are UINT64_MAX.
 */
static void homa_engine_wake_by__tick_may_wait_half(void **state)
{
	homa_addr me = homa_addr_ipv4(0x0a000001), srv = homa_addr_ipv4(0x0a000002);
	static uint8_t msg[100];
	struct homa_iov iov = {msg, sizeof(msg)};
	struct homa_settings s;
	struct th_pkt k;
	homa_engine *e;
	uint64_t id;

	homa_settings_default(&s);
	assert_int_equal(homa_engine_new(&e, &s, &me, 4000, NULL, 0), 0);
	assert_int_equal(homa_engine_wake_by(e), UINT64_MAX);
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, sizeof(msg), 1000, &id), 0);
	while (th_take(e, 1000, &k) > 0)
		;
	assert_int_equal(homa_engine_next_deadline(e), 1000 + s.tick_ns);
	assert_int_equal(homa_engine_wake_by(e), 1000 + s.tick_ns + s.tick_ns / 2);
	homa_engine_free(e);
}

/**
 * prio_of_last() - The priority (" pN") of the last packet in @log whose
 * entry starts with @what ("c>s DATA"); -1 if there is none.
 */
static int prio_of_last(const char *log, const char *what)
{
	const char *at = NULL, *end, *pr = NULL;

	for (const char *f = strstr(log, what); f; f = strstr(f + 1, what))
		at = f;
	if (!at)
		return -1;
	end = strchr(at, ';');
	if (!end)
		end = at + strlen(at);
	for (const char *f = strstr(at, " p"); f && f < end; f = strstr(f + 1, " p"))
		pr = f;
	return pr ? pr[2] - '0' : -1;
}

/**
 * probe__response_resend_follows_request() - A client that heard nothing
 * of the response asks for it at the priority of its request's DATA, not
 * above it: a RESEND that overtook the request (a receiver reads its
 * queue of high-priority packets first) drew RPC_UNKNOWN, and the client
 * sent the whole request again. A server holding the request answers it
 * (BUSY).
 */
static void probe__response_resend_follows_request(void **state)
{
	struct homa_stats st;
	struct th_pair p;
	struct crash c;
	int data;

	(void)state;
	setup(&p, &c, NULL);
	p.logging = true;
	send(&p, 30000);
	th_pair_run(&p, 12 * TICK);
	data = prio_of_last(p.log, "c>s DATA");
	assert_true(data >= 0 && data < 7);  /* below the control packets' */
	assert_int_equal(prio_of_last(p.log, "c>s RESEND"), data);
	assert_non_null(strstr(p.log, "s>c BUSY"));
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpc_restarts, 0);
	th_pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_engine_wake_by__tick_may_wait_half),
		cmocka_unit_test(homa_timer_tick__server_crash),
		cmocka_unit_test(homa_timer_tick__dead_port_expires_without_ticks),
		cmocka_unit_test(homa_timer_tick__client_crash_while_reply_waits_for_grants),
		cmocka_unit_test(homa_timer_tick__client_crash_mid_request),
		cmocka_unit_test(homa_timer_tick__client_crash_before_ack),
		cmocka_unit_test(homa_timer_tick__need_ack_after_lost_ack),
		cmocka_unit_test(homa_timer_tick__start_msg_repeated),
		cmocka_unit_test(homa_timer_tick__busy_keeps_long_call_alive),
		cmocka_unit_test(homa_engine_peer_waiting__counts_unanswered_probes),
		cmocka_unit_test(homa_timer_tick__one_resend_per_peer_rotated),
		cmocka_unit_test(homa_timer_tick__dead_process_live_host_request),
		cmocka_unit_test(homa_timer_tick__dead_process_live_host_unacked_reply),
		cmocka_unit_test(homa_timer_tick__dead_process_live_host_reply_awaiting_grants),
		cmocka_unit_test(homa_engine_abort__server_abort_fails_client),
		cmocka_unit_test(handle_unknown__unflagged_restarts),
		cmocka_unit_test(probe__response_resend_follows_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
