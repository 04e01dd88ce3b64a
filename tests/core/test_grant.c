/* SPDX-License-Identifier: MIT */
/**
 * @file test_grant.c
 * The receiver's grant scheduler (src/core/grant.c): several client
 * engines send requests to one server engine; the tests check the GRANT
 * packets the server emits (SRPT order, rank priorities, one message per
 * peer, max_overcommit, max_incoming, FIFO grants, silent grants).
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

/**
 * settings() - Defaults with @unsched unscheduled bytes, no FIFO grants and
 * a GRANT per packet (grant_step 1 is held at one packet; the batching has
 * its own tests at the end).
 */
static struct homa_settings settings(uint32_t unsched)
{
	struct homa_settings s;

	homa_settings_default(&s);
	s.unsched_bytes = unsched;
	s.grant_step = 1;
	s.grant_fifo_fraction = 0;
	s.pacer_fifo_fraction = 0;
	return s;
}

/** send() - Node @c sends a @len-byte pattern request to node 's'. Return: the id. */
static uint64_t send(struct th_net *n, char c, size_t len)
{
	int i = th_net_node(n, c), s = th_net_node(n, 's');
	uint8_t *buf = malloc(len);
	struct homa_iov iov = {buf, len};
	uint64_t id;

	th_pattern(buf, len, (uint32_t)len);
	assert_int_equal(homa_engine_send_request(n->e[i], &n->addr[s], n->port[s], &iov, 1,
						  (uint64_t)c, n->now, &id), 0);
	free(buf);
	return id;
}

/** hop() - Move one packet from @c to the server, then everything the server answers. */
static void hop(struct th_net *n, char c)
{
	assert_int_equal(th_net_move(n, th_net_node(n, c), 1), 1);
	th_net_move(n, th_net_node(n, 's'), 100);
}

/** serve() - Make node 's' a server. */
static void serve(struct th_net *n)
{
	homa_engine_set_server(n->e[th_net_node(n, 's')], true);
}

/** drain_requests() - Take every request at the server; check each is bit-exact. Return: completion order as letters. */
static void drain_requests(struct th_net *n, char *order, size_t cap)
{
	homa_engine *s = n->e[th_net_node(n, 's')];
	struct homa_event ev;
	size_t k = 0;

	while (homa_engine_next_event(s, &ev)) {
		int i;

		assert_int_equal(ev.type, HOMA_EV_REQUEST);
		assert_true(th_check_pattern(ev.msg, (uint32_t)homa_msg_length(ev.msg)));
		for (i = 0; i < n->n; i++)
			if (homa_addr_equal(&ev.peer, &n->addr[i]) && k + 1 < cap)
				order[k++] = n->name[i];
		homa_engine_msg_release(s, ev.msg);
	}
	order[k] = 0;
}

/**
 * homa_grant_check__srpt_rank_priorities() - Four long requests arrive
 * longest first. Each newcomer is the shortest so far and is granted at
 * once at the top scheduled level for the number of active messages
 * (1 active: level 0, 2: level 1, ... 4: level 3, the highest scheduled
 * level); further data keeps each message's rank; the shortest completes
 * first.
 */
static void homa_grant_check__srpt_rank_priorities(void **state)
{
	struct homa_settings s = settings(10000);
	struct th_net n;
	char order[8];

	th_net_init(&n, "sabcd", &s);
	serve(&n);
	send(&n, 'a', 30000);
	send(&n, 'b', 60000);
	send(&n, 'c', 100000);
	send(&n, 'd', 150000);
	hop(&n, 'd');
	hop(&n, 'c');
	hop(&n, 'b');
	hop(&n, 'a');
	assert_string_equal(n.log,
		"d>s DATA 1416@0 p4; s>d CUTOFFS p7; s>d GRANT 11416 g0 p7; "
		"c>s DATA 1416@0 p4; s>c CUTOFFS p7; s>c GRANT 11416 g1 p7; "
		"b>s DATA 1416@0 p4; s>b CUTOFFS p7; s>b GRANT 11416 g2 p7; "
		"a>s DATA 1416@0 p4; s>a CUTOFFS p7; s>a GRANT 11416 g3 p7");
	th_net_clear_log(&n);
	hop(&n, 'a');
	hop(&n, 'b');
	hop(&n, 'c');
	hop(&n, 'd');
	assert_string_equal(n.log,
		"a>s DATA 1416@1416 p4; s>a GRANT 12832 g3 p7; "
		"b>s DATA 1416@1416 p4; s>b GRANT 12832 g2 p7; "
		"c>s DATA 1416@1416 p4; s>c GRANT 12832 g1 p7; "
		"d>s DATA 1416@1416 p4; s>d GRANT 12832 g0 p7");
	n.logging = false;
	th_net_run(&n, 1000000000);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "abcd");
	th_net_free(&n);
}

/**
 * homa_grant_check__scheduled_data_uses_grant_priority() - A sender
 * transmits granted bytes at the priority the GRANT carried.
 */
static void homa_grant_check__scheduled_data_uses_grant_priority(void **state)
{
	struct homa_settings s = settings(2832);
	struct th_net n;

	th_net_init(&n, "sab", &s);
	serve(&n);
	send(&n, 'a', 20000);
	send(&n, 'b', 30000);
	hop(&n, 'b');
	hop(&n, 'a');
	hop(&n, 'a');
	hop(&n, 'a');
	hop(&n, 'b');
	hop(&n, 'b');
	assert_string_equal(n.log,
		"b>s DATA 1416@0 p4; s>b CUTOFFS p7; s>b GRANT 4248 g0 p7; "
		"a>s DATA 1416@0 p4; s>a CUTOFFS p7; s>a GRANT 4248 g1 p7; "
		"a>s DATA 1416@1416 p4; s>a GRANT 5664 g1 p7; "
		"a>s DATA 1416@2832 p1; s>a GRANT 7080 g1 p7; "
		"b>s DATA 1416@1416 p4; s>b GRANT 5664 g0 p7; "
		"b>s DATA 1416@2832 p0; s>b GRANT 7080 g0 p7");
	th_net_free(&n);
}

