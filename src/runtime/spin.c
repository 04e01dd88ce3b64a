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
 *
 * Looks pay only on a CPU nobody else needs. The sched_yield() between
 * looks tells: it returns at once when nothing else is runnable on this
 * CPU, and only after another thread ran when something is. A yield that
 * took longer than SPIN_CROWDED_NS ends the window (the thread sleeps,
 * so the wake-up, not the end of the other thread's turn, brings it
 * back). A thread whose windows end so SPIN_CROWDED_WINDOWS times in a
 * row (no window in between saw a quick yield) opens none for
 * SPIN_BACKOFF_NS (rt->spin_quiet_until): beside bulk
 * transfers or other RPCs on its CPU it sleeps at once, as with spin_us
 * 0, and tries again a few milliseconds later. A timer thread waking now
 * and then ends one window, not the looks.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "rt.h"

__thread uint64_t homa_rt_spin_looks;
__thread uint64_t homa_rt_spin_crowded;

/** A sched_yield() between looks that lasted longer: another thread ran on this CPU. */
#define SPIN_CROWDED_NS 5000ull
/** Windows in a row ended by a crowded yield after which none opens for a while. */
#define SPIN_CROWDED_WINDOWS 3
/** ... for this long. */
#define SPIN_BACKOFF_NS 5000000ull

/** With a driver that has pending(): every this many looks is a ppoll() (kicks, TCP, timers). */
#define SPIN_POLL_EVERY 8

/**
 * window_end() - The end of the calling poller's window of looks, from
 * @now when a wait just began (rt->spin_arm); 0 for the standby or I/O
 * thread, with spin_ns 0 and while backing off from a crowded CPU.
 */
static uint64_t window_end(struct homa_rt *rt, uint64_t now)
{
	if (!rt->spin_ns || rt->standby_active || now < rt->spin_quiet_until)
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

/**
 * yield_crowded() - Let a runnable thread on this CPU go first
 * (sched_yield()); *@now is read again after. Return: whether one ran
 * (the yield lasted over SPIN_CROWDED_NS), which ends the window
 * (rt->spin_until) and is counted in homa_rt_spin_crowded; the
 * SPIN_CROWDED_WINDOWS-th such window in a row starts the backoff
 * (rt->spin_quiet_until).
 */
static bool yield_crowded(struct homa_rt *rt, uint64_t *now)
{
	uint64_t before = *now;

	sched_yield();
	*now = homa_rt_now();
	if (*now - before <= SPIN_CROWDED_NS)
		return false;
	homa_rt_spin_crowded++;
	rt->spin_until = *now;
	if (++rt->spin_crowds >= SPIN_CROWDED_WINDOWS) {
		rt->spin_crowds = 0;
		rt->spin_quiet_until = *now + SPIN_BACKOFF_NS;
	}
	return true;
}

/** homa_rt_spin() - See rt.h. */
int homa_rt_spin(struct homa_rt *rt, struct pollfd *p, nfds_t n, uint64_t *now,
		 uint64_t first)
{
	uint64_t end = window_end(rt, *now);
	unsigned k;

	if (first < end)
		end = first;
	for (k = 0; *now < end; k++) {
		int r = look(rt, p, n, k);

		if (r != 0) {
			if (k)  /* after a quick yield: the CPU is free again */
				rt->spin_crowds = 0;
			return r > 0 ? r : 0;
		}
		*now = homa_rt_now();
		if (atomic_load(&rt->closing))
			return 0;
		if (*now < end && yield_crowded(rt, now))
			return 0;
	}
	if (k > 1)  /* the window ran out after quick yields */
		rt->spin_crowds = 0;
	return 0;
}

/** homa_rt_spin_renew() - See rt.h. */
void homa_rt_spin_renew(struct homa_rt *rt, uint64_t after)
{
	if (rt->spin_ns && !rt->standby_active)
		rt->spin_until = after + rt->spin_ns;
}
