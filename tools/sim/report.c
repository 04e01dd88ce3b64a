/* SPDX-License-Identifier: MIT */
/**
 * @file report.c
 * Statistics of a run: slowdown percentiles per size bucket (10 buckets
 * of equal message counts from the workload's CDF), the P99 slowdown of
 * the shortest half of the messages, achieved load, engine counters
 * (output.c writes them). Slowdown = (completion - start) / unloaded
 * time for the message's size and path (fabric.c).
 */
#include <stdlib.h>
#include <string.h>

#include "homa/wire.h"
#include "sim.h"
#include "util/json.h"
#include "util/latency.h"

/** measured() - True if message @i counts in the statistics. */
static bool measured(const struct sim_run *r, uint64_t i)
{
	const struct sim_msg *m = &r->msgs[i];

	return i >= r->measure_from && m->done_ns && m->done_ns != UINT64_MAX;
}

/** slow() - Slowdown of message @m (engine, or the ideal reference). */
static double slow(const struct sim_msg *m, bool ideal)
{
	double t = ideal ? (double)m->ideal_ns : (double)(m->done_ns - m->start_ns);

	return t / (double)m->best_ns;
}

/** summarize() - Summary of slowdowns of measured messages in bucket @bk (-1: all). */
static int summarize(const struct sim_run *r, const struct homa_buckets *b, int bk,
		     bool ideal, double *vals, struct homa_summary *out)
{
	size_t k = 0;
	uint64_t i;

	for (i = 0; i < r->nmsgs; i++) {
		if (!measured(r, i))
			continue;
		if (bk >= 0 && homa_buckets_index(b, r->msgs[i].size) != (size_t)bk)
			continue;
		vals[k++] = slow(&r->msgs[i], ideal);
	}
	homa_summary_of(vals, k, out);
	return 0;
}

/** by_size() - qsort order of message pointers: size, then index (stable). */
static int by_size(const void *a, const void *b)
{
	const struct sim_msg *x = *(const struct sim_msg *const *)a;
	const struct sim_msg *y = *(const struct sim_msg *const *)b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x < y ? -1 : x > y;
}

/** short_half() - P99 slowdown of the shortest half of the measured messages. */
static void short_half(const struct sim_run *r, struct sim_stats *s, double *vals)
{
	const struct sim_msg **v = malloc((r->nmsgs + 1) * sizeof(*v));
	struct homa_summary sum;
	size_t n = 0, i, half;

	if (!v)
		return;
	for (i = 0; i < r->nmsgs; i++)
		if (measured(r, i))
			v[n++] = &r->msgs[i];
	qsort(v, n, sizeof(*v), by_size);
	half = (n + 1) / 2;
	for (i = 0; i < half; i++)
		vals[i] = slow(v[i], false);
	homa_summary_of(vals, half, &sum);
	s->short_p99 = sum.p99;
	for (i = 0; i < half; i++)
		vals[i] = slow(v[i], true);
	homa_summary_of(vals, half, &sum);
	s->short_ideal_p99 = sum.p99;
	free(v);
}

/** step_times() - Completion of the last message, engine and ideal (patterns). */
static void step_times(const struct sim_run *r, struct sim_stats *s)
{
	uint64_t i;

	for (i = 0; i < r->nmsgs; i++) {
		const struct sim_msg *m = &r->msgs[i];

		if (!measured(r, i))
			continue;
		if (m->done_ns > s->step_ns)
			s->step_ns = m->done_ns;
		if (m->start_ns + m->ideal_ns > s->ideal_step_ns)
			s->ideal_step_ns = m->start_ns + m->ideal_ns;
	}
}