/**
 * homa_grant_check__one_message_per_peer() - Two requests from the same
 * client: the longer one gets no GRANT until the shorter one is complete.
 */
static void homa_grant_check__one_message_per_peer(void **state)
{
	struct homa_settings s = settings(10000);
	struct th_net n;
	const char *first_long, *last_short;
	uint64_t id_short, id_long;
	char want_long[32], want_short[32], *p;
	char order[8];

	th_net_init(&n, "sa", &s);
	serve(&n);
	n.log_ids = true;
	id_short = send(&n, 'a', 50000);
	id_long = send(&n, 'a', 80000);
	th_net_run(&n, 1000000000);
	snprintf(want_long, sizeof(want_long), "s>a GRANT#%llu", (unsigned long long)(id_long ^ 1));
	snprintf(want_short, sizeof(want_short), "a>s DATA#%llu", (unsigned long long)id_short);
	first_long = strstr(n.log, want_long);
	assert_non_null(first_long);
	last_short = NULL;
	for (p = strstr(n.log, want_short); p; p = strstr(p + 1, want_short))
		last_short = p;
	assert_non_null(last_short);
	assert_true(first_long > last_short);
	assert_true(th_count(n.log, "s>a GRANT") > 20);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "aa");
	th_net_free(&n);
}

/** Invariant checker state for the overcommit and max_incoming tests. */
struct watch {
	homa_engine *server;
	uint32_t unsched;         /**< what senders send unscheduled */
	uint32_t max_granted;     /**< most messages granted beyond unsched at once */
	uint64_t max_outstanding; /**< most granted-but-unreceived bytes at once */
	uint32_t limit_msgs;
	uint64_t limit_bytes;
};

/**
 * watch_server() - After every packet: count the server's messages that
 * hold a grant beyond their unscheduled bytes with bytes still to come,
 * and the granted-but-unreceived bytes, and check both caps.
 */
static void watch_server(void *ctx, int from, int to, const uint8_t *pkt, size_t len)
{
	struct watch *w = ctx;
	homa_engine *e = w->server;
	struct homa_link *pos;
	uint64_t outstanding = 0;
	uint32_t granted = 0;

	for (pos = e->grantable.next; pos != &e->grantable; pos = pos->next) {
		struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, in.grant_link);

		if (r->in.granted > w->unsched && r->in.received < r->in.granted)
			granted++;
		if (r->in.granted > r->in.received)
			outstanding += r->in.granted - r->in.received;
	}
	assert_true(outstanding == e->total_incoming);
	if (granted > w->max_granted)
		w->max_granted = granted;
	if (outstanding > w->max_outstanding)
		w->max_outstanding = outstanding;
	assert_true(granted <= w->limit_msgs);
	if (outstanding > w->limit_bytes)
		fail_msg("outstanding %llu > %llu", (unsigned long long)outstanding, (unsigned long long)w->limit_bytes);
}

/**
 * watch_attach() - Check the caps on node 's' (index 0) of @n after every
 * packet: at most @msgs messages granted beyond @unsched at once, at most
 * @bytes granted but unreceived. @w is caller-owned and must outlive the run.
 */
static void watch_attach(struct watch *w, struct th_net *n, uint32_t unsched, uint32_t msgs,
			 uint64_t bytes)
{
	memset(w, 0, sizeof(*w));
	w->server = n->e[0];
	w->unsched = unsched;
	w->limit_msgs = msgs;
	w->limit_bytes = bytes;
	n->observer = watch_server;
	n->observer_ctx = w;
}

/**
 * homa_grant_check__max_overcommit() - Four clients, max_overcommit 2: at
 * no moment do more than two messages hold grants, plus the shortest one,
 * which starts at once while displaced ones drain; all complete, shortest
 * first.
 */
static void homa_grant_check__max_overcommit(void **state)
{
	struct homa_settings s = settings(10000);
	struct watch w;
	struct th_net n;
	char order[8];

	s.max_overcommit = 2;
	th_net_init(&n, "sabcd", &s);
	serve(&n);
	watch_attach(&w, &n, 10000, 2, UINT64_MAX);
	n.logging = false;
	send(&n, 'a', 40000);
	send(&n, 'b', 50000);
	send(&n, 'c', 60000);
	send(&n, 'd', 70000);
	th_net_run(&n, 1000000000);
	/* the shortest message may start while two others drain: three */
	assert_true(w.max_granted >= 2 && w.max_granted <= 3);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "abcd");
	th_net_free(&n);
}

/**
 * incoming_run() - Three clients send one unscheduled packet each (so
 * unscheduled bytes, which the receiver does not control, are never
 * outstanding between packets) to a server that would like 20000 bytes in
 * flight per message, with max_overcommit 4 and max_incoming @max_incoming.
 * Checks the hard bound, max_incoming plus max_overcommit windows for the
 * shortest message (src/core/grant.c), and SRPT order. Return: the most
 * granted-but-unreceived bytes seen at once.
 */
static uint64_t incoming_run(uint32_t max_incoming)
{
	struct homa_settings cs = settings(1416), ss = settings(20000);
	struct watch w;
	struct th_net n;
	char order[8];

	ss.max_incoming = max_incoming;
	ss.max_overcommit = 4;
	th_net_init(&n, "sabc", &cs);
	assert_int_equal(homa_engine_set_settings(n.e[0], &ss), 0);
	serve(&n);
	watch_attach(&w, &n, 1416, 4, max_incoming + 4 * 20000);
	n.logging = false;
	send(&n, 'a', 100000);
	send(&n, 'b', 110000);
	send(&n, 'c', 120000);
	th_net_run(&n, 1000000000);
	assert_true(w.max_granted >= 2);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "abc");
	th_net_free(&n);
	return w.max_outstanding;
}

