/* SPDX-License-Identifier: MIT */
/**
 * @file ideal.c
 * The ideal SRPT reference: a fluid, centrally scheduled fabric (the
 * "ideal" of the pFabric paper). The core is assumed never to limit (a
 * non-blocking leaf-spine), so only host links matter. At every arrival
 * or completion, messages are taken in order of fewest wire bytes left;
 * each one whose sender link and receiver link are both still free gets
 * both at the full host rate (a greedy maximal matching). Between events
 * every chosen message drains at line rate. A message's ideal completion
 * time is its fluid finish plus the fixed part of its unloaded time
 * (propagation, switch and software delays, the last packet's extra hops),
 * so an unloaded message has ideal slowdown 1. It is a lower bound for
 * any per-packet scheduler on the same arrivals, not an exact optimum.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/** A message in the fluid model. */
struct flow {
	double left;   /**< wire bytes left */
	uint64_t idx;  /**< index in run->msgs */
	uint32_t src, dst; /**< its hosts (copied here: matching scans only this array) */
};

/** Fluid state. */
struct fluid {
	struct flow *v;
	size_t n;
	uint32_t *src_gen, *dst_gen; /**< host busy in the current pass if == gen */
	double *src_left; /**< per sender: wire bytes of its messages not yet delivered */
	uint32_t gen;
	unsigned char *chosen;
	size_t hosts;  /**< most pairs a matching can hold */
	double rate;   /**< bytes per ns */
	double delivered; /**< wire bytes delivered so far */
};

/** flow_before() - SRPT order: fewer bytes left first, then arrival order. */
static bool flow_before(const struct flow *a, const struct flow *b)
{
	return a->left < b->left || (a->left == b->left && a->idx < b->idx);
}

/** resort() - Insertion sort of the (nearly sorted) active list. */
static void resort(struct fluid *f)
{
	size_t i, j;

	for (i = 1; i < f->n; i++) {
		struct flow x = f->v[i];

		for (j = i; j > 0 && flow_before(&x, &f->v[j - 1]); j--)
			f->v[j] = f->v[j - 1];
		f->v[j] = x;
	}
}

/** match() - Greedy SRPT matching. Return: ns until the first chosen flow ends. */
static double match(struct fluid *f)
{
	double first = 1e300;
	size_t i, pairs = 0, most = f->hosts;

	f->gen++;
	for (i = 0; i < f->n; i++) {
		const struct flow *fl = &f->v[i];

		f->chosen[i] = 0;
		if (f->src_gen[fl->src] == f->gen || f->dst_gen[fl->dst] == f->gen)
			continue;
		f->src_gen[fl->src] = f->dst_gen[fl->dst] = f->gen;
		f->chosen[i] = 1;
		if (fl->left / f->rate < first)
			first = fl->left / f->rate;
		if (++pairs == most) { /* every host is busy: nothing more can match */
			memset(f->chosen + i + 1, 0, f->n - i - 1);
			break;
		}
	}
	return first;
}

/** advance() - Drain chosen flows for @dt ns; finish those that end at @t. */
static void advance(struct fluid *f, struct sim_run *r, double dt, double t)
{
	size_t i, k = 0;

	for (i = 0; i < f->n; i++) {
		struct flow fl = f->v[i];

		if (f->chosen[i]) {
			fl.left -= dt * f->rate;
			f->delivered += dt * f->rate;
			f->src_left[fl.src] -= dt * f->rate;
		}
		if (fl.left <= 1e-6) {
			struct sim_msg *m = &r->msgs[fl.idx];
			uint64_t fixed = m->best_ns - sim_host_ser_ns(&r->fab, r->o, m->size);

			m->ideal_ns = (uint64_t)(t - (double)m->start_ns + 0.5) + fixed;
			continue;
		}
		f->v[k++] = fl;
	}
	f->n = k;
}

