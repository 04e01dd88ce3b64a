/* SPDX-License-Identifier: MIT */
/**
 * @file gate.c
 * The strangers' budget of the UDP driver (gate.h).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "gate.h"

/** homa_gate_now() - See gate.h. */
uint64_t homa_gate_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** homa_gate_init() - See gate.h. */
int homa_gate_init(struct homa_gate *g, uint32_t budget, uint64_t cpu_ns)
{
	memset(g, 0, sizeof(*g));
	g->tfd = -1;
	if (!budget && !cpu_ns)
		return 0;
	g->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (g->tfd < 0)
		return HOMA_EIO;
	g->budget = budget;
	g->cpu_budget_ns = cpu_ns;
	g->start_ns = homa_gate_now();
	return 0;
}

/** homa_gate_free() - See gate.h. */
void homa_gate_free(struct homa_gate *g)
{
	if (g->tfd >= 0)
		close(g->tfd);
	g->tfd = -1;
	g->budget = 0;
	g->cpu_budget_ns = 0;
	g->armed = false;
}

/** homa_gate_due() - See gate.h. */
bool homa_gate_due(struct homa_gate *g, uint64_t now)
{
	uint64_t v;

	if (!homa_gate_on(g) || now - g->start_ns < HOMA_GATE_NS)
		return false;
	g->flood = g->ran_out && now - g->start_ns < HOMA_GATE_ACTIVE_NS;
	g->ran_out = false;
	g->start_ns = now;
	g->used = 0;
	g->cpu_used_ns = 0;
	if (!g->closed)
		return false;
	g->closed = false;
	if (!g->armed)
		return true;  /* the caller's waiter woke at homa_gate_end() itself */
	g->armed = false;
	/* mostly the timer woke the caller: drained, a one-shot timer is off */
	if (read(g->tfd, &v, sizeof(v)) < 0)
		timerfd_settime(g->tfd, 0, &(struct itimerspec){0}, NULL);
	return true;
}

/** homa_gate_arm() - See gate.h. */
void homa_gate_arm(struct homa_gate *g)
{
	struct itimerspec its = {0};
	uint64_t end = homa_gate_end(g);

	if (!g->closed || g->armed || g->tfd < 0)
		return;
	g->armed = true;
	its.it_value.tv_sec = (time_t)(end / 1000000000ull);
	its.it_value.tv_nsec = (long)(end % 1000000000ull);
	timerfd_settime(g->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/**
 * close_gate() - Close @g until its interval ends (homa_gate_end()); the
 * timer is armed by homa_gate_arm() only if the caller asks for it.
 * Return: true (the caller stops reading the port's queues).
 */
static bool close_gate(struct homa_gate *g)
{
	g->closed = true;
	return true;
}

/** homa_gate_charge() - See gate.h. */
bool homa_gate_charge(struct homa_gate *g, uint32_t n, bool more, uint64_t now)
{
	if (!homa_gate_active(g, now))
		return false;
	g->used += n;
	if (g->closed)
		return false;
	if (g->budget && g->used >= g->budget) {
		g->ran_out = true;
		return close_gate(g);
	}
	/* a flood: the queue is drained for now; the rest waits for the next interval */
	return g->flood && !more ? close_gate(g) : false;
}

/** homa_gate_spend() - See gate.h. */
bool homa_gate_spend(struct homa_gate *g, uint64_t ns, uint64_t now)
{
	if (!homa_gate_active(g, now))
		return false;
	g->cpu_used_ns += ns;
	if (!g->cpu_budget_ns || g->cpu_used_ns < g->cpu_budget_ns || g->closed)
		return false;
	g->ran_out = true;
	return close_gate(g);
}
