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
	uint16_t order[5];
	const uint16_t want[5] = {1, 3, 2, 0, 4};

	(void)state;
	homa_rt_rx_order(rx, 5, order);
	for (int i = 0; i < 5; i++)
		assert_int_equal(order[i], want[i]);
}

/** rx_order__one_priority_keeps_arrival_order() - Equal priorities are not reordered. */
static void rx_order__one_priority_keeps_arrival_order(void **state)
{
	struct homa_io_rx rx[HOMA_RT_MAX_BATCH] = {{0}};
	static uint16_t order[HOMA_RT_MAX_BATCH];

	(void)state;
	homa_rt_rx_order(rx, HOMA_RT_MAX_BATCH, order);
	for (int i = 0; i < HOMA_RT_MAX_BATCH; i++)
		assert_int_equal(order[i], i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rx_order__highest_priority_first_stable),
		cmocka_unit_test(rx_order__one_priority_keeps_arrival_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
