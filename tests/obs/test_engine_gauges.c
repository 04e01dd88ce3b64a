/* SPDX-License-Identifier: MIT */
/**
 * @file test_engine_gauges.c
 * The metrics issue 7 lists that only a live exchange moves: two engines
 * (no sockets, no clock: packets handed over by the test) and a 1 MB
 * request. The gauges (active RPCs, incoming, granted and outgoing
 * messages, pacer backlog, buffered bytes, peers) and the counters of
 * grants, BUSY and RPC_UNKNOWN seen, restarts and aborts must show what
 * happened, in homa_engine_stats() and in the rendered /metrics text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "homa/engine.h"
#include "homa/obs.h"
#include "prom_check.h"

#define REQ_LEN 1000000u
#define CPORT 1000
#define SPORT 2000

/** The two endpoints and the time. */
struct pair {
	homa_engine *c, *s;
	homa_addr ca, sa;
	uint64_t now;
};

/** setup_pair() - Client and server engines with default settings. */
static void setup_pair(struct pair *p)
{
	p->ca = homa_addr_ipv4(0x0a000001);
	p->sa = homa_addr_ipv4(0x0a000002);
	p->now = 1000000000ull;
	assert_int_equal(homa_engine_new(&p->c, NULL, &p->ca, CPORT, NULL, p->now), 0);
	assert_int_equal(homa_engine_new(&p->s, NULL, &p->sa, SPORT, NULL, p->now), 0);
	homa_engine_set_server(p->s, true);
}

/**
 * move() - Take up to @max packets @from can send now and give them to
 * @to (from address @src). Return: packets moved; counts by type in @types
 * (indexed by type - HOMA_PKT_FIRST) if not NULL.
 */
static int move(struct pair *p, homa_engine *from, homa_engine *to, const homa_addr *src,
		int max, int *types)
{
	static uint8_t buf[65536];
	struct homa_tx tx;
	int n = 0, len;

	while (n < max && (len = homa_engine_output(from, p->now, buf, sizeof(buf), &tx)) > 0) {
		if (types)
			types[buf[11] - HOMA_PKT_FIRST]++;
		homa_engine_input(to, src, buf, (size_t)len, p->now);
		n++;
	}
	return n;
}

