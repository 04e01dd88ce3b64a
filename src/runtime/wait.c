/* SPDX-License-Identifier: MIT */
/**
 * @file wait.c
 * Blocking: receivers waiting for a message and senders waiting for
 * buffer space. One of them at a time becomes the poller and drives I/O
 * itself; the others sleep, receivers on their waiter's futex word and
 * senders on a condition variable (on CLOCK_MONOTONIC). When the poller
 * leaves it wakes another waiter to take over. While no application
 * thread is there, the standby thread (standby.c; in threaded mode the
 * I/O thread) takes the role. An application poller of a socket with a
 * transport layer watches the TCP connections in the same wait
 * (homa_tp_poll_begin()); threaded sockets with transport TCP leave
 * Homa's I/O to the I/O thread: their waiters read only the TCP
 * connections (homa_tp_drive()).
 */
#include <stdint.h>

#include "rt.h"
#include "tp.h"

/** Longest single sleep of a sender waiting for space (a safety net). */
#define SPACE_NAP_NS 10000000ull

/**
 * timed_wait() - Wait on @cond (with rt->lock) until the absolute @until.
 */
static void timed_wait(struct homa_rt *rt, pthread_cond_t *cond, uint64_t until)
{
	struct timespec ts;

	homa_rt_wake_now(rt);
	if (until == UINT64_MAX) {
		pthread_cond_wait(cond, &rt->lock);
		return;
	}
	ts = homa_rt_timespec(until);
	pthread_cond_timedwait(cond, &rt->lock, &ts);
}

/** homa_rt_pass_poller() - See rt.h. */
void homa_rt_pass_poller(struct homa_rt *rt)
{
	if (rt->waiters)
		homa_rt_wake_waiter(rt, rt->waiters);
	else if (rt->space_waiters)
		pthread_cond_broadcast(&rt->space_cond);
}

/**
 * homa_rt_run_poller() - See rt.h. An application thread's turn counts as
 * its presence from start to end (the standby stays away meanwhile).
 */
void homa_rt_run_poller(struct homa_rt *rt, uint64_t until, bool app)
{
	uint64_t now = homa_rt_now();

	rt->poller_active = true;
	rt->standby_active = !app;
	if (app)
		rt->app_poll_ns = now;
	now = homa_rt_poll_step(rt, now, until);  /* its timers run in this hold */
	rt->spin_arm = false;  /* a turn that never looked (spin.c) leaves no window for later */
	if (app)
		rt->app_poll_ns = now;
	rt->poller_active = rt->standby_active = false;
	if (rt->role_waiters)
		pthread_cond_broadcast(&rt->role_cond);
}

/**
 * homa_rt_wait_item() - See rt.h. Its first turn as the poller opens a
 * window of looks before sleeping (rt->spin_arm, spin.c).
 */
int homa_rt_wait_item(struct homa_rt *rt, struct rt_waiter *w, uint64_t until)
{
	bool drives = homa_rt_app_drives(rt), looked = false;
	int err = 0;

	for (;;) {
		if (w->item || w->ready)
			break;
		if (rt->closing) {
			err = HOMA_ESHUTDOWN;
			break;
		}
		if (!w->fresh && homa_rt_now() >= until) {
			err = HOMA_ETIME;
			break;
		}
		w->fresh = false;
		if (drives && !rt->poller_active) {
			bool tcp = homa_tp_poll_begin(rt, w);

			w->polling = true;
			homa_rt_poll_self = w;
			rt->spin_arm |= !looked;  /* its first turn: look before sleeping (spin.c) */
			looked = true;
			homa_rt_run_poller(rt, until, true);
			homa_rt_poll_self = NULL;
			w->polling = false;
			if (tcp)
				homa_tp_poll_end(rt);
			continue;
		}
		if (drives)
			homa_rt_app_present(rt);
		if (homa_tp_drive(rt, w, until))
			continue; /* it read the TCP connections itself */
		atomic_store(&w->word, 0);
		homa_rt_unlock(rt);
		homa_rt_futex_wait(&w->word, until);
		homa_rt_lock(rt);
	}
	homa_rt_remove_waiter(rt, w);
	if (drives && !rt->poller_active) {
		homa_rt_pass_poller(rt);
		homa_rt_app_leaves(rt);
	}
	return err;
}

