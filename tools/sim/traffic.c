/* SPDX-License-Identifier: MIT */
/**
 * @file traffic.c
 * Traffic and the run loop. A one-way message is a Homa request; it is
 * complete when the receiving engine hands it up (HOMA_EV_REQUEST), at the
 * simulated time of that event. Then, by default, both halves of the RPC
 * are dropped without any packet (homa_engine_abort() on both engines), so
 * no reply traffic exists; --oneway reply answers with 1 byte instead.
 * The message's index travels in its first 8 bytes (sizes are at least 8),
 * zeros follow. Engines send straight from this memory (the tag in
 * sim_run.tags, the zeros in sim_run.buf, both live for the whole run)
 * through homa_engine_send_request_ref(), so no message is ever copied
 * whole: the copy and its fresh memory were half the CPU of a W4 run.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "homa/wire.h"
#include "sim.h"
#include "util/cpu.h"

/** Offset of the retransmit flag in a DATA header. */
#define DATA_RETRANSMIT_OFF 48

/** now_s() - Monotonic wall time in seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/** on_request() - A message arrived whole at its server: record it, end the RPC. */
static void on_request(struct sim_run *r, struct homa_sim_engine_host *eh,
		       struct homa_event *ev, uint64_t now)
{
	uint64_t idx = UINT64_MAX, client_id;
	struct sim_msg *m;
	int src;

	if (homa_msg_copy(ev->msg, 0, &idx, sizeof(idx)) != sizeof(idx) || idx >= r->nmsgs)
		return;
	m = &r->msgs[idx];
	if (m->done_ns)
		return;
	m->done_ns = now;
	r->done++;
	src = m->src;
	client_id = m->client_id;
	if (m->background)
		r->bg_done++;
	else if (r->steps)
		sim_steps_on_done(r, m, now); /* may send, and so move r->msgs */
	if (r->o->oneway == SIM_ONEWAY_REPLY) {
		homa_sim_engine_host_reply(eh, ev->id, "", 1);
		return;
	}
	homa_engine_abort(eh->engine, ev->id, now);
	homa_engine_abort(r->fab.eh[src]->engine, client_id, now);
}

/** on_event() - Engine event callback of every host. */
static void on_event(void *ctx, struct homa_sim_engine_host *eh,
		     struct homa_event *ev, uint64_t now)
{
	struct sim_run *r = ctx;

	if (ev->type == HOMA_EV_REQUEST)
		on_request(r, eh, ev, now);
	else if (ev->type == HOMA_EV_RESPONSE)
		r->replies++;
	else
		r->rpc_errors++;
}

/** observe() - Packet observer: load accounting and the pcap capture. */
static void observe(void *ctx, const struct homa_sim_pkt *pkt, int what, uint64_t now)
{
	struct sim_run *r = ctx;

	if (what == HOMA_SIM_EMIT && r->pcap_left)
		sim_pcap_packet(r, pkt, now);
	if (what != HOMA_SIM_DELIVER || pkt->type != HOMA_PKT_DATA ||
	    pkt->len <= DATA_RETRANSMIT_OFF || pkt->data[DATA_RETRANSMIT_OFF])
		return;
	if (r->win_start != UINT64_MAX && !r->queues_taken && now >= r->win_start)
		r->win_bytes += pkt->wire_len;
}

/**
 * room() - Make room for one more message: grow r->msgs (doubling) and add
 * a tag block when the next index starts one. Tags never move, so engines
 * still sending earlier messages by reference keep valid memory.
 * Return: 0 or HOMA_ENOMEM.
 */
static int room(struct sim_run *r)
{
	size_t blk = (size_t)(r->nmsgs / SIM_TAG_BLOCK);

	if (r->nmsgs == r->cap) {
		uint64_t cap = r->cap ? 2 * r->cap : 1024;
		struct sim_msg *v = realloc(r->msgs, cap * sizeof(*v));

		if (!v)
			return HOMA_ENOMEM;
		memset(v + r->cap, 0, (cap - r->cap) * sizeof(*v));
		r->msgs = v;
		r->cap = cap;
	}
	if (blk == r->ntag_blocks) {
		uint64_t **t = realloc(r->tags, (blk + 1) * sizeof(*t));

		if (!t)
			return HOMA_ENOMEM;
		r->tags = t;
		t[blk] = malloc(SIM_TAG_BLOCK * sizeof(**t));
		if (!t[blk])
			return HOMA_ENOMEM;
		r->ntag_blocks++;
	}
	return 0;
}

/**
 * sim_send_msg() - Issue the next message (@size bytes, @src to @dst) now,
 * by reference (its tag, then the shared zeros). r->msgs may move.
 * Return: 0 or the engine's error (the message is then not counted), or
 * HOMA_ENOMEM (no room; nothing issued).
 */
