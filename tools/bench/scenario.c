/* SPDX-License-Identifier: MIT */
/* The four compare scenarios. */
#include "scenario.h"

#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "homa/errors.h"
#include "spawn.h"
#include "util/poisson.h"

/** Lookups and bulk messages of the mixed scenario. */
#define MIXED_LOOKUPS "range:100-1000"
#define MIXED_BULK "range:1M-8M"
/** Bulk streams in the mixed scenario. */
#define MIXED_BULK_STREAMS 2
/** Buckets per class in the mixed scenario's size breakdown. */
#define MIXED_BUCKETS 5

/** job_base() - A job template for arm @t on @port. */
static struct bench_job job_base(const struct bench_opts *o, enum bench_transport t,
				 uint16_t port, const char *workload)
{
	struct bench_job j = {
		.t = t, .port = port, .workload = workload, .response = 100, .outstanding = 1,
		.conns = 1, .duration = o->duration, .warmup = 0.3, .seed = o->seed,
		.label = bench_transport_name(t), .progress = !o->quiet, .o = o,
		.calib_count = 30,
	};
	return j;
}

/** run_jobs() - Start @n jobs together, then collect them all. Return: first error. */
static int run_jobs(const struct bench_job *jobs, size_t n, struct bench_result *res)
{
	struct bench_child c[4];
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		int r = bench_spawn_job(&jobs[i], &c[i]);
		if (r) {
			n = i;
			rc = r;
		}
	}
	for (size_t i = 0; i < n; i++) {
		int r = bench_collect_job(&c[i], &res[i]);
		if (r && !rc)
			rc = r;
	}
	return rc;
}

/** headline() - Headline figures taken from the main stats. */
static void headline(struct scen_arm *a)
{
	a->gbps = a->st.gbps;
	a->rpcs_per_sec = a->st.rpcs_per_sec;
	a->cpu_us_per_rpc = a->st.cpu_us_per_rpc;
}

/** simple_arm() - rtt, rate, throughput: one server, @n job sets in sequence. */
static int simple_arm(const struct bench_opts *o, const char *scen, enum bench_transport t,
		      uint16_t port, struct scen_arm *a)
{
	struct bench_child srv;
	struct bench_result r[2];
	struct bench_job j[2];
	int n = 1;

	j[0] = job_base(o, t, port, "100");
	if (!strcmp(scen, "rate")) {
		j[0].outstanding = 32;
		j[0].conns = 4;
	} else if (!strcmp(scen, "throughput")) {
		j[0].workload = "500K";
		j[1] = j[0];
		j[1].outstanding = 4;
		j[1].conns = 4;
		n = 2;
	}
	int rc = bench_spawn_server(o, t, port, &srv);
	if (rc)
		return rc;
	for (int i = 0; i < n && rc == 0; i++) {
		rc = run_jobs(&j[i], 1, &r[i]);
		if (rc == 0)
			rc = bench_stats_compute(&r[i], NULL, NULL, bench_short_max(),
						 i ? &a->extra : &a->st);
		homa_lat_free(&r[i].lat);
	}
	bench_stop_server(&srv);
	headline(a);
	return rc;
}

/** mixed_buckets() - Lookup and bulk buckets in one list. */
static void mixed_buckets(struct homa_buckets *bk)
{
	struct homa_workload lw, bw;
	struct homa_buckets lb, bb;

	homa_workload_parse(MIXED_LOOKUPS, NULL, &lw, NULL, 0);
	homa_workload_parse(MIXED_BULK, NULL, &bw, NULL, 0);
	homa_buckets_from_workload(&lw, MIXED_BUCKETS, &lb);
	homa_buckets_from_workload(&bw, MIXED_BUCKETS, &bb);
	*bk = lb;
	for (size_t i = 0; i < bb.n; i++)
		bk->upper[bk->n++] = bb.upper[i];
}

/** Raw results of one mixed arm, kept until every arm has calibrated. */
struct mixed_raw {
	struct bench_result calib, lookups, bulk;
};

/** mixed_arm() - Calibrate unloaded, then lookups and bulk together. */
static int mixed_arm(const struct bench_opts *o, enum bench_transport t, uint16_t port,
		     struct mixed_raw *raw)
{
	struct bench_child srv;
	struct homa_buckets bk;
	uint32_t sizes[BENCH_CALIB_MAX + 1];
	struct bench_job j[2];
	struct bench_result r[2];