/** homa_rt_wait_space() - See rt.h. */
int homa_rt_wait_space(struct homa_rt *rt, uint64_t until)
{
	uint64_t now = homa_rt_now();

	if (rt->closing)
		return HOMA_ESHUTDOWN;
	if (now >= until)
		return HOMA_ETIME;
	rt->send_waits++;
	if (until - now > SPACE_NAP_NS)
		until = now + SPACE_NAP_NS;
	if (rt->mode == HOMA_MODE_POLLED && !rt->poller_active) {
		homa_rt_run_poller(rt, until, true);
		homa_rt_pass_poller(rt);
	} else {
		if (rt->mode == HOMA_MODE_POLLED)
			homa_rt_app_present(rt);
		else
			homa_rt_app_away(rt);
		rt->space_waiters++;
		timed_wait(rt, &rt->space_cond, until);
		rt->space_waiters--;
	}
	return rt->closing ? HOMA_ESHUTDOWN : 0;
}

/**
 * await_standby() - rt->lock held, after homa_rt_app_present() kicked the
 * standby thread: while it holds the poller role, wait (on role_cond)
 * until it hands the role back, which it does at the end of its current
 * poll step (the kick ends its wait). A polled caller that found the
 * standby polling used to return at once with nothing read, while the
 * packets that made homa_fd() readable waited for the standby: an event
 * loop on homa_fd() woke again at once, thousands of times, and kept
 * the standby from the CPU it needed. Returns at once when an
 * application thread holds the role (its caller waits within its own
 * timeout), or the socket closes. The standby naps while role_waiters
 * counts this thread (homa_rt_standby_loop()).
 */
static void await_standby(struct homa_rt *rt)
{
	while (rt->poller_active && rt->standby_active && !rt->closing) {
		homa_rt_app_present(rt);  /* again: a new step of the standby's */
		rt->role_waiters++;
		timed_wait(rt, &rt->role_cond, UINT64_MAX);
		rt->role_waiters--;
	}
}

/**
 * homa_rt_poll_locked() - See rt.h. The standby thread hands the role
 * over first when it holds it (await_standby()).
 */
bool homa_rt_poll_locked(struct homa_rt *rt, uint64_t until)
{
	if (rt->closing)
		return false;
	homa_rt_app_present(rt);
	await_standby(rt);
	if (rt->poller_active || rt->closing)
		return false;
	homa_rt_run_poller(rt, until, true);
	homa_rt_pass_poller(rt);
	return true;
}

/**
 * homa_rt_poll_turn() - See rt.h. The standby thread hands the role over
 * first when it holds it (await_standby()), whatever the timeout. Its
 * first turn opens a window of looks before sleeping (rt->spin_arm,
 * spin.c).
 */
void homa_rt_poll_turn(struct homa_rt *rt, uint64_t until)
{
	bool looked = false;

	while (!rt->closing) {
		homa_rt_app_present(rt);
		await_standby(rt);
		if (rt->closing)
			return;
		if (!rt->poller_active) {
			rt->spin_arm |= !looked;  /* its first turn: look before sleeping (spin.c) */
			looked = true;
			homa_rt_run_poller(rt, until, true);
			homa_rt_pass_poller(rt);
			if (rt->poll_input)
				return;
		}
		if (rt->nready > 0 || homa_rt_now() >= until)
			return;
		if (!rt->poller_active)
			continue;  /* woken with nothing read: poll again */
		rt->role_waiters++;
		timed_wait(rt, &rt->role_cond, until);
		rt->role_waiters--;
	}
}

/** Longest single sleep of homa_close_wait() between two looks at the replies. */
#define REPLY_NAP_NS 1000000ull

/** homa_rt_wait_replies() - See rt.h. */
int homa_rt_wait_replies(struct homa_rt *rt, uint64_t until)
{
	uint64_t now;

	while (homa_engine_replies_pending(rt->engine)) {
		now = homa_rt_now();
		if (now >= until)
			return HOMA_ETIME;
		if (until - now > REPLY_NAP_NS)
			now += REPLY_NAP_NS;
		else
			now = until;
		if (rt->mode == HOMA_MODE_POLLED && !rt->poller_active) {
			homa_rt_run_poller(rt, now, true);
			homa_rt_pass_poller(rt);
		} else {
			timed_wait(rt, &rt->space_cond, now);
		}
	}
	return 0;
}
