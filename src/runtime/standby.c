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
 */
#define _GNU_SOURCE
#include <sys/prctl.h>

#include "rt.h"

/** homa_rt_standby_after() - See rt.h. */
uint64_t homa_rt_standby_after(const struct homa_settings *st)
{
	return (uint64_t)st->resend_ticks * st->tick_ns;
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
 * standby_main() - The standby loop: wait for the application to be away
 * for standby_ns, then poll in slices of standby_ns until it is back.
 * Ends when the socket closes.
 */
static void *standby_main(void *arg)
{
	struct homa_rt *rt = arg;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	prctl(PR_SET_NAME, "homa-standby", 0, 0, 0);
	homa_rt_lock(rt);
	while (!rt->closing) {
		uint64_t now = homa_rt_now(), due = rt->app_poll_ns + rt->standby_ns;

		if (rt->poller_active) {
			nap(rt, now + rt->standby_ns);
		} else if (now < due) {
			nap(rt, due);
		} else {
			homa_rt_run_poller(rt, now + rt->standby_ns, false);
			homa_rt_pass_poller(rt);
		}
	}
	homa_rt_unlock(rt);
	return NULL;
}

/** homa_rt_standby_start() - See rt.h. */
int homa_rt_standby_start(struct homa_rt *rt)
{
	rt->app_poll_ns = homa_rt_now();
	return homa_rt_spawn(rt, standby_main);
}
