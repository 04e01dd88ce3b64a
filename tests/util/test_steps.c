/* SPDX-License-Identifier: MIT */
/* Tests for util/steps.c: the step accounting of collective patterns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "util/steps.h"

/** A step ends with its last message even when the barrier reads earlier. */
static void homa_step_end__not_before_last_message(void **state)
{
	struct homa_step_dev d[3] = { { 100, 500 }, { 100, 900 }, { 100, 700 } };

	assert_int_equal(homa_step_end(800, d, 3), 900);
	assert_int_equal(homa_step_end(1000, d, 3), 1000);
}

/**
 * Two steps of two devices: the second step's barrier (2000 ns) comes
 * before device 1's last message (2600 ns), so that step lasts 1600 ns,
 * not 1000; the idle fraction counts each device from its own compute end.
 */
static void homa_step_stats__times_and_idle(void **state)
{
	uint64_t bound[3] = { 0, 1000, 2000 };
	struct homa_step_dev d[4] = {
		{ 400, 900 }, { 600, 1000 },   /* step 0: ends at 1000 */
		{ 1400, 1800 }, { 1500, 2600 }, /* step 1: ends at 2600 */
	};
	struct homa_step_stats st;

	assert_int_equal(homa_step_stats(bound, d, 2, 2, &st), 0);
	assert_int_equal(st.steps, 2);
	assert_true(st.max_us > 1.599 && st.max_us < 1.601);
	assert_true(st.p99_us > 1.599 && st.p99_us < 1.601);
	assert_true(st.p50_us > 0.999 && st.p50_us < 1.001);
	/* comm: 600 + 400 + 1200 + 1100 = 3300 ns; compute 400 + 600 + 400 + 500 = 1900 */
	assert_true(st.comm_us_per_step > 0.824 && st.comm_us_per_step < 0.826);
	assert_true(st.idle_fraction > 3300.0 / 5200 - 1e-9 && st.idle_fraction < 3300.0 / 5200 + 1e-9);
}

/** A compute end outside its step is clamped: no negative time. */
static void homa_step_stats__clamps_compute_end(void **state)
{
	uint64_t bound[2] = { 1000, 2000 };
	struct homa_step_dev d[2] = { { 5000, 1500 }, { 10, 1500 } };
	struct homa_step_stats st;

	assert_int_equal(homa_step_stats(bound, d, 1, 2, &st), 0);
	/* device 0 computed the whole step, device 1 none of it */
	assert_true(st.idle_fraction > 0.499 && st.idle_fraction < 0.501);
}

/** Bad input is refused with HOMA_EINVAL. */
static void homa_step_stats__rejects_bad_input(void **state)
{
	uint64_t bound[2] = { 2000, 1000 };
	struct homa_step_dev d[1] = { { 0, 0 } };
	struct homa_step_stats st;

	assert_int_equal(homa_step_stats(bound, d, 1, 1, &st), HOMA_EINVAL);
	assert_int_equal(homa_step_stats(NULL, d, 1, 1, &st), HOMA_EINVAL);
	assert_int_equal(homa_step_stats(bound, d, 0, 1, &st), HOMA_EINVAL);
	assert_int_equal(homa_step_stats(bound, d, 1, 0, &st), HOMA_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_step_end__not_before_last_message),
		cmocka_unit_test(homa_step_stats__times_and_idle),
		cmocka_unit_test(homa_step_stats__clamps_compute_end),
		cmocka_unit_test(homa_step_stats__rejects_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