/**
 * homa_grant_check__max_incoming() - max_incoming 25000 binds: fewer bytes
 * are ever outstanding at once than with an ample budget (400000), where
 * all three windows overlap, yet the budget is used (more than 25000 minus
 * a packet), and the hard bound holds.
 */
static void homa_grant_check__max_incoming(void **state)
{
	uint64_t bounded = incoming_run(25000), ample = incoming_run(400000);

	assert_true(bounded > 25000 - 1416);
	if (bounded >= ample)
		fail_msg("max_incoming 25000: %llu outstanding, ample budget: %llu",
			 (unsigned long long)bounded, (unsigned long long)ample);
}

/**
 * fifo_net() - Nodes 's' (server), 'a', 'b' with 10000 unscheduled bytes,
 * max_overcommit 1 (SRPT serves one message), grant_fifo_fraction
 * @fraction and fifo_grant_increment @inc.
 */
static void fifo_net(struct th_net *n, uint32_t fraction, uint32_t inc)
{
	struct homa_settings s = settings(10000);

	s.max_overcommit = 1;
	s.grant_fifo_fraction = fraction;
	s.fifo_grant_increment = inc;
	th_net_init(n, "sab", &s);
	serve(n);
}

/** fifo_end() - Run @n to the end; both requests arrive bit-exact, b first. */
static void fifo_end(struct th_net *n)
{
	char order[8];

	th_net_run(n, 1000000000);
	drain_requests(n, order, sizeof(order));
	assert_string_equal(order, "ba");
	th_net_free(n);
}

/**
 * fifo_run() - Client 'a' sends an old 300000-byte request; once it is
 * flowing, client 'b' sends a shorter 100000-byte one. With
 * max_overcommit 1 SRPT serves only b. Return: GRANTs a received while b
 * was being granted (between b's first and last GRANT; once b is fully
 * granted, a is next in SRPT order).
 */
static int fifo_run(uint32_t fraction, uint64_t *fifo_grants)
{
	const char *from, *to, *p;
	struct homa_stats st;
	struct th_net n;
	int count = 0, i;

	fifo_net(&n, fraction, 5000);
	send(&n, 'a', 300000);
	for (i = 0; i < 5; i++)
		hop(&n, 'a');
	send(&n, 'b', 100000);
	th_net_run(&n, 1000000000);
	from = strstr(n.log, "s>b GRANT");
	to = from;
	for (p = from; p; p = strstr(p + 1, "s>b GRANT"))
		to = p;
	assert_non_null(from);
	for (p = strstr(from, "s>a GRANT"); p && p < to; p = strstr(p + 1, "s>a GRANT")) {
		assert_non_null(strstr(p, " g0 ")); /* FIFO grants use the lowest level */
		count++;
	}
	homa_engine_stats(n.e[0], &st);
	*fifo_grants = st.fifo_grants_sent;
	fifo_end(&n);
	return count;
}

/**
 * homa_grant_check__fifo_reaches_oldest() - With grant_fifo_fraction the
 * oldest message keeps receiving (lowest-priority) grants while SRPT
 * serves a shorter one; without it, it starves until the short one is done.
 */
static void homa_grant_check__fifo_reaches_oldest(void **state)
{
	uint64_t fifo;

	assert_int_equal(fifo_run(0, &fifo), 0);
	assert_int_equal(fifo, 0);
	assert_true(fifo_run(500, &fifo) >= 5);
	assert_true(fifo >= 5);
}

/** quiet_a() - Filter: while *@ctx, node 'a' (1) sends only its first DATA packet. */
static bool quiet_a(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct homa_pkt k;

	(void)n;
	return *(bool *)ctx && from == 1 && homa_wire_decode(pkt, len, &k) == 0 &&
	       k.type == HOMA_PKT_DATA && k.u.data.offset > 0;
}

/**
 * quiet_a_then_b() - Client 'a' sends @a_len bytes and then only its first
 * packet gets through while *@quiet; 100 us later 'b' sends @b_len bytes;
 * then @n runs for @ns.
 */
static void quiet_a_then_b(struct th_net *n, bool *quiet, size_t a_len, size_t b_len,
			   uint64_t ns)
{
	n->filter = quiet_a;
	n->filter_ctx = quiet;
	send(n, 'a', a_len);
	th_net_run(n, 100000);
	send(n, 'b', b_len);
	th_net_run(n, ns);
}

/**
 * fifo_wait_run() - The oldest message's sender sends nothing after its
 * first packet while SRPT serves a shorter one (max_overcommit 1, half
 * the granted bytes due to FIFO, fifo_grant_increment @inc); then its
 * sender talks again and both complete bit-exact, shortest first.
 * Return: FIFO grants sent while it was quiet; @last: the offset of the
 * last GRANT it received then (its first, from SRPT, was 11416).
 */
static uint64_t fifo_wait_run(uint32_t inc, uint32_t *last)
{
	struct homa_stats st;
	struct th_net n;
	bool quiet = true;
	const char *g, *p;

	fifo_net(&n, 500, inc);
	quiet_a_then_b(&n, &quiet, 300000, 100000, 3000000);
	homa_engine_stats(n.e[0], &st);
	g = strstr(n.log, "s>a GRANT ");
	assert_non_null(g);
	for (p = g; p; p = strstr(p + 1, "s>a GRANT "))
		g = p;
	*last = (uint32_t)strtoul(g + strlen("s>a GRANT "), NULL, 10);
	quiet = false;
	fifo_end(&n);
	return st.fifo_grants_sent;
}

/**
 * homa_grant_check__fifo_waits_for_its_bytes() - A quiet oldest message
 * gets one FIFO grant, not one per turn, so FIFO bytes nobody sends cannot
 * fill max_incoming; a FIFO grant is fifo_grant_increment bytes, or one
 * window (unsched_bytes) when that is 0, the default.
 */
