/* SPDX-License-Identifier: MIT */
/**
 * @file output.c
 * Writes a run's report as JSON (--json; one key a line, so timing lines
 * can be filtered out when comparing runs) or as a text table, and the
 * optional per-message samples file.
 */
#include <string.h>

#include "homa/wire.h"
#include "sim.h"
#include "util/json.h"

/** pattern_name() - Name of the traffic pattern. */
static const char *pattern_name(int p)
{
	return p == SIM_INCAST ? "incast" : p == SIM_ALLTOALL ? "alltoall" : "poisson";
}

/** json_port_class() - One queue class as an object. */
static void json_port_class(struct homa_json *j, const char *key,
			    const struct homa_sim_port_class *c)
{
	homa_json_key(j, key);
	homa_json_object(j);
	homa_json_key(j, "ports");
	homa_json_int(j, c->ports);
	homa_json_key(j, "max_bytes");
	homa_json_int(j, (int64_t)c->max_bytes);
	homa_json_kv_num(j, "mean_bytes", c->mean_bytes);
	homa_json_kv_num(j, "max_mean_bytes", c->max_mean_bytes);
	homa_json_key(j, "drops");
	homa_json_int(j, (int64_t)c->drops);
	homa_json_end(j);
}

/** json_setup() - The configuration part of the report. */
static void json_setup(struct homa_json *j, const struct sim_run *r)
{
	const struct sim_opts *o = r->o;
	const struct homa_settings *s = &r->fab.settings;

	homa_json_kv_str(j, "workload", r->wl.name);
	homa_json_kv_str(j, "pattern", pattern_name(o->pattern));
	homa_json_kv_str(j, "mode", o->start_msg ? "start_msg" : "classic");
	homa_json_key(j, "seed");
	homa_json_int(j, (int64_t)o->seed);
	homa_json_key(j, "hosts");
	homa_json_int(j, o->hosts);
	homa_json_key(j, "racks");
	homa_json_int(j, o->racks);
	homa_json_key(j, "spines");
	homa_json_int(j, r->fab.ls.cfg.spines);
	homa_json_kv_num(j, "host_gbps", (double)r->fab.ls.cfg.host_mbps / 1000.0);
	homa_json_kv_num(j, "core_gbps", (double)r->fab.ls.cfg.core_mbps / 1000.0);
	homa_json_key(j, "settings");
	homa_json_object(j);
	homa_json_key(j, "unsched_bytes");
	homa_json_int(j, s->unsched_bytes);
	homa_json_key(j, "max_incoming");
	homa_json_int(j, s->max_incoming);
	homa_json_key(j, "max_overcommit");
	homa_json_int(j, s->max_overcommit);
	homa_json_key(j, "tick_ns");
	homa_json_int(j, s->tick_ns);
	homa_json_key(j, "grant_step");
	homa_json_int(j, s->grant_step);
	homa_json_key(j, "fifo_grant_increment");
	homa_json_int(j, s->fifo_grant_increment);
	homa_json_key(j, "grant_silence_rtts");
	homa_json_int(j, s->grant_silence_rtts);
	homa_json_key(j, "max_tx_buffered");
	homa_json_int(j, (int64_t)s->max_tx_buffered);
	homa_json_key(j, "rtt_ns");
	homa_json_int(j, (int64_t)r->fab.rtt_ns);
	homa_json_end(j);
}

/** json_buckets() - The per-bucket slowdowns. */
static void json_buckets(struct homa_json *j, const struct sim_stats *st)
{
	size_t b;

	homa_json_key(j, "buckets");
	homa_json_array(j);
	for (b = 0; b < st->b.n; b++) {
		homa_json_object(j);
		homa_json_key(j, "max_bytes");
		homa_json_int(j, st->b.upper[b]);
		homa_json_key(j, "count");
		homa_json_int(j, (int64_t)st->eng[b].count);
		homa_json_kv_num(j, "p50_slowdown", st->eng[b].p50);
		homa_json_kv_num(j, "p99_slowdown", st->eng[b].p99);
		homa_json_kv_num(j, "ideal_p50_slowdown", st->ideal[b].p50);
		homa_json_kv_num(j, "ideal_p99_slowdown", st->ideal[b].p99);
		homa_json_end(j);
	}
	homa_json_end(j);
}

