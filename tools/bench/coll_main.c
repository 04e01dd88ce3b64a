/* SPDX-License-Identifier: MIT */
/* homa-bench device: one device of a collective run started apart. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collective.h"
#include "coll_report.h"
#include "report.h"
#include "homa/errors.h"
#include "util/json.h"

/** device_of() - The device settings in @o. */
static struct coll_device device_of(const struct bench_opts *o)
{
	struct coll_device d = {
		.pattern = (enum coll_pattern)coll_pattern_parse(o->pattern),
		.rank = (uint32_t)o->rank, .steps = o->steps + o->warmup_steps,
		.compute_us = o->compute_us, .msg_bytes = o->msg_bytes, .lookups = o->lookups,
		.step_timeout_s = o->step_timeout_s, .seed = o->seed,
		.join_timeout_s = COLL_JOIN_TIMEOUTS * o->step_timeout_s,
		.start_file = o->start_file, .msg_log = o->msg_log,
		.bg_gbps = o->bg_peer >= 0 ? o->bg_gbps : 0, .bg_peer = (uint32_t)o->bg_peer,
		.bg_bytes = o->bg_bytes,
	};
	return d;
}

/** step_times() - "step_us": every measured step's time (after the warm-up) on board @s. */
static void step_times(struct homa_json *j, const struct coll_sync *s, uint32_t skip)
{
	uint32_t ndev = s->b->ndev;

	homa_json_key(j, "step_us");
	homa_json_array(j);
	for (uint32_t k = skip; k < s->b->nsteps; k++) {
		uint64_t end = homa_step_end(s->bound[k + 1], s->dev + (size_t)k * ndev, ndev);
		homa_json_num(j, (double)(end - s->bound[k]) / 1000);
	}
	homa_json_end(j);
}

/** write_json() - Rank 0's document: the run, its figures and step times. Return: 0 or error. */
static int write_json(const struct bench_opts *o, const struct coll_device *d,
		      const struct coll_sync *s, const struct homa_step_stats *st)
{
	struct homa_json j;
	FILE *f = bench_json_begin(&j, o->json, "device", bench_transport_name(o->transport));

	if (!f)
		return HOMA_EIO;
	homa_json_kv_str(&j, "pattern", coll_pattern_name(d->pattern));
	homa_json_kv_num(&j, "devices", s->b->ndev);
	homa_json_kv_num(&j, "warmup_steps", o->warmup_steps);
	homa_json_kv_num(&j, "compute_us", d->compute_us);
	homa_json_kv_num(&j, "msg_bytes", d->msg_bytes);
	homa_json_kv_num(&j, "lookups", d->lookups);
	homa_step_stats_json(&j, st);
	homa_json_kv_num(&j, "device_cpu_us_per_step", coll_board_cpu_us_per_step(s));
	homa_json_kv_num(&j, "host_cpu_us_per_step", coll_board_host_us_per_step(s));
	homa_json_kv_num(&j, "rpc_retries", atomic_load(&s->b->retries));
	step_times(&j, s, o->warmup_steps);
	return bench_json_done(&j, f);
}

int bench_device_main(const struct bench_opts *o)
{
	struct bench_tr_cfg cfg;
	struct coll_sync s;
	struct coll_device d = device_of(o);

	if (!o->sync || !o->servers || (int)d.pattern < 0) {
		fprintf(stderr, "homa-bench device: --sync FILE, --servers and --pattern are required\n");
		return HOMA_EINVAL;
	}
	if ((o->serve_port || o->bg_peer >= 0 || o->bg_gbps > 0) &&
	    o->transport != BENCH_TR_HOMA) {
		fprintf(stderr, "homa-bench device: --serve-port and --bg-* need --transport homa\n");
		return HOMA_EINVAL;
	}
	if ((o->bg_peer >= 0) != (o->bg_gbps > 0)) {
		fprintf(stderr, "homa-bench device: --bg-peer and --bg-gbps go together\n");
		return HOMA_EINVAL;
	}
	if (coll_tr_cfg(o, o->servers, &cfg))
		return HOMA_EINVAL;
	cfg.serve_port = o->serve_port;
	int rc = coll_sync_open(&s, o->sync, (uint32_t)cfg.nservers, d.steps);
	if (rc) {
		fprintf(stderr, "homa-bench device: board %s: %s\n", o->sync, homa_strerror(rc));
		return rc;
	}
	rc = coll_device_run(bench_ops_for(o->transport), &cfg, &d, &s);
	if (rc)
		fprintf(stderr, "homa-bench device %d: %s\n", o->rank, homa_strerror(rc));
	if (rc == 0 && o->rank == 0) {
		struct homa_step_stats st;
		rc = coll_board_stats(&s, o->warmup_steps, &st);
		if (rc == 0) {
			coll_stats_print(stdout, coll_pattern_name(d.pattern), &st);
			if (o->json)
				rc = write_json(o, &d, &s, &st);
		}
	}
	coll_sync_close(&s);
	return rc;
}
