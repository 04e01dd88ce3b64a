/* SPDX-License-Identifier: MIT */
/* One emulated device of the collective scenario (collective.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "collective.h"
#include "homa/errors.h"
#include "util/cpu.h"
#include "util/json.h"
#include "util/rng.h"

/** Names of the patterns, by enum coll_pattern. */
static const char *const pattern_names[COLL_PATTERNS] = { "alltoall", "allreduce", "lookups" };

const char *coll_pattern_name(enum coll_pattern p)
{
	return (unsigned)p < COLL_PATTERNS ? pattern_names[p] : "?";
}

int coll_pattern_parse(const char *name)
{
	for (int p = 0; p < COLL_PATTERNS; p++)
		if (!strcmp(name, pattern_names[p]))
			return p;
	return -1;
}

/** A device's state while it runs. */
struct dev_run {
	const struct bench_client_ops *ops;
	void *ctx;
	const struct coll_device *d;
	struct coll_sync *s;
	uint32_t ndev;
	struct homa_rng rng;
	uint64_t timeout_ns;
};

/** sleep_until() - The compute phase: sleep until @t_ns (CLOCK_MONOTONIC). */
static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !bench_stop)
		;
}

/**
 * wait_all() - Wait for @n started RPCs; @last_ns gets the completion
 * time of the last. Return: 0, the first RPC's error, HOMA_ETIMEDOUT.
 */
static int wait_all(struct dev_run *r, uint32_t n, uint64_t *last_ns)
{
	struct bench_done done[64];
	uint64_t deadline = bench_now_ns() + r->timeout_ns;
	int err = 0;

	while (n > 0) {
		if (bench_stop)
			return HOMA_ECANCELED;
		if (atomic_load(&r->s->b->failed))
			return HOMA_ECANCELED;
		uint64_t now = bench_now_ns();
		if (now >= deadline)
			return HOMA_ETIMEDOUT;
		uint64_t dl = now + 100000000u < deadline ? now + 100000000u : deadline;
		int got = r->ops->wait(r->ctx, dl, done, n < 64 ? (int)n : 64);
		if (got < 0)
			return got;
		*last_ns = got ? bench_now_ns() : *last_ns;
		for (int i = 0; i < got; i++)
			if (done[i].err && !err)
				err = done[i].err;
		n -= (uint32_t)got;
	}
	return err;
}

/** other() - A device other than this one, uniformly at random. */
static uint32_t other(struct dev_run *r)
{
	uint32_t j = (uint32_t)homa_rng_below(&r->rng, r->ndev - 1);

	return j >= r->d->rank ? j + 1 : j;
}

/** comm() - The communication phase of step @step. Return: 0 or error. */
static int comm(struct dev_run *r, uint32_t step, uint64_t *last_ns)
{
	const struct coll_device *d = r->d;
	uint64_t tag = (uint64_t)step << 32;
	uint32_t n = 0, me = d->rank;
	int rc = 0;

	if (d->pattern == COLL_ALLTOALL) {
		for (uint32_t k = 1; k < r->ndev && !rc; k++, n++)
			rc = r->ops->start(r->ctx, (me + k) % r->ndev, d->msg_bytes, BENCH_MIN_MSG,
					   tag | n);
		return rc ? rc : wait_all(r, n, last_ns);
	}
	if (d->pattern == COLL_LOOKUPS) {
		for (uint32_t k = 0; k < d->lookups && !rc; k++, n++) {
			uint32_t resp = COLL_LOOKUP_MIN + (uint32_t)homa_rng_below(
				&r->rng, COLL_LOOKUP_MAX - COLL_LOOKUP_MIN + 1);
			rc = r->ops->start(r->ctx, other(r), COLL_LOOKUP_REQ, resp, tag | n);
		}
		return rc ? rc : wait_all(r, n, last_ns);
	}
	for (uint32_t round = 0; round < 2 * (r->ndev - 1) && !rc; round++) {
		uint64_t rel;
		rc = r->ops->start(r->ctx, (me + 1) % r->ndev, d->msg_bytes, BENCH_MIN_MSG,
				   tag | round);
		if (rc == 0)
			rc = wait_all(r, 1, last_ns);
		if (rc == 0 && round + 1 < 2 * (r->ndev - 1))
			rc = coll_sync_barrier(r->s, bench_now_ns() + r->timeout_ns, &rel);
	}
	return rc;
}

