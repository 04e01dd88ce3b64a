/* SPDX-License-Identifier: MIT */
/** @file test_eventq.c Tests of sim/eventq.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/eventq.h"
#include "util/rng.h"

/** noop() - Handler that is never called by these tests. */
static void noop(void *obj, void *ptr, uint64_t now)
{
	(void)obj;
	(void)ptr;
	(void)now;
}

/** pop_until takes the earliest event only when it is due by then, from the ring or the heap. */
static void eventq_pop_until__leaves_later_events(void **state)
{
	struct homa_sim_eventq q;
	struct homa_sim_event ev;

	(void)state;
	homa_sim_eventq_init(&q);
	assert_int_equal(homa_sim_eventq_pop_until(&q, 100, &ev), 0);
	assert_int_equal(homa_sim_eventq_push(&q, 10, noop, NULL, (void *)1), 0);      /* ring */
	assert_int_equal(homa_sim_eventq_push(&q, 1000000, noop, NULL, (void *)2), 0); /* heap */
	assert_int_equal(homa_sim_eventq_pop_until(&q, 9, &ev), 0);
	assert_int_equal(homa_sim_eventq_pop_until(&q, 10, &ev), 1);
	assert_ptr_equal(ev.ptr, (void *)1);
	assert_int_equal(homa_sim_eventq_pop_until(&q, 999999, &ev), 0);
	assert_true(homa_sim_eventq_peek_time(&q) == 1000000);
	assert_int_equal(homa_sim_eventq_pop_until(&q, UINT64_MAX, &ev), 1);
	assert_ptr_equal(ev.ptr, (void *)2);
	assert_true(ev.time == 1000000);
	assert_int_equal(homa_sim_eventq_pop_until(&q, UINT64_MAX, &ev), 0);
	homa_sim_eventq_free(&q);
}

/** Random times come out sorted; equal times in insertion order. */
static void eventq_pop__time_then_seq_order(void **state)
{
	struct homa_sim_eventq q;
	struct homa_sim_event ev, prev = {0};
	struct homa_rng r;
	int i, n = 0;

	(void)state;
	homa_sim_eventq_init(&q);
	homa_rng_seed(&r, 3);
	for (i = 0; i < 5000; i++)
		assert_int_equal(homa_sim_eventq_push(&q, homa_rng_below(&r, 100),
						      noop, NULL, (void *)(intptr_t)i), 0);
	while (homa_sim_eventq_pop(&q, &ev)) {
		if (n) {
			assert_true(ev.time >= prev.time);
			if (ev.time == prev.time)
				assert_true((intptr_t)ev.ptr > (intptr_t)prev.ptr);
		}
		prev = ev;
		n++;
	}
	assert_int_equal(n, 5000);
	homa_sim_eventq_free(&q);
}

/** Interleaved pushes and pops always return the minimum. */
static void eventq_pop__interleaved(void **state)
{
	struct homa_sim_eventq q;
	struct homa_sim_event ev;
	struct homa_rng r;
	uint64_t floor = 0;
	int i;

	(void)state;
	homa_sim_eventq_init(&q);
	homa_rng_seed(&r, 5);
	for (i = 0; i < 20000; i++) {
		if (homa_rng_below(&r, 3) && q.len) {
			assert_int_equal(homa_sim_eventq_pop(&q, &ev), 1);
			assert_true(ev.time >= floor);
			floor = ev.time;
		} else {
			homa_sim_eventq_push(&q, floor + homa_rng_below(&r, 1000),
					     noop, NULL, NULL);
		}
	}
	homa_sim_eventq_free(&q);
}

/** An empty queue pops nothing and peeks UINT64_MAX. */
static void eventq_peek__empty(void **state)
{
	struct homa_sim_eventq q;
	struct homa_sim_event ev;

	(void)state;
	homa_sim_eventq_init(&q);
	assert_true(homa_sim_eventq_peek_time(&q) == UINT64_MAX);
	assert_int_equal(homa_sim_eventq_pop(&q, &ev), 0);
	homa_sim_eventq_push(&q, 77, noop, NULL, NULL);
	homa_sim_eventq_push(&q, 12, noop, NULL, NULL);
	assert_true(homa_sim_eventq_peek_time(&q) == 12);
	assert_int_equal(homa_sim_eventq_reserve(&q, 4096), 0);
	assert_true(homa_sim_eventq_peek_time(&q) == 12);
	homa_sim_eventq_free(&q);
}

