/* SPDX-License-Identifier: MIT */
/* One emulated device of the collective scenario (collective.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_bg.h"
#include "collective.h"
#include "report.h"
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

/** Most times one message is sent before its RPC error fails the run. */
#define COLL_MAX_TRIES 4

/** One message of the current group. */
struct coll_msg {
	uint32_t dst, req, resp;
	uint32_t tries;
	uint64_t sent_ns;      /**< when its first try started */
};

/** One finished message, for the message log (coll_device.msg_log). */
struct coll_msg_rec {
	uint32_t step, round, dst, req, resp, tries;
	uint64_t start_ns, done_ns; /**< from the end of the compute phase */
};

/** A device's state while it runs. */
struct dev_run {
	const struct bench_client_ops *ops;
	void *ctx;
	const struct coll_device *d;
	struct coll_sync *s;
	uint32_t ndev;
	struct homa_rng rng;
	uint64_t timeout_ns;
	struct coll_msg *grp;  /**< the group (step or round) being sent */
	uint32_t ngrp, cap;
	uint64_t tag;          /**< step << 32 | round << 16; a message's tag adds its index */
	uint64_t failed_tag;   /**< tag of the message whose RPC failed the run (UINT64_MAX: none) */
	uint32_t join_arrived; /**< devices at the start barrier when it timed out (0: it did not) */
	bool gate_timed_out;   /**< the start file did not appear in time */
	uint64_t comm_ns;      /**< end of the current step's compute phase */
	FILE *log;             /**< the message log (NULL: none); owned */
	struct coll_msg_rec *recs; /**< finished messages, written at the end; owned */
	size_t nrecs, reccap;
	bool log_full;         /**< a record could not be kept (out of memory) */
	struct coll_bg bg;     /**< the background it sends (d->bg_gbps > 0) */
};

/** sleep_until() - The compute phase: sleep until @t_ns (CLOCK_MONOTONIC). */
static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !bench_stop)
		;
}

/** send_msg() - Start message @k of the group. Return: 0 or the transport's error. */
static int send_msg(struct dev_run *r, uint32_t k)
{
	struct coll_msg *m = &r->grp[k];

	if (m->tries++ == 0)
		m->sent_ns = bench_now_ns();
	return r->ops->start(r->ctx, m->dst, m->req, m->resp, r->tag | k);
}

/**
 * retry() - An RPC of the group failed with @err: send it again unless it
 * was tried COLL_MAX_TRIES times (a collective library retries a lost
 * message; the step then includes the retry). Return: 0 (resent), @err.
 */
static int retry(struct dev_run *r, const struct bench_done *dn, int err)
{
	uint32_t k = (uint32_t)(dn->tag & 0xffff);

	if ((dn->tag & ~(uint64_t)0xffff) != r->tag || k >= r->ngrp ||
	    r->grp[k].tries >= COLL_MAX_TRIES)
		return err;
	atomic_fetch_add(&r->s->b->retries, 1);
	return send_msg(r, k) ? err : 0;
}

/**
 * log_done() - Keep message @k of the group, finished at @now, for the
 * message log (nothing without one; on out of memory the log says so).
 */
static void log_done(struct dev_run *r, uint32_t k, uint64_t now)
{
	const struct coll_msg *m = &r->grp[k];

	if (!r->log || r->log_full)
		return;
	if (r->nrecs == r->reccap) {
		size_t cap = r->reccap ? 2 * r->reccap : 256;
		struct coll_msg_rec *n = realloc(r->recs, cap * sizeof(*n));
		if (!n) {
			r->log_full = true;
			return;
		}
		r->recs = n;
		r->reccap = cap;
	}
	r->recs[r->nrecs++] = (struct coll_msg_rec){
		.step = (uint32_t)(r->tag >> 32), .round = (uint32_t)(r->tag >> 16) & 0xffff,
		.dst = m->dst, .req = m->req, .resp = m->resp, .tries = m->tries,
		.start_ns = m->sent_ns - r->comm_ns, .done_ns = now - r->comm_ns,
	};
}

/**
 * send_group() - Start the r->ngrp messages of the group and wait for all;
 * @last_ns gets the completion time of the last. Return: 0, an RPC's
 * error after its last try, HOMA_ETIMEDOUT, HOMA_ECANCELED.
 */