static void homa_grant_check__fifo_waits_for_its_bytes(void **state)
{
	uint32_t last;

	assert_int_equal(fifo_wait_run(5000, &last), 1);
	assert_int_equal(last, 11416 + 5000);
	assert_int_equal(fifo_wait_run(0, &last), 1);
	assert_int_equal(last, 11416 + 10000);
}

/**
 * homa_grant_check__stalled_message_does_not_block_its_peer() - A message
 * from a process that died right after its first packet (forged here:
 * port 4999 of the client's host) is granted and then sends nothing. It
 * must not hold its host's one-message grant slot until it times out: a
 * longer request from a live process on the same host completes in a few
 * resend periods, not after timeout_ticks.
 */
static void homa_grant_check__stalled_message_does_not_block_its_peer(void **state)
{
	static uint8_t junk[1416], req[150000];
	static const struct th_data junk_data = {.sport = 4999, .dport = 4001, .sender_id = 2,
						 .length = 100000, .incoming = 40000,
						 .payload = junk, .payload_len = sizeof(junk)};
	struct homa_iov iov = {req, sizeof(req)};
	struct homa_event ev;
	struct th_pair p;
	uint64_t id;

	th_pair_init(&p, NULL);
	p.echo = true;
	p.logging = false;
	assert_int_equal(th_data_in(p.e[1], &p.addr[0], &junk_data, 0), 0);
	th_pattern(req, sizeof(req), 5);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 0, 0, &id), 0);
	while (!homa_engine_next_event(p.e[0], &ev) && p.now < 500000000)
		th_pair_run(&p, 1000000);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_true(th_check_pattern(ev.msg, 5));
	homa_engine_msg_release(p.e[0], ev.msg);
	if (p.now > 30000000)
		fail_msg("live request took %llu ns", (unsigned long long)p.now);
	th_pair_free(&p);
}

/**
 * quiet_senders() - Filter: nodes 1 .. *@ctx ('a', 'b', ...) send the first
 * DATA packet of their message and then nothing more (their processes are
 * busy sending elsewhere): every later DATA packet of theirs is lost.
 */
static bool quiet_senders(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct homa_pkt k;

	(void)n;
	return from >= 1 && from <= *(const int *)ctx && homa_wire_decode(pkt, len, &k) == 0 &&
	       k.type == HOMA_PKT_DATA && k.u.data.offset > 0;
}

/**
 * homa_grant_check__shortest_message_starts_at_once() - max_overcommit 2:
 * two longer messages hold grants and their senders send nothing more. A
 * shorter request then arrives: as the head of the SRPT order it is
 * granted at once (as in SIGCOMM 2018), not after the quiet messages'
 * RESEND timeouts, and completes within a millisecond of simulated time.
 */
static void homa_grant_check__shortest_message_starts_at_once(void **state)
{
	struct homa_settings s = settings(1416);
	struct homa_event ev;
	struct homa_stats st;
	struct th_net n;
	uint64_t start;
	int c, i, quiet = 2;

	s.max_overcommit = 2;
	th_net_init(&n, "sabc", &s);
	serve(&n);
	n.echo[0] = true;
	n.logging = false;
	n.filter = quiet_senders;
	n.filter_ctx = &quiet;
	send(&n, 'a', 100000);
	send(&n, 'b', 110000);
	th_net_run(&n, 200000);
	homa_engine_stats(n.e[0], &st);
	assert_int_equal(st.granted_msgs, 2);
	start = n.now;
	memset(&ev, 0, sizeof(ev));
	send(&n, 'c', 60000);
	c = th_net_node(&n, 'c');
	for (i = 0; i < 100 && !homa_engine_next_event(n.e[c], &ev); i++)
		th_net_run(&n, 1000000); /* a tick per call: at most 100 ms */
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_true(th_check_pattern(ev.msg, 60000));
	homa_engine_msg_release(n.e[c], ev.msg);
	if (n.now - start > 1000000)
		fail_msg("shortest request took %llu ns", (unsigned long long)(n.now - start));
	th_net_free(&n);
}

/**
 * homa_grant_check__batch_gets_one_grant() - Seven DATA packets of one
 * message arrive before the server's output is taken (one receive batch):
 * the server sends one GRANT, for the offset the last packet earned, not
 * seven; one grant pass runs for the batch, so none is superseded (merged).
 * The message then completes bit-exact.
 */
static void homa_grant_check__batch_gets_one_grant(void **state)
{
	struct homa_settings s = settings(10000);
	struct homa_stats st;
	struct th_net n;
	char order[8];

	th_net_init(&n, "sa", &s);
	serve(&n);
	send(&n, 'a', 100000);
	assert_int_equal(th_net_move(&n, th_net_node(&n, 'a'), 7), 7);
	th_net_clear_log(&n);
	th_net_move(&n, th_net_node(&n, 's'), 100);
	assert_int_equal(th_count(n.log, "s>a GRANT"), 1);
	assert_non_null(strstr(n.log, "s>a GRANT 19912 "));
	homa_engine_stats(n.e[0], &st);
	assert_int_equal(st.grants_sent, 1);
	assert_int_equal(st.grants_merged, 0);
	th_net_run(&n, 1000000000);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "a");
	th_net_free(&n);
}

/** step_of() - homa_grant_step() of an engine with these unsched_bytes and grant_step. */
static uint32_t step_of(uint32_t unsched, uint32_t step)
{
	struct homa_settings s = settings(unsched);
	struct th_net n;
	uint32_t r;

	s.grant_step = step;
	th_net_init(&n, "s", &s);
	r = homa_grant_step(n.e[0]);
	th_net_free(&n);
	return r;
}

/**
 * homa_grant_step__third_of_unsched_in_packets() - By default a GRANT moves
 * a window by a third of unsched_bytes rounded up to whole 1416-byte
 * packets, at least two; a set step is held within one packet ..
 * unsched_bytes, and a window below one packet moves by the whole window.
 */