	mixed_buckets(&bk);
	sizes[0] = 100;
	memcpy(sizes + 1, bk.upper, bk.n * sizeof(sizes[0]));
	int rc = bench_spawn_server(o, t, port, &srv);
	if (rc)
		return rc;
	j[0] = job_base(o, t, port, MIXED_BULK);
	j[0].calibrate = 1;
	j[0].sizes = sizes;
	j[0].nsizes = bk.n + 1;
	j[0].progress = false;
	rc = run_jobs(j, 1, &raw->calib);
	/* Bulk starts first and runs longer, so lookups are measured under load. */
	j[0] = job_base(o, t, port, MIXED_BULK);
	j[0].outstanding = MIXED_BULK_STREAMS;
	j[0].conns = MIXED_BULK_STREAMS;
	j[0].duration = o->duration + 0.6;
	j[0].progress = false;
	j[0].label = "bulk";
	j[1] = job_base(o, t, port, MIXED_LOOKUPS);
	j[1].warmup = 0.6;
	j[1].seed = o->seed + 7;
	if (rc == 0)
		rc = run_jobs(j, 2, r);
	if (rc == 0) {
		raw->bulk = r[0];
		raw->lookups = r[1];
	}
	bench_stop_server(&srv);
	return rc;
}

/** mixed_figures() - Stats of one mixed arm against the shared baseline @bl. */
static int mixed_figures(struct mixed_raw *raw, const struct homa_baseline *bl,
			 struct scen_arm *a)
{
	struct homa_buckets bk;
	struct bench_result all = raw->lookups;
	uint32_t smax = bench_short_max();

	mixed_buckets(&bk);
	homa_lat_init(&all.lat);
	int rc = homa_lat_merge(&all.lat, &raw->lookups.lat);
	if (rc == 0)
		rc = homa_lat_merge(&all.lat, &raw->bulk.lat);
	if (rc == 0)
		rc = bench_stats_compute(&raw->lookups, NULL, bl, smax, &a->st);
	if (rc == 0)
		rc = bench_stats_compute(&raw->bulk, NULL, bl, smax, &a->extra);
	if (rc == 0)
		rc = bench_stats_compute(&all, &bk, bl, smax, &a->by_size);
	homa_lat_free(&all.lat);
	if (rc)
		return rc;
	a->gbps = a->extra.gbps;
	a->rpcs_per_sec = a->st.rpcs_per_sec;
	double srv = raw->lookups.server_cpu_us > 0 ? (double)raw->lookups.server_cpu_us : 0;
	double n = (double)(raw->lookups.rpcs + raw->bulk.rpcs);
	a->cpu_us_per_rpc = n > 0 ? ((double)raw->lookups.client_cpu_us +
				     (double)raw->bulk.client_cpu_us + srv) / n : 0;
	return 0;
}

/** wl_buckets() - Buckets of the workload scenario. Return: 0 or error. */
static int wl_buckets(const struct bench_opts *o, struct homa_workload *w,
		      struct homa_buckets *bk)
{
	char err[256];
	int rc = homa_workload_parse(o->workload, NULL, w, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "homa-bench: %s\n", err);
		return rc;
	}
	return homa_buckets_from_workload(w, (size_t)o->buckets, bk);
}

/** workload_arm() - Calibrate unloaded, then the workload at the given load. */
static int workload_arm(const struct bench_opts *o, enum bench_transport t, uint16_t port,
			struct mixed_raw *raw)
{
	struct bench_child srv;
	struct homa_workload w;
	struct homa_buckets bk;
	uint32_t sizes[BENCH_CALIB_MAX];
	struct bench_job j;

	int rc = wl_buckets(o, &w, &bk);
	if (rc)
		return rc;
	size_t n = bench_calib_sizes(&w, &bk, sizes);
	double rate = o->rate > 0 ? o->rate
		      : homa_poisson_rate_for_load(o->load_gbps > 0 ? o->load_gbps : 1.0,
						   w.mean + o->response);
	homa_workload_free(&w);
	rc = bench_spawn_server(o, t, port, &srv);
	if (rc)
		return rc;
	j = job_base(o, t, port, o->workload);
	j.response = o->response;
	j.calibrate = 1;
	j.sizes = sizes;
	j.nsizes = n;
	j.progress = false;
	rc = run_jobs(&j, 1, &raw->calib);
	j = job_base(o, t, port, o->workload);
	j.response = o->response;
	j.conns = o->conns;
	j.rate = o->outstanding > 0 ? 0 : rate;
	j.outstanding = o->outstanding > 0 ? o->outstanding : 1;
	j.warmup = 0.5;
	if (rc == 0)
		rc = run_jobs(&j, 1, &raw->lookups);
	bench_stop_server(&srv);
	return rc;
}