/** inject() - Give @c a packet @pkt from the server's address. */
static void inject(struct pair *p, struct homa_pkt *pkt)
{
	uint8_t buf[256];
	int len;

	pkt->sport = SPORT;
	pkt->dport = CPORT;
	len = homa_wire_encode(pkt, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(homa_engine_input(p->c, &p->sa, buf, (size_t)len, p->now), 0);
}

/** rendered() - @name{endpoint="@ep"@more} in the rendered metrics of @st. */
static double rendered(const struct homa_stats *st, const char *ep, const char *name,
		       const char *more)
{
	struct homa_metrics_source src = {ep, st};
	static char text[1 << 18];
	char labels[96], err[256];
	double v;

	assert_true(homa_metrics_render(&src, 1, NULL, 0, text, sizeof(text), NULL) > 0);
	if (prom_check(text, err, sizeof(err)))
		fail_msg("invalid exposition: %s", err);
	snprintf(labels, sizeof(labels), "{endpoint=\"%s\"%s}", ep, more);
	if (prom_value(text, name, labels, &v))
		fail_msg("no %s%s", name, labels);
	return v;
}

/**
 * gauges__one_long_request() - A 1 MB request: the client's outgoing
 * message, buffered bytes and pacer backlog; the server's incoming and
 * granted message, active RPC, peer and grants; all also rendered.
 */
static void gauges__one_long_request(void **state)
{
	static uint8_t req[REQ_LEN];
	struct homa_iov iov = {req, sizeof(req)};
	struct homa_stats cs, ss;
	struct pair p;
	uint64_t id;
	int types[HOMA_PKT_TYPES] = {0};

	setup_pair(&p);
	assert_int_equal(homa_engine_send_request(p.c, &p.sa, SPORT, &iov, 1, 7, p.now, &id), 0);
	homa_engine_stats(p.c, &cs);
	assert_int_equal(cs.client_rpcs_started, 1);
	assert_int_equal(cs.active_rpcs, 1);
	assert_int_equal(cs.outgoing_msgs, 1);
	assert_true(cs.tx_buffered_bytes >= REQ_LEN); /* the message and its bookkeeping */
	assert_int_equal(cs.peers, 1);
	/* nothing sent yet: the unscheduled bytes are sendable, not more */
	assert_int_equal(cs.pacer_backlog_bytes,
			 homa_engine_settings(p.c)->unsched_bytes);
	assert_true(rendered(&cs, "c", "homa_outgoing_messages", "") == 1);
	assert_true(rendered(&cs, "c", "homa_pacer_backlog_bytes", "") == cs.pacer_backlog_bytes);

	assert_int_equal(move(&p, p.c, p.s, &p.ca, 1, NULL), 1);
	assert_true(move(&p, p.s, p.c, &p.sa, 100, types) >= 1);
	homa_engine_stats(p.s, &ss);
	assert_int_equal(ss.active_rpcs, 1);
	assert_int_equal(ss.incoming_msgs, 1);
	assert_int_equal(ss.granted_msgs, 1);
	assert_int_equal(ss.peers, 1);
	assert_true(ss.grants_sent >= 1);
	assert_int_equal(ss.grants_sent, types[HOMA_PKT_GRANT - HOMA_PKT_FIRST]);
	assert_int_equal(ss.pkts_recv[HOMA_PKT_DATA - HOMA_PKT_FIRST], 1);
	assert_true(ss.rx_buffered_bytes > 0);
	assert_true(rendered(&ss, "s", "homa_incoming_messages", "") == 1);
	assert_true(rendered(&ss, "s", "homa_granted_messages", "") == 1);
	assert_true(rendered(&ss, "s", "homa_peers", "") == 1);
	assert_true(rendered(&ss, "s", "homa_grants_sent_total", "") == ss.grants_sent);
	assert_true(rendered(&ss, "s", "homa_packets_received_total", ",type=\"DATA\"") == 1);

	homa_engine_free(p.c);
	homa_engine_free(p.s);
}

/**
 * gauges__busy_unknown_abort() - BUSY and RPC_UNKNOWN seen by a client
 * are counted (RPC_UNKNOWN restarts the RPC); an abort is counted and
 * empties the gauges.
 */
static void gauges__busy_unknown_abort(void **state)
{
	static uint8_t req[5000];
	struct homa_iov iov = {req, sizeof(req)};
	struct homa_pkt busy = {.type = HOMA_PKT_BUSY}, unk = {.type = HOMA_PKT_RPC_UNKNOWN};
	struct homa_stats cs;
	struct pair p;
	uint64_t id;

	setup_pair(&p);
	assert_int_equal(homa_engine_send_request(p.c, &p.sa, SPORT, &iov, 1, 7, p.now, &id), 0);
	move(&p, p.c, p.s, &p.ca, 100, NULL);   /* the server now knows it; drop its answers */
	busy.sender_id = id | 1;                /* the server's id for the RPC */
	unk.sender_id = id | 1;
	inject(&p, &busy);
	inject(&p, &unk);
	homa_engine_stats(p.c, &cs);
	assert_int_equal(cs.pkts_recv[HOMA_PKT_BUSY - HOMA_PKT_FIRST], 1);
	assert_int_equal(cs.pkts_recv[HOMA_PKT_RPC_UNKNOWN - HOMA_PKT_FIRST], 1);
	assert_int_equal(cs.rpc_restarts, 1);
	assert_true(rendered(&cs, "c", "homa_packets_received_total", ",type=\"BUSY\"") == 1);
	assert_true(rendered(&cs, "c", "homa_packets_received_total", ",type=\"RPC_UNKNOWN\"") == 1);
	assert_true(rendered(&cs, "c", "homa_rpc_restarts_total", "") == 1);

	assert_int_equal(homa_engine_abort(p.c, id, p.now), 0);
	homa_engine_stats(p.c, &cs);
	assert_int_equal(cs.rpcs_aborted, 1);
	assert_int_equal(cs.active_rpcs, 0);
	assert_int_equal(cs.outgoing_msgs, 0);
	assert_int_equal(cs.pacer_backlog_bytes, 0);
	assert_true(rendered(&cs, "c", "homa_rpcs_aborted_total", "") == 1);
	assert_true(rendered(&cs, "c", "homa_active_rpcs", "") == 0);
	homa_engine_free(p.c);
	homa_engine_free(p.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gauges__one_long_request),
		cmocka_unit_test(gauges__busy_unknown_abort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
