/* SPDX-License-Identifier: MIT */
/**
 * @file test_cutoffs.c
 * Dynamic unscheduled cutoffs (src/core/cutoffs.c): computed from the
 * sizes a receiver sees so that unscheduled bytes split evenly across the
 * unscheduled levels, versioned, sent in CUTOFFS packets to senders whose
 * DATA carries a stale version (at most once per tick), and used by senders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "internal.h"

/**
 * The size mix: equal unscheduled bytes (16384) in four size classes:
 * 256 x 64 B, 16 x 1024 B, 4 x 4096 B, 1 x 16384 B (277 messages).
 */
static const struct {
	uint32_t len, count;
} mix[] = {{64, 256}, {1024, 16}, {4096, 4}, {16384, 1}};

/** The cutoffs that split the mix evenly over levels 7..4. */
static const uint32_t mix_cutoffs[8] = {0, 0, 0, 0, 0xffffffffu, 4096, 1024, 64};
/** mix_cutoffs as sent in CUTOFFS (HOMA_CUTOFF_WIRE_MAX for "any length"). */
static const uint32_t wire_cutoffs[8] = {0, 0, 0, 0, 0x7fffffffu, 4096, 1024, 64};

/** new_engine() - An engine with default settings (@dynamic selects dynamic cutoffs). */
static homa_engine *new_engine(bool dynamic)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	struct homa_settings s;
	homa_engine *e;

	homa_settings_default(&s);
	s.dynamic_cutoffs = dynamic;
	assert_int_equal(homa_engine_new(&e, &s, &a, 1, NULL, 0), 0);
	return e;
}

/** record_mix() - Record the size mix in @e's histogram. */
static void record_mix(homa_engine *e)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < sizeof(mix) / sizeof(mix[0]); i++)
		for (k = 0; k < mix[i].count; k++)
			homa_cutoffs_record(e, mix[i].len);
}

/** homa_cutoffs_maybe_update__even_split() - The mix yields cutoffs 64/1024/4096/max and version 2. */
static void homa_cutoffs_maybe_update__even_split(void **state)
{
	homa_engine *e = new_engine(true);
	struct homa_stats st;

	assert_int_equal(e->cutoff_version, 1);
	assert_memory_equal(e->cutoffs, e->s.unsched_cutoffs, sizeof(e->cutoffs));
	record_mix(e);
	homa_cutoffs_maybe_update(e);
	assert_memory_equal(e->cutoffs, mix_cutoffs, sizeof(mix_cutoffs));
	assert_int_equal(e->cutoff_version, 2);
	homa_engine_stats(e, &st);
	assert_int_equal(st.cutoffs_version, 2);
	/* the same mix again: same cutoffs, no new version */
	record_mix(e);
	homa_cutoffs_maybe_update(e);
	assert_memory_equal(e->cutoffs, mix_cutoffs, sizeof(mix_cutoffs));
	assert_int_equal(e->cutoff_version, 2);
	homa_engine_free(e);
}

/**
 * homa_engine_rx_priority__follows_current_cutoffs() - Lengths map to the
 * levels of the default cutoffs (200 / 2,800 / 15,000 / any 32-bit length
 * for 7..4; a longer one is above every cutoff: 0),
 * then, once the mix moved them, to the new ones (64 / 1,024 / 4,096).
 */
static void homa_engine_rx_priority__follows_current_cutoffs(void **state)
{
	homa_engine *e = new_engine(true);

	(void)state;
	assert_int_equal(homa_engine_rx_priority(e, 0), 7);
	assert_int_equal(homa_engine_rx_priority(e, 200), 7);
	assert_int_equal(homa_engine_rx_priority(e, 201), 6);
	assert_int_equal(homa_engine_rx_priority(e, 2800), 6);
	assert_int_equal(homa_engine_rx_priority(e, 15000), 5);
	assert_int_equal(homa_engine_rx_priority(e, 15001), 4);
	assert_int_equal(homa_engine_rx_priority(e, 0xffffffffu), 4);
	assert_int_equal(homa_engine_rx_priority(e, 1ull << 40), 0);  /* above every cutoff */
	record_mix(e);
	homa_cutoffs_maybe_update(e);
	assert_int_equal(homa_engine_rx_priority(e, 64), 7);
	assert_int_equal(homa_engine_rx_priority(e, 200), 6);
	assert_int_equal(homa_engine_rx_priority(e, 4096), 5);
	assert_int_equal(homa_engine_rx_priority(e, 4097), 4);
	assert_int_equal(homa_engine_rx_priority(NULL, 64), 0);
	homa_engine_free(e);
}

