/* SPDX-License-Identifier: MIT */
/**
 * @file test_rx_order.c
 * The order in which the runtime hands a received batch to the engine
 * (homa_rt_rx_order() in src/runtime/io.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rt.h"

/** rx_order__highest_priority_first_stable() - Priorities 0 7 3 7 0 give 1 3 2 0 4. */
static void rx_order__highest_priority_first_stable(void **state)
{
	struct homa_io_rx rx[5] = {{.priority = 0}, {.priority = 7}, {.priority = 3},
				   {.priority = 7}, {.priority = 0}};
	uint32_t order[5];
	const uint32_t want[5] = {1, 3, 2, 0, 4};

	(void)state;
	homa_rt_rx_order(rx, 5, order);
	for (int i = 0; i < 5; i++)
		assert_int_equal(order[i], want[i]);
}

/**
 * Most packets one receive call can return: the largest batch times the
 * UDP_GRO segments per buffer (the drivers' max_rx; far above the 1024 an
 * older order array held on the stack).
 */
#define MOST (1024 * 64)

/** rx_order__one_priority_keeps_arrival_order() - Equal priorities are not reordered, even in the largest batch. */
static void rx_order__one_priority_keeps_arrival_order(void **state)
{
	static struct homa_io_rx rx[MOST];
	static uint32_t order[MOST];

	(void)state;
	homa_rt_rx_order(rx, MOST, order);
	for (int i = 0; i < MOST; i++)
		assert_int_equal(order[i], i);
}

/**
 * rx_order__largest_batch_mixed() - In the largest batch with priorities
 * cycling 0..7, every index appears once, priorities never rise along the
 * order, and arrival order holds within a priority.
 */
static void rx_order__largest_batch_mixed(void **state)
{
	static struct homa_io_rx rx[MOST];
	static uint32_t order[MOST];

	(void)state;
	for (int i = 0; i < MOST; i++)
		rx[i].priority = (uint8_t)((i * 5) % 8);
	homa_rt_rx_order(rx, MOST, order);
	for (int k = 1; k < MOST; k++) {
		const struct homa_io_rx *a = &rx[order[k - 1]], *b = &rx[order[k]];

		assert_true(a->priority >= b->priority);
		if (a->priority == b->priority)
			assert_true(order[k - 1] < order[k]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rx_order__highest_priority_first_stable),
		cmocka_unit_test(rx_order__one_priority_keeps_arrival_order),
		cmocka_unit_test(rx_order__largest_batch_mixed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
