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

/**
 * run_background() - Run @pattern on 8 hosts for 3 steps beside background
 * bulk traffic at half the links and check that the background flowed,
 * that no background message counts in a step (every step message
 * arrives after its step's compute phase and no later than its step's
 * end, however many background messages arrive in between), that the
 * step messages are those of the run without background, and that the
 * ideal's steps, which share the fabric with the background, last longer
 * than the compute phase and at most twice the engine's. The background
 * messages are smaller than the step messages, so that many of them end
 * inside a step. (The greedy fluid reference, which gives a sender's link
 * to one message at a time, is no bound here: SRPT runs the small
 * background first and ring all-reduce's ideal steps last about 1.5x the
 * engine's.)
 */
static void run_background(const char *pattern)
{
	const char *w[] = { "--pattern", pattern, "--hosts", "8", "--racks", "2", "--spines", "2",
			    "--steps", "3", "--size", "20000", "--compute-us", "50",
			    "--background", "0.5", "--background-size", "3000", NULL };
	const char *alone[] = { "--pattern", pattern, "--hosts", "8", "--racks", "2", "--spines",
				"2", "--steps", "3", "--size", "20000", "--compute-us", "50", NULL };
	struct sim_opts o, oa;
	struct sim_run r, ra;
	uint32_t done, idone;

	assert_int_equal(parse(&o, w), 0);
	assert_int_equal(parse(&oa, alone), 0);
	assert_int_equal(sim_run(&r, &o), 0);
	assert_int_equal(sim_run(&ra, &oa), 0);
	const uint64_t *b = sim_steps_bounds(&r, false, &done);
	const uint64_t *ib = sim_steps_bounds(&r, true, &idone);
	assert_int_equal(done, 3);
	assert_int_equal(idone, 3);
	assert_true(r.bg_sent > 0 && r.bg_done > 0);
	assert_true(b[0] > 0); /* the background had a head start */
	uint64_t per = o.messages / o.steps, k = 0, bgs = 0;
	for (uint64_t i = 0; i < r.nmsgs; i++) {
		const struct sim_msg *m = &r.msgs[i];
		if (m->background) {
			assert_int_equal(m->size, 3000);
			bgs++;
			continue;
		}
		uint64_t s = k / per;
		const struct sim_msg *ma = &ra.msgs[k++];
		assert_int_equal(m->size, ma->size);
		assert_int_equal(m->src, ma->src);
		assert_int_equal(m->dst, ma->dst);
		assert_true(m->done_ns != 0 && m->done_ns != UINT64_MAX);
		assert_true(m->start_ns >= b[s] + 50000);
		assert_true(m->done_ns <= b[s + 1]);
	}
	assert_int_equal(k, o.messages);
	assert_int_equal(bgs, r.bg_sent);
	for (uint32_t s = 0; s < 3; s++)
		assert_true(ib[s + 1] - ib[s] > 50000 &&
			    (double)(ib[s + 1] - ib[s]) <= 2.0 * (double)(b[s + 1] - b[s]));
	sim_run_free(&r);
	sim_run_free(&ra);
}

/** all-to-all steps beside background */
static void background__alltoall(void **state)
{
	run_background("alltoall-step");
}

/** ring all-reduce steps beside background */
static void background__allreduce(void **state)
{
	run_background("ring-allreduce");
}

/** lookup-batch steps beside background */
static void background__lookups(void **state)
{
	run_background("lookup-batch");
}

/** --background is refused outside the step patterns and above 0.95. */
static void opts__background(void **state)
{
	struct sim_opts o;
	const char *poisson[] = { "--background", "0.5", NULL };
	const char *high[] = { "--pattern", "lookup-batch", "--background", "0.96", NULL };
	const char *ok[] = { "--pattern", "lookup-batch", "--background", "0.5",
			     "--background-size", "2000000", NULL };

	assert_int_equal(parse(&o, poisson), -1);
	assert_int_equal(parse(&o, high), -1);
	assert_int_equal(parse(&o, ok), 0);
	assert_true(o.bg_load == 0.5 && o.bg_size == 2000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opts__step_patterns_count_messages),
		cmocka_unit_test(steps__alltoall),
		cmocka_unit_test(steps__allreduce),
		cmocka_unit_test(steps__lookups),
		cmocka_unit_test(background__alltoall),
		cmocka_unit_test(background__allreduce),
		cmocka_unit_test(background__lookups),
		cmocka_unit_test(opts__background),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