/** homa_cutoffs_maybe_update__long_messages_count_unsched_only() - Messages above unsched_bytes weigh unsched_bytes. */
static void homa_cutoffs_maybe_update__long_messages_count_unsched_only(void **state)
{
	homa_engine *e = new_engine(true);
	uint32_t k;

	/* 200 x 100 B = 20000 B; one 10 MB message counts 40000 B (unscheduled part) */
	for (k = 0; k < 200; k++)
		homa_cutoffs_record(e, 100);
	homa_cutoffs_record(e, 10000000);
	homa_cutoffs_maybe_update(e);
	/* 1/3 of the bytes are short: level 7 ends at the short bucket (128);
	 * 2/4 and 3/4 of the bytes are reached only by the long message */
	assert_int_equal(e->cutoffs[7], 128);
	assert_true(e->cutoffs[6] >= 10000000);
	assert_int_equal(e->cutoffs[6], e->cutoffs[5]);
	assert_int_equal(e->cutoffs[4], 0xffffffffu);
	homa_engine_free(e);
}

/** homa_cutoffs_maybe_update__needs_samples() - Fewer than 200 messages change nothing; static cutoffs never change. */
static void homa_cutoffs_maybe_update__needs_samples(void **state)
{
	homa_engine *e = new_engine(true);
	uint32_t k;

	for (k = 0; k < 199; k++)
		homa_cutoffs_record(e, 64);
	homa_cutoffs_maybe_update(e);
	assert_int_equal(e->cutoff_version, 1);
	assert_memory_equal(e->cutoffs, e->s.unsched_cutoffs, sizeof(e->cutoffs));
	homa_engine_free(e);

	e = new_engine(false);
	record_mix(e);
	homa_cutoffs_maybe_update(e);
	assert_int_equal(e->cutoff_version, 1);
	assert_memory_equal(e->cutoffs, e->s.unsched_cutoffs, sizeof(e->cutoffs));
	homa_engine_free(e);
}

/** send() - Client sends @len bytes to the server. Return: the id. */
static uint64_t send(struct th_pair *p, uint32_t len)
{
	static uint8_t buf[16384];
	struct homa_iov iov = {buf, len};
	uint64_t id;

	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1,
						  len, p->now, &id), 0);
	return id;
}

/** answer_all_but() - The server answers every request (1 byte) except the one of @keep_len bytes. */
static void answer_all_but(struct th_pair *p, uint32_t keep_len, uint64_t *kept)
{
	struct homa_event ev;
	uint8_t one = 1;
	struct homa_iov iov = {&one, 1};

	while (homa_engine_next_event(p->e[1], &ev)) {
		if (homa_msg_length(ev.msg) == keep_len)
			*kept = ev.id;
		else
			assert_int_equal(homa_engine_send_reply(p->e[1], ev.id, &iov, 1, p->now), 0);
		homa_engine_msg_release(p->e[1], ev.msg);
	}
}

/** drain_client() - Release every response at the client. Return: responses. */
static int drain_client(struct th_pair *p)
{
	struct homa_event ev;
	int n = 0;

	while (homa_engine_next_event(p->e[0], &ev)) {
		assert_int_equal(ev.type, HOMA_EV_RESPONSE);
		homa_engine_msg_release(p->e[0], ev.msg);
		n++;
	}
	return n;
}

/** server_cutoffs_sent() - CUTOFFS packets the server has emitted. */
static uint64_t server_cutoffs_sent(struct th_pair *p)
{
	struct homa_stats st;

	homa_engine_stats(p->e[1], &st);
	return st.pkts_sent[HOMA_PKT_CUTOFFS - HOMA_PKT_FIRST];
}

