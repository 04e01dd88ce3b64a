/* SPDX-License-Identifier: MIT */
/**
 * @file background.c
 * Background bulk traffic beside the step patterns (docs/COLLECTIVE.md):
 * open-loop Poisson arrivals of --background-size messages between hosts
 * drawn uniformly at random (sender and receiver differ), at --background
 * of every host link's capacity on average, as checkpoint writes or data
 * loading would send next to a training job. The background starts
 * SIM_BG_LEAD message times before the first step, so the steps meet it
 * already built up, and keeps arriving until the last step ends. Its
 * messages count in no step; they draw from their own random stream, so a
 * step pattern sends the same messages with and without background.
 */
#include "sim.h"

/** Background message times (at the host rate) before the first step. */
#define SIM_BG_LEAD 20u

/** bg_arrival() - Event: the next background message; schedules the one after it. */
static void bg_arrival(void *obj, void *ptr, uint64_t now)
{
	struct sim_run *r = obj;
	int hosts = r->o->hosts;
	int src = (int)homa_rng_below(&r->bg_rng, (uint64_t)hosts);
	int dst = (int)homa_rng_below(&r->bg_rng, (uint64_t)hosts - 1);
	uint64_t idx = r->nmsgs;

	(void)ptr;
	(void)now;
	if (!sim_steps_more(r))
		return;
	if (dst >= src)
		dst++;
	if (sim_send_msg(r, r->o->bg_size, src, dst) != HOMA_ENOMEM) {
		r->msgs[idx].background = true;
		r->bg_sent++;
	}
	homa_sim_schedule(r->fab.net, homa_poisson_next(&r->bg_arrivals), bg_arrival, r, NULL);
}

/**
 * sim_bg_start() - Start the background of a step pattern if --background
 * is above 0, and set r->bg_lead_ns, the time the first step waits for it
 * (0 without background). Return: 0 or the error of the arrival process.
 */
int sim_bg_start(struct sim_run *r)
{
	const struct sim_opts *o = r->o;
	double cap = (double)r->fab.ls.cfg.host_mbps * 1e6 / 8.0; /* bytes/s per host */
	double wire = (double)sim_wire_bytes(&r->fab, o, o->bg_size);
	int rc;

	r->bg_lead_ns = 0;
	if (o->bg_load <= 0)
		return 0;
	homa_rng_seed(&r->bg_rng, o->seed ^ 0xb4c6u);
	rc = homa_poisson_init(&r->bg_arrivals, o->bg_load * cap * o->hosts / wire,
			       o->seed * 2 + 7, 0);
	if (rc)
		return rc;
	r->bg_lead_ns = SIM_BG_LEAD * sim_host_ser_ns(&r->fab, o, o->bg_size);
	return homa_sim_schedule(r->fab.net, homa_poisson_next(&r->bg_arrivals), bg_arrival, r,
				 NULL);
}