/** A timer that moves earlier replaces its entry; ties go by the latest arming. */
static void eventq_arm__moves_in_place(void **state)
{
	struct homa_sim_eventq q;
	struct homa_sim_event ev;
	struct homa_sim_timer t = {0};

	(void)state;
	homa_sim_eventq_init(&q);
	homa_sim_eventq_push(&q, 100, noop, NULL, (void *)1);
	assert_int_equal(homa_sim_eventq_arm(&q, &t, 200, noop, NULL, (void *)2), 0);
	homa_sim_eventq_push(&q, 150, noop, NULL, (void *)3);
	assert_int_equal(homa_sim_eventq_arm(&q, &t, 100, noop, NULL, (void *)4), 0);
	homa_sim_eventq_push(&q, 100, noop, NULL, (void *)5);
	assert_int_equal(q.len, 4);
	assert_int_equal(homa_sim_eventq_pop(&q, &ev), 1);
	assert_true(ev.time == 100 && ev.ptr == (void *)1);
	assert_int_equal(homa_sim_eventq_pop(&q, &ev), 1);
	assert_true(ev.time == 100 && ev.ptr == (void *)4); /* armed after 1, before 5 */
	assert_int_equal(t.slot, 0);
	assert_int_equal(homa_sim_eventq_arm(&q, &t, 120, noop, NULL, (void *)6), 0);
	assert_int_equal(homa_sim_eventq_arm(&q, &t, 160, noop, NULL, (void *)7), 0);
	assert_int_equal(homa_sim_eventq_pop(&q, &ev), 1);
	assert_true(ev.time == 100 && ev.ptr == (void *)5);
	assert_int_equal(homa_sim_eventq_pop(&q, &ev), 1);
	assert_true(ev.time == 150 && ev.ptr == (void *)3);
	assert_int_equal(homa_sim_eventq_pop(&q, &ev), 1);
	assert_true(ev.time == 160 && ev.ptr == (void *)7);
	assert_int_equal(homa_sim_eventq_pop(&q, &ev), 0);
	homa_sim_eventq_free(&q);
}

/** Reference model entry for eventq_arm__random_against_model. */
struct model_ev {
	uint64_t time, seq;
	int live;
};

/**
 * Random pushes, timer arms, disarms and pops against a linear-scan model,
 * with times both inside the near ring's span and beyond it (the far
 * heap), timers moving between the two: every pop returns the model's
 * (time, seq) minimum and peek its time, dead ring entries included.
 */
static void eventq_arm__random_against_model(void **state)
{
	enum { TIMERS = 16, OPS = 20000 };
	static struct model_ev m[OPS + TIMERS];
	struct homa_sim_timer t[TIMERS] = {{0}};
	struct homa_sim_eventq q;
	struct homa_sim_event ev;
	struct homa_rng r;
	uint64_t seq = 0, now = 0;
	int i, k, n = TIMERS, best;

	(void)state;
	homa_sim_eventq_init(&q);
	homa_rng_seed(&r, 17);
	for (i = 0; i < OPS; i++) {
		uint64_t op = homa_rng_below(&r, 4), when = now + homa_rng_below(&r, 50);

		if (homa_rng_below(&r, 4) == 0) /* past the near ring: the far heap */
			when = now + homa_rng_below(&r, 3 * HOMA_SIM_EVQ_RING);

		k = (int)homa_rng_below(&r, TIMERS);
		if (op == 0) {
			m[n] = (struct model_ev){when, seq++, 1};
			homa_sim_eventq_push(&q, when, noop, NULL, (void *)(intptr_t)n);
			n++;
		} else if (op == 1) {
			m[k] = (struct model_ev){when, seq++, 1};
			homa_sim_eventq_arm(&q, &t[k], when, noop, NULL, (void *)(intptr_t)k);
		} else if (op == 2) {
			m[k].live = 0;
			homa_sim_eventq_disarm(&q, &t[k]);
			assert_int_equal(t[k].slot, 0);
		} else {
			best = -1;
			for (k = 0; k < n; k++)
				if (m[k].live && (best < 0 || m[k].time < m[best].time ||
						  (m[k].time == m[best].time && m[k].seq < m[best].seq)))
					best = k;
			if (best < 0) {
				assert_int_equal(homa_sim_eventq_pop(&q, &ev), 0);
				continue;
			}
			assert_int_equal(homa_sim_eventq_pop(&q, &ev), 1);
			assert_int_equal((intptr_t)ev.ptr, best);
			assert_true(ev.time == m[best].time && ev.seq == m[best].seq);
			m[best].live = 0;
			now = ev.time;
		}
		best = -1;
		for (k = 0; k < n; k++)
			if (m[k].live && (best < 0 || m[k].time < m[best].time))
				best = k;
		assert_true(homa_sim_eventq_peek_time(&q) == (best < 0 ? UINT64_MAX : m[best].time));
	}
	homa_sim_eventq_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(eventq_pop__time_then_seq_order),
		cmocka_unit_test(eventq_pop_until__leaves_later_events),
		cmocka_unit_test(eventq_pop__interleaved),
		cmocka_unit_test(eventq_peek__empty),
		cmocka_unit_test(eventq_arm__moves_in_place),
		cmocka_unit_test(eventq_arm__random_against_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