static void homa_grant_step__third_of_unsched_in_packets(void **state)
{
	assert_int_equal(step_of(10000, 0), 3 * 1416);
	assert_int_equal(step_of(40000, 0), 10 * 1416);
	assert_int_equal(step_of(3750, 0), 2 * 1416);
	assert_int_equal(step_of(2000, 0), 2000);
	assert_int_equal(step_of(1000, 0), 1000);
	assert_int_equal(step_of(10000, 1), 1416);
	assert_int_equal(step_of(10000, 5000), 5000);
	assert_int_equal(step_of(10000, 50000), 10000);
}

/**
 * step_run() - A 100000-byte request from 'a' to 's', both with 10000
 * unscheduled bytes, grant_step @step and max_incoming @max_incoming.
 * Return: the server's GRANTs; the request must complete bit-exact.
 */
static int step_run(uint32_t step, uint32_t max_incoming)
{
	struct homa_settings s = settings(10000);
	struct th_net n;
	char order[8];
	int grants;

	s.grant_step = step;
	s.max_incoming = max_incoming;
	th_net_init(&n, "sa", &s);
	serve(&n);
	send(&n, 'a', 100000);
	th_net_run(&n, 1000000000);
	grants = th_count(n.log, "s>a GRANT");
	drain_requests(&n, order, sizeof(order));
	if (strcmp(order, "a"))
		fail_msg("grant_step %u, max_incoming %u: the request did not complete (%d GRANTs)",
			 step, max_incoming, grants);
	th_net_free(&n);
	return grants;
}

/**
 * homa_grant_step__within_max_incoming() - A step larger than max_incoming
 * (the default third of unsched_bytes, 4248 bytes, against a budget of
 * 2000; or a set step of 10000 against 5000) is held to the budget in
 * whole packets (1416 and 4248 bytes), so GRANTs go out and the message
 * completes; with the step above the budget no GRANT was ever sent and
 * the message stalled (homa-bench on loopback with --homa-max-incoming
 * 100000 or --homa-grant-step 600000: "peer did not respond").
 */
static void homa_grant_step__within_max_incoming(void **state)
{
	struct homa_settings s = settings(10000);
	struct th_net n;

	(void)state;
	assert_true(step_run(0, 2000) > 0);
	assert_true(step_run(10000, 5000) > 0);
	s.grant_step = 10000;
	s.max_incoming = 5000;
	th_net_init(&n, "s", &s);
	assert_int_equal(homa_grant_step(n.e[0]), 3 * 1416);
	th_net_free(&n);
}

/** ahead() - Granted-but-unreceived bytes of the server's first grantable message. */
static uint32_t ahead(struct th_net *n)
{
	homa_engine *srv = n->e[th_net_node(n, 's')];
	struct homa_rpc *r = homa_container_of(srv->grantable.next, struct homa_rpc, in.grant_link);

	assert_false(homa_list_empty(&srv->grantable));
	return r->in.granted - r->in.received;
}

/**
 * homa_grant_check__short_window_after_short_message() - With
 * grant_short_window 3000 (10000 unscheduled bytes, a GRANT per packet),
 * a 500-byte request from 'b' holds the window of 'a''s 100000-byte
 * request to 3000 bytes once its unscheduled bytes are received, for one
 * tick: then the window is unsched_bytes again. Both complete bit-exact.
 * With grant_short_window 0 (the default) the window stays 10000 bytes.
 */
static void homa_grant_check__short_window_after_short_message(void **state)
{
	struct homa_settings s = settings(10000);
	struct th_net n;
	char order[8];
	uint32_t most = 0;
	int i;

	(void)state;
	s.grant_short_window = 3000;
	th_net_init(&n, "sab", &s);
	serve(&n);
	send(&n, 'b', 500);
	hop(&n, 'b');
	send(&n, 'a', 100000);
	for (i = 0; i < 12; i++) {
		n.now += 1000; /* the sender's pacer: 1416 bytes at 25 Gbps take 0.5 us */
		hop(&n, 'a');
		if (i >= 8 && ahead(&n) > most)
			most = ahead(&n);
	}
	if (most > 3000)
		fail_msg("%u bytes granted ahead after a short message (window 3000)", most);
	assert_true(most >= 3000 - 1416);
	n.now += s.tick_ns;
	hop(&n, 'a');
	assert_true(ahead(&n) >= 10000 - 1416);
	th_net_run(&n, 1000000000);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "ba");
	th_net_free(&n);
}

/**
 * homa_grant_check__grants_in_steps() - With the default step (three
 * packets for 10000 unscheduled bytes) one message's GRANTs go out on its
 * 1st, 4th and 7th packets, each reaching two packets past received +
 * unsched_bytes, so granted-but-unreceived bytes never fall below
 * unsched_bytes less one packet; the message completes bit-exact.
 */
static void homa_grant_check__grants_in_steps(void **state)
{
	struct homa_settings s = settings(10000);
	homa_engine *srv;
	struct homa_rpc *r;
	struct th_net n;
	char order[8];
	int i;

	s.grant_step = 0;
	th_net_init(&n, "sa", &s);
	serve(&n);
	srv = n.e[th_net_node(&n, 's')];
	send(&n, 'a', 100000);
	for (i = 0; i < 7; i++) {
		hop(&n, 'a');
		r = homa_container_of(srv->grantable.next, struct homa_rpc, in.grant_link);
		assert_true(r->in.granted - r->in.received >= 10000 - 1416);
	}
	assert_int_equal(th_count(n.log, "s>a GRANT"), 3);
	assert_non_null(strstr(n.log, "s>a GRANT 14248 "));
	assert_non_null(strstr(n.log, "s>a GRANT 18496 "));
	assert_non_null(strstr(n.log, "s>a GRANT 22744 "));
	th_net_run(&n, 1000000000);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "a");
	th_net_free(&n);
}

/**
 * homa_grant_check__no_short_tail() - A 26000-byte message with 10000
 * unscheduled bytes and the default step (4248 bytes): the GRANT that
 * would stop 3256 bytes short of the end (22744) reaches the end instead,
 * so the sender needs one GRANT less; the message completes bit-exact.
 */
