/* SPDX-License-Identifier: MIT */
/**
 * @file test_complete.c
 * Scenario 1 (and, built with SCENARIO_START_MSG, scenario 8): messages of
 * 1 B, one packet, exactly the unscheduled size, 1 MB and 10 MB complete
 * as requests and as responses, bit-exact, each executed once, and every
 * engine frees its state afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "world.h"

#ifndef SCENARIO_START_MSG
#define SCENARIO_START_MSG 0
#endif

/** init() - A world of @n hosts in the mode this file is built for. */
static void init(struct world *w, int n)
{
	struct world_opts o;

	world_opts_default(&o);
	o.nhosts = n;
	o.settings.start_msg = SCENARIO_START_MSG;
	assert_int_equal(world_init(w, &o), 0);
}

/** check_all_done() - Every RPC got exactly one bit-exact response and ran once. */
static void check_all_done(struct world *w)
{
	size_t i;

	assert_int_equal(w->pending, 0);
	for (i = 0; i < w->nrpcs; i++) {
		struct world_rpc *r = &w->rpcs[i];

		assert_int_equal(r->status, 1);
		assert_int_equal(r->responses, 1);
		assert_int_equal(r->execs, 1);
		assert_true(r->resp_ok);
	}
	assert_int_equal(w->bad_requests, 0);
	assert_int_equal(w->bad_responses, 0);
	assert_int_equal(w->unmatched, 0);
	assert_int_equal(w->send_errors, 0);
}

/** check_quiet() - After a few ticks every engine has freed its RPCs and buffers. */
static void check_quiet(struct world *w)
{
	struct homa_stats st;
	int h;

	homa_sim_run_until(w->net, homa_sim_now(w->net) +
			   10 * w->o.settings.tick_ns);
	for (h = 0; h < w->o.nhosts; h++) {
		world_stats(w, h, &st);
		assert_int_equal(st.active_rpcs, 0);
		assert_int_equal(st.rx_buffered_bytes, 0);
		assert_int_equal(st.tx_buffered_bytes, 0);
		assert_int_equal(st.rpcs_timed_out, 0);
	}
	assert_int_equal(homa_sim_pkts_in_flight(w->net), 0);
}

/** sizes() - The message sizes of the scenario for settings @s. */
static void sizes(const struct homa_settings *s, uint32_t out[5])
{
	out[0] = 1;
	out[1] = s->mtu - HOMA_DATA_HDR_LEN;   /* exactly one full packet */
	out[2] = s->unsched_bytes;             /* exactly the unscheduled bytes */
	out[3] = 1000000;
	out[4] = 10000000;
}

/** complete__sizes_one_at_a_time() - Each size as request and as response, alone. */
static void complete__sizes_one_at_a_time(void **state)
{
	struct world w;
	uint32_t sz[5];
	int i;

	(void)state;
	init(&w, 2);
	sizes(&w.o.settings, sz);
	for (i = 0; i < 5; i++) {
		world_rpc(&w, 0, 1, sz[i], 100);  /* size as a request */
		assert_int_equal(world_run(&w, 1000000000ull), 0);
		world_rpc(&w, 0, 1, 100, sz[i]);  /* size as a response */
		assert_int_equal(world_run(&w, 1000000000ull), 0);
		world_rpc(&w, 1, 0, sz[i], sz[i]); /* both, other direction */
		assert_int_equal(world_run(&w, 1000000000ull), 0);
	}
	check_all_done(&w);
	check_quiet(&w);
	world_free(&w);
}

/** complete__sizes_concurrent() - All sizes at once between three hosts. */
static void complete__sizes_concurrent(void **state)
{
	struct world w;
	uint32_t sz[5];
	int i, j;

	(void)state;
	init(&w, 3);
	sizes(&w.o.settings, sz);
	for (i = 0; i < 5; i++)
		for (j = 0; j < 3; j++)
			world_rpc(&w, j, (j + 1) % 3, sz[i], sz[4 - i]);
	assert_int_equal(world_run(&w, 2000000000ull), 0);
	check_all_done(&w);
	check_quiet(&w);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(complete__sizes_one_at_a_time),
		cmocka_unit_test(complete__sizes_concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