/** fluid_alloc() - Allocate the fluid state for @r. Return: 0 or HOMA_ENOMEM. */
static int fluid_alloc(struct fluid *f, const struct sim_run *r)
{
	memset(f, 0, sizeof(*f));
	f->v = calloc(r->nmsgs + 1, sizeof(*f->v));
	f->chosen = calloc(r->nmsgs + 1, 1);
	f->src_gen = calloc((size_t)r->o->hosts, sizeof(uint32_t));
	f->dst_gen = calloc((size_t)r->o->hosts, sizeof(uint32_t));
	f->src_left = calloc((size_t)r->o->hosts, sizeof(double));
	f->rate = (double)r->fab.ls.cfg.host_mbps / 8000.0;
	f->hosts = (size_t)r->o->hosts;
	return f->v && f->chosen && f->src_gen && f->dst_gen && f->src_left ? 0 : HOMA_ENOMEM;
}

/** fluid_free() - Release the fluid state. */
static void fluid_free(struct fluid *f)
{
	free(f->v);
	free(f->chosen);
	free(f->src_gen);
	free(f->dst_gen);
	free(f->src_left);
}

/**
 * window_mark() - Shorten @dt so the fluid stops at the load window's
 * edges, and note the bytes delivered when it reaches one.
 */
static double window_mark(struct sim_run *r, struct fluid *f, double t, double dt,
			  double *at_start)
{
	double edges[2] = {(double)r->win_start, (double)r->win_end};
	int i;

	if (r->win_start == UINT64_MAX)
		return dt;
	if (*at_start < 0 && t >= edges[0] - 0.5)
		*at_start = f->delivered;
	if (r->ideal_win_bytes < 0 && *at_start >= 0 && t >= edges[1] - 0.5)
		r->ideal_win_bytes = f->delivered - *at_start;
	for (i = 0; i < 2; i++)
		if (edges[i] - t > 0.5 && edges[i] - t < dt)
			dt = edges[i] - t;
	return dt;
}

/**
 * arrive() - Add message @a of @r to the fluid and to its sender's unsent
 * bytes; note the largest such backlog of any sender in @r.
 */
static void arrive(struct fluid *f, struct sim_run *r, uint64_t a)
{
	const struct sim_msg *m = &r->msgs[a];
	struct flow *fl = &f->v[f->n++];

	fl->left = (double)sim_wire_bytes(&r->fab, r->o, m->size);
	fl->src = (uint32_t)m->src;
	fl->dst = (uint32_t)m->dst;
	fl->idx = a;
	f->src_left[fl->src] += fl->left;
	if (f->src_left[fl->src] > r->ideal_max_sender_bytes)
		r->ideal_max_sender_bytes = f->src_left[fl->src];
}

/**
 * sim_ideal() - Fill every sent message's ideal_ns (messages are issued in
 * time order), the wire bytes the fluid delivers inside the load window
 * (ideal_win_bytes: the same window edge effects as the engine's achieved
 * load) and the most wire bytes one sender held unsent at once
 * (ideal_max_sender_bytes). Return: 0 or HOMA_ENOMEM.
 */
int sim_ideal(struct sim_run *r)
{
	struct fluid f;
	uint64_t a = 0;
	double t = 0, at_start = -1;

	r->ideal_win_bytes = -1;
	r->ideal_max_sender_bytes = 0;
	if (fluid_alloc(&f, r)) {
		fluid_free(&f);
		return HOMA_ENOMEM;
	}
	while (a < r->nmsgs || f.n) {
		double dt;

		if (!f.n && (double)r->msgs[a].start_ns > t)
			t = (double)r->msgs[a].start_ns;
		for (; a < r->nmsgs && (double)r->msgs[a].start_ns <= t; a++) {
			if (r->msgs[a].done_ns != UINT64_MAX)
				arrive(&f, r, a);
		}
		resort(&f);
		dt = match(&f);
		if (a < r->nmsgs && (double)r->msgs[a].start_ns - t < dt)
			dt = (double)r->msgs[a].start_ns - t;
		dt = window_mark(r, &f, t, dt, &at_start);
		t += dt;
		advance(&f, r, dt, t);
	}
	window_mark(r, &f, t, 0, &at_start);
	fluid_free(&f);
	return 0;
}