static int send_group(struct dev_run *r, uint64_t *last_ns)
{
	struct bench_done done[64];
	uint64_t deadline = bench_now_ns() + r->timeout_ns;
	uint32_t n = r->ngrp;

	for (uint32_t k = 0; k < r->ngrp; k++) {
		int rc = send_msg(r, k);
		if (rc)
			return rc;
	}
	while (n > 0) {
		if (bench_stop || atomic_load(&r->s->b->failed))
			return HOMA_ECANCELED;
		uint64_t now = bench_now_ns();
		if (now >= deadline)
			return HOMA_ETIMEDOUT;
		uint64_t dl = now + 100000000u < deadline ? now + 100000000u : deadline;
		int got = r->ops->wait(r->ctx, dl, done, n < 64 ? (int)n : 64);
		if (got < 0)
			return got;
		for (int i = 0; i < got; i++) {
			if (done[i].tag & COLL_BG_TAG)
				continue;  /* background: no step waits for it */
			if (done[i].err && retry(r, &done[i], done[i].err)) {
				r->failed_tag = done[i].tag;
				return done[i].err;
			}
			if (!done[i].err) {
				n--;
				*last_ns = bench_now_ns();
				if ((done[i].tag & ~(uint64_t)0xffff) == r->tag &&
				    (done[i].tag & 0xffff) < r->ngrp)
					log_done(r, (uint32_t)(done[i].tag & 0xffff), *last_ns);
			}
		}
	}
	return 0;
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
	uint32_t me = d->rank, rounds = 2 * (r->ndev - 1);
	int rc = 0;

	r->tag = (uint64_t)step << 32;
	r->ngrp = 0;
	if (d->pattern == COLL_ALLTOALL) {
		for (uint32_t k = 1; k < r->ndev; k++)
			r->grp[r->ngrp++] = (struct coll_msg){ (me + k) % r->ndev, d->msg_bytes,
							       BENCH_MIN_MSG, 0, 0 };
		return send_group(r, last_ns);
	}
	if (d->pattern == COLL_LOOKUPS) {
		for (uint32_t k = 0; k < d->lookups; k++) {
			uint32_t resp = COLL_LOOKUP_MIN + (uint32_t)homa_rng_below(
				&r->rng, COLL_LOOKUP_MAX - COLL_LOOKUP_MIN + 1);
			r->grp[r->ngrp++] = (struct coll_msg){ other(r), COLL_LOOKUP_REQ, resp, 0, 0 };
		}
		return send_group(r, last_ns);
	}
	for (uint32_t round = 0; round < rounds && !rc; round++) {
		uint64_t rel;
		r->tag = (uint64_t)step << 32 | (uint64_t)round << 16;
		r->ngrp = 1;
		r->grp[0] = (struct coll_msg){ (me + 1) % r->ndev, d->msg_bytes, BENCH_MIN_MSG, 0, 0 };
		rc = send_group(r, last_ns);
		if (rc == 0 && round + 1 < rounds)
			rc = coll_sync_barrier(r->s, bench_now_ns() + r->timeout_ns, &rel);
	}
	return rc;
}

/**
 * wait_start_file() - Wait until r->d->start_file exists (none: at once),
 * checking every 20 ms, until @deadline_ns. Return: 0, HOMA_ETIMEDOUT
 * (marks the board failed so the others stop too), HOMA_ECANCELED
 * (another device failed, or the run was stopped).
 */
static int wait_start_file(struct dev_run *r, uint64_t deadline_ns)
{
	while (r->d->start_file && access(r->d->start_file, F_OK) != 0) {
		if (bench_stop || atomic_load(&r->s->b->failed))
			return HOMA_ECANCELED;
		if (bench_now_ns() >= deadline_ns) {
			r->gate_timed_out = true;
			coll_sync_fail(r->s);
			return HOMA_ETIMEDOUT;
		}
		usleep(20000);
	}
	return 0;
}