/** take_data() - Take the client's next packet; it must be a DATA at @prio with cutoff @version. */
static void take_data(struct th_pair *p, struct th_pkt *k, uint8_t prio, uint16_t version)
{
	assert_true(th_take(p->e[0], p->now, k) > 0 && k->ok);
	assert_int_equal(k->k.type, HOMA_PKT_DATA);
	assert_int_equal(k->tx.priority, prio);
	assert_int_equal(k->k.u.data.cutoff_version, version);
}

/**
 * cutoffs__learned_sent_and_used() - End to end: the server learns the
 * mix from real requests (version 2); DATA from the client still carrying
 * version 1 draws one CUTOFFS per tick, no matter how many arrive; the
 * client then sends at the new priorities (100 B: 7 -> 6; 2000 B: 6 -> 5)
 * with version 2, which draws no CUTOFFS.
 */
static void cutoffs__learned_sent_and_used(void **state)
{
	struct th_pkt k[4], c;
	uint64_t kept = 0, before;
	struct th_pair p;
	size_t i;
	uint32_t n;
	int got = 0;

	th_pair_init(&p, NULL);
	p.logging = false;
	send(&p, 16384); /* held by the server app: keeps the client's peer state alive */
	th_pair_run(&p, 100000);
	answer_all_but(&p, 16384, &kept);
	assert_int_equal(p.e[0]->cutoff_version, 1);
	for (i = 0; i < 3; i++)
		for (n = 0; n < mix[i].count; n++)
			send(&p, mix[i].len);
	while (got < 276) {
		th_pair_run(&p, 1000000);
		answer_all_but(&p, 16384, &kept);
		got += drain_client(&p);
	}
	th_pair_run(&p, 3000000);
	assert_non_null(homa_rpc_find_handle(p.e[1], kept));
	assert_memory_equal(p.e[1]->cutoffs, mix_cutoffs, sizeof(mix_cutoffs));
	assert_int_equal(p.e[1]->cutoff_version, 2);

	/* four requests queued; the client still has version 1 */
	send(&p, 100);
	send(&p, 100);
	send(&p, 2000);
	send(&p, 100);
	take_data(&p, &k[0], 7, 1);
	take_data(&p, &k[1], 7, 1);
	take_data(&p, &k[2], 7, 1);
	take_data(&p, &k[3], 6, 1); /* 2000 B: default cutoffs */
	before = server_cutoffs_sent(&p);
	for (i = 0; i < 3; i++)
		assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], k[i].buf, (size_t)k[i].len, p.now), 0);
	assert_int_equal(server_cutoffs_sent(&p), before); /* queued, not yet out */
	assert_true(th_take(p.e[1], p.now, &c) > 0 && c.ok);
	assert_int_equal(c.k.type, HOMA_PKT_CUTOFFS);
	assert_int_equal(c.k.u.cutoffs.version, 2);
	/* values within INT_MAX (the module's cutoffs are int), and the id of
	 * the RPC whose DATA was stale (the module routes by it; 0 would
	 * reach a server port) */
	assert_memory_equal(c.k.u.cutoffs.cutoffs, wire_cutoffs, sizeof(wire_cutoffs));
	assert_true(c.k.sender_id == (k[0].k.sender_id ^ 1));
	assert_int_equal(c.tx.priority, 7);
	while (th_take(p.e[1], p.now, &c) > 0)
		assert_int_not_equal(c.k.type, HOMA_PKT_CUTOFFS); /* once per tick */
	/* next tick: another stale DATA gets another CUTOFFS (a lost one is repeated) */
	p.now = homa_engine_next_deadline(p.e[1]);
	homa_engine_on_timer(p.e[1], p.now);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], k[3].buf, (size_t)k[3].len, p.now), 0);
	assert_int_equal(server_cutoffs_sent(&p), before + 1);
	assert_true(th_take(p.e[1], p.now, &c) > 0 && c.ok);
	assert_int_equal(c.k.type, HOMA_PKT_CUTOFFS);
	assert_int_equal(homa_engine_input(p.e[0], &p.addr[1], c.buf, (size_t)c.len, p.now), 0);

	/* the client now uses the new cutoffs, and the server stays quiet */
	send(&p, 100);
	send(&p, 2000);
	take_data(&p, &k[0], 6, 2);
	take_data(&p, &k[1], 5, 2);
	for (i = 0; i < 2; i++)
		assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], k[i].buf, (size_t)k[i].len, p.now), 0);
	while (th_take(p.e[1], p.now, &c) > 0)
		assert_int_not_equal(c.k.type, HOMA_PKT_CUTOFFS);
	assert_int_equal(server_cutoffs_sent(&p), before + 2);
	th_pair_free(&p);
}

