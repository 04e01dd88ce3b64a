/* SPDX-License-Identifier: MIT */
/**
 * @file test_random_loss.c
 * Scenario 5: 10,000 RPCs among 4 hosts (every host client and server,
 * Poisson arrivals, sizes from 12 B to 120 KB each way) under 5% random
 * loss of every packet type, 2% duplication and delay jitter on 10% of
 * packets (reordering). All complete bit-exact, each exactly once, the
 * server application runs each exactly once, and afterwards every engine
 * has freed its RPCs. The same, shorter, in START_MSG mode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "util/rng.h"
#include "world.h"

#define HOSTS 4

/** pick_len() - A message length: mostly small, some multi-packet, a few scheduled. */
static uint32_t pick_len(struct homa_rng *r)
{
	uint64_t u = homa_rng_below(r, 100);

	if (u < 60)
		return 12 + (uint32_t)homa_rng_below(r, 1400);
	if (u < 90)
		return 1400 + (uint32_t)homa_rng_below(r, 20000);
	return 20000 + (uint32_t)homa_rng_below(r, 100000);
}

/** run_lossy() - @rpcs RPCs under loss, duplication and jitter; all must end well. */
static void run_lossy(size_t rpcs, bool start_msg)
{
	struct world w;
	struct world_opts o;
	struct homa_rng r;
	struct homa_stats st;
	uint64_t t = 0, restarts = 0, resends = 0;
	size_t i;
	int h;

	world_opts_default(&o);
	o.nhosts = HOSTS;
	o.seed = 5;
	o.settings.start_msg = start_msg;
	assert_int_equal(world_init(&w, &o), 0);
	world_chaos(&w, 55);
	w.chaos.loss_ppm = 50000;
	w.chaos.dup_ppm = 20000;
	w.chaos.jitter_ppm = 100000;
	w.chaos.jitter_ns = 20000;
	homa_rng_seed(&r, 555);
	for (i = 0; i < rpcs; i++) {
		int c = (int)homa_rng_below(&r, HOSTS);
		int s = (c + 1 + (int)homa_rng_below(&r, HOSTS - 1)) % HOSTS;

		t += (uint64_t)homa_rng_exp(&r, 10000.0); /* ~100k RPCs/s offered */
		world_rpc_at(&w, t, c, s, pick_len(&r), pick_len(&r));
	}
	assert_int_equal(world_run(&w, 20000000000ull), 0);
	for (i = 0; i < w.nrpcs; i++) {
		struct world_rpc *rp = &w.rpcs[i];

		if (rp->status != 1 || rp->responses != 1 || rp->execs != 1 || !rp->resp_ok)
			fail_msg("rpc %zu (%d->%d, %u/%u B): status %d, %u responses, %u runs",
				 i, rp->client, rp->server, rp->req_len, rp->resp_len,
				 rp->status, rp->responses, rp->execs);
	}
	assert_int_equal(w.bad_requests + w.bad_responses + w.unmatched + w.send_errors, 0);
	assert_true(w.chaos.dropped > 1000 && w.chaos.duplicated > 500 && w.chaos.delayed > 1000);

	/* the server side forgets every RPC once acked (or after NEED_ACK rounds) */
	homa_sim_run_until(w.net, homa_sim_now(w.net) +
			   3 * o.settings.timeout_ticks * o.settings.tick_ns);
	for (h = 0; h < HOSTS; h++) {
		world_stats(&w, h, &st);
		assert_int_equal(st.active_rpcs, 0);
		assert_int_equal(st.rx_buffered_bytes, 0);
		assert_int_equal(st.tx_buffered_bytes, 0);
		assert_int_equal(st.rpcs_timed_out, 0);
		restarts += st.rpc_restarts;
		resends += st.resends_sent;
	}
	for (i = 0; i < w.nrpcs; i++)
		assert_int_equal(w.rpcs[i].responses, 1);
	assert_true(resends > 0);
	printf("random_loss: dropped %llu, duplicated %llu, delayed %llu, resends %llu, restarts %llu\n",
	       (unsigned long long)w.chaos.dropped, (unsigned long long)w.chaos.duplicated,
	       (unsigned long long)w.chaos.delayed, (unsigned long long)resends,
	       (unsigned long long)restarts);
	world_free(&w);
}

/** random_loss__10k_rpcs() - The scenario, classic mode. */
static void random_loss__10k_rpcs(void **state)
{
	(void)state;
	run_lossy(10000, false);
}

/** random_loss__2k_rpcs_start_msg() - A shorter run in START_MSG mode. */
static void random_loss__2k_rpcs_start_msg(void **state)
{
	(void)state;
	run_lossy(2000, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_loss__10k_rpcs),
		cmocka_unit_test(random_loss__2k_rpcs_start_msg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
