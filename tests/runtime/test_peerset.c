/* SPDX-License-Identifier: MIT */
/**
 * @file test_peerset.c
 * Tests of the set of peers (src/io/peerset.c): membership by address and
 * port, the cap, and deletion keeping every other member findable when
 * probes collide and wrap around the table's end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "peerset.h"

/** v4() - The IPv4-mapped address 10.0.@hi.@lo. */
static homa_addr v4(uint8_t hi, uint8_t lo)
{
	return homa_addr_ipv4(0x0a000000u | (uint32_t)hi << 8 | lo);
}

/**
 * homa_peerset_add__by_address_and_port() - A peer is its address and
 * port together; adding twice keeps one; a set of cap refuses one more,
 * and takes it once a member leaves.
 */
static void homa_peerset_add__by_address_and_port(void **state)
{
	struct homa_peerset s;
	homa_addr a = v4(0, 1), b = v4(0, 2);

	(void)state;
	assert_int_equal(homa_peerset_init(&s, 3), 0);
	assert_false(homa_peerset_has(&s, &a, 4000));
	assert_true(homa_peerset_add(&s, &a, 4000));
	assert_true(homa_peerset_add(&s, &a, 4000));
	assert_int_equal(s.n, 1);
	assert_true(homa_peerset_has(&s, &a, 4000));
	assert_false(homa_peerset_has(&s, &a, 4001));
	assert_false(homa_peerset_has(&s, &b, 4000));
	assert_true(homa_peerset_add(&s, &a, 4001));
	assert_true(homa_peerset_add(&s, &b, 4000));
	assert_false(homa_peerset_add(&s, &b, 4001));  /* full */
	assert_false(homa_peerset_has(&s, &b, 4001));
	homa_peerset_del(&s, &a, 4001);
	homa_peerset_del(&s, &a, 4001);  /* absent: nothing */
	assert_int_equal(s.n, 2);
	assert_true(homa_peerset_add(&s, &b, 4001));
	assert_true(homa_peerset_has(&s, &a, 4000));
	assert_true(homa_peerset_has(&s, &b, 4000));
	assert_true(homa_peerset_has(&s, &b, 4001));
	homa_peerset_free(&s);
	assert_false(homa_peerset_has(&s, &a, 4000));
}

/** Peers in the churn test: the table (1024 entries) is half full, long probe runs. */
#define CHURN 512

/**
 * homa_peerset_del__keeps_others_findable() - A full set of CHURN peers;
 * members leave in a scattered order, others join, and after every step
 * exactly the members are found (the backward shift of a deletion never
 * strands a member behind a free entry, also across the table's end).
 */
static void homa_peerset_del__keeps_others_findable(void **state)
{
	static bool in[2 * CHURN];
	struct homa_peerset s;
	uint32_t x = 12345;

	(void)state;
	memset(in, 0, sizeof(in));
	assert_int_equal(homa_peerset_init(&s, CHURN), 0);
	for (int i = 0; i < CHURN; i++) {
		homa_addr a = v4((uint8_t)(i >> 8), (uint8_t)i);

		assert_true(homa_peerset_add(&s, &a, 7));
		in[i] = true;
	}
	for (int step = 0; step < 4 * CHURN; step++) {
		int i;

		x = x * 1103515245u + 12345u;
		i = (int)((x >> 8) % (2 * CHURN));
		homa_addr a = v4((uint8_t)(i >> 8), (uint8_t)i);

		if (in[i]) {
			homa_peerset_del(&s, &a, 7);
			in[i] = false;
		} else if (homa_peerset_add(&s, &a, 7)) {
			in[i] = true;
		} else {
			assert_int_equal(s.n, CHURN);
		}
		if (step % 64 == 0 || step == 4 * CHURN - 1)
			for (int j = 0; j < 2 * CHURN; j++) {
				homa_addr b = v4((uint8_t)(j >> 8), (uint8_t)j);

				assert_int_equal(homa_peerset_has(&s, &b, 7), in[j]);
			}
	}
	homa_peerset_free(&s);
}

/** homa_peerset_init__zero_holds_none() - A set of cap 0 takes nobody. */
static void homa_peerset_init__zero_holds_none(void **state)
{
	struct homa_peerset s;
	homa_addr a = v4(0, 1);

	(void)state;
	assert_int_equal(homa_peerset_init(&s, 0), 0);
	assert_false(homa_peerset_add(&s, &a, 1));
	assert_false(homa_peerset_has(&s, &a, 1));
	homa_peerset_del(&s, &a, 1);
	homa_peerset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_peerset_add__by_address_and_port),
		cmocka_unit_test(homa_peerset_del__keeps_others_findable),
		cmocka_unit_test(homa_peerset_init__zero_holds_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