/** forge_cutoffs() - Deliver to the client a CUTOFFS from @src (server port) with @c, version 9. Return: input result. */
static int forge_cutoffs(struct th_pair *p, const homa_addr *src, const uint32_t *c)
{
	struct homa_pkt k;
	uint8_t buf[128];
	int len;

	memset(&k, 0, sizeof(k));
	k.type = HOMA_PKT_CUTOFFS;
	k.sport = p->port[1];
	k.dport = p->port[0];
	memcpy(k.u.cutoffs.cutoffs, c, sizeof(k.u.cutoffs.cutoffs));
	k.u.cutoffs.version = 9;
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_true(len > 0);
	return homa_engine_input(p->e[0], src, buf, (size_t)len, p->now);
}

/**
 * cutoffs__accepted_only_ordered_from_a_peer_with_rpcs() - CUTOFFS from an
 * unknown host, from a server we have no RPC with (only an owed ack), or
 * asking longer messages to go at a higher priority than shorter ones,
 * change nothing and count as drops; ordered cutoffs from the server of
 * an open RPC are taken.
 */
static void cutoffs__accepted_only_ordered_from_a_peer_with_rpcs(void **state)
{
	static const uint32_t ok[8] = {0, 0, 0, 0, 0xffffffffu, 9000, 900, 90};
	static const uint32_t unordered[8] = {0, 0, 0, 0, 100, 5000, 0xffffffffu, 64};
	homa_addr stranger = homa_addr_ipv4(0x0a000063);
	struct homa_peer *peer;
	struct homa_stats st;
	struct th_pair p;

	th_pair_init(&p, NULL);
	p.logging = false;
	send(&p, 100);
	th_pair_run(&p, 100000);
	answer_all_but(&p, 0, &(uint64_t){0});
	th_pair_run(&p, 100000);
	assert_int_equal(drain_client(&p), 1);
	peer = homa_peer_find(p.e[0], &p.addr[1]);
	assert_non_null(peer);   /* kept for the ack it owes; no RPC */
	assert_int_equal(peer->rpcs, 0);
	assert_true(forge_cutoffs(&p, &p.addr[1], ok) >= HOMA_INPUT_DROPPED);
	assert_int_not_equal(peer->cutoff_version, 9);
	assert_true(forge_cutoffs(&p, &stranger, ok) >= HOMA_INPUT_DROPPED);
	send(&p, 100);  /* an open RPC with the server */
	assert_true(forge_cutoffs(&p, &p.addr[1], unordered) >= HOMA_INPUT_DROPPED);
	assert_int_not_equal(peer->cutoff_version, 9);
	assert_int_equal(forge_cutoffs(&p, &p.addr[1], ok), 0);
	assert_int_equal(peer->cutoff_version, 9);
	assert_memory_equal(peer->cutoffs, ok, sizeof(ok));
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.drops[HOMA_DROP_UNKNOWN_RPC], 2);
	assert_int_equal(st.drops[HOMA_DROP_BAD_FIELD], 1);
	th_pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_cutoffs_maybe_update__even_split),
		cmocka_unit_test(homa_cutoffs_maybe_update__long_messages_count_unsched_only),
		cmocka_unit_test(homa_cutoffs_maybe_update__needs_samples),
		cmocka_unit_test(homa_engine_rx_priority__follows_current_cutoffs),
		cmocka_unit_test(cutoffs__learned_sent_and_used),
		cmocka_unit_test(cutoffs__accepted_only_ordered_from_a_peer_with_rpcs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