static void homa_grant_check__no_short_tail(void **state)
{
	struct homa_settings s = settings(10000);
	char order[8];
	struct th_net n;

	s.grant_step = 0;
	th_net_init(&n, "sa", &s);
	serve(&n);
	send(&n, 'a', 26000);
	th_net_run(&n, 1000000000);
	assert_null(strstr(n.log, "s>a GRANT 22744 "));
	assert_non_null(strstr(n.log, "s>a GRANT 26000 "));
	assert_int_equal(th_count(n.log, "s>a GRANT"), 3);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "a");
	th_net_free(&n);
}

/**
 * silence_run() - Server budget max_incoming of one 10000-byte window,
 * max_overcommit 2, grant_silence_rtts @rtts. Client 'a' sends a 100000-byte
 * request and then nothing (its sender serves others); 'b' sends a
 * 200000-byte one. After 2 ms both go on and complete bit-exact. Checks
 * the hard bound on granted-but-unreceived bytes: max_incoming plus two
 * head windows plus two forgiven ones. Return: GRANTs b got in the 2 ms.
 */
static int silence_run(uint32_t rtts)
{
	struct homa_settings s = settings(10000);
	bool quiet = true;
	const char *b_grant;
	struct watch w;
	struct th_net n;
	char order[8];
	int grants;

	s.max_overcommit = 2;
	s.max_incoming = 10000;
	s.grant_silence_rtts = rtts;
	th_net_init(&n, "sab", &s);
	serve(&n);
	watch_attach(&w, &n, 10000, 2, 10000 + (2 + 2) * 10000);
	quiet_a_then_b(&n, &quiet, 100000, 200000, 2000000);
	grants = th_count(n.log, "s>b GRANT");
	b_grant = strstr(n.log, "s>b GRANT");
	assert_true(!b_grant || strstr(n.log, "s>a GRANT") < b_grant);
	quiet = false;
	n.logging = false;
	th_net_run(&n, 1000000000);
	drain_requests(&n, order, sizeof(order));
	assert_int_equal(strlen(order), 2);
	th_net_free(&n);
	return grants;
}

/**
 * homa_grant_check__silent_grants_free_the_budget() - a's window fills
 * the whole budget and a sends nothing more. With the rule (4 round trips
 * by default) b is granted within the next timer tick, not only once a
 * RESEND to a goes unanswered (5 ticks); with grant_silence_rtts 0 b gets
 * nothing in the first 2 ms.
 */
static void homa_grant_check__silent_grants_free_the_budget(void **state)
{
	assert_true(silence_run(4) > 0);
	assert_int_equal(silence_run(0), 0);
}

/**
 * quiet_net() - Nodes @names with settings @s, 's' serving; nodes 1 ..
 * *@quiet send only the first packet of their messages (quiet_senders()).
 */
static void quiet_net(struct th_net *n, const char *names, const struct homa_settings *s,
		      int *quiet)
{
	th_net_init(n, names, s);
	serve(n);
	n->filter = quiet_senders;
	n->filter_ctx = quiet;
}

/**
 * homa_grant_check__silent_grants_forgiven_up_to_two_windows() - Budget
 * of one window, max_overcommit 4, RESENDs late (50 ticks). 'a', 'b' and
 * 'c' each send their first packet and then nothing; 'd' keeps sending.
 * Each tick one more window goes silent and frees room for the next
 * message: b, then c, are granted; but the third silent window is not
 * forgiven, so d gets no GRANT in 10 ms: a returning crowd of silent
 * senders adds at most two windows to the queue.
 */
static void homa_grant_check__silent_grants_forgiven_up_to_two_windows(void **state)
{
	struct homa_settings s = settings(10000);
	struct th_net n;
	int quiet = 3;

	s.max_overcommit = 4;
	s.max_incoming = 10000;
	s.resend_ticks = 50;
	s.timeout_ticks = 1000;
	quiet_net(&n, "sabcd", &s, &quiet);
	send(&n, 'a', 100000);
	send(&n, 'b', 110000);
	send(&n, 'c', 120000);
	send(&n, 'd', 130000);
	th_net_run(&n, 10000000);
	assert_true(th_count(n.log, "s>b GRANT") > 0);
	assert_true(th_count(n.log, "s>c GRANT") > 0);
	assert_int_equal(th_count(n.log, "s>d GRANT"), 0);
	th_net_free(&n);
}

/**
 * slot_run() - max_overcommit 2, grant_silence_rtts @rtts. 'b' and 'c'
 * send long requests, are granted, and then send nothing. 2 ms later 'a'
 * and 'd' send shorter ones that go on. Return: true if d's first GRANT
 * came before a's last one (to 50000), i.e. d did not wait for a's slot.
 */
static bool slot_run(uint32_t rtts)
{
	struct homa_settings s = settings(10000);
	const char *d_grant, *a_last;
	struct th_net n;
	int quiet = 2;
	bool early;

	s.max_overcommit = 2;
	s.grant_silence_rtts = rtts;
	quiet_net(&n, "sbcad", &s, &quiet);
	send(&n, 'b', 200000);
	send(&n, 'c', 210000);
	th_net_run(&n, 2000000);
	th_net_clear_log(&n);
	send(&n, 'a', 50000);
	send(&n, 'd', 60000);
	th_net_run(&n, 500000);
	d_grant = strstr(n.log, "s>d GRANT");
	a_last = strstr(n.log, "s>a GRANT 50000 ");
	assert_non_null(d_grant);
	assert_non_null(a_last);
	early = d_grant < a_last;
	th_net_free(&n);
	return early;
}

/**
 * homa_grant_check__silent_messages_free_their_slots() - Two silent
 * messages hold both max_overcommit slots. A new second-shortest message
 * is granted at once beside the shortest one with the rule, and only
 * once the shortest one is fully granted without it.
 */
static void homa_grant_check__silent_messages_free_their_slots(void **state)
{
	assert_true(slot_run(4));
	assert_false(slot_run(0));
}