/** json_engine() - Engine counters summed over hosts. */
static void json_engine(struct homa_json *j, const struct sim_run *r)
{
	struct homa_stats t;
	uint64_t ctl = 0;
	int k;

	sim_engine_totals(r, &t);
	for (k = 0; k < HOMA_PKT_TYPES; k++)
		if (k != HOMA_PKT_DATA - HOMA_PKT_FIRST)
			ctl += t.pkts_sent[k];
	homa_json_key(j, "engine");
	homa_json_object(j);
	homa_json_key(j, "data_pkts");
	homa_json_int(j, (int64_t)t.pkts_sent[HOMA_PKT_DATA - HOMA_PKT_FIRST]);
	homa_json_key(j, "control_pkts");
	homa_json_int(j, (int64_t)ctl);
	homa_json_key(j, "grants");
	homa_json_int(j, (int64_t)t.grants_sent);
	homa_json_key(j, "fifo_grants");
	homa_json_int(j, (int64_t)t.fifo_grants_sent);
	homa_json_key(j, "resends");
	homa_json_int(j, (int64_t)t.resends_sent);
	homa_json_key(j, "retransmitted_bytes");
	homa_json_int(j, (int64_t)t.retransmitted_bytes);
	homa_json_key(j, "busy");
	homa_json_int(j, (int64_t)t.busy_sent);
	homa_json_key(j, "timeouts");
	homa_json_int(j, (int64_t)t.rpcs_timed_out);
	homa_json_key(j, "pkts_by_priority");
	homa_json_array(j);
	for (k = 0; k < 8; k++)
		homa_json_int(j, (int64_t)t.pkts_sent_prio[k]);
	homa_json_end(j);
	homa_json_end(j);
}

/** json_results() - Load, slowdowns, queues. */
static void json_results(struct homa_json *j, const struct sim_run *r,
			 const struct sim_stats *st)
{
	homa_json_kv_num(j, "offered_load", r->o->pattern == SIM_POISSON ? r->o->load : 0);
	homa_json_kv_num(j, "generated_load", sim_generated_load(r));
	homa_json_key(j, "window_ns");
	homa_json_int(j, r->win_start == UINT64_MAX ? 0 : (int64_t)(r->win_end - r->win_start));
	homa_json_kv_num(j, "achieved_load", sim_achieved_load(r));
	homa_json_kv_num(j, "ideal_achieved_load", sim_ideal_load(r));
	homa_json_kv_num(j, "achieved_vs_ideal", sim_ideal_load(r) > 0
			 ? sim_achieved_load(r) / sim_ideal_load(r) : 0);
	homa_json_key(j, "ideal_max_sender_bytes");
	homa_json_int(j, (int64_t)(r->ideal_max_sender_bytes + 0.5));
	homa_json_key(j, "messages");
	homa_json_int(j, (int64_t)r->nmsgs);
	homa_json_key(j, "measured");
	homa_json_int(j, (int64_t)st->measured);
	homa_json_key(j, "incomplete");
	homa_json_int(j, (int64_t)st->incomplete);
	homa_json_key(j, "send_errors");
	homa_json_int(j, (int64_t)r->send_errors);
	homa_json_key(j, "rpc_errors");
	homa_json_int(j, (int64_t)r->rpc_errors);
	json_buckets(j, st);
	homa_json_kv_num(j, "short_half_p99_slowdown", st->short_p99);
	homa_json_kv_num(j, "ideal_short_half_p99_slowdown", st->short_ideal_p99);
	homa_json_kv_num(j, "p50_slowdown", st->all.p50);
	homa_json_kv_num(j, "p99_slowdown", st->all.p99);
	homa_json_kv_num(j, "mean_slowdown", st->all.mean);
	homa_json_kv_num(j, "ideal_mean_slowdown", st->all_ideal.mean);
	if (r->o->pattern != SIM_POISSON) {
		homa_json_key(j, "step_ns");
		homa_json_int(j, (int64_t)st->step_ns);
		homa_json_key(j, "ideal_step_ns");
		homa_json_int(j, (int64_t)st->ideal_step_ns);
	}
	homa_json_key(j, "queues");
	homa_json_object(j);
	json_port_class(j, "tor_down", &r->queues.tor_down);
	json_port_class(j, "tor_up", &r->queues.tor_up);
	json_port_class(j, "spine_down", &r->queues.spine_down);
	homa_json_end(j);
}

/** write_json() - The whole report as JSON. Return: 0 or HOMA_EIO. */
static int write_json(const struct sim_run *r, const struct sim_stats *st, FILE *f)
{
	struct homa_json j;

	homa_json_init(&j, f, true);
	homa_json_object(&j);
	json_setup(&j, r);
	json_results(&j, r, st);
	json_engine(&j, r);
	homa_json_key(&j, "sim_ns");
	homa_json_int(&j, (int64_t)r->end_ns);
	homa_json_key(&j, "events");
	homa_json_int(&j, (int64_t)r->events);
	if (!r->o->no_timing) {
		homa_json_kv_num(&j, "wall_seconds", r->wall_s);
		homa_json_kv_num(&j, "cpu_seconds", r->cpu_s);
		homa_json_kv_num(&j, "events_per_sec",
				 r->cpu_s > 0 ? (double)r->events / r->cpu_s : 0);
	}
	homa_json_end(&j);
	return homa_json_finish(&j) ? HOMA_EIO : 0;
}