int sim_send_msg(struct sim_run *r, uint32_t size, int src, int dst)
{
	struct homa_iov iov[2];
	struct sim_msg *m;
	uint64_t *tag;
	int rc = room(r);

	if (rc) {
		r->send_errors++;
		return rc;
	}
	m = &r->msgs[r->nmsgs];
	tag = &r->tags[r->nmsgs / SIM_TAG_BLOCK][r->nmsgs % SIM_TAG_BLOCK];
	m->start_ns = homa_sim_now(r->fab.net);
	m->size = size;
	m->src = src;
	m->dst = dst;
	m->best_ns = sim_best_ns(&r->fab, r->o, size, src, dst);
	*tag = r->nmsgs;
	iov[0].base = tag;
	iov[0].len = sizeof(*tag);
	iov[1].base = r->buf;
	iov[1].len = size - sizeof(*tag);
	rc = homa_sim_engine_host_request_ref(r->fab.eh[src], dst, SIM_PORT, iov,
					      iov[1].len ? 2 : 1, r->nmsgs, &m->client_id);
	r->nmsgs++;
	if (rc) {
		r->send_errors++;
		m->done_ns = UINT64_MAX;
	}
	return rc;
}

/** draw_size() - A message size from the workload, clamped to [8, max_size]. */
static uint32_t draw_size(struct sim_run *r)
{
	uint32_t s = homa_workload_sample(&r->wl, &r->rng);

	if (s < 8)
		s = 8;
	if (r->o->max_size && s > r->o->max_size)
		s = r->o->max_size;
	return s;
}

/** arrival() - Event: the next Poisson message; schedules the one after it. */
static void arrival(void *obj, void *ptr, uint64_t now)
{
	struct sim_run *r = obj;
	int hosts = r->o->hosts;
	int src = (int)homa_rng_below(&r->rng, (uint64_t)hosts);
	int dst = (int)homa_rng_below(&r->rng, (uint64_t)hosts - 1);
	uint32_t size = draw_size(r);

	(void)ptr;
	if (dst >= src)
		dst++;
	if (r->nmsgs == r->measure_from) {
		r->win_start = now;
		homa_sim_reset_port_stats(r->fab.net);
	}
	sim_send_msg(r, size, src, dst);
	if (r->nmsgs == r->o->messages) {
		r->win_end = now;
		homa_sim_leafspine_queues(&r->fab.ls, r->fab.net, &r->queues);
		r->queues_taken = true;
		return;
	}
	homa_sim_schedule(r->fab.net, homa_poisson_next(&r->arrivals), arrival, r, NULL);
}

/** mean_wire() - Mean wire bytes per message of the workload (exact for tables). */
static double mean_wire(struct sim_run *r)
{
	const struct homa_workload *w = &r->wl;
	struct homa_rng rng;
	double sum = 0, prev = 0;
	size_t i;

	if (w->kind == HOMA_WORKLOAD_TABLE) {
		for (i = 0; i < w->n; i++) {
			uint32_t s = w->sizes[i] < 8 ? 8 : w->sizes[i];

			if (r->o->max_size && s > r->o->max_size)
				s = r->o->max_size;
			sum += (w->cdf[i] - prev) * (double)sim_wire_bytes(&r->fab, r->o, s);
			prev = w->cdf[i];
		}
		return sum;
	}
	homa_rng_seed(&rng, r->o->seed ^ 0x5eed);
	for (i = 0; i < 100000; i++) {
		uint32_t s = homa_workload_sample(w, &rng);

		sum += (double)sim_wire_bytes(&r->fab, r->o, s < 8 ? 8 : s);
	}
	return sum / 100000.0;
}

/** start_poisson() - Set up the open-loop arrivals at the offered load. Return: 0 or error. */
static int start_poisson(struct sim_run *r)
{
	const struct sim_opts *o = r->o;
	double cap = (double)r->fab.ls.cfg.host_mbps * 1e6 / 8.0; /* bytes/s per host */
	double rate;
	int rc;

	r->mean_wire = mean_wire(r);
	rate = o->load * cap * o->hosts / r->mean_wire;
	r->rate_per_ns = rate * 1e-9;
	r->measure_from = (uint64_t)(o->warmup * (double)o->messages);
	rc = homa_poisson_init(&r->arrivals, rate, o->seed * 2 + 1, 0);
	if (rc)
		return rc;
	return homa_sim_schedule(r->fab.net, homa_poisson_next(&r->arrivals), arrival, r, NULL);
}