/**
 * lie_incoming() - Take node @c's next packet (DATA) and deliver it to the
 * server with its incoming field claiming the whole message.
 */
static void lie_incoming(struct th_net *n, char c)
{
	int i = th_net_node(n, c), srv = th_net_node(n, 's');
	struct th_pkt k;
	uint8_t buf[2048];
	int len;

	assert_true(th_take(n->e[i], n->now, &k) > 0 && k.ok);
	assert_int_equal(k.k.type, HOMA_PKT_DATA);
	k.k.u.data.incoming = k.k.u.data.message_length;
	len = homa_wire_encode(&k.k, buf, sizeof(buf));
	assert_true(len > 0);
	homa_engine_input(n->e[srv], &n->addr[i], buf, (size_t)len, n->now);
}

/**
 * homa_grant_check__incoming_claims_raise_nothing() - A sender that
 * claims in a DATA packet's incoming field that it may send its whole
 * 10 MB message (after a first GRANT) does not raise what the receiver
 * granted: the budget stays under max_incoming and another sender's
 * message still gets its GRANT at once. (The field used to raise the
 * granted offset on every packet and froze grants to everyone.)
 */
static void homa_grant_check__incoming_claims_raise_nothing(void **state)
{
	struct homa_settings s = settings(10000);
	homa_engine *srv;
	struct th_net n;
	struct homa_link *pos;

	s.max_incoming = 40000;
	th_net_init(&n, "sab", &s);
	srv = n.e[th_net_node(&n, 's')];
	serve(&n);
	send(&n, 'a', 10000000);
	hop(&n, 'a');
	assert_int_equal(th_count(n.log, "s>a GRANT"), 1);
	lie_incoming(&n, 'a');
	assert_true(srv->total_incoming <= s.max_incoming);
	for (pos = srv->grantable.next; pos != &srv->grantable; pos = pos->next)
		assert_true(homa_container_of(pos, struct homa_rpc, in.grant_link)->in.granted < 100000);
	th_net_clear_log(&n);
	send(&n, 'b', 50000);
	hop(&n, 'b');
	assert_int_equal(th_count(n.log, "s>b GRANT"), 1);
	th_net_free(&n);
}

/**
 * homa_grant_add__forged_messages_stay_few() - Node 'a' forges 2000 long
 * requests (one 1000-byte DATA packet each, lengths spread over 100 kB-1 MB,
 * never finished). The sorted grantable list, whose insertion is linear,
 * holds at most HOMA_STRANGER_PARTIAL_MSGS of them (it held all 2000: a flood
 * spent its time inserting), and node 'b's message still gets its GRANT at
 * once.
 */
static void homa_grant_add__forged_messages_stay_few(void **state)
{
	static const uint8_t junk[1000];
	struct homa_settings s = settings(10000);
	int a, listed = 0;
	struct homa_link *pos;
	homa_engine *srv;
	struct th_net n;

	(void)state;
	th_net_init(&n, "sab", &s);
	srv = n.e[th_net_node(&n, 's')];
	a = th_net_node(&n, 'a');
	serve(&n);
	for (uint32_t i = 0; i < 2000; i++) {
		struct th_data d = {.sport = n.port[a], .dport = n.port[th_net_node(&n, 's')],
				    .sender_id = 100000 + 2 * (uint64_t)i,
				    .length = 100000 + (i * 7919u) % 900000, .payload = junk,
				    .payload_len = sizeof(junk)};

		th_data_in(srv, &n.addr[a], &d, n.now);
	}
	for (pos = srv->grantable.next; pos != &srv->grantable; pos = pos->next)
		listed++;
	assert_true(listed <= HOMA_STRANGER_PARTIAL_MSGS);
	th_net_move(&n, th_net_node(&n, 's'), 100000);
	th_net_clear_log(&n);
	send(&n, 'b', 50000);
	hop(&n, 'b');
	assert_int_equal(th_count(n.log, "s>b GRANT"), 1);
	th_net_free(&n);
}

/** forge_partial() - Deliver to the server @count first packets (1000 bytes) of long requests from node @c. */
static void forge_partial(struct th_net *n, char c, uint32_t count)
{
	static const uint8_t junk[1000];
	int a = th_net_node(n, c), srv = th_net_node(n, 's'), len;
	uint8_t buf[1600];

	for (uint32_t i = 0; i < count; i++) {
		struct homa_pkt k;

		memset(&k, 0, sizeof(k));
		k.type = HOMA_PKT_DATA;
		k.sport = n->port[a];
		k.dport = n->port[srv];
		k.sender_id = 100000 + 2 * (uint64_t)i;
		k.u.data.message_length = 100000 + (i * 7919u) % 900000;
		k.u.data.payload = junk;
		k.u.data.payload_len = sizeof(junk);
		len = homa_wire_encode(&k, buf, sizeof(buf));
		assert_true(len > 0);
		homa_engine_input(n->e[srv], &n->addr[a], buf, (size_t)len, n->now);
	}
}

/**
 * forged_server() - Set up @n as nodes 's', 'a' and 'b' with settings @s,
 * 's' serving, and node 'a' holding HOMA_PEER_PARTIAL_MSGS forged partial
 * requests in the server's grantable list (all delivered).
 * Return: the server's engine, owned by @n.
 */
static homa_engine *forged_server(struct th_net *n, const struct homa_settings *s)
{
	struct homa_settings t = *s;

	t.max_stranger_partial_msgs = HOMA_PEER_PARTIAL_MSGS;  /* 'a' may open all 64 */
	th_net_init(n, "sab", &t);
	serve(n);
	forge_partial(n, 'a', HOMA_PEER_PARTIAL_MSGS);
	th_net_move(n, th_net_node(n, 's'), 100000);
	return n->e[th_net_node(n, 's')];
}