/** steps() - Every step: compute, communicate, record, barrier. */
static int steps(struct dev_run *r)
{
	const struct coll_device *d = r->d;
	uint64_t start;
	double join_s = d->join_timeout_s > 0 ? d->join_timeout_s : d->step_timeout_s;
	uint64_t join_end = bench_now_ns() + (uint64_t)(join_s * 1e9);
	int rc = wait_start_file(r, join_end);

	if (rc == 0)
		rc = coll_sync_barrier(r->s, join_end, &start);

	if (rc == HOMA_ETIMEDOUT)
		r->join_arrived = atomic_load(&r->s->b->arrived);
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
		r->comm_ns = rec->compute_end_ns;
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

/**
 * report_failure() - On stderr: which message's RPC failed the run with
 * @err (step, round, destination, tries), and the socket's protocol
 * counters when the transport has them (read before the socket closes).
 */
static void report_failure(struct dev_run *r, int err)
{
	struct bench_proto p = { .valid = false };
	char who[64];

	if (r->join_arrived)
		fprintf(stderr, "homa-bench device %u: only %u of %u devices arrived at the start "
			"within %.0f s\n", r->d->rank, r->join_arrived, r->ndev,
			r->d->join_timeout_s > 0 ? r->d->join_timeout_s : r->d->step_timeout_s);

	if (r->gate_timed_out)
		fprintf(stderr, "homa-bench device %u: start file %s did not appear within %.0f s\n",
			r->d->rank, r->d->start_file,
			r->d->join_timeout_s > 0 ? r->d->join_timeout_s : r->d->step_timeout_s);
	if (r->failed_tag != UINT64_MAX) {
		uint32_t k = (uint32_t)(r->failed_tag & 0xffff);
		fprintf(stderr, "homa-bench device %u: step %u round %u: RPC to device %u failed "
			"after %u tries: %s\n", r->d->rank, (uint32_t)(r->failed_tag >> 32),
			(uint32_t)(r->failed_tag >> 16) & 0xffff, k < r->ngrp ? r->grp[k].dst : 0,
			k < r->ngrp ? r->grp[k].tries : 0, homa_strerror(err));
	}
	if (r->ctx && r->ops->proto) {
		r->ops->proto(r->ctx, &p);
		snprintf(who, sizeof(who), "homa-bench device %u", r->d->rank);
		bench_proto_print(stderr, who, &p);
	}
}

/**
 * write_log() - Write the kept messages and the socket's counters (read
 * before it closes) to r->log and close it. Return: 0 or HOMA_EIO.
 */
static int write_log(struct dev_run *r)
{
	struct bench_proto p = { .valid = false };
	char who[64];

	fprintf(r->log, "# step round dst req_bytes resp_bytes start_us done_us tries\n");
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct coll_msg_rec *m = &r->recs[i];
		fprintf(r->log, "%u %u %u %u %u %.1f %.1f %u\n", m->step, m->round, m->dst, m->req,
			m->resp, (double)m->start_ns / 1000, (double)m->done_ns / 1000, m->tries);
	}
	if (r->log_full)
		fprintf(r->log, "# out of memory: later messages are missing\n");
	if (r->ctx && r->ops->proto) {
		r->ops->proto(r->ctx, &p);
		snprintf(who, sizeof(who), "# device %u", r->d->rank);
		bench_proto_print(r->log, who, &p);
	}
	if (r->d->bg_gbps > 0)
		fprintf(r->log, "# device %u: background to device %u: %llu messages of %u B "
			"started, %llu refused\n", r->d->rank, r->d->bg_peer,
			(unsigned long long)atomic_load(&r->bg.started), r->d->bg_bytes,
			(unsigned long long)atomic_load(&r->bg.refused));
	int bad = ferror(r->log);
	bad |= fclose(r->log) != 0;
	r->log = NULL;
	return bad ? HOMA_EIO : 0;
}

/**
 * start_bg() - Start the device's background (none without d->bg_gbps),
 * from the moment its transport is open. Return: 0 or coll_bg_start()'s error.
 */
static int start_bg(struct dev_run *r)
{
	const struct coll_device *d = r->d;

	if (!(d->bg_gbps > 0))
		return 0;
	r->bg.ops = r->ops;
	r->bg.ctx = r->ctx;
	r->bg.peer = d->bg_peer;
	r->bg.bytes = d->bg_bytes;
	r->bg.gbps = d->bg_gbps;
	r->bg.seed = d->seed * 7919u + d->rank + 101;
	return coll_bg_start(&r->bg);
}

int coll_device_run(const struct bench_client_ops *ops, const struct bench_tr_cfg *cfg,
		    const struct coll_device *d, struct coll_sync *s)
{
	struct dev_run r = { .ops = ops, .d = d, .s = s, .ndev = s->b->ndev };

	if (cfg->nservers != r.ndev || d->rank >= r.ndev || d->steps > s->b->nsteps ||
	    d->steps == 0 || (d->pattern == COLL_LOOKUPS && d->lookups == 0) ||
	    (unsigned)d->pattern >= COLL_PATTERNS || d->msg_bytes < BENCH_MIN_MSG ||
	    (d->bg_gbps > 0 && (d->bg_peer >= r.ndev || d->bg_peer == d->rank ||
				d->bg_bytes < BENCH_MIN_MSG))) {
		coll_sync_fail(s);
		return HOMA_EINVAL;
	}
	r.timeout_ns = (uint64_t)(d->step_timeout_s * 1e9);
	r.failed_tag = UINT64_MAX;
	homa_rng_seed(&r.rng, d->seed * 1000003u + d->rank);
	r.cap = d->lookups > r.ndev ? d->lookups : r.ndev;
	r.grp = calloc(r.cap, sizeof(*r.grp));
	int rc = r.grp ? 0 : HOMA_ENOMEM;
	if (rc == 0 && d->msg_log && !(r.log = fopen(d->msg_log, "w"))) {
		fprintf(stderr, "homa-bench device %u: cannot write %s: %s\n", d->rank, d->msg_log,
			strerror(errno));
		rc = HOMA_EINVAL;
	}
	if (rc == 0)
		rc = ops->open(&r.ctx, cfg);
	if (rc == 0) {
		rc = start_bg(&r);
		if (rc == 0)
			rc = steps(&r);
		coll_bg_stop(&r.bg);
		if (rc)
			report_failure(&r, rc);
		if (r.log) {
			int wrc = write_log(&r);
			if (wrc)
				fprintf(stderr, "homa-bench device %u: writing %s failed\n", d->rank,
					d->msg_log);
			rc = rc ? rc : wrc;
		}
		ops->close(r.ctx);
		r.ctx = NULL;
	}
	if (r.log)
		fclose(r.log);
	free(r.recs);
	free(r.grp);
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
	cfg->ifname = o->ifname;
	cfg->polled = o->polled;
	cfg->homa_transport = o->homa_transport;
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
