/* SPDX-License-Identifier: MIT */
/* homa-bench: entry point and the server, client and calibrate modes. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "calibrate.h"
#include "collective.h"
#include "compare.h"
#include "ctl.h"
#include "opts.h"
#include "plot.h"
#include "report.h"
#include "tls.h"
#include "homa/errors.h"
#include "util/json.h"
#include "util/poisson.h"

/** client_setup() - Servers, workload and buckets from @o. Return: 0 or error. */
static int client_setup(const struct bench_opts *o, struct bench_tr_cfg *cfg,
			struct homa_workload *w, struct homa_buckets *bk)
{
	char err[256];

	memset(cfg, 0, sizeof(*cfg));
	if (bench_parse_servers(o->servers, cfg))
		return HOMA_EINVAL;
	int rc = homa_workload_parse(o->workload, NULL, w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "homa-bench: %s\n", err);
		return rc;
	}
	if (w->hi > BENCH_MAX_MSG) {
		fprintf(stderr, "homa-bench: workload sizes go up to %u; the limit is %u\n", w->hi,
			BENCH_MAX_MSG);
		homa_workload_free(w);
		return HOMA_EMSGSIZE;
	}
	cfg->conns = o->conns;
	cfg->cc = o->cc;
	cfg->driver = o->driver;
	cfg->ifname = o->ifname;
	cfg->polled = o->polled;
	cfg->homa_transport = o->homa_transport;
	cfg->homa = o->homa;
	cfg->pcap = o->pcap;
	cfg->metrics_port = o->metrics_port;
	cfg->certs = o->encrypt ? o->certs : NULL;
	cfg->psp_port = o->encrypt ? o->psp_port : 0;
	cfg->max_size = w->hi > o->response ? w->hi : o->response;
	homa_buckets_from_workload(w, (size_t)o->buckets, bk);
	return 0;
}

/** write_client_json() - The client mode's JSON document. Return: 0 or error. */
static int write_client_json(const struct bench_opts *o, const struct homa_workload *w,
			     const struct bench_load *L, const struct bench_stats *st)
{
	struct homa_json j;
	FILE *f = bench_json_begin(&j, o->json, "client", bench_transport_name(o->transport));

	if (!f)
		return HOMA_EIO;
	homa_json_kv_str(&j, "workload", w->name);
	homa_json_kv_num(&j, "mean_request_bytes", w->mean);
	homa_json_kv_num(&j, "response_bytes", o->response);
	homa_json_kv_num(&j, "offered_rate", L->rate);
	homa_json_kv_num(&j, "outstanding", L->outstanding);
	homa_json_kv_num(&j, "duration_s", o->duration);
	if (o->link_gbps > 0)
		homa_json_kv_num(&j, "load_fraction", st->gbps / o->link_gbps);
	bench_stats_json(&j, st);
	return bench_json_done(&j, f);
}

/** plot_buckets() - The client mode's plot: P99 slowdown (or µs) per bucket. */
static int plot_buckets(const char *path, const char *label, const struct bench_stats *st)
{
	uint32_t x[HOMA_BUCKETS_MAX];
	double y[HOMA_BUCKETS_MAX];

	for (size_t i = 0; i < st->nbuckets; i++) {
		x[i] = st->b[i].hi;
		y[i] = st->have_slow ? st->b[i].p99_slow : st->b[i].p99_us;
	}
	struct bench_series s = { label, st->nbuckets, x, y };
	return bench_plot(path, "homa-bench: P99 per message size", st->have_slow ?
			  "P99 slowdown" : "P99 latency (us)", &s, 1);
}