/** workload_figures() - Stats of one workload arm against the shared baseline. */
static int workload_figures(const struct bench_opts *o, struct mixed_raw *raw,
			    const struct homa_baseline *bl, struct scen_arm *a)
{
	struct homa_workload w;
	struct homa_buckets bk;

	int rc = wl_buckets(o, &w, &bk);
	if (rc)
		return rc;
	homa_workload_free(&w);
	rc = bench_stats_compute(&raw->lookups, &bk, bl, bench_short_max(), &a->st);
	if (rc == 0)
		rc = bench_stats_compute(&raw->lookups, &bk, bl, bench_short_max(), &a->by_size);
	headline(a);
	return rc;
}

/** calibrated_run() - mixed or workload: both arms, one shared baseline (best of both). */
static int calibrated_run(const struct bench_opts *o, uint16_t port, struct scen *s, int mixed)
{
	struct mixed_raw raw[2];
	struct homa_baseline bl;
	int rc = 0;

	memset(raw, 0, sizeof(raw));
	homa_baseline_init(&bl);
	for (int arm = ARM_HOMA; arm <= ARM_TCP; arm++) {
		enum bench_transport t = arm == ARM_HOMA ? BENCH_TR_HOMA : BENCH_TR_TCP;
		uint16_t p = (uint16_t)(port + 2 * arm);
		s->a[arm].ran = 1;
		s->a[arm].rc = mixed ? mixed_arm(o, t, p, &raw[arm]) : workload_arm(o, t, p, &raw[arm]);
		if (s->a[arm].rc && !rc)
			rc = s->a[arm].rc;
		for (size_t i = 0; i < raw[arm].calib.lat.n; i++)
			homa_baseline_add(&bl, raw[arm].calib.lat.v[i].size,
					  (double)raw[arm].calib.lat.v[i].ns);
	}
	for (int arm = ARM_HOMA; arm <= ARM_TCP; arm++) {
		if (s->a[arm].rc == 0)
			s->a[arm].rc = mixed ? mixed_figures(&raw[arm], &bl, &s->a[arm])
				       : workload_figures(o, &raw[arm], &bl, &s->a[arm]);
		homa_lat_free(&raw[arm].calib.lat);
		homa_lat_free(&raw[arm].lookups.lat);
		homa_lat_free(&raw[arm].bulk.lat);
	}
	homa_baseline_free(&bl);
	return rc;
}

int bench_scenario_run(const struct bench_opts *o, const char *name, uint16_t port,
		       struct scen *s)
{
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->name = name;
	if (!strcmp(name, "workload")) {
		snprintf(s->what_buf, sizeof(s->what_buf),
			 "workload %s, %s, %u B responses (TCP: %d connection%s)", o->workload,
			 o->outstanding > 0 ? "closed loop" : "open-loop Poisson arrivals",
			 o->response, o->conns, o->conns > 1 ? "s" : "");
		s->what = s->what_buf;
		return calibrated_run(o, port, s, 0);
	}
	if (!strcmp(name, "mixed")) {
		s->what = "100 B-1 KB lookups, one at a time, while 2 streams send 1-8 MB requests "
			  "to the same server";
		s->extra_key = "bulk";
		return calibrated_run(o, port, s, 1);
	}
	if (!strcmp(name, "rtt"))
		s->what = "100 B request and 100 B response, one RPC at a time";
	else if (!strcmp(name, "rate"))
		s->what = "100 B RPCs, 32 in flight (TCP: 4 connections)";
	else
		s->what = "500 KB requests, 100 B responses: 1 stream, then 4 streams";
	if (!strcmp(name, "throughput"))
		s->extra_key = "four_streams";
	int arms = !strcmp(name, "rtt") ? ARM_COUNT : ARM_UDP;
	for (int arm = 0; arm < arms; arm++) {
		enum bench_transport t = arm == ARM_HOMA ? BENCH_TR_HOMA
					 : arm == ARM_TCP ? BENCH_TR_TCP : BENCH_TR_UDP;
		s->a[arm].ran = 1;
		s->a[arm].rc = simple_arm(o, name, t, (uint16_t)(port + 2 * arm), &s->a[arm]);
		if (s->a[arm].rc && !rc)
			rc = s->a[arm].rc;
	}
	return rc;
}
