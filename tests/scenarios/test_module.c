/* SPDX-License-Identifier: MIT */
/**
 * @file test_module.c
 * Interoperation with a Linux module host (sim/modpeer.h): host 0 runs our
 * engine as the raw driver does (settings.compat HOMA_COMPAT_MODULE, with
 * START_MSG mode asked for), host 1 is module-shaped (flags 6, original
 * DATA with offset -1 and the offset in seq, RESEND(0, -1), 1,000,000-byte
 * limit, unknown types dropped silently). RPCs of 1 B to 1,000,000 B run
 * in both directions (our client to the module server, the module client
 * to our server) under 1% and under 5% loss, with duplication and delay
 * jitter (reordering): each completes bit-exact exactly once, the server
 * application runs each exactly once, nobody times out, and no START_MSG
 * ever goes to the module host.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "world.h"

/** Message sizes: 1 B, one packet, just past it, around the unscheduled window, up to the module's limit. */
static const uint32_t sizes[] = {1, 100, 1416, 1417, 10000, 40000, 40001, 100000, 500000, 1000000};

#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/** run() - Every size both ways under @loss_ppm loss, 1% duplicates, 5% jitter. */
static void run(uint32_t loss_ppm, uint64_t seed)
{
	struct homa_stats st;
	struct world_opts o;
	struct world w;
	uint64_t t = 0;
	size_t i;
	int h;

	world_opts_default(&o);
	o.nhosts = 2;
	o.seed = seed;
	o.trace = true;
	o.module_hosts = 1u << 1;
	o.settings.compat = HOMA_COMPAT_MODULE;
	o.settings.start_msg = true;
	assert_int_equal(world_init(&w, &o), 0);
	world_chaos(&w, seed * 7 + 1);
	w.chaos.loss_ppm = loss_ppm;
	w.chaos.dup_ppm = 10000;
	w.chaos.jitter_ppm = 50000;
	w.chaos.jitter_ns = 20000;
	for (i = 0; i < NSIZES; i++) {
		uint32_t other = sizes[NSIZES - 1 - i];

		world_rpc_at(&w, t += 20000, 0, 1, sizes[i], other);  /* our client, module server */
		world_rpc_at(&w, t += 20000, 1, 0, sizes[i], other);  /* module client, our server */
	}
	assert_int_equal(world_run(&w, 30000000000ull), 0);
	for (i = 0; i < w.nrpcs; i++) {
		struct world_rpc *r = &w.rpcs[i];

		if (r->status != 1 || r->responses != 1 || r->execs != 1 || !r->resp_ok)
			fail_msg("rpc %zu (%d->%d, %u/%u B): status %d, %u responses, %u runs",
				 i, r->client, r->server, r->req_len, r->resp_len, r->status,
				 r->responses, r->execs);
	}
	assert_int_equal(w.bad_requests + w.bad_responses + w.unmatched + w.send_errors, 0);
	assert_int_equal(world_count(&w, HOMA_PKT_START_MSG), 0);
	assert_true(w.chaos.dropped > 0 && w.chaos.duplicated > 0 && w.chaos.delayed > 0);
	for (h = 0; h < 2; h++) {
		world_stats(&w, h, &st);
		assert_int_equal(st.rpcs_timed_out, 0);
		assert_int_equal(st.drops[HOMA_DROP_BAD_OFFSET], 0);
	}
	printf("module interop, loss %u ppm: %zu RPCs, dropped %llu, duplicated %llu, delayed %llu\n",
	       loss_ppm, w.nrpcs, (unsigned long long)w.chaos.dropped,
	       (unsigned long long)w.chaos.duplicated, (unsigned long long)w.chaos.delayed);
	world_free(&w);
}

/** module__both_ways_1pct_loss() - All sizes, both directions, 1% loss. */
static void module__both_ways_1pct_loss(void **state)
{
	(void)state;
	run(10000, 3);
}

/** module__both_ways_5pct_loss() - All sizes, both directions, 5% loss. */
static void module__both_ways_5pct_loss(void **state)
{
	(void)state;
	run(50000, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(module__both_ways_1pct_loss),
		cmocka_unit_test(module__both_ways_5pct_loss),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
