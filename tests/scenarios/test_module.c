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

/**
 * received_before() - Request bytes from @src that the trace saw delivered
 * to @dst before record @upto (no loss in the caller's world).
 */
static uint64_t received_before(const struct world *w, size_t upto, int src, int dst)
{
	uint64_t got = 0;
	size_t i;

	for (i = 0; i < upto; i++) {
		const struct homa_sim_trace_rec *r = &w->trace.recs[i];

		if (r->what == HOMA_SIM_DELIVER && r->src == src && r->dst == dst &&
		    !r->decode_err && r->pkt.type == HOMA_PKT_DATA)
			got += r->pkt.u.data.payload_len;
	}
	return got;
}

/**
 * module__grants_as_the_module() - The module host grants with the
 * module's own algorithm (homa_grant.c): a window of max_incoming /
 * (active + 1) bytes past what arrived, refreshed with every DATA batch.
 * Our clients on hosts 0 and 2 each send it 1,000,000 bytes at once; each
 * of its GRANTs (FIFO grants off) sits one such window (1 or 2 active
 * messages: 200,000 or 133,333 bytes) past the bytes delivered from that
 * client, give or take the packets still being taken in, or ends the
 * message. Our scheduler granted unsched_bytes plus a step past them.
 */
static void module__grants_as_the_module(void **state)
{
	struct world_opts o;
	struct world w;
	size_t i, grants = 0, windows[2] = {0, 0};
	uint32_t slack;

	(void)state;
	world_opts_default(&o);
	o.nhosts = 3;
	o.trace = true;
	o.module_hosts = 1u << 1;
	o.settings.compat = HOMA_COMPAT_MODULE;
	o.settings.grant_fifo_fraction = 0;
	slack = 4 * o.settings.mtu;
	assert_int_equal(world_init(&w, &o), 0);
	world_rpc_at(&w, 1000, 0, 1, 1000000, 100);
	world_rpc_at(&w, 1000, 2, 1, 1000000, 100);
	assert_int_equal(world_run(&w, 1000000000ull), 0);
	for (i = 0; i < w.nrpcs; i++)
		assert_int_equal(w.rpcs[i].status, 1);
	for (i = 0; i < w.trace.len; i++) {
		const struct homa_sim_trace_rec *r = &w.trace.recs[i];
		uint64_t got, ahead;
		int k;

		if (r->what != HOMA_SIM_EMIT || r->src != 1 || r->pkt.type != HOMA_PKT_GRANT)
			continue;
		grants++;
		if (r->pkt.u.grant.offset == 1000000)
			continue;
		got = received_before(&w, i, r->dst, 1);
		ahead = r->pkt.u.grant.offset - got;
		for (k = 0; k < 2; k++)
			if (ahead <= o.settings.max_incoming / (k + 2) &&
			    ahead + slack >= o.settings.max_incoming / (k + 2))
				break;
		if (k == 2)
			fail_msg("GRANT to h%d for %u with %llu B received: %llu B ahead", r->dst,
				 r->pkt.u.grant.offset, (unsigned long long)got,
				 (unsigned long long)ahead);
		windows[k]++;
	}
	printf("module grants: %zu, one window ahead of 1 active: %zu, of 2: %zu\n", grants,
	       windows[0], windows[1]);
	assert_true(windows[1] > 0);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(module__both_ways_1pct_loss),
		cmocka_unit_test(module__both_ways_5pct_loss),
		cmocka_unit_test(module__grants_as_the_module),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
