/* SPDX-License-Identifier: MIT */
/* Background bulk traffic from a collective device's own transport (coll_bg.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

#include "coll_bg.h"
#include "homa/errors.h"
#include "util/poisson.h"

/** Longest sleep between checks of the stop flag, ns. */
#define COLL_BG_POLL_NS 20000000u

/** bg_sleep() - Sleep until @t_ns or at most COLL_BG_POLL_NS. Return: true at @t_ns. */
static bool bg_sleep(uint64_t t_ns)
{
	uint64_t now = bench_now_ns();
	uint64_t until = t_ns - now > COLL_BG_POLL_NS ? now + COLL_BG_POLL_NS : t_ns;
	struct timespec ts = { (time_t)(until / 1000000000u), (long)(until % 1000000000u) };

	if (t_ns <= now)
		return true;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	return until == t_ns;
}

/** bg_main() - Thread body: one message per arrival until stopped. */
static void *bg_main(void *arg)
{
	struct coll_bg *b = arg;
	struct homa_poisson p;
	uint64_t n = 0;

	if (homa_poisson_init(&p, homa_poisson_rate_for_load(b->gbps, b->bytes), b->seed,
			      bench_now_ns()))
		return NULL;
	while (!atomic_load(&b->stop) && !bench_stop) {
		if (!bg_sleep(homa_poisson_peek(&p)))
			continue;
		homa_poisson_next(&p);
		if (b->ops->start(b->ctx, b->peer, b->bytes, COLL_BG_RESP, COLL_BG_TAG | n++))
			atomic_fetch_add(&b->refused, 1);
		else
			atomic_fetch_add(&b->started, 1);
	}
	return NULL;
}

int coll_bg_start(struct coll_bg *b)
{
	b->running = false;
	atomic_store(&b->stop, false);
	atomic_store(&b->started, 0);
	atomic_store(&b->refused, 0);
	if (!(b->gbps > 0) || b->bytes < BENCH_MIN_MSG)
		return HOMA_EINVAL;
	if (pthread_create(&b->th, NULL, bg_main, b))
		return HOMA_ENOMEM;
	b->running = true;
	return 0;
}

void coll_bg_stop(struct coll_bg *b)
{
	if (!b->running)
		return;
	atomic_store(&b->stop, true);
	pthread_join(b->th, NULL);
	b->running = false;
}
