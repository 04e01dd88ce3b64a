/* SPDX-License-Identifier: MIT */
/*
 * The load generator shared by every arm: open-loop Poisson arrivals or a
 * closed loop with N RPCs in flight, a warm-up, a measurement window,
 * a short drain, and the CPU of client and servers over the window.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>

#include "bench.h"
#include "ctl.h"
#include "homa/errors.h"
#include "util/cpu.h"
#include "util/poisson.h"

/** Longest wait for RPCs still in flight when the window closes. */
#define DRAIN_NS 2000000000ULL

/** An RPC in flight. */
struct slot {
	uint64_t start_ns;
	uint32_t req, resp;
	uint32_t gen;
	int busy;
};

/**
 * One snapshot of the servers' CPU and RPC counters, taken by its own
 * thread: the queries are TCP connections to every server's control
 * port, and through a congested switch they can take seconds, which must
 * not stall the load generator (an open-loop client that stops issuing
 * for a second charges that second to every RPC it issues late).
 */
struct srv_snap {
	struct run *r;
	pthread_t th;
	bool started;
	int rc;             /**< 0, or HOMA_EIO if a server did not answer */
	struct bench_usage use; /**< summed over the servers */
	uint64_t rpcs;
};

/** Run state. */
struct run {
	const struct bench_client_ops *ops;
	const struct bench_tr_cfg *cfg;
	const struct bench_load *load;
	struct bench_result *res;
	void *ctx;
	struct slot *slots;
	uint32_t *free_idx;
	size_t nslots, nfree, busy;
	struct homa_rng rng;
	uint64_t warm_end, end;
	struct bench_usage use0;   /**< this process at the window's start */
	struct homa_host_cpu host0; /**< the machine at the window's start */
	bool have_host0;
	struct srv_snap snap[2]; /**< servers' CPU at the window's start and end */
	int fatal;
};

/** ctl_sum() - Sum usage and RPCs over all servers. Return: 0 or HOMA_EIO. */
static int ctl_sum(struct run *r, struct bench_usage *use, uint64_t *rpcs)
{
	*use = (struct bench_usage){ 0, 0, 0, 0 };
	*rpcs = 0;
	if (!r->load->ctl_ports)
		return HOMA_EIO;
	for (size_t i = 0; i < r->cfg->nservers; i++) {
		struct bench_usage u;
		uint64_t n;
		if (bench_ctl_query(&r->cfg->servers[i], r->load->ctl_ports[i], &u, &n))
			return HOMA_EIO;
		bench_usage_add(use, &u);
		*rpcs += n;
	}
	return 0;
}

/** issue() - Start one RPC that arrived at @t_ns. Return: 0 or a fatal error. */
static int issue(struct run *r, uint64_t t_ns)
{
	if (r->nfree == 0) {
		r->res->skipped++;
		return 0;
	}
	uint32_t idx = r->free_idx[--r->nfree];
	struct slot *s = &r->slots[idx];
	size_t server = r->cfg->nservers > 1 ? homa_rng_below(&r->rng, r->cfg->nservers) : 0;
	uint32_t req = homa_workload_sample(r->load->req, &r->rng);

	if (req < BENCH_MIN_MSG)
		req = BENCH_MIN_MSG;
	s->start_ns = t_ns;
	s->req = req;
	s->resp = r->load->response;
	s->gen++;
	int rc = r->ops->start(r->ctx, server, req, s->resp, ((uint64_t)s->gen << 32) | idx);
	if (rc) {
		r->free_idx[r->nfree++] = idx;
		r->res->errors++;
		if (rc != HOMA_EAGAIN && rc != HOMA_ETIME && rc != HOMA_EPEERDEAD &&
		    rc != HOMA_ENOMEM)
			return rc;
		return 0;
	}
	s->busy = 1;
	r->busy++;
	return 0;
}

