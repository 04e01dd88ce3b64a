/* SPDX-License-Identifier: MIT */
/*
 * The compare scenarios. Every arm gets its own server process; the arms
 * are calibrated (where slowdown is reported) and then measured in
 * rounds, alternating the order of the arms from round to round, so a
 * change in the machine's background load hits every arm alike. The
 * samples and counters of all rounds are pooled per arm.
 */
#include "scenario.h"

#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "homa/errors.h"
#include "homa/homa.h"
#include "spawn.h"
#include "util/poisson.h"

/** Lookups and bulk messages of the mixed scenario. */
#define MIXED_LOOKUPS "range:100-1000"
#define MIXED_BULK "range:1M-8M"
/** Bulk streams in the mixed scenario. */
#define MIXED_BULK_STREAMS 2
/** Buckets per class in the mixed scenario's size breakdown. */
#define MIXED_BUCKETS 5

/** Scenario kinds. */
enum kind { K_RTT, K_THROUGHPUT, K_RATE, K_MIXED, K_WORKLOAD };

/** Pooled results of one arm. */
struct arm_raw {
	struct bench_child srv;
	struct bench_result calib, main, extra;
	int have_main, have_extra;
};

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

/** pool() - Add @src (consumed) to @dst; @have says whether @dst holds a run. */
static int pool(struct bench_result *dst, int *have, struct bench_result *src)
{
	if (!*have) {
		*dst = *src;
		*have = 1;
		homa_lat_init(&src->lat);
		return 0;
	}
	int rc = bench_result_merge(dst, src);
	homa_lat_free(&src->lat);
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

/** calibrate_arm() - mixed, workload: unloaded best times of arm @t. */
static int calibrate_arm(const struct bench_opts *o, enum kind k, enum bench_transport t,
			 uint16_t port, struct arm_raw *raw)
{
	struct homa_buckets bk;
	struct homa_workload w;
	uint32_t sizes[BENCH_CALIB_MAX + 1];
	struct bench_job j = job_base(o, t, port, MIXED_BULK);
	size_t n;

	if (k == K_MIXED) {
		mixed_buckets(&bk);
		sizes[0] = 100;
		memcpy(sizes + 1, bk.upper, bk.n * sizeof(sizes[0]));
		n = bk.n + 1;
	} else {
		int rc = wl_buckets(o, &w, &bk);
		if (rc)
			return rc;
		n = bench_calib_sizes(&w, &bk, sizes);
		homa_workload_free(&w);
		j.workload = o->workload;
		j.response = o->response;
	}
	j.calibrate = 1;
	j.sizes = sizes;
	j.nsizes = n;
	j.progress = false;
	return run_jobs(&j, 1, &raw->calib);
}

/**
 * phase_jobs() - The jobs of phase @ph of scenario @k for arm @t.
 * Return: how many jobs (0: the scenario has no such phase); @to_extra[i]
 * says whether job i's result is pooled into extra rather than main.
 */
static size_t phase_jobs(const struct bench_opts *o, enum kind k, int ph, enum bench_transport t,
			 uint16_t port, struct bench_job *j, int *to_extra)
{
	j[0] = job_base(o, t, port, "100");
	to_extra[0] = ph;
	if (k == K_THROUGHPUT) {
		j[0].workload = "500K";
		j[0].outstanding = j[0].conns = ph ? 4 : 1;
		return ph < 2 ? 1 : 0;
	}
	if (ph)
		return 0;
	if (k == K_RATE) {
		j[0].outstanding = 32;
		j[0].conns = 4;
	} else if (k == K_WORKLOAD) {
		struct homa_workload w;
		char err[256];
		double mean = homa_workload_parse(o->workload, NULL, &w, err, sizeof(err)) ? 1000
			      : w.mean;
		homa_workload_free(&w);
		j[0].workload = o->workload;
		j[0].response = o->response;
		j[0].conns = o->conns;
		j[0].warmup = 0.5;
		j[0].outstanding = o->outstanding > 0 ? o->outstanding : 1;
		j[0].rate = o->outstanding > 0 ? 0 : o->rate > 0 ? o->rate
			    : homa_poisson_rate_for_load(o->load_gbps > 0 ? o->load_gbps : 1.0,
							 mean + o->response);
	} else if (k == K_MIXED) {
		/* Bulk measures a longer window around the lookups' window. */
		j[0].workload = MIXED_BULK;
		j[0].outstanding = j[0].conns = MIXED_BULK_STREAMS;
		j[0].duration = o->duration + 0.6;
		j[0].progress = false;
		j[0].label = "bulk";
		to_extra[0] = 1;
		j[1] = job_base(o, t, port, MIXED_LOOKUPS);
		j[1].warmup = 0.6;
		j[1].seed = o->seed + 7;
		to_extra[1] = 0;
		return 2;
	}
	return 1;
}

/** bench_arm_name() - See scenario.h. */
const char *bench_arm_name(int arm)
{
	static const char *const names[ARM_COUNT] = { "homa", "tcp", "udp", "api-tcp",
						       "api-auto" };

	return arm >= 0 && arm < ARM_COUNT ? names[arm] : "?";
}

/** arm_transport() - The benchmark transport of @arm (the API arms are Homa's). */
static enum bench_transport arm_transport(int arm)
{
	return arm == ARM_TCP ? BENCH_TR_TCP : arm == ARM_UDP ? BENCH_TR_UDP : BENCH_TR_HOMA;
}

/**
 * arm_list() - The arms scenario @k runs for @o, in table order, into
 * @arms; @ao[arm] receives each one's options (@o with the API's
 * transport of that arm). Return: how many.
 */
static int arm_list(const struct bench_opts *o, enum kind k, int *arms, struct bench_opts *ao)
{
	int n = 0;

	for (int arm = 0; arm < ARM_COUNT; arm++) {
		if ((arm == ARM_UDP && k != K_RTT) || (arm >= ARM_API_TCP && !o->homa_transport_all))
			continue;
		ao[arm] = *o;
		if (o->homa_transport_all)
			ao[arm].homa_transport = arm == ARM_API_TCP    ? HOMA_TRANSPORT_TCP
						 : arm == ARM_API_AUTO ? HOMA_TRANSPORT_AUTO
								       : HOMA_TRANSPORT_HOMA;
		arms[n++] = arm;
	}
	return n;
}

/**
 * measure() - Every round, phase and arm of @arms (@narms, options
 * @ao[arm]), in turn, the order reversed every other round; results
 * pooled into @raw.
 */
static void measure(const struct bench_opts *ao, enum kind k, const int *arms, int narms,
		    uint16_t port, struct scen *s, struct arm_raw *raw)
{
	const struct bench_opts *o = &ao[arms[0]];
	int rounds = o->rounds > 0 ? o->rounds : 1;

	for (int r = 0; r < rounds && !bench_stop; r++) {
		for (int ph = 0; ph < 2; ph++) {
			for (int i = 0; i < narms; i++) {
				int arm = arms[r % 2 ? narms - 1 - i : i];
				enum bench_transport t = arm_transport(arm);
				struct bench_job j[2];
				struct bench_result res[2];
				int to_extra[2];
				uint16_t p = (uint16_t)(port + 2 * arm);
				size_t n = phase_jobs(&ao[arm], k, ph, t, p, j, to_extra);

				if (n == 0 || s->a[arm].rc)
					continue;
				for (size_t q = 0; q < n; q++)
					j[q].seed += (uint64_t)r * 1000;
				memset(res, 0, sizeof(res));
				s->a[arm].rc = run_jobs(j, n, res);
				for (size_t q = 0; q < n; q++) {
					struct arm_raw *a = &raw[arm];
					int rc = to_extra[q] ? pool(&a->extra, &a->have_extra, &res[q])
						 : pool(&a->main, &a->have_main, &res[q]);
					if (rc && !s->a[arm].rc)
						s->a[arm].rc = rc;
				}
			}
		}
	}
}

/** headline() - Headline figures taken from the main stats. */
static void headline(struct scen_arm *a)
{
	a->gbps = a->st.gbps;
	a->rpcs_per_sec = a->st.rpcs_per_sec;
	a->cpu_us_per_rpc = a->st.cpu_us_per_rpc;
	a->host_us_per_rpc = a->st.host_cpu_us_per_rpc;
	a->syscalls_per_rpc = a->st.syscalls_per_rpc;
	a->ctxsw_per_rpc = a->st.ctxsw_per_rpc;
	a->copies_per_byte = a->st.client_copies_per_byte < 0 || a->st.server_copies_per_byte < 0
			     ? -1 : a->st.client_copies_per_byte + a->st.server_copies_per_byte;
}

/**
 * mixed_total() - One usage figure over both mixed clients: their own
 * counts @lookup_c and @bulk_c plus the server's count @srv over the
 * lookups' window scaled to @n RPCs by its answered RPCs @srv_rpcs.
 * Return: the total, or -1 if any part is unknown.
 */
static double mixed_total(int64_t lookup_c, int64_t bulk_c, int64_t srv, uint64_t srv_rpcs,
			  double n)
{
	if (lookup_c < 0 || bulk_c < 0 || srv < 0 || !srv_rpcs)
		return -1;
	return (double)lookup_c + (double)bulk_c + (double)srv / (double)srv_rpcs * n;
}

/** mixed_usage() - Headline usage figures of a mixed arm (both clients and the server). */
static void mixed_usage(const struct arm_raw *raw, struct scen_arm *a)
{
	const struct bench_result *m = &raw->main, *b = &raw->extra;
	double n = (double)(m->rpcs + b->rpcs), bytes = (double)(m->bytes + b->bytes);
	double sys = mixed_total(m->client_use.syscalls, b->client_use.syscalls,
				 m->server_use.syscalls, m->server_rpcs, n);
	double sw = mixed_total(m->client_use.ctxsw, b->client_use.ctxsw, m->server_use.ctxsw,
				m->server_rpcs, n);
	double cp = mixed_total(m->client_use.copied, b->client_use.copied,
				m->server_use.copied, m->server_rpcs, n);
	/* the lookups' window lies inside the bulk client's: count bulk RPCs in it */
	double in_win = (double)m->rpcs + (b->secs > 0 ? (double)b->rpcs * m->secs / b->secs : 0);

	a->syscalls_per_rpc = n > 0 && sys >= 0 ? sys / n : -1;
	a->ctxsw_per_rpc = n > 0 && sw >= 0 ? sw / n : -1;
	a->copies_per_byte = bytes > 0 && cp >= 0 ? cp / bytes : -1;
	a->host_us_per_rpc = in_win > 0 && m->host_busy_us >= 0 ? (double)m->host_busy_us / in_win
								  : -1;
}

/** mixed_figures() - Stats of one mixed arm against the shared baseline @bl. */
static int mixed_figures(struct arm_raw *raw, const struct homa_baseline *bl,
			 struct scen_arm *a)
{
	struct homa_buckets bk;
	struct bench_result all = raw->main;
	uint32_t smax = bench_short_max();

	mixed_buckets(&bk);
	homa_lat_init(&all.lat);
	int rc = homa_lat_merge(&all.lat, &raw->main.lat);
	if (rc == 0)
		rc = homa_lat_merge(&all.lat, &raw->extra.lat);
	if (rc == 0)
		rc = bench_stats_compute(&raw->main, NULL, bl, smax, &a->st);
	if (rc == 0)
		rc = bench_stats_compute(&raw->extra, NULL, bl, smax, &a->extra);
	if (rc == 0)
		rc = bench_stats_compute(&all, &bk, bl, smax, &a->by_size);
	homa_lat_free(&all.lat);
	if (rc)
		return rc;
	a->gbps = a->extra.gbps;
	a->rpcs_per_sec = a->st.rpcs_per_sec;
	/* Both clients' CPU plus the server's (its CPU per answered RPC). */
	double n = (double)(raw->main.rpcs + raw->extra.rpcs);
	double srv = a->st.server_cpu_us_per_rpc > 0 ? a->st.server_cpu_us_per_rpc * n : 0;
	a->cpu_us_per_rpc = n > 0 ? ((double)raw->main.client_cpu_us +
				     (double)raw->extra.client_cpu_us + srv) / n : 0;
	mixed_usage(raw, a);
	return 0;
}

/** figures() - Stats of arm @a from its pooled results. */
static int figures(const struct bench_opts *o, enum kind k, struct arm_raw *raw,
		   const struct homa_baseline *bl, struct scen_arm *a)
{
	uint32_t smax = bench_short_max();
	int rc = 0;

	if (k == K_MIXED)
		return mixed_figures(raw, bl, a);
	if (k == K_WORKLOAD) {
		struct homa_workload w;
		struct homa_buckets bk;
		rc = wl_buckets(o, &w, &bk);
		if (rc)
			return rc;
		homa_workload_free(&w);
		rc = bench_stats_compute(&raw->main, &bk, bl, smax, &a->st);
		if (rc == 0)
			rc = bench_stats_compute(&raw->main, &bk, bl, smax, &a->by_size);
	} else {
		rc = bench_stats_compute(&raw->main, NULL, NULL, smax, &a->st);
		if (rc == 0 && raw->have_extra)
			rc = bench_stats_compute(&raw->extra, NULL, NULL, smax, &a->extra);
	}
	headline(a);
	return rc;
}

/** describe() - Name, one-line description and extra key of scenario @k. */
static void describe(const struct bench_opts *o, enum kind k, struct scen *s)
{
	static const char *const what[] = {
		"100 B request and 100 B response, one RPC at a time",
		"500 KB requests, 100 B responses: 1 stream, then 4 streams",
		"100 B RPCs, 32 in flight (TCP: 4 connections)",
		("100 B-1 KB lookups, one at a time, while 2 streams send 1-8 MB requests "
		 "to the same server"),
	};

	s->extra_key = k == K_THROUGHPUT ? "four_streams" : k == K_MIXED ? "bulk" : NULL;
	if (k != K_WORKLOAD) {
		s->what = what[k];
		return;
	}
	snprintf(s->what_buf, sizeof(s->what_buf),
		 "workload %s, %s, %u B responses (TCP: %d connection%s)", o->workload,
		 o->outstanding > 0 ? "closed loop" : "open-loop Poisson arrivals", o->response,
		 o->conns, o->conns > 1 ? "s" : "");
	s->what = s->what_buf;
}

/** kind_of() - Scenario kind of @name. */
static enum kind kind_of(const char *name)
{
	static const char *const names[] = { "rtt", "throughput", "rate", "mixed", "workload" };

	for (int k = 0; k < 5; k++)
		if (!strcmp(name, names[k]))
			return (enum kind)k;
	return K_RTT;
}

int bench_scenario_run(const struct bench_opts *o, const char *name, uint16_t port,
		       struct scen *s)
{
	enum kind k = kind_of(name);
	struct bench_opts ao[ARM_COUNT];
	int arms[ARM_COUNT], narms = arm_list(o, k, arms, ao);
	struct arm_raw raw[ARM_COUNT];
	struct homa_baseline bl;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	memset(raw, 0, sizeof(raw));
	homa_baseline_init(&bl);
	s->name = name;
	describe(o, k, s);
	for (int i = 0; i < narms; i++) {
		int arm = arms[i];
		enum bench_transport t = arm_transport(arm);
		uint16_t p = (uint16_t)(port + 2 * arm);
		s->a[arm].ran = 1;
		s->a[arm].rc = bench_spawn_server(&ao[arm], t, p, &raw[arm].srv);
		if (s->a[arm].rc == 0 && (k == K_MIXED || k == K_WORKLOAD))
			s->a[arm].rc = calibrate_arm(&ao[arm], k, t, p, &raw[arm]);
		for (size_t c = 0; c < raw[arm].calib.lat.n; c++)
			homa_baseline_add(&bl, raw[arm].calib.lat.v[c].size,
					  (double)raw[arm].calib.lat.v[c].ns);
	}
	measure(ao, k, arms, narms, port, s, raw);
	for (int i = 0; i < narms; i++) {
		int arm = arms[i];
		bench_stop_server(&raw[arm].srv);
		if (s->a[arm].rc == 0 && !raw[arm].have_main)
			s->a[arm].rc = HOMA_ECANCELED;
		if (s->a[arm].rc == 0)
			s->a[arm].rc = figures(&ao[arm], k, &raw[arm], &bl, &s->a[arm]);
		if (s->a[arm].rc && !rc)
			rc = s->a[arm].rc;
		homa_lat_free(&raw[arm].calib.lat);
		homa_lat_free(&raw[arm].main.lat);
		homa_lat_free(&raw[arm].extra.lat);
	}
	homa_baseline_free(&bl);
	return rc;
}
