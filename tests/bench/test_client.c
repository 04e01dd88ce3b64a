/* SPDX-License-Identifier: MIT */
/*
 * Tests for tools/bench/client.c with an in-memory transport: each RPC
 * completes on the wait() after the one that saw it start, so the load
 * generator's bookkeeping can be checked without a network or timing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "bench.h"
#include "homa/errors.h"

/** Fake transport state. */
struct fake {
	uint64_t tags[4096];
	uint32_t sizes[4096];
	size_t n;
	size_t max_inflight;
	uint64_t started;
	uint32_t min_size;
	int fail_every; /**< every Nth RPC finishes with HOMA_ETIMEDOUT (0: none) */
	int stall;      /**< 1: nothing ever completes; wait() sleeps to its deadline */
	uint64_t waits; /**< wait() calls */
};

static struct fake fk;

/** fake_open() - Nothing to connect. */
static int fake_open(void **ctx, const struct bench_tr_cfg *cfg)
{
	*ctx = &fk;
	return 0;
}

/** fake_start() - Remember the RPC. */
static int fake_start(void *ctx, size_t server, uint32_t req, uint32_t resp, uint64_t tag)
{
	struct fake *f = ctx;

	assert_true(f->n < 4096);
	assert_int_equal(resp, 100);
	f->tags[f->n] = tag;
	f->sizes[f->n++] = req;
	f->started++;
	if (req < f->min_size)
		f->min_size = req;
	if (f->n > f->max_inflight)
		f->max_inflight = f->n;
	return 0;
}

/** fake_wait() - Finish up to @max of the RPCs in flight. */
static int fake_wait(void *ctx, uint64_t deadline_ns, struct bench_done *out, int max)
{
	struct fake *f = ctx;
	int k = 0;

	f->waits++;
	if (f->stall) {
		uint64_t now = bench_now_ns();
		if (deadline_ns > now) {
			struct timespec ts = { (time_t)((deadline_ns - now) / 1000000000),
					       (long)((deadline_ns - now) % 1000000000) };
			nanosleep(&ts, NULL);
		}
		return 0;
	}
	while (k < max && f->n > 0) {
		f->n--;
		out[k].tag = f->tags[f->n];
		out[k].err = (f->fail_every && f->started % (uint64_t)f->fail_every == 0)
			     ? HOMA_ETIMEDOUT : 0;
		k++;
	}
	return k;
}

/** fake_proto() - Counters: one DATA packet per RPC started. */
static void fake_proto(void *ctx, struct bench_proto *out)
{
	struct fake *f = ctx;

	memset(out, 0, sizeof(*out));
	out->valid = true;
	out->data_sent = f->started;
}

/** fake_close() - Nothing to release. */
static void fake_close(void *ctx)
{
}

static const struct bench_client_ops fake_ops = {
	"fake", fake_open, fake_start, fake_wait, fake_proto, fake_close,
};

/** setup() - Fresh fake and a one-server config. */
static void setup(struct bench_tr_cfg *cfg)
{
	memset(&fk, 0, sizeof(fk));
	fk.min_size = UINT32_MAX;
	memset(cfg, 0, sizeof(*cfg));
	cfg->nservers = 1;
}

/** Closed loop keeps at most N in flight and accounts every RPC. */
static void bench_client_run__closed_loop(void **state)
{
	struct bench_tr_cfg cfg;
	struct homa_workload w;
	struct bench_result res;

	setup(&cfg);
	assert_int_equal(homa_workload_range(1, 50, &w), 0);
	struct bench_load L = { .req = &w, .response = 100, .outstanding = 8,
				.duration = 0.05, .warmup = 0, .seed = 3, .label = "fake" };
	assert_int_equal(bench_client_run(&fake_ops, &cfg, &L, &res), 0);
	assert_true(fk.max_inflight <= 8);
	assert_true(res.rpcs > 0);
	assert_int_equal(res.errors, 0);
	assert_int_equal(res.unfinished, 0);
	assert_true(fk.min_size >= BENCH_MIN_MSG); /* tiny sizes are raised to 8 */
	assert_true(res.lat.n >= res.rpcs - 8 && res.lat.n <= fk.started);
	assert_true(res.client_cpu_us >= 0);
	assert_true(res.server_cpu_us == -1); /* no control ports given */
	assert_true(res.proto.valid); /* the arm's counters, taken before close() */
	assert_true(res.proto.data_sent == fk.started);
	homa_lat_free(&res.lat);
}

/** Failed RPCs are counted, not recorded. */
static void bench_client_run__counts_errors(void **state)
{
	struct bench_tr_cfg cfg;
	struct homa_workload w;
	struct bench_result res;

	setup(&cfg);
	fk.fail_every = 4;
	assert_int_equal(homa_workload_fixed(100, &w), 0);
	struct bench_load L = { .req = &w, .response = 100, .outstanding = 1,
				.duration = 0.05, .warmup = 0, .seed = 3, .label = "fake" };
	assert_int_equal(bench_client_run(&fake_ops, &cfg, &L, &res), 0);
	assert_true(res.errors > 0);
	assert_true(res.lat.n + res.errors <= fk.started);
	assert_true(res.lat.n >= fk.started - res.errors - 1);
	homa_lat_free(&res.lat);
	homa_workload_free(&w);
}

/** Open loop never exceeds max_outstanding; bad loads are refused. */
static void bench_client_run__open_loop_cap(void **state)
{
	struct bench_tr_cfg cfg;
	struct homa_workload w;
	struct bench_result res;

	setup(&cfg);
	assert_int_equal(homa_workload_fixed(64, &w), 0);
	struct bench_load L = { .req = &w, .response = 100, .rate = 1e6, .max_outstanding = 3,
				.duration = 0.05, .warmup = 0, .seed = 3, .label = "fake" };
	assert_int_equal(bench_client_run(&fake_ops, &cfg, &L, &res), 0);
	assert_true(fk.max_inflight <= 3);
	assert_true(res.rpcs > 0);
	homa_lat_free(&res.lat);
	L.max_outstanding = 0;
	assert_int_equal(bench_client_run(&fake_ops, &cfg, &L, &res), HOMA_EINVAL);
	homa_workload_free(&w);
}

/**
 * RPCs that never finish: the generator blocks in wait() until its next
 * deadline instead of polling (a run of 1.3 s crosses the 1 s tick).
 */
static void bench_client_run__blocks_while_waiting(void **state)
{
	struct bench_tr_cfg cfg;
	struct homa_workload w;
	struct bench_result res;

	setup(&cfg);
	fk.stall = 1;
	assert_int_equal(homa_workload_fixed(100, &w), 0);
	struct bench_load L = { .req = &w, .response = 100, .outstanding = 2,
				.duration = 1.3, .warmup = 0, .seed = 3, .label = "fake" };
	assert_int_equal(bench_client_run(&fake_ops, &cfg, &L, &res), 0);
	assert_true(fk.waits < 50);
	assert_int_equal(res.rpcs, 0);
	assert_int_equal(res.unfinished, 2);
	homa_lat_free(&res.lat);
	homa_workload_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bench_client_run__closed_loop),
		cmocka_unit_test(bench_client_run__counts_errors),
		cmocka_unit_test(bench_client_run__open_loop_cap),
		cmocka_unit_test(bench_client_run__blocks_while_waiting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