/** complete() - Account finished RPCs in @d at time @now. */
static void complete(struct run *r, const struct bench_done *d, int n, uint64_t now)
{
	for (int i = 0; i < n; i++) {
		uint32_t idx = (uint32_t)d[i].tag;
		if (idx >= r->nslots)
			continue;
		struct slot *s = &r->slots[idx];
		if (!s->busy || s->gen != (uint32_t)(d[i].tag >> 32))
			continue;
		s->busy = 0;
		r->busy--;
		r->free_idx[r->nfree++] = idx;
		if (d[i].err) {
			r->res->errors++;
			continue;
		}
		/* Rates count what completes in the window; latency what started in it. */
		if (now >= r->warm_end && now <= r->end) {
			r->res->rpcs++;
			r->res->bytes += (uint64_t)s->req + s->resp;
		}
		if (s->start_ns >= r->warm_end &&
		    homa_lat_add(&r->res->lat, s->req, now - s->start_ns))
			r->fatal = HOMA_ENOMEM;
	}
}

/** progress() - One progress line on stderr. */
static void progress(struct run *r, uint64_t now)
{
	double t = now > r->warm_end ? (double)(now - r->warm_end) / 1e9 : 0;
	fprintf(stderr, "\r  %s: %4.1f/%.0f s  %8llu RPCs  %9.0f RPC/s  ", r->load->label, t,
		r->load->duration, (unsigned long long)r->res->rpcs,
		t > 0 ? (double)r->res->rpcs / t : 0.0);
}

/** snap_main() - Thread body: query every server once into its srv_snap. */
static void *snap_main(void *arg)
{
	struct srv_snap *sn = arg;

	sn->rc = ctl_sum(sn->r, &sn->use, &sn->rpcs);
	return NULL;
}

/**
 * snap_start() - Start snapshot @i in its own thread (on failure it counts
 * as failed). Without control ports (--ctl-port -1) there is nothing to
 * ask: the snapshot fails at once, with no thread.
 */
static void snap_start(struct run *r, int i)
{
	struct srv_snap *sn = &r->snap[i];

	sn->r = r;
	sn->rc = HOMA_EIO;
	sn->started = r->load->ctl_ports &&
		      pthread_create(&sn->th, NULL, snap_main, sn) == 0;
}

/** begin_window() - Snapshot usage counters as measurement starts. */
static void begin_window(struct run *r)
{
	r->have_host0 = homa_host_cpu_snap(&r->host0) == 0;
	bench_usage_now(&r->use0);
	snap_start(r, 0);
}

/** end_window() - Snapshot usage counters as measurement ends. */
static void end_window(struct run *r)
{
	struct bench_usage now;
	struct homa_host_cpu host1;

	bench_usage_now(&now);
	bench_usage_sub(&r->use0, &now, &r->res->client_use);
	r->res->client_cpu_us = r->res->client_use.cpu_us;
	r->res->host_busy_us = r->have_host0 && homa_host_cpu_snap(&host1) == 0
			       ? (int64_t)homa_host_busy_us(&r->host0, &host1) : -1;
	snap_start(r, 1);
}

/**
 * servers_cpu() - Wait for both snapshots and fill the servers' CPU over
 * the window (-1 if either failed).
 */
static void servers_cpu(struct run *r)
{
	for (int i = 0; i < 2; i++)
		if (r->snap[i].started)
			pthread_join(r->snap[i].th, NULL);
	r->res->server_cpu_us = -1;
	r->res->server_use = (struct bench_usage){ -1, -1, -1, -1 };
	if (r->snap[0].rc == 0 && r->snap[1].rc == 0) {
		bench_usage_sub(&r->snap[0].use, &r->snap[1].use, &r->res->server_use);
		r->res->server_cpu_us = r->res->server_use.cpu_us;
		r->res->server_rpcs = r->snap[1].rpcs - r->snap[0].rpcs;
	}
}