/**
 * homa_grant_check__short_messages_skip_the_pass() - Node 'a' holds 64
 * forged partial requests in the grantable list; node 'b' sends 20
 * one-packet (100 B) requests, each completed and released by the server.
 * Neither the completion of a message that was never scheduled nor a
 * release while no message waits for room runs a grant pass: the passes
 * walk no entry (each walked all 64 of 'a': 2560 for the 20).
 */
static void homa_grant_check__short_messages_skip_the_pass(void **state)
{
	struct homa_settings s = settings(10000);
	homa_engine *srv;
	struct th_net n;
	uint64_t before;
	char order[32];

	(void)state;
	srv = forged_server(&n, &s);
	before = srv->grant_visits;
	for (int i = 0; i < 20; i++) {
		send(&n, 'b', 100);
		hop(&n, 'b');
		drain_requests(&n, order, sizeof(order));
		assert_string_equal(order, "b");
	}
	assert_int_equal(srv->grant_visits - before, 0);
	/* a scheduled message's arrival still runs its pass */
	send(&n, 'b', 50000);
	hop(&n, 'b');
	assert_true(srv->grant_visits > before);
	assert_int_equal(th_count(n.log, "s>b GRANT"), 1);
	th_net_free(&n);
}

/**
 * homa_grant_check__one_pass_per_batch() - Node 'a' holds 64 forged
 * partial requests in the grantable list; seven scheduled DATA packets of
 * one of node 'b''s messages arrive as one receive batch (inputs with no
 * output between them): the server runs one grant pass for the batch,
 * when its output is taken (each pass walked the forged messages: seven
 * before), and that pass grants as the last of seven did.
 */
static void homa_grant_check__one_pass_per_batch(void **state)
{
	struct homa_settings s = settings(10000);
	homa_engine *srv;
	struct th_net n;
	uint64_t gen;
	char order[8];

	(void)state;
	srv = forged_server(&n, &s);
	send(&n, 'b', 100000);
	gen = srv->grant_gen;
	assert_int_equal(th_net_move(&n, th_net_node(&n, 'b'), 7), 7);
	th_net_clear_log(&n);
	assert_int_equal(srv->grant_gen - gen, 0);
	assert_true(homa_engine_has_output(srv));
	assert_int_equal(homa_engine_next_deadline(srv), 0);
	th_net_move(&n, th_net_node(&n, 's'), 100);
	assert_int_equal(srv->grant_gen - gen, 1);
	assert_int_equal(th_count(n.log, "s>b GRANT"), 1);
	assert_non_null(strstr(n.log, "s>b GRANT 19912 "));
	th_net_run(&n, 1000000000);
	drain_requests(&n, order, sizeof(order));
	assert_string_equal(order, "b");
	th_net_free(&n);
}

/**
 * homa_grant_check__release_gives_room() - Node 'b''s delivered 60 kB
 * request, held by the application, leaves the rx budget (130 kB) too
 * short for node 'a''s 60 kB message, which gets no GRANT; releasing it
 * runs the pass that grants to 'a' at once (not at the next tick).
 */
static void homa_grant_check__release_gives_room(void **state)
{
	struct homa_settings s = settings(10000);
	struct homa_event ev;
	homa_msg *held = NULL;
	homa_engine *srv;
	struct th_net n;

	(void)state;
	s.max_incoming = 40000;
	s.max_rx_buffered = 130000;
	th_net_init(&n, "sab", &s);
	srv = n.e[th_net_node(&n, 's')];
	serve(&n);
	send(&n, 'b', 60000);
	th_net_run(&n, 5000000);
	while (homa_engine_next_event(srv, &ev)) {
		assert_null(held);
		held = ev.msg;
	}
	assert_non_null(held);
	th_net_clear_log(&n);
	send(&n, 'a', 60000);
	th_net_move(&n, th_net_node(&n, 'a'), 100);
	th_net_move(&n, th_net_node(&n, 's'), 100);
	assert_int_equal(th_count(n.log, "s>a GRANT"), 0);
	assert_true(srv->grant_room_need > 0 && srv->grant_room_need != UINT64_MAX);
	homa_engine_msg_release(srv, held);
	th_net_move(&n, th_net_node(&n, 's'), 100);
	assert_int_equal(th_count(n.log, "s>a GRANT"), 1);
	th_net_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_grant_step__third_of_unsched_in_packets),
		cmocka_unit_test(homa_grant_step__within_max_incoming),
		cmocka_unit_test(homa_grant_check__short_window_after_short_message),
		cmocka_unit_test(homa_grant_check__one_pass_per_batch),
		cmocka_unit_test(homa_grant_check__grants_in_steps),
		cmocka_unit_test(homa_grant_check__srpt_rank_priorities),
		cmocka_unit_test(homa_grant_check__scheduled_data_uses_grant_priority),
		cmocka_unit_test(homa_grant_check__one_message_per_peer),
		cmocka_unit_test(homa_grant_check__max_overcommit),
		cmocka_unit_test(homa_grant_check__max_incoming),
		cmocka_unit_test(homa_grant_check__fifo_reaches_oldest),
		cmocka_unit_test(homa_grant_check__fifo_waits_for_its_bytes),
		cmocka_unit_test(homa_grant_check__stalled_message_does_not_block_its_peer),
		cmocka_unit_test(homa_grant_check__shortest_message_starts_at_once),
		cmocka_unit_test(homa_grant_check__batch_gets_one_grant),
		cmocka_unit_test(homa_grant_check__silent_grants_free_the_budget),
		cmocka_unit_test(homa_grant_check__silent_grants_forgiven_up_to_two_windows),
		cmocka_unit_test(homa_grant_check__silent_messages_free_their_slots),
		cmocka_unit_test(homa_grant_check__incoming_claims_raise_nothing),
		cmocka_unit_test(homa_grant_check__no_short_tail),
		cmocka_unit_test(homa_grant_add__forged_messages_stay_few),
		cmocka_unit_test(homa_grant_check__short_messages_skip_the_pass),
		cmocka_unit_test(homa_grant_check__release_gives_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
