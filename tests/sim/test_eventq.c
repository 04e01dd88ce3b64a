/* SPDX-License-Identifier: MIT */
/** @file test_eventq.c Tests of sim/eventq.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/eventq.h"
#include "sim/rng.h"

/** noop() - Handler that is never called by these tests. */
static void noop(void *obj, void *ptr, uint64_t now)
{
	(void)obj;
	(void)ptr;
	(void)now;
}

/** Random times come out sorted; equal times in insertion order. */
static void eventq_pop__time_then_seq_order(void **state)
{
	struct homa_sim_eventq q;
	struct homa_sim_event ev, prev = {0};
	struct homa_sim_rng r;
	int i, n = 0;

	(void)state;
	homa_sim_eventq_init(&q);
	homa_sim_rng_seed(&r, 3);
	for (i = 0; i < 5000; i++)
		assert_int_equal(homa_sim_eventq_push(&q, homa_sim_rng_below(&r, 100),
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
	struct homa_sim_rng r;
	uint64_t floor = 0;
	int i;

	(void)state;
	homa_sim_eventq_init(&q);
	homa_sim_rng_seed(&r, 5);
	for (i = 0; i < 20000; i++) {
		if (homa_sim_rng_below(&r, 3) && q.len) {
			assert_int_equal(homa_sim_eventq_pop(&q, &ev), 1);
			assert_true(ev.time >= floor);
			floor = ev.time;
		} else {
			homa_sim_eventq_push(&q, floor + homa_sim_rng_below(&r, 1000),
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(eventq_pop__time_then_seq_order),
		cmocka_unit_test(eventq_pop__interleaved),
		cmocka_unit_test(eventq_peek__empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
