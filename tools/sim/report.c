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

/** summarize_all() - Summary of the slowdowns of all measured messages. */
static void summarize_all(const struct sim_run *r, bool ideal, double *vals,
			  struct homa_summary *out)
{
	size_t k = 0;
	uint64_t i;

	for (i = 0; i < r->nmsgs; i++)
		if (measured(r, i))
			vals[k++] = slow(&r->msgs[i], ideal);
	homa_summary_of(vals, k, out);
}

/**
 * by_bucket() - Summaries per size bucket, engine (@ideal false) or ideal:
 * the slowdowns are grouped by bucket in @vals (a counting sort; @bk holds
 * each message's bucket, UINT8_MAX if not measured) and each group is
 * summarized in place.
 */
static void by_bucket(const struct sim_run *r, const uint8_t *bk, bool ideal,
		      double *vals, struct homa_summary *out, size_t nb)
{
	size_t start[HOMA_BUCKETS_MAX + 1] = {0}, fill[HOMA_BUCKETS_MAX];
	uint64_t i;
	size_t b;

	for (i = 0; i < r->nmsgs; i++)
		if (bk[i] != UINT8_MAX)
			start[bk[i] + 1]++;
	for (b = 0; b < nb; b++) {
		start[b + 1] += start[b];
		fill[b] = start[b];
	}
	for (i = 0; i < r->nmsgs; i++)
		if (bk[i] != UINT8_MAX)
			vals[fill[bk[i]]++] = slow(&r->msgs[i], ideal);
	for (b = 0; b < nb; b++)
		homa_summary_of(vals + start[b], start[b + 1] - start[b], &out[b]);
}

/**
 * buckets() - Fill s->eng and s->ideal per bucket. Return: 0 or
 * HOMA_ENOMEM (the per-message bucket array).
 */
static int buckets(const struct sim_run *r, struct sim_stats *s, double *vals)
{
	uint8_t *bk = malloc(r->nmsgs + 1);
	uint64_t i;

	if (!bk)
		return HOMA_ENOMEM;
	for (i = 0; i < r->nmsgs; i++)
		bk[i] = measured(r, i) ? (uint8_t)homa_buckets_index(&s->b, r->msgs[i].size)
				       : UINT8_MAX;
	by_bucket(r, bk, false, vals, s->eng, s->b.n);
	by_bucket(r, bk, true, vals, s->ideal, s->b.n);
	free(bk);
	return 0;
}

/**
 * short_half() - P99 slowdown of the shortest half of the measured
 * messages, ordered by size and then by index: the half-th smallest size
 * is found by selection, then every message below it and the first ones
 * (by index) of that size make up the half.
 */
static void short_half(const struct sim_run *r, struct sim_stats *s, double *vals)
{
	struct homa_summary sum;
	size_t n = 0, half, below = 0, k;
	uint64_t i;
	double cut;

	for (i = 0; i < r->nmsgs; i++)
		if (measured(r, i))
			vals[n++] = r->msgs[i].size;
	if (n == 0)
		return;
	half = (n + 1) / 2;
	homa_select_nth(vals, n, half - 1);
	cut = vals[half - 1];
	for (k = 0; k < half; k++)
		below += vals[k] < cut;
	for (int ideal = 0; ideal < 2; ideal++) {
		size_t eq = half - below;

		k = 0;
		for (i = 0; i < r->nmsgs && k < half; i++) {
			const struct sim_msg *m = &r->msgs[i];

			if (!measured(r, i) || m->size > cut || (m->size == cut && !eq))
				continue;
			if (m->size == cut)
				eq--;
			vals[k++] = slow(m, ideal);
		}
		homa_summary_of(vals, half, &sum);
		*(ideal ? &s->short_ideal_p99 : &s->short_p99) = sum.p99;
	}
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
	if (buckets(r, s, vals)) {
		free(vals);
		return HOMA_ENOMEM;
	}
	summarize_all(r, false, vals, &s->all);
	summarize_all(r, true, vals, &s->all_ideal);
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

