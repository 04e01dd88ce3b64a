/* SPDX-License-Identifier: MIT */
/**
 * @file tp_drive.c
 * The reader role (tp.h): an application thread blocked in homa_recv()
 * reads the TCP connections itself, so the message it waits for needs
 * no hand-off from the transport thread (a wake-up and two context
 * switches per message). With transport AUTO that thread is also Homa's
 * poller and watches both in one wait (homa_tp_poll_begin()). The
 * transport thread reads only while no application thread does.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "tp.h"

/** Events taken per epoll_wait() by a reader. */
#define TP_EVENTS 32
/** First park check of the transport thread (ms); it doubles while an application thread reads. */
#define TP_PARK_MS 1
/** ... up to this (ms): how late the thread reads after application threads stop. */
#define TP_PARK_MAX_MS 8

/**
 * tp_self - The waiter whose thread is handling events as the reader
 * (a delivery to it needs no wake-up), or NULL.
 */
static __thread struct rt_waiter *tp_self;

/** rearm() - Let the transport thread's one-shot entry for rx_epfd fire again. */
static void rearm(struct homa_tp *tp)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.ptr = &tp->rx_epfd};

	epoll_ctl(tp->epfd, EPOLL_CTL_MOD, tp->rx_epfd, &ev);
}

/** tp_thread_read() - See tp.h. */
void tp_thread_read(struct homa_tp *tp)
{
	struct epoll_event evs[TP_EVENTS];
	int n;

	pthread_mutex_lock(&tp->lock);
	if (tp->reading) {
		tp->parked = true; /* the application reads: stay out of its way */
		pthread_mutex_unlock(&tp->lock);
		return;
	}
	tp->reading = true;
	pthread_mutex_unlock(&tp->lock);
	do {
		n = epoll_wait(tp->rx_epfd, evs, TP_EVENTS, 0);
		tp_rx_handle(tp, evs, n);
	} while (n == TP_EVENTS);
	pthread_mutex_lock(&tp->lock);
	tp->reading = false;
	pthread_mutex_unlock(&tp->lock);
	rearm(tp);
}

/** tp_thread_unpark() - See tp.h. */
int tp_thread_unpark(struct homa_tp *tp, int park_ms)
{
	bool parked;

	pthread_mutex_lock(&tp->lock);
	if (tp->parked && !tp->app_reading)
		tp->parked = false;
	parked = tp->parked;
	pthread_mutex_unlock(&tp->lock);
	if (!parked) {
		if (park_ms)
			rearm(tp);
		return 0;
	}
	if (!park_ms)
		return TP_PARK_MS;
	return park_ms * 2 > TP_PARK_MAX_MS ? TP_PARK_MAX_MS : park_ms * 2;
}

/**
 * take_role() - Take the reader role for an application thread.
 * Return: whether it was free.
 */
static bool take_role(struct homa_tp *tp)
{
	bool free_role;

	pthread_mutex_lock(&tp->lock);
	free_role = !tp->reading;
	if (free_role)
		tp->reading = tp->app_reading = true;
	pthread_mutex_unlock(&tp->lock);
	return free_role;
}

/** drop_role() - An application thread gives the reader role back. */
static void drop_role(struct homa_tp *tp)
{
	pthread_mutex_lock(&tp->lock);
	tp->reading = tp->app_reading = false;
	pthread_mutex_unlock(&tp->lock);
}

/** wait_ms() - epoll_wait()'s timeout for the absolute time @until (rounded up). */
static int wait_ms(uint64_t until)
{
	uint64_t now = homa_rt_now(), ms;

	if (until == UINT64_MAX)
		return -1;
	if (until <= now)
		return 0;
	ms = (until - now + 999999) / 1000000;
	return ms > 60000 ? 60000 : (int)ms;
}

/**
 * to_front() - rt->lock held: move @w to the head of the waiter list, so
 * that a message any waiter accepts goes to the reader, whose thread is
 * awake, rather than to a sleeping one.
 */
static void to_front(struct homa_rt *rt, struct rt_waiter *w)
{
	if (rt->waiters == w)
		return;
	for (struct rt_waiter **p = &rt->waiters; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			w->next = rt->waiters;
			rt->waiters = w;
			return;
		}
	}
}

/**
 * pass_role() - rt->lock held, @w done waiting: wake another waiter (it
 * sleeps and would otherwise wait for the transport thread's next tick)
 * so that it reads in turn.
 */
static void pass_role(struct homa_rt *rt, struct rt_waiter *w)
{
	for (struct rt_waiter *o = rt->waiters; o; o = o->next) {
		if (o != w) {
			homa_rt_wake_waiter(rt, o);
			return;
		}
	}
}

/** homa_tp_drive() - See tp.h. */
bool homa_tp_drive(struct homa_rt *rt, struct rt_waiter *w, uint64_t until)
{
	struct homa_tp *tp = rt->tp;
	struct epoll_event evs[TP_EVENTS];
	int n;

	if (!tp || rt->ready_exported || !take_role(tp))
		return false;
	to_front(rt, w);
	w->tp_reader = true;
	homa_rt_unlock(rt);
	n = epoll_wait(tp->rx_epfd, evs, TP_EVENTS, wait_ms(until));
	tp_self = w;
	tp_rx_handle(tp, evs, n > 0 ? n : 0);
	tp_self = NULL;
	drop_role(tp);
	homa_rt_lock(rt);
	w->tp_reader = false;
	if (w->item || w->ready || rt->closing || homa_rt_now() >= until)
		pass_role(rt, w);
	return true;
}

/** homa_tp_polls_homa() - See tp.h. */
bool homa_tp_polls_homa(const struct homa_tp *tp)
{
	return tp->transport == HOMA_TRANSPORT_AUTO;
}

/** homa_tp_poll_begin() - See tp.h. */
bool homa_tp_poll_begin(struct homa_rt *rt, struct rt_waiter *w)
{
	if (!rt->tp || rt->ready_exported || !take_role(rt->tp))
		return false;
	to_front(rt, w);
	rt->poll_tp_fd = rt->tp->rx_epfd;
	return true;
}

/** homa_tp_poll_read() - See tp.h. */
void homa_tp_poll_read(struct homa_rt *rt)
{
	struct epoll_event evs[TP_EVENTS];
	int n;

	do {
		n = epoll_wait(rt->tp->rx_epfd, evs, TP_EVENTS, 0);
		tp_rx_handle(rt->tp, evs, n > 0 ? n : 0);
	} while (n == TP_EVENTS);
}

/** homa_tp_poll_end() - See tp.h. */
void homa_tp_poll_end(struct homa_rt *rt)
{
	rt->poll_tp_fd = -1;
	drop_role(rt->tp);
}

/** homa_tp_wake_reader() - See tp.h. */
void homa_tp_wake_reader(struct homa_rt *rt, struct rt_waiter *w)
{
	uint64_t one = 1;

	if (tp_self == w)
		return; /* its own thread delivered it: it is awake */
	if (write(rt->tp->kick_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write fails only on overflow: it is readable then */
	}
}
