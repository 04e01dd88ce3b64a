/* SPDX-License-Identifier: MIT */
/**
 * @file steps.c
 * Step-synchronous collective patterns on the simulated fabric (issue 28,
 * docs/COLLECTIVE.md). Every host is an accelerator: it computes for
 * --compute-us (nothing is sent), then communicates, and the next step
 * starts when every message of the step has arrived:
 *   alltoall-step   every host sends --size bytes to every other host;
 *   ring-allreduce  2(N-1) rounds, each host sending a --size chunk to
 *                   its ring neighbour, each round waiting for its last;
 *   lookup-batch    every host gets --lookups answers of 100-4096 bytes
 *                   from random other hosts (one-way messages, the
 *                   answers; the 100-byte requests are left out).
 * The ideal SRPT reference runs every step (every round) on its own,
 * from the moment its messages start, so its steps are as short as a
 * centrally scheduled fluid fabric allows; its step starts follow its own
 * step ends. With background traffic (--background, background.c) it
 * runs once over the whole run, the step messages and the background at
 * the times the engine's run issued them, and a group's ideal time is
 * from its start to its last ideal completion. Both are counted by
 * util/steps.c.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "util/json.h"
#include "util/steps.h"

/** Answer sizes of lookup-batch. */
#define LOOKUP_MIN 100u
#define LOOKUP_MAX 4096u

/** The step machine of a run. */
struct sim_steps {
	uint32_t step, round, rounds;
	uint64_t group_first;  /**< first message of the current group (step or round) */
	uint64_t *gfirst;      /**< steps x rounds: every group's first message */
	uint64_t outstanding;  /**< messages of the group not yet arrived */
	uint64_t *bound;       /**< steps + 1 boundaries (engine) */
	struct homa_step_dev *dev; /**< steps x hosts records (engine) */
	uint64_t *ibound;      /**< the ideal's boundaries */
	struct homa_step_dev *idev; /**< the ideal's records */
	bool finished;
};

bool sim_is_step_pattern(int p)
{
	return p == SIM_ALLTOALL_STEP || p == SIM_RING_ALLREDUCE || p == SIM_LOOKUP_BATCH;
}

uint64_t sim_step_messages(const struct sim_opts *o)
{
	uint64_t n = (uint64_t)o->hosts;

	if (o->pattern == SIM_ALLTOALL_STEP)
		return o->steps * n * (n - 1);
	if (o->pattern == SIM_RING_ALLREDUCE)
		return o->steps * 2 * (n - 1) * n;
	return o->steps * (uint64_t)o->lookups * n;
}

/** owner() - The device that waits for message @m. */
static int owner(const struct sim_run *r, const struct sim_msg *m)
{
	return r->o->pattern == SIM_LOOKUP_BATCH ? m->dst : m->src;
}

/** issue() - Send message @size @src -> @dst as part of the current group. */
static void issue(struct sim_run *r, uint32_t size, int src, int dst)
{
	if (sim_send_msg(r, size, src, dst) == 0)
		r->steps->outstanding++;
}

/** issue_group() - The messages of the current step (or round). */
static void issue_group(struct sim_run *r)
{
	struct sim_steps *st = r->steps;
	int n = r->o->hosts, i, k;

	st->group_first = r->nmsgs;
	st->gfirst[(size_t)st->step * st->rounds + st->round] = r->nmsgs;
	st->outstanding = 0;
	if (r->o->pattern == SIM_ALLTOALL_STEP) {
		for (k = 1; k < n; k++)
			for (i = 0; i < n; i++)
				issue(r, r->o->size, i, (i + k) % n);
	} else if (r->o->pattern == SIM_RING_ALLREDUCE) {
		for (i = 0; i < n; i++)
			issue(r, r->o->size, i, (i + 1) % n);
	} else {
		for (k = 0; k < (int)r->o->lookups; k++)
			for (i = 0; i < n; i++) {
				int from = (int)homa_rng_below(&r->rng, (uint64_t)n - 1);
				uint32_t size = LOOKUP_MIN + (uint32_t)homa_rng_below(
					&r->rng, LOOKUP_MAX - LOOKUP_MIN + 1);
				issue(r, size, from >= i ? from + 1 : from, i);
			}
	}
}

