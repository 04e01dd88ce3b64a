/* SPDX-License-Identifier: MIT */
/**
 * @file spin.c
 * Looking before sleeping (homa_open_opts.spin_us). An application
 * thread that holds the poller role while it waits (wait.c) looks at the
 * driver's sockets without sleeping for a while before its ppoll()
 * sleeps, as the Linux module's receive wait polls for poll_usecs: on a
 * virtual machine waking a sleeping thread costs tens of microseconds, a
 * look about one. The window of looks opens when a wait begins
 * (rt->spin_arm, set by wait.c) and again after each step that read
 * packets (homa_rt_spin_renew()); a step woken by a timer opens none, so
 * a thread that waits long for nothing looks once and then sleeps. The
 * standby and I/O threads never look.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "rt.h"

__thread uint64_t homa_rt_spin_looks;

/** With a driver that has pending(): every this many looks is a ppoll() (kicks, TCP, timers). */
#define SPIN_POLL_EVERY 8

/**
 * window_end() - The end of the calling poller's window of looks, from
 * @now when a wait just began (rt->spin_arm); 0 for the standby or I/O
 * thread and with spin_ns 0.
 */
static uint64_t window_end(struct homa_rt *rt, uint64_t now)
{
	if (!rt->spin_ns || rt->standby_active)
		return 0;
	if (rt->spin_arm) {
		rt->spin_arm = false;
		rt->spin_until = now + rt->spin_ns;
	}
	return rt->spin_until;
}

/**
 * look() - One look at @p's @n entries without sleeping; the @k-th look
 * of this window. With a driver that has pending() (no system call) only
 * every SPIN_POLL_EVERY-th look, and one that it says has packets, makes
 * the ppoll() that fills in the revents. Counted in homa_rt_spin_looks.
 * Return: as ppoll().
 */
static int look(struct homa_rt *rt, struct pollfd *p, nfds_t n, unsigned k)
{
	static const struct timespec zero = {0, 0};
	bool (*pending)(struct homa_driver *) = rt->drv->ops->pending;

	homa_rt_spin_looks++;
	if (pending && k % SPIN_POLL_EVERY && !pending(rt->drv))
		return 0;
	return ppoll(p, n, &zero, NULL);
}

/** homa_rt_spin() - See rt.h. */
int homa_rt_spin(struct homa_rt *rt, struct pollfd *p, nfds_t n, uint64_t *now,
		 uint64_t first)
{
	uint64_t end = window_end(rt, *now);

	if (first < end)
		end = first;
	for (unsigned k = 0; *now < end; k++) {
		int r = look(rt, p, n, k);

		if (r != 0)
			return r > 0 ? r : 0;
		*now = homa_rt_now();
		if (atomic_load(&rt->closing))
			break;
		if (*now < end)
			sched_yield();  /* a runnable thread on this CPU (the peer) goes first */
	}
	return 0;
}

/** homa_rt_spin_renew() - See rt.h. */
void homa_rt_spin_renew(struct homa_rt *rt, uint64_t after)
{
	if (rt->spin_ns && !rt->standby_active)
		rt->spin_until = after + rt->spin_ns;
}
