/* SPDX-License-Identifier: MIT */
/** @file test_pkt.c Tests of sim/pkt.c (the packet pool). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "sim/pkt.h"

/** Returned buffers are reused; counters follow; slabs grow on demand. */
static void pool_get__reuses_and_grows(void **state)
{
	struct homa_sim_pool p;
	struct homa_sim_pkt *a, *b, *many[600];
	int i;

	(void)state;
	assert_int_equal(homa_sim_pool_init(&p, 0), HOMA_EINVAL);
	assert_int_equal(homa_sim_pool_init(&p, 1500), 0);
	a = homa_sim_pool_get(&p);
	assert_non_null(a);
	memset(a->data, 0xab, 1500);
	a->uid = 5;
	homa_sim_pool_put(&p, a);
	assert_int_equal(p.in_use, 0);
	b = homa_sim_pool_get(&p);
	assert_ptr_equal(a, b);
	assert_true(b->uid == 0);
	homa_sim_pool_put(&p, b);
	for (i = 0; i < 600; i++) {
		many[i] = homa_sim_pool_get(&p);
		assert_non_null(many[i]);
		memset(many[i]->data, i & 0xff, 1500);
	}
	assert_int_equal(p.in_use, 600);
	assert_int_equal(p.allocated, 768);
	for (i = 0; i < 600; i++) {
		assert_int_equal(many[i]->data[1499], i & 0xff);
		homa_sim_pool_put(&p, many[i]);
	}
	assert_int_equal(p.in_use, 0);
	homa_sim_pool_put(&p, NULL);
	homa_sim_pool_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pool_get__reuses_and_grows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