/** compute_end() - Event: every device finished computing; communicate. */
static void compute_end(void *obj, void *ptr, uint64_t now)
{
	struct sim_run *r = obj;
	struct sim_steps *st = r->steps;
	int n = r->o->hosts;

	(void)ptr;
	for (int d = 0; d < n; d++)
		st->dev[(size_t)st->step * n + d].compute_end_ns = now;
	st->round = 0;
	issue_group(r);
	if (st->outstanding == 0)
		sim_steps_on_done(r, NULL, now);
}

/** step_begin() - Start step st->step at @now: compute first. */
static void step_begin(struct sim_run *r, uint64_t now)
{
	struct sim_steps *st = r->steps;

	st->bound[st->step] = now;
	homa_sim_schedule(r->fab.net, now + (uint64_t)(r->o->compute_us * 1000), compute_end, r,
			  NULL);
}

int sim_steps_start(struct sim_run *r)
{
	const struct sim_opts *o = r->o;
	struct sim_steps *st = calloc(1, sizeof(*st));
	size_t recs = (size_t)o->steps * (size_t)o->hosts;

	if (!st)
		return HOMA_ENOMEM;
	r->steps = st;
	st->rounds = o->pattern == SIM_RING_ALLREDUCE ? 2 * (uint32_t)(o->hosts - 1) : 1;
	st->bound = calloc(o->steps + 1, sizeof(*st->bound));
	st->ibound = calloc(o->steps + 1, sizeof(*st->ibound));
	st->dev = calloc(recs, sizeof(*st->dev));
	st->idev = calloc(recs, sizeof(*st->idev));
	st->gfirst = calloc((size_t)o->steps * st->rounds, sizeof(*st->gfirst));
	if (!st->bound || !st->ibound || !st->dev || !st->idev || !st->gfirst)
		return HOMA_ENOMEM;
	r->win_start = 0;
	step_begin(r, r->bg_lead_ns);
	return 0;
}

void sim_steps_on_done(struct sim_run *r, struct sim_msg *m, uint64_t now)
{
	struct sim_steps *st = r->steps;

	if (m) {
		uint64_t idx = (uint64_t)(m - r->msgs);
		if (idx < st->group_first || st->finished || m->background)
			return;
		struct homa_step_dev *rec = &st->dev[(size_t)st->step * r->o->hosts + owner(r, m)];
		if (now > rec->last_msg_ns)
			rec->last_msg_ns = now;
		if (--st->outstanding > 0)
			return;
	}
	if (++st->round < st->rounds) {
		issue_group(r);
		if (st->outstanding == 0)
			sim_steps_on_done(r, NULL, now);
		return;
	}
	st->bound[++st->step] = now;
	if (st->step == r->o->steps) {
		st->finished = true;
		return;
	}
	step_begin(r, now);
}

const uint64_t *sim_steps_bounds(const struct sim_run *r, bool ideal, uint32_t *done)
{
	if (!r->steps)
		return NULL;
	*done = r->steps->step;
	return ideal ? r->steps->ibound : r->steps->bound;
}

bool sim_steps_more(const struct sim_run *r)
{
	return r->steps && !r->steps->finished;
}

/**
 * group_ideal() - Run the ideal reference on messages [@first, @first + @n)
 * alone, all starting at once. Return: the latest ideal completion (ns
 * after the start), or 0 with HOMA_ENOMEM in @rc.
 */
static uint64_t group_ideal(struct sim_run *r, uint64_t first, uint64_t n, int *rc)
{
	struct sim_run sub = *r;
	struct sim_msg *v = malloc((n ? n : 1) * sizeof(*v));
	uint64_t most = 0;

	if (!v) {
		*rc = HOMA_ENOMEM;
		return 0;
	}
	memcpy(v, r->msgs + first, n * sizeof(*v));
	for (uint64_t i = 0; i < n; i++)
		v[i].start_ns = 0;
	sub.msgs = v;
	sub.nmsgs = n;
	sub.win_start = UINT64_MAX;
	*rc = sim_ideal(&sub);
	for (uint64_t i = 0; *rc == 0 && i < n; i++)
		if (v[i].done_ns != UINT64_MAX && v[i].ideal_ns > most)
			most = v[i].ideal_ns;
	free(v);
	return most;
}

