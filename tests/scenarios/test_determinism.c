/* SPDX-License-Identifier: MIT */
/**
 * @file test_determinism.c
 * The simulated network with real engines is deterministic: the same seeds
 * give the same packets at the same times, byte for byte (what homa-sim
 * relies on), and another network seed gives another run; the workload
 * of the hostile scenarios is the same under every compiler.
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

/**
 * world_mixed_rpcs__same_rpcs_every_compiler() - The hostile scenarios'
 * workload is fixed by its seed: the sizes and start times of its first
 * RPCs are these under every compiler (drawn as arguments of one call,
 * they came out in another order under clang than under gcc).
 */
static void world_mixed_rpcs__same_rpcs_every_compiler(void **state)
{
	static const struct { uint32_t req, resp; uint64_t start; } want[] = {
		{100, 1000, 8559009}, {60000, 5000, 5750584},
		{10000, 100000, 12344958}, {100, 100, 3681893},
	};
	struct world_opts o;
	struct world w;

	(void)state;
	world_opts_default(&o);
	o.nhosts = 4;
	assert_int_equal(world_init(&w, &o), 0);
	world_mixed_rpcs(&w, 3, 4, 3, 20000000ull, 42);
	homa_sim_run_until(w.net, 20000000ull);
	assert_int_equal(w.nrpcs, 12);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(w.rpcs[i].req_len, want[i].req);
		assert_int_equal(w.rpcs[i].resp_len, want[i].resp);
		assert_int_equal(w.rpcs[i].sent_ns, want[i].start);
	}
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(determinism__same_seed_same_packets),
		cmocka_unit_test(world_mixed_rpcs__same_rpcs_every_compiler),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
