/* SPDX-License-Identifier: MIT */
/* Calibration of unloaded best times per size. */
#include "calibrate.h"

#include <stdio.h>

#include "homa/errors.h"

/** Time limit per calibrated size. */
#define CALIB_SIZE_NS 500000000ULL
/** Longest wait for one calibration RPC, plus its bytes at CALIB_MIN_BPS. */
#define CALIB_RPC_NS 5000000000ULL
/** Slowest link a calibration RPC is given time for (1 Mbit/s). */
#define CALIB_MIN_BPS 1000000ULL

/**
 * rpc_wait_ns() - How long one calibration RPC of @size bytes may take:
 * 5 s plus its transfer time at 1 Mbit/s (a 15 MB W3 message needs 6 s on
 * a 20 Mbit/s link, more than the 5 s alone).
 */
static uint64_t rpc_wait_ns(uint32_t size)
{
	return CALIB_RPC_NS + (uint64_t)size * (8 * 1000000000ULL / CALIB_MIN_BPS);
}

size_t bench_calib_sizes(const struct homa_workload *w, const struct homa_buckets *bk,
			 uint32_t sizes[BENCH_CALIB_MAX])
{
	size_t n = 0;

	sizes[n++] = w->lo < BENCH_MIN_MSG ? BENCH_MIN_MSG : w->lo;
	for (size_t i = 0; i < bk->n; i++)
		if (bk->upper[i] > sizes[n - 1])
			sizes[n++] = bk->upper[i];
	return n;
}

/** one_rpc() - Run one RPC to completion. Return: its time in ns or an error. */
static int64_t one_rpc(const struct bench_client_ops *ops, void *ctx, uint32_t size,
		       uint32_t response, uint64_t tag)
{
	struct bench_done d;
	uint64_t t0 = bench_now_ns(), wait = rpc_wait_ns(size);
	int rc = ops->start(ctx, 0, size, response, tag);

	if (rc)
		return rc;
	for (;;) {
		int n = ops->wait(ctx, t0 + wait, &d, 1);
		uint64_t now = bench_now_ns();
		if (n < 0)
			return n;
		if (n == 1 && d.tag == tag)
			return d.err ? d.err : (int64_t)(now - t0);
		if (now >= t0 + wait || bench_stop)
			return HOMA_ETIMEDOUT;
	}
}

int bench_calibrate(const struct bench_client_ops *ops, const struct bench_tr_cfg *cfg,
		    const uint32_t *sizes, size_t n, int count, uint32_t response,
		    struct homa_baseline *out)
{
	void *ctx;
	uint64_t tag = 1;
	int rc = ops->open(&ctx, cfg);

	if (rc)
		return rc;
	for (int i = 0; i < 5 && rc >= 0; i++) /* warm up connections and caches */
		rc = one_rpc(ops, ctx, sizes[0], response, tag++) < 0 ? -1 : 0;
	rc = 0;
	for (size_t s = 0; s < n && rc == 0 && !bench_stop; s++) {
		uint64_t limit = bench_now_ns() + CALIB_SIZE_NS;
		for (int k = 0; k < count && bench_now_ns() < limit; k++) {
			int64_t ns = one_rpc(ops, ctx, sizes[s], response, tag++);
			if (ns < 0) {
				fprintf(stderr, "homa-bench: calibration RPC of %u bytes failed: %s\n",
					sizes[s], homa_strerror((int)ns));
				rc = (int)ns;
				break;
			}
			rc = homa_baseline_add(out, sizes[s], (double)ns);
			if (rc)
				break;
		}
	}
	ops->close(ctx);
	return rc;
}