/**
 * group_ideal_bg() - The ideal time of the group of messages [@first,
 * @first + @n) from the whole-run ideal already in r->msgs: from its first
 * message's start to its last ideal completion.
 */
static uint64_t group_ideal_bg(const struct sim_run *r, uint64_t first, uint64_t n)
{
	uint64_t start = r->msgs[first].start_ns, most = start;

	for (uint64_t i = first; i < first + n; i++) {
		const struct sim_msg *m = &r->msgs[i];
		if (m->done_ns != UINT64_MAX && m->start_ns + m->ideal_ns > most)
			most = m->start_ns + m->ideal_ns;
	}
	return most - start;
}

/** whole_ideal() - The ideal reference over every message of the run. Return: 0 or error. */
static int whole_ideal(struct sim_run *r)
{
	uint64_t ws = r->win_start;
	int rc;

	r->win_start = UINT64_MAX; /* no load window */
	rc = sim_ideal(r);
	r->win_start = ws;
	return rc;
}

int sim_steps_ideal(struct sim_run *r)
{
	struct sim_steps *st = r->steps;
	int n = r->o->hosts, rc = 0;
	uint64_t per = r->o->pattern == SIM_ALLTOALL_STEP ? (uint64_t)n * (uint64_t)(n - 1)
		       : r->o->pattern == SIM_RING_ALLREDUCE ? (uint64_t)n
		       : (uint64_t)r->o->lookups * (uint64_t)n;
	uint64_t c = (uint64_t)(r->o->compute_us * 1000);
	bool bg = r->o->bg_load > 0;

	st->ibound[0] = st->bound[0];
	if (bg)
		rc = whole_ideal(r);
	for (uint32_t s = 0; s < st->step && rc == 0; s++) {
		uint64_t t = st->ibound[s] + c;
		for (uint32_t k = 0; k < st->rounds && rc == 0; k++) {
			uint64_t first = st->gfirst[(size_t)s * st->rounds + k];
			t += bg ? group_ideal_bg(r, first, per) : group_ideal(r, first, per, &rc);
		}
		for (int d = 0; d < n; d++) {
			struct homa_step_dev *rec = &st->idev[(size_t)s * n + d];
			rec->compute_end_ns = st->ibound[s] + c;
			rec->last_msg_ns = t;
		}
		st->ibound[s + 1] = t;
	}
	return rc;
}

void sim_steps_free(struct sim_run *r)
{
	struct sim_steps *st = r->steps;

	if (!st)
		return;
	free(st->bound);
	free(st->ibound);
	free(st->dev);
	free(st->idev);
	free(st->gfirst);
	free(st);
	r->steps = NULL;
}

/** pattern_name() - The --pattern word of a step pattern. */
static const char *pattern_name(int p)
{
	return p == SIM_ALLTOALL_STEP ? "alltoall-step" : p == SIM_RING_ALLREDUCE ? "ring-allreduce"
	       : "lookup-batch";
}

/** json_stats() - An object @key holding @s. */
static void json_stats(struct homa_json *j, const char *key, const struct homa_step_stats *s)
{
	homa_json_key(j, key);
	homa_json_object(j);
	homa_step_stats_json(j, s);
	homa_json_end(j);
}

