/* SPDX-License-Identifier: MIT */
/**
 * @file test_determinism.c
 * The simulated network with real engines is deterministic: the same seeds
 * give the same packets at the same times, byte for byte (what homa-sim
 * relies on), and another network seed gives another run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/rng.h"
#include "world.h"

/** run() - 300 RPCs among 4 hosts under loss, duplication and jitter; the trace as text. */
static char *run(uint64_t net_seed)
{
	struct world w;
	struct world_opts o;
	struct homa_rng r;
	uint64_t t = 0;
	char *text;
	int i;

	world_opts_default(&o);
	o.nhosts = 4;
	o.seed = net_seed;
	o.trace = true;
	assert_int_equal(world_init(&w, &o), 0);
	world_chaos(&w, net_seed * 7);
	w.chaos.loss_ppm = 20000;
	w.chaos.dup_ppm = 20000;
	w.chaos.jitter_ppm = 100000;
	w.chaos.jitter_ns = 5000;
	homa_rng_seed(&r, 99);
	for (i = 0; i < 300; i++) {
		int c = (int)homa_rng_below(&r, 4);
		/* one draw per statement: argument order is unspecified in C */
		uint32_t resp_len = 12 + (uint32_t)homa_rng_below(&r, 60000);
		uint32_t req_len = 12 + (uint32_t)homa_rng_below(&r, 60000);

		t += 2000;
		world_rpc_at(&w, t, c, (c + 1) % 4, req_len, resp_len);
	}
	assert_int_equal(world_run(&w, 10000000000ull), 0);
	text = homa_sim_trace_render(&w.trace, 0, HOMA_SIM_TRACE_TIME | HOMA_SIM_TRACE_ID);
	assert_non_null(text);
	world_free(&w);
	return text;
}

/** determinism__same_seed_same_packets() - Two runs, one text; a third seed differs. */
static void determinism__same_seed_same_packets(void **state)
{
	char *a = run(3), *b = run(3), *c = run(4);

	(void)state;
	assert_true(strlen(a) > 100000);
	assert_true(strcmp(a, b) == 0);
	assert_true(strcmp(a, c) != 0);
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(determinism__same_seed_same_packets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