/** write_text() - The report as a readable table. */
static void write_text(const struct sim_run *r, const struct sim_stats *st, FILE *f)
{
	const struct sim_opts *o = r->o;
	size_t b;

	fprintf(f, "homa-sim: %s %s, %d hosts (%d racks, %d spines), %g/%g Gbit/s, "
		"mode %s, seed %llu\n", r->wl.name,
		o->pattern == SIM_POISSON ? "poisson" : pattern_name(o->pattern),
		o->hosts, o->racks, r->fab.ls.cfg.spines,
		(double)r->fab.ls.cfg.host_mbps / 1000.0, (double)r->fab.ls.cfg.core_mbps / 1000.0,
		o->start_msg ? "start_msg" : "classic", (unsigned long long)o->seed);
	fprintf(f, "engine: unsched_bytes %u, max_incoming %u, overcommit %u, rtt %llu ns\n",
		r->fab.settings.unsched_bytes, r->fab.settings.max_incoming,
		r->fab.settings.max_overcommit, (unsigned long long)r->fab.rtt_ns);
	fprintf(f, "load: offered %.3f generated %.3f achieved %.3f (ideal %.3f); messages %llu measured %llu "
		"incomplete %llu\n", o->pattern == SIM_POISSON ? o->load : 0,
		sim_generated_load(r), sim_achieved_load(r), sim_ideal_load(r),
		(unsigned long long)r->nmsgs,
		(unsigned long long)st->measured, (unsigned long long)st->incomplete);
	fprintf(f, "senders: %llu messages refused (queue full); ideal's largest sender backlog "
		"%.0f wire bytes\n", (unsigned long long)r->send_errors, r->ideal_max_sender_bytes);
	fprintf(f, "%10s %8s %8s %8s %9s %9s\n", "max_bytes", "count", "p50", "p99",
		"ideal_p50", "ideal_p99");
	for (b = 0; b < st->b.n; b++)
		fprintf(f, "%10u %8zu %8.2f %8.2f %9.2f %9.2f\n", st->b.upper[b],
			st->eng[b].count, st->eng[b].p50, st->eng[b].p99,
			st->ideal[b].p50, st->ideal[b].p99);
	fprintf(f, "short half p99 slowdown: %.2f (ideal %.2f)\n", st->short_p99,
		st->short_ideal_p99);
	if (o->pattern != SIM_POISSON)
		fprintf(f, "step: %.1f us (ideal %.1f us)\n", (double)st->step_ns / 1e3,
			(double)st->ideal_step_ns / 1e3);
	fprintf(f, "queues (bytes): tor->host max %llu mean %.0f; tor->spine max %llu; "
		"spine->tor max %llu\n", (unsigned long long)r->queues.tor_down.max_bytes,
		r->queues.tor_down.mean_bytes, (unsigned long long)r->queues.tor_up.max_bytes,
		(unsigned long long)r->queues.spine_down.max_bytes);
	if (o->no_timing) {
		fprintf(f, "events: %llu\n", (unsigned long long)r->events);
		return;
	}
	fprintf(f, "speed: %llu events in %.2f s CPU (%.2f s wall) = %.2f M events/s\n",
		(unsigned long long)r->events, r->cpu_s, r->wall_s,
		r->cpu_s > 0 ? (double)r->events / r->cpu_s / 1e6 : 0);
}

/** sim_report() - Write the report (JSON or text per options). Return: 0 or error. */
int sim_report(const struct sim_run *r, FILE *f)
{
	struct sim_stats st;
	int rc = sim_stats_compute(r, &st);

	if (rc)
		return rc;
	if (r->o->json)
		return write_json(r, &st, f);
	write_text(r, &st, f);
	return 0;
}

/**
 * sim_write_samples() - One line per measured message: size, slowdown,
 * ideal slowdown (for plots). Return: 0 or HOMA_EIO.
 */
int sim_write_samples(const struct sim_run *r, const char *path)
{
	FILE *f = fopen(path, "w");
	uint64_t i;

	if (!f)
		return HOMA_EIO;
	fprintf(f, "# size slowdown ideal_slowdown\n");
	for (i = r->measure_from; i < r->nmsgs; i++) {
		const struct sim_msg *m = &r->msgs[i];

		if (!m->done_ns || m->done_ns == UINT64_MAX)
			continue;
		fprintf(f, "%u %.4f %.4f\n", m->size,
			(double)(m->done_ns - m->start_ns) / (double)m->best_ns,
			(double)m->ideal_ns / (double)m->best_ns);
	}
	return fclose(f) ? HOMA_EIO : 0;
}