/** start_patterns() - Issue all messages of incast or all-to-all at time 0. */
static void start_patterns(struct sim_run *r)
{
	const struct sim_opts *o = r->o;
	int n = o->hosts, i, k;

	r->win_start = 0;
	if (o->pattern == SIM_INCAST) {
		for (i = 1; i <= o->senders; i++)
			sim_send_msg(r, o->size, i, 0);
		return;
	}
	for (k = 1; k < n; k++)
		for (i = 0; i < n; i++)
			sim_send_msg(r, o->size, i, (i + k) % n);
}

/** more() - True while messages are still to be sent or received. */
static bool more(void *ctx)
{
	struct sim_run *r = ctx;

	if (r->steps)
		return sim_steps_more(r);
	return r->nmsgs < r->o->messages || r->done + r->send_errors < r->nmsgs;
}

/** setup() - Allocate the run's state and build the fabric. Return: 0 or error. */
static int setup(struct sim_run *r, const struct sim_opts *o)
{
	char err[256] = "";
	uint32_t max;
	int rc;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->win_start = UINT64_MAX;
	r->ideal_win_bytes = -1;
	rc = homa_workload_parse(o->workload, NULL, &r->wl, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "homa-sim: workload %s: %s\n", o->workload, err);
		return rc;
	}
	rc = sim_fabric_build(&r->fab, o, on_event, r);
	if (rc)
		return rc;
	homa_sim_set_observer(r->fab.net, observe, r);
	homa_rng_seed(&r->rng, o->seed);
	max = o->pattern == SIM_POISSON ? r->wl.hi : o->pattern == SIM_LOOKUP_BATCH ? 4096 : o->size;
	if (o->max_size && max > o->max_size)
		max = o->max_size;
	if (o->bg_load > 0 && o->bg_size > max)
		max = o->bg_size;
	r->buf = calloc(1, max < 8 ? 8 : max);
	r->msgs = calloc(o->messages, sizeof(*r->msgs));
	if (!r->buf || !r->msgs)
		return HOMA_ENOMEM;
	r->cap = o->messages;
	if (o->pcap && sim_pcap_open(r, o->pcap))
		return HOMA_EIO;
	return 0;
}

/**
 * sim_run() - Run the simulation the options describe, until every message
 * has arrived or the time cap is reached.
 * Return: 0, or a negative error (setup failed; a message was printed).
 */
int sim_run(struct sim_run *r, const struct sim_opts *o)
{
	struct homa_sim_net_stats ns;
	struct homa_cpu_meter cpu;
	uint64_t t_end;
	double t0;
	int rc;

	rc = setup(r, o);
	if (rc)
		return rc;
	if (o->pattern == SIM_POISSON)
		rc = start_poisson(r);
	else if (sim_is_step_pattern(o->pattern)) {
		rc = sim_bg_start(r);
		if (!rc)
			rc = sim_steps_start(r);
	} else
		start_patterns(r);
	if (rc)
		return rc;
	if (o->max_time_ms > 0)
		t_end = (uint64_t)(o->max_time_ms * 1e6);
	else if (o->pattern == SIM_POISSON)
		t_end = (uint64_t)(3.0 * (double)o->messages / r->rate_per_ns) + 200000000ull;
	else if (sim_is_step_pattern(o->pattern))
		t_end = 1000000000000ull;
	else
		t_end = 10000000000ull;
	t0 = now_s();
	homa_cpu_start(&cpu, HOMA_CPU_PROCESS);
	homa_sim_run_while(r->fab.net, t_end, more, r);
	r->wall_s = now_s() - t0;
	r->cpu_s = (double)homa_cpu_elapsed_us(&cpu) * 1e-6;
	r->end_ns = homa_sim_now(r->fab.net);
	if (o->pattern != SIM_POISSON) {
		r->win_end = r->end_ns;
		homa_sim_leafspine_queues(&r->fab.ls, r->fab.net, &r->queues);
		r->queues_taken = true;
	}
	homa_sim_net_stats(r->fab.net, &ns);
	r->events = ns.events;
	if (r->pcap)
		fclose(r->pcap);
	r->pcap = NULL;
	if (r->steps)
		return o->ideal ? sim_steps_ideal(r) : 0;
	return o->ideal ? sim_ideal(r) : 0;
}

/** sim_run_free() - Release everything the run holds. */
void sim_run_free(struct sim_run *r)
{
	if (r->pcap)
		fclose(r->pcap);
	sim_steps_free(r);
	sim_fabric_free(&r->fab);
	homa_workload_free(&r->wl);
	for (size_t i = 0; i < r->ntag_blocks; i++)
		free(r->tags[i]);
	free(r->tags);
	free(r->msgs);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