/** steps() - Every step: compute, communicate, record, barrier. */
static int steps(struct dev_run *r)
{
	const struct coll_device *d = r->d;
	uint64_t start;
	int rc = coll_sync_barrier(r->s, bench_now_ns() + r->timeout_ns, &start);

	int64_t cpu0 = homa_cpu_now_us(HOMA_CPU_PROCESS);
	struct homa_host_cpu h0, h1;
	int host = d->rank == 0 && homa_host_cpu_snap(&h0) == 0;

	if (rc == 0 && d->rank == 0)
		r->s->bound[0] = start;
	for (uint32_t step = 0; rc == 0 && step < d->steps; step++) {
		struct homa_step_dev *rec = &r->s->dev[(size_t)step * r->ndev + d->rank];
		uint64_t last = 0, end = 0;

		sleep_until(start + (uint64_t)(d->compute_us * 1000));
		rec->compute_end_ns = bench_now_ns();
		last = rec->compute_end_ns;
		rc = comm(r, step, &last);
		rec->last_msg_ns = last;
		if (rc == 0)
			rc = coll_sync_barrier(r->s, bench_now_ns() + r->timeout_ns, &end);
		if (rc == 0 && d->rank == 0)
			r->s->bound[step + 1] = end;
		start = end;
	}
	r->s->b->cpu_us[d->rank] = homa_cpu_now_us(HOMA_CPU_PROCESS) - cpu0;
	if (d->rank == 0)
		r->s->b->host_busy_us = host && homa_host_cpu_snap(&h1) == 0
					? (int64_t)homa_host_busy_us(&h0, &h1) : -1;
	return rc;
}

int coll_device_run(const struct bench_client_ops *ops, const struct bench_tr_cfg *cfg,
		    const struct coll_device *d, struct coll_sync *s)
{
	struct dev_run r = { .ops = ops, .d = d, .s = s, .ndev = s->b->ndev };

	if (cfg->nservers != r.ndev || d->rank >= r.ndev || d->steps > s->b->nsteps ||
	    d->steps == 0 || (d->pattern == COLL_LOOKUPS && d->lookups == 0) ||
	    (unsigned)d->pattern >= COLL_PATTERNS || d->msg_bytes < BENCH_MIN_MSG) {
		coll_sync_fail(s);
		return HOMA_EINVAL;
	}
	r.timeout_ns = (uint64_t)(d->step_timeout_s * 1e9);
	homa_rng_seed(&r.rng, d->seed * 1000003u + d->rank);
	int rc = ops->open(&r.ctx, cfg);
	if (rc == 0) {
		rc = steps(&r);
		ops->close(r.ctx);
	}
	if (rc)
		coll_sync_fail(s);
	else
		atomic_fetch_add(&s->b->done, 1);
	return rc;
}

int coll_tr_cfg(const struct bench_opts *o, const char *servers, struct bench_tr_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	if (bench_parse_servers(servers, cfg))
		return HOMA_EINVAL;
	cfg->conns = 1;
	cfg->cc = o->cc;
	cfg->driver = o->driver;
	cfg->polled = o->polled;
	cfg->homa = o->homa;
	cfg->max_size = o->msg_bytes > COLL_LOOKUP_MAX ? o->msg_bytes : COLL_LOOKUP_MAX;
	return 0;
}

int coll_board_stats(const struct coll_sync *s, uint32_t skip, struct homa_step_stats *out)
{
	uint32_t n = s->b->nsteps, ndev = s->b->ndev;

	if (skip >= n)
		return HOMA_EINVAL;
	return homa_step_stats(s->bound + skip, s->dev + (size_t)skip * ndev, n - skip, ndev, out);
}

double coll_board_host_us_per_step(const struct coll_sync *s)
{
	return s->b->host_busy_us < 0 ? -1 : (double)s->b->host_busy_us / s->b->nsteps;
}

double coll_board_cpu_us_per_step(const struct coll_sync *s)
{
	double sum = 0;

	for (uint32_t d = 0; d < s->b->ndev; d++)
		sum += (double)s->b->cpu_us[d];
	return sum / s->b->nsteps;
}
