/* SPDX-License-Identifier: MIT */
/**
 * @file standby.c
 * Polled mode's standby thread. Packets move in polled mode while an
 * application thread is inside homa_poll(), a blocking homa_recv() or a
 * send that waits; when the application is away (busy elsewhere,
 * descheduled), nobody would answer the peers' RESENDs and grants, and
 * the peers would end RPCs that are in fact alive. The standby thread
 * sleeps while application threads drive I/O and, once none has for
 * rt->standby_ns, drives it in their place until one comes back (which
 * interrupts it at once: homa_rt_app_present()). It is woken only by
 * its own timeout and by homa_close(), never per message: a wake-up per
 * delivered message cost two context switches and about four system calls
 * per RPC for nothing. Its name is "homa-standby".
 *
 * Threaded mode's I/O thread runs the same loop (io.c): an application
 * thread blocked in homa_recv() drives I/O itself, so its message needs
 * no wake-up from the I/O thread, and the I/O thread steps in one tick
 * after the application left, or at once when the engine has work due.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>

#include "rt.h"
#include "tp.h"

/** homa_rt_standby_after() - See rt.h. */
uint64_t homa_rt_standby_after(const struct homa_settings *st, int mode)
{
	if (mode == HOMA_MODE_THREADED)
		return st->tick_ns;
	return (uint64_t)st->resend_ticks * st->tick_ns;
}

/** homa_rt_app_drives() - See rt.h. */
bool homa_rt_app_drives(const struct homa_rt *rt)
{
	return rt->mode == HOMA_MODE_POLLED || !rt->tp || homa_tp_polls_homa(rt->tp);
}

/** homa_rt_app_leaves() - See rt.h. */
void homa_rt_app_leaves(struct homa_rt *rt)
{
	if (rt->mode != HOMA_MODE_THREADED || rt->poller_active || rt->waiters ||
	    rt->space_waiters)
		return;
	if (homa_engine_wake_by(rt->engine) <= homa_rt_now())
		pthread_cond_signal(&rt->standby_cond);
}

/** homa_rt_app_away() - See rt.h. */
void homa_rt_app_away(struct homa_rt *rt)
{
	rt->app_poll_ns = 0;
	if (!rt->poller_active && !rt->standby_active)
		pthread_cond_signal(&rt->standby_cond);
}

/** homa_rt_app_present() - See rt.h. */
void homa_rt_app_present(struct homa_rt *rt)
{
	rt->app_poll_ns = homa_rt_now();
	if (rt->standby_active)
		homa_rt_kick(rt);
}

/**
 * nap() - rt->lock held: sleep on standby_cond until the absolute @until
 * (or a wake-up at close).
 */
static void nap(struct homa_rt *rt, uint64_t until)
{
	struct timespec ts = homa_rt_timespec(until);

	homa_rt_wake_now(rt);
	pthread_cond_timedwait(&rt->standby_cond, &rt->lock, &ts);
}

/**
 * homa_rt_standby_loop() - See rt.h. Polled mode polls in slices of
 * standby_ns; threaded mode's I/O thread polls until a deadline, a packet
 * or an application thread's kick (homa_rt_app_present()). While
 * application threads wait for the role (rt->role_waiters: homa_poll(),
 * or a zero-timeout call that interrupted it), it naps, though its
 * standby_ns may have passed since they kicked it: taking the role again
 * at once would keep them waiting for good.
 */
void homa_rt_standby_loop(struct homa_rt *rt)
{
	homa_rt_lock(rt);
	while (!rt->closing) {
		uint64_t now = homa_rt_now(), due = rt->app_poll_ns + rt->standby_ns;

		uint64_t engine = rt->mode == HOMA_MODE_THREADED ?
			homa_engine_wake_by(rt->engine) : UINT64_MAX;

		if (rt->poller_active || rt->role_waiters) {
			/* an application thread has the role or is taking it over */
			nap(rt, now + rt->standby_ns);
		} else if (now < due && now < engine) {
			nap(rt, engine < due ? engine : due);
		} else {
			homa_rt_run_poller(rt, rt->mode == HOMA_MODE_THREADED ? UINT64_MAX
					   : now + rt->standby_ns, false);
			homa_rt_pass_poller(rt);
		}
	}
	homa_rt_unlock(rt);
}

/** standby_main() - Polled mode's standby thread: homa_rt_standby_loop(). */
static void *standby_main(void *arg)
{
	struct homa_rt *rt = arg;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	prctl(PR_SET_NAME, "homa-standby", 0, 0, 0);
	homa_rt_standby_loop(rt);
	return NULL;
}

/** homa_rt_standby_start() - See rt.h. */
int homa_rt_standby_start(struct homa_rt *rt)
{
	rt->app_poll_ns = homa_rt_now();
	return homa_rt_spawn(rt, standby_main);
}