/** sim_stats_compute() - Fill @s from the run. Return: 0 or HOMA_ENOMEM. */
int sim_stats_compute(const struct sim_run *r, struct sim_stats *s)
{
	double *vals = malloc((r->nmsgs + 1) * sizeof(*vals));
	uint64_t i;
	size_t b;

	memset(s, 0, sizeof(*s));
	if (!vals)
		return HOMA_ENOMEM;
	if (r->o->pattern == SIM_POISSON)
		homa_buckets_from_workload(&r->wl, 10, &s->b);
	if (!s->b.n) {
		s->b.n = 1;
		s->b.upper[0] = r->o->pattern == SIM_POISSON ? r->wl.hi : r->o->size;
	}
	for (i = 0; i < r->nmsgs; i++) {
		if (measured(r, i))
			s->measured++;
		else if (i >= r->measure_from && r->msgs[i].done_ns != UINT64_MAX)
			s->incomplete++;
	}
	for (b = 0; b < s->b.n; b++) {
		summarize(r, &s->b, (int)b, false, vals, &s->eng[b]);
		summarize(r, &s->b, (int)b, true, vals, &s->ideal[b]);
	}
	summarize(r, &s->b, -1, false, vals, &s->all);
	summarize(r, &s->b, -1, true, vals, &s->all_ideal);
	short_half(r, s, vals);
	step_times(r, s);
	free(vals);
	return 0;
}

/** sim_achieved_load() - Delivered DATA wire bytes per host link capacity in the window. */
double sim_achieved_load(const struct sim_run *r)
{
	double span = (double)(r->win_end - r->win_start);
	double cap = (double)r->fab.ls.cfg.host_mbps / 8000.0 * r->o->hosts;

	if (r->win_start == UINT64_MAX || span <= 0)
		return 0;
	return (double)r->win_bytes / (span * cap);
}

/**
 * sim_ideal_load() - Load the ideal reference delivers in the same window
 * (it suffers the same edge effects: bytes still in flight at the window's
 * end); 0 if it was not computed.
 */
double sim_ideal_load(const struct sim_run *r)
{
	double span = (double)(r->win_end - r->win_start);
	double cap = (double)r->fab.ls.cfg.host_mbps / 8000.0 * r->o->hosts;

	if (r->win_start == UINT64_MAX || span <= 0 || r->ideal_win_bytes < 0)
		return 0;
	return r->ideal_win_bytes / (span * cap);
}

/**
 * sim_generated_load() - Wire bytes of the messages that arrived in the
 * load window, per host link capacity: what the Poisson source really
 * offered (the offered load is its expectation).
 */
double sim_generated_load(const struct sim_run *r)
{
	double span = (double)(r->win_end - r->win_start);
	double cap = (double)r->fab.ls.cfg.host_mbps / 8000.0 * r->o->hosts;
	double bytes = 0;
	uint64_t i;

	if (r->win_start == UINT64_MAX || span <= 0)
		return 0;
	for (i = r->measure_from; i < r->nmsgs; i++)
		if (r->msgs[i].done_ns != UINT64_MAX)
			bytes += (double)sim_wire_bytes(&r->fab, r->o, r->msgs[i].size);
	return bytes / (span * cap);
}

/** sim_engine_totals() - Sum of all engines' counters. */
void sim_engine_totals(const struct sim_run *r, struct homa_stats *t)
{
	struct homa_stats s;
	int h, k;

	memset(t, 0, sizeof(*t));
	for (h = 0; h < r->o->hosts; h++) {
		if (!r->fab.eh[h]->engine)
			continue;
		homa_engine_stats(r->fab.eh[h]->engine, &s);
		for (k = 0; k < HOMA_PKT_TYPES; k++)
			t->pkts_sent[k] += s.pkts_sent[k];
		for (k = 0; k < 8; k++)
			t->pkts_sent_prio[k] += s.pkts_sent_prio[k];
		t->grants_sent += s.grants_sent;
		t->fifo_grants_sent += s.fifo_grants_sent;
		t->resends_sent += s.resends_sent;
		t->retransmitted_bytes += s.retransmitted_bytes;
		t->busy_sent += s.busy_sent;
		t->start_msgs_resent += s.start_msgs_resent;
		t->rpcs_timed_out += s.rpcs_timed_out;
	}
}

