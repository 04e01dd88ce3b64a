/* SPDX-License-Identifier: MIT */
/** @file test_steps.c Tests of homa-sim's step patterns (tools/sim/steps.c). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "args.h"
#include "sim.h"


/** The step patterns parse and size their message arrays. */
static void opts__step_patterns_count_messages(void **state)
{
	struct sim_opts o;
	const char *a[] = { "--pattern", "alltoall-step", "--hosts", "8", "--racks", "2",
			    "--steps", "3", NULL };
	const char *r[] = { "--pattern", "ring-allreduce", "--hosts", "8", "--racks", "2",
			    "--steps", "3", NULL };
	const char *l[] = { "--pattern", "lookup-batch", "--hosts", "8", "--racks", "2",
			    "--steps", "3", "--lookups", "5", NULL };
	const char *bad[] = { "--pattern", "lookup-batch", "--lookups", "0", NULL };

	assert_int_equal(parse(&o, a), 0);
	assert_int_equal(o.messages, 3 * 8 * 7);
	assert_int_equal(parse(&o, r), 0);
	assert_int_equal(o.messages, 3 * 2 * 7 * 8);
	assert_int_equal(parse(&o, l), 0);
	assert_int_equal(o.messages, 3 * 5 * 8);
	assert_int_equal(parse(&o, bad), -1);
}

/**
 * run_pattern() - Run @pattern on 8 hosts for 3 steps and check the step
 * accounting: every message arrives after its step's compute phase and no
 * later than its step's end; every step finished; the ideal's steps are
 * longer than the compute phase and not much longer than the engine's
 * (10% slack: the greedy fluid reference is not an exact optimum, and
 * on steps of small messages the engine's packets overlap hops that the
 * fluid counts as one fixed delay).
 */
static void run_pattern(const char *pattern)
{
	const char *w[] = { "--pattern", pattern, "--hosts", "8", "--racks", "2", "--spines", "2",
			    "--steps", "3", "--size", "20000", "--compute-us", "50", NULL };
	struct sim_opts o;
	struct sim_run r;
	uint32_t done, idone;

	assert_int_equal(parse(&o, w), 0);
	assert_int_equal(sim_run(&r, &o), 0);
	const uint64_t *b = sim_steps_bounds(&r, false, &done);
	const uint64_t *ib = sim_steps_bounds(&r, true, &idone);
	assert_non_null(b);
	assert_int_equal(done, 3);
	assert_int_equal(idone, 3);
	uint64_t per = o.messages / o.steps;
	for (uint64_t i = 0; i < r.nmsgs; i++) {
		const struct sim_msg *m = &r.msgs[i];
		uint64_t s = i / per;
		assert_true(m->done_ns != 0 && m->done_ns != UINT64_MAX);
		assert_true(m->start_ns >= b[s] + 50000);
		assert_true(m->done_ns <= b[s + 1]);
	}
	for (uint32_t s = 0; s < 3; s++)
		assert_true(ib[s + 1] - ib[s] > 50000 &&
			    (double)(ib[s + 1] - ib[s]) <= 1.1 * (double)(b[s + 1] - b[s]));
	sim_run_free(&r);
}

/** all-to-all steps */
static void steps__alltoall(void **state)
{
	run_pattern("alltoall-step");
}

/** ring all-reduce steps */
static void steps__allreduce(void **state)
{
	run_pattern("ring-allreduce");
}

/** lookup-batch steps */
static void steps__lookups(void **state)
{
	run_pattern("lookup-batch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opts__step_patterns_count_messages),
		cmocka_unit_test(steps__alltoall),
		cmocka_unit_test(steps__allreduce),
		cmocka_unit_test(steps__lookups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