/** ratio() - @a / @b, 0 if @b is 0. */
static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/** report_json() - The JSON report of a step pattern. */
static int report_json(const struct sim_run *r, uint32_t skip, const struct homa_step_stats *e,
		       const struct homa_step_stats *i, FILE *f)
{
	const struct sim_opts *o = r->o;
	struct homa_json j;

	homa_json_init(&j, f, true);
	homa_json_object(&j);
	homa_json_kv_str(&j, "pattern", pattern_name(o->pattern));
	homa_json_kv_str(&j, "mode", o->start_msg ? "start_msg" : "classic");
	homa_json_kv_num(&j, "hosts", o->hosts);
	homa_json_kv_num(&j, "host_gbps", (double)r->fab.ls.cfg.host_mbps / 1000.0);
	homa_json_kv_num(&j, "seed", (double)o->seed);
	homa_json_kv_num(&j, "steps_run", r->steps->step);
	homa_json_kv_num(&j, "warmup_steps", skip);
	homa_json_kv_num(&j, "compute_us", o->compute_us);
	homa_json_kv_num(&j, "size", o->size);
	homa_json_kv_num(&j, "lookups", o->lookups);
	homa_json_kv_num(&j, "background_load", o->bg_load);
	homa_json_kv_num(&j, "background_size", o->bg_size);
	homa_json_kv_num(&j, "background_messages", (double)r->bg_sent);
	homa_json_kv_num(&j, "background_delivered", (double)r->bg_done);
	homa_json_kv_num(&j, "incomplete_steps", o->steps - r->steps->step);
	homa_json_kv_num(&j, "send_errors", (double)r->send_errors);
	homa_json_kv_num(&j, "rpc_errors", (double)r->rpc_errors);
	json_stats(&j, "engine", e);
	if (o->ideal) {
		json_stats(&j, "ideal", i);
		homa_json_key(&j, "engine_over_ideal");
		homa_json_object(&j);
		homa_json_kv_num(&j, "step_p50", ratio(e->p50_us, i->p50_us));
		homa_json_kv_num(&j, "step_p99", ratio(e->p99_us, i->p99_us));
		homa_json_kv_num(&j, "idle_fraction", ratio(e->idle_fraction, i->idle_fraction));
		homa_json_end(&j);
	}
	if (!o->no_timing)
		homa_json_kv_num(&j, "wall_seconds", r->wall_s);
	homa_json_end(&j);
	return homa_json_finish(&j);
}

/** print_stats() - One text line of @s. */
static void print_stats(FILE *f, const char *who, const struct homa_step_stats *s)
{
	fprintf(f, "  %-7s step P50 %10.1f us  P99 %10.1f us  max %10.1f us  comm %10.1f us/step  "
		"idle fraction %.3f\n", who, s->p50_us, s->p99_us, s->max_us, s->comm_us_per_step,
		s->idle_fraction);
}

int sim_steps_report(const struct sim_run *r, FILE *f)
{
	const struct sim_opts *o = r->o;
	const struct sim_steps *st = r->steps;
	struct homa_step_stats e, i;
	uint32_t skip = (uint32_t)(o->warmup * st->step);
	int rc;

	memset(&i, 0, sizeof(i));
	if (st->step <= skip) {
		fprintf(stderr, "homa-sim: only %u of %u steps finished\n", st->step, o->steps);
		return HOMA_ETIMEDOUT;
	}
	rc = homa_step_stats(st->bound + skip, st->dev + (size_t)skip * o->hosts, st->step - skip,
			     (size_t)o->hosts, &e);
	if (rc == 0 && o->ideal)
		rc = homa_step_stats(st->ibound + skip, st->idev + (size_t)skip * o->hosts,
				     st->step - skip, (size_t)o->hosts, &i);
	if (rc)
		return rc;
	if (o->json)
		return report_json(r, skip, &e, &i, f);
	fprintf(f, "%s: %d hosts at %.0f Gbps, %u steps (after %u warm-up), compute %.1f us, "
		"size %u B, %u lookups; %u steps unfinished\n", pattern_name(o->pattern), o->hosts,
		(double)r->fab.ls.cfg.host_mbps / 1000.0, st->step - skip, skip, o->compute_us,
		o->size, o->lookups, o->steps - st->step);
	if (o->bg_load > 0)
		fprintf(f, "  background %.2f of the links, %u B messages: %llu sent, %llu delivered\n",
			o->bg_load, o->bg_size, (unsigned long long)r->bg_sent,
			(unsigned long long)r->bg_done);
	print_stats(f, "engine", &e);
	if (o->ideal) {
		print_stats(f, "ideal", &i);
		fprintf(f, "  engine / ideal: step P50 %.2f, P99 %.2f, idle fraction %.2f\n",
			ratio(e.p50_us, i.p50_us), ratio(e.p99_us, i.p99_us),
			ratio(e.idle_fraction, i.idle_fraction));
	}
	return 0;
}