/** client_mode() - homa-bench client. Return: 0 or error. */
static int client_mode(const struct bench_opts *o)
{
	struct bench_tr_cfg cfg;
	struct homa_workload w;
	struct homa_buckets bk;
	struct homa_baseline bl;
	struct bench_result res;
	struct bench_stats st;
	int ports[BENCH_MAX_SERVERS];

	int rc = client_setup(o, &cfg, &w, &bk);
	if (rc)
		return rc;
	homa_baseline_init(&bl);
	if (o->baseline && (rc = homa_baseline_load(&bl, o->baseline))) {
		fprintf(stderr, "homa-bench: cannot load baseline %s: %s\n", o->baseline,
			homa_strerror(rc));
		goto out;
	}
	for (size_t i = 0; i < cfg.nservers; i++)
		ports[i] = o->ctl_port >= 0 ? o->ctl_port
			   : ntohs(((struct sockaddr_in *)&cfg.servers[i])->sin_port) + 1;
	struct bench_load L = {
		.req = &w, .response = o->response, .max_outstanding = o->max_outstanding,
		.duration = o->duration, .seed = o->seed, .progress = !o->quiet,
		.label = bench_transport_name(o->transport),
		.ctl_ports = o->ctl_port == -1 ? NULL : ports,
	};
	L.warmup = o->warmup >= 0 ? o->warmup : (o->duration / 10 < 0.5 ? o->duration / 10 : 0.5);
	L.rate = o->rate > 0 ? o->rate
		 : homa_poisson_rate_for_load(o->load_gbps, w.mean + o->response);
	L.outstanding = L.rate > 0 ? 0 : (o->outstanding > 0 ? o->outstanding : 1);
	rc = bench_client_run(bench_ops_for(o->transport), &cfg, &L, &res);
	if (rc == 0)
		rc = bench_stats_compute(&res, &bk, &bl, bench_short_max(), &st);
	if (rc == 0) {
		bench_stats_print(stdout, L.label, &st);
		if (o->json)
			rc = write_client_json(o, &w, &L, &st);
		if (rc == 0 && o->plot)
			rc = plot_buckets(o->plot, L.label, &st);
	} else {
		fprintf(stderr, "homa-bench client: %s\n", homa_strerror(rc));
	}
	homa_lat_free(&res.lat);
out:
	homa_baseline_free(&bl);
	homa_workload_free(&w);
	return rc;
}

/** calibrate_mode() - homa-bench calibrate. Return: 0 or error. */
static int calibrate_mode(const struct bench_opts *o)
{
	struct bench_tr_cfg cfg;
	struct homa_workload w;
	struct homa_buckets bk;
	struct homa_baseline bl;
	uint32_t sizes[BENCH_CALIB_MAX];

	if (!o->baseline) {
		fprintf(stderr, "homa-bench calibrate: --baseline FILE (output) is required\n");
		return HOMA_EINVAL;
	}
	int rc = client_setup(o, &cfg, &w, &bk);
	if (rc)
		return rc;
	homa_baseline_init(&bl);
	size_t n = bench_calib_sizes(&w, &bk, sizes);
	rc = bench_calibrate(bench_ops_for(o->transport), &cfg, sizes, n, o->calib_count,
			     o->response, &bl);
	if (rc == 0)
		rc = homa_baseline_save(&bl, o->baseline);
	if (rc == 0) {
		printf("%s unloaded best times (%s):\n", bench_transport_name(o->transport), w.name);
		for (size_t i = 0; i < bl.n; i++)
			printf("  %10u B  %10.1f us\n", bl.size[i], bl.best_ns[i] / 1000);
		printf("saved to %s\n", o->baseline);
	} else {
		fprintf(stderr, "homa-bench calibrate: %s\n", homa_strerror(rc));
	}
	homa_baseline_free(&bl);
	homa_workload_free(&w);
	return rc;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rc = bench_opts_parse(argc, argv, &o);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (o.encrypt && !(o.certs = bench_certs_dir(o.certs)))
		return 1;
	bench_install_signals();
	if (!strcmp(o.mode, "server"))
		rc = bench_serve(&o);
	else if (!strcmp(o.mode, "client"))
		rc = client_mode(&o);
	else if (!strcmp(o.mode, "calibrate"))
		rc = calibrate_mode(&o);
	else if (!strcmp(o.mode, "device"))
		rc = bench_device_main(&o);
	else
		rc = bench_compare_main(&o);
	return rc ? 1 : 0;
}