/** loop() - Generate load until the window closes, then drain. */
static int loop(struct run *r)
{
	const struct bench_load *L = r->load;
	struct homa_poisson arr;
	struct bench_done done[64];
	uint64_t now = bench_now_ns(), next_prog = now + 1000000000ULL;
	int open = L->rate > 0, in_window = 0;
	bool show = L->progress && L->duration > 2;

	if (open && homa_poisson_init(&arr, L->rate, L->seed + 1, now))
		return HOMA_EINVAL;
	for (int i = 0; !open && i < L->outstanding && !r->fatal; i++)
		r->fatal = issue(r, now);
	while (!r->fatal && !bench_stop && now < r->end) {
		if (!in_window && now >= r->warm_end) {
			begin_window(r);
			in_window = 1;
		}
		while (open && homa_poisson_peek(&arr) <= now && !r->fatal)
			r->fatal = issue(r, homa_poisson_next(&arr));
		uint64_t dl = r->end < next_prog ? r->end : next_prog;
		if (!in_window && r->warm_end < dl)
			dl = r->warm_end;
		if (open && homa_poisson_peek(&arr) < dl)
			dl = homa_poisson_peek(&arr);
		/* Never ask for more than are in flight: no empty poll after the last one. */
		int want = r->busy == 0 ? 1 : r->busy < 64 ? (int)r->busy : 64;
		int n = r->ops->wait(r->ctx, dl, done, want);
		now = bench_now_ns();
		if (n < 0)
			return n;
		complete(r, done, n, now);
		for (int i = 0; !open && i < L->outstanding - (int)r->busy && now < r->end; i++)
			r->fatal = issue(r, now);
		if (now >= next_prog) {
			if (show)
				progress(r, now);
			while (next_prog <= now)
				next_prog += 1000000000ULL;
		}
	}
	if (!in_window)
		begin_window(r);
	end_window(r);
	if (show)
		fprintf(stderr, "\n");
	uint64_t stop = now + DRAIN_NS;
	while (r->busy > 0 && !r->fatal && !bench_stop && (now = bench_now_ns()) < stop) {
		int n = r->ops->wait(r->ctx, stop, done, 64);
		if (n < 0)
			break;
		complete(r, done, n, bench_now_ns());
	}
	r->res->unfinished = r->busy;
	return r->fatal;
}

int bench_client_run(const struct bench_client_ops *ops, const struct bench_tr_cfg *cfg,
		     const struct bench_load *load, struct bench_result *res)
{
	struct run r = { .ops = ops, .cfg = cfg, .load = load, .res = res };
	int rc;

	memset(res, 0, sizeof(*res));
	homa_lat_init(&res->lat);
	r.nslots = load->rate > 0 ? (size_t)load->max_outstanding : (size_t)load->outstanding;
	if (r.nslots == 0 || cfg->nservers == 0)
		return HOMA_EINVAL;
	r.slots = calloc(r.nslots, sizeof(*r.slots));
	r.free_idx = malloc(r.nslots * sizeof(*r.free_idx));
	if (!r.slots || !r.free_idx) {
		rc = HOMA_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r.nslots; i++)
		r.free_idx[i] = (uint32_t)(r.nslots - 1 - i);
	r.nfree = r.nslots;
	homa_rng_seed(&r.rng, load->seed);
	/*
	 * Open-loop arrivals must leave on time: every arm sleeps until the
	 * next one with its transport's timed wait (ppoll, epoll_pwait2),
	 * which the thread's default timer slack (50 us) would make late.
	 */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	bench_usage_init(); /* before the transport's threads; else syscalls are unknown */
	res->host_busy_us = -1;
	rc = ops->open(&r.ctx, cfg);
	if (rc)
		goto out;
	uint64_t t0 = bench_now_ns();
	r.warm_end = t0 + (uint64_t)(load->warmup * 1e9);
	r.end = r.warm_end + (uint64_t)(load->duration * 1e9);
	rc = loop(&r);
	servers_cpu(&r); /* joins the snapshot threads on every path out of loop() */
	res->secs = (double)(r.end - r.warm_end) / 1e9;
	if (ops->proto)
		ops->proto(r.ctx, &res->proto);
	ops->close(r.ctx);
out:
	free(r.slots);
	free(r.free_idx);
	return rc;
}
