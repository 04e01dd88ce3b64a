/* SPDX-License-Identifier: MIT */
/**
 * @file test_replay.c
 * The sliding replay window over IVs: each IV accepted once, IVs left of
 * the window rejected as too old, out-of-order arrival inside the window
 * accepted, big jumps clearing the window, no aliasing across words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "psp_int.h"

#define W HOMA_PSP_REPLAY_WINDOW

/** accept() - Check and, if allowed, mark @iv. Return: the check's result. */
static int accept(struct psp_replay *w, uint64_t iv)
{
	int r = psp_replay_check(w, iv);

	if (!r)
		psp_replay_mark(w, iv);
	return r;
}

/** psp_replay__each_iv_once() - In-order IVs pass once; repeats are replays. */
static void psp_replay__each_iv_once(void **state)
{
	struct psp_replay w;

	memset(&w, 0, sizeof(w));
	assert_int_equal(accept(&w, 0), -1 - HOMA_PSP_REJ_TOO_OLD);
	for (uint64_t iv = 1; iv <= 5000; iv++)
		assert_int_equal(accept(&w, iv), 0);
	for (uint64_t iv = 5000 - W + 1; iv <= 5000; iv++)
		assert_int_equal(accept(&w, iv), -1 - HOMA_PSP_REJ_REPLAY);
	assert_int_equal(accept(&w, 5000 - W), -1 - HOMA_PSP_REJ_TOO_OLD);
	assert_int_equal(accept(&w, 1), -1 - HOMA_PSP_REJ_TOO_OLD);
}

/**
 * psp_replay__out_of_order_inside_window() - IVs held back up to W - 1
 * behind the top are accepted once, for every alignment of the top.
 */
static void psp_replay__out_of_order_inside_window(void **state)
{
	for (uint64_t top = W; top < W + 130; top++) {
		struct psp_replay w;

		memset(&w, 0, sizeof(w));
		for (uint64_t iv = 1; iv <= top; iv += 2)  /* odd IVs first */
			assert_int_equal(accept(&w, iv), 0);
		accept(&w, top);
		for (uint64_t iv = top - W + 1; iv < top; iv++) {
			int want = (iv % 2) ? -1 - HOMA_PSP_REJ_REPLAY : 0;

			assert_int_equal(accept(&w, iv), want);
			assert_int_equal(accept(&w, iv), -1 - HOMA_PSP_REJ_REPLAY);
		}
	}
}

/** psp_replay__jump_clears() - A jump beyond the window forgets everything older. */
static void psp_replay__jump_clears(void **state)
{
	struct psp_replay w;

	memset(&w, 0, sizeof(w));
	for (uint64_t iv = 1; iv <= 100; iv++)
		accept(&w, iv);
	assert_int_equal(accept(&w, 100 + 10 * W), 0);
	for (uint64_t iv = 100 + 9 * W + 1; iv < 100 + 10 * W; iv++)
		assert_int_equal(psp_replay_check(&w, iv), 0);
	assert_int_equal(accept(&w, 100 + 9 * W), -1 - HOMA_PSP_REJ_TOO_OLD);
	assert_int_equal(accept(&w, UINT64_MAX), 0);
	assert_int_equal(accept(&w, UINT64_MAX), -1 - HOMA_PSP_REJ_REPLAY);
	assert_int_equal(accept(&w, UINT64_MAX - W + 1), 0);
}

/**
 * psp_replay__window_is_wide_enough() - The window is at least 1024
 * packets: an IV 1023 behind the newest is still accepted.
 */
static void psp_replay__window_is_wide_enough(void **state)
{
	struct psp_replay w;

	assert_true(W >= 1024);
	memset(&w, 0, sizeof(w));
	accept(&w, 5000);
	assert_int_equal(accept(&w, 5000 - 1023), 0);
	assert_int_equal(accept(&w, 5000 - W + 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(psp_replay__each_iv_once),
		cmocka_unit_test(psp_replay__out_of_order_inside_window),
		cmocka_unit_test(psp_replay__jump_clears),
		cmocka_unit_test(psp_replay__window_is_wide_enough),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
