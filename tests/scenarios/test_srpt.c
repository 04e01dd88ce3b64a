/* SPDX-License-Identifier: MIT */
/**
 * @file test_srpt.c
 * Scenario 2, SRPT: two requests compete for one receiver (host 2), a
 * long one from host 0 and a shorter one from host 1. The one with fewer
 * bytes remaining completes first, and the receiver's GRANT packets (read
 * from the network's packet trace) favour it: higher grant priority when
 * both are granted, and no grants at all to the other when only one
 * message may be granted at a time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "world.h"

#define LONG_HOST 0
#define SHORT_HOST 1
#define RECEIVER 2

/** init() - Three hosts with tracing; @overcommit and FIFO share set for the test. */
static void init(struct world *w, uint32_t overcommit, uint32_t fifo)
{
	struct world_opts o;

	world_opts_default(&o);
	o.nhosts = 3;
	o.trace = true;
	o.settings.max_overcommit = overcommit;
	o.settings.grant_fifo_fraction = fifo;
	assert_int_equal(world_init(w, &o), 0);
}

/** is_grant_to() - True if @r is a GRANT emitted by the receiver to host @dst. */
static bool is_grant_to(const struct homa_sim_trace_rec *r, int dst)
{
	return r->what == HOMA_SIM_EMIT && r->decode_err == 0 &&
	       r->pkt.type == HOMA_PKT_GRANT && r->src == RECEIVER && r->dst == dst;
}

/** run_pair() - Long request at 0, short request at @short_at; both must complete. */
static void run_pair(struct world *w, uint32_t long_len, uint32_t short_len,
		     uint64_t short_at, size_t *t_long, size_t *t_short)
{
	*t_long = world_rpc_at(w, 0, LONG_HOST, RECEIVER, long_len, 1);
	*t_short = world_rpc_at(w, short_at, SHORT_HOST, RECEIVER, short_len, 1);
	assert_int_equal(world_run(w, 1000000000ull), 0);
	assert_int_equal(w->rpcs[*t_long].status, 1);
	assert_int_equal(w->rpcs[*t_short].status, 1);
	assert_int_equal(w->bad_requests + w->bad_responses + w->unmatched, 0);
}

/**
 * srpt__short_first_higher_grant_priority() - Default overcommitment: both
 * messages are granted, the shorter at a strictly higher priority from its
 * first grant until it completes, and it completes first though it
 * started later.
 */
static void srpt__short_first_higher_grant_priority(void **state)
{
	struct world w;
	size_t tl, ts, i, checked = 0;
	int last_long = -1, last_short = -1;

	(void)state;
	init(&w, 8, 0);
	run_pair(&w, 2000000, 300000, 40000, &tl, &ts);
	assert_true(w.rpcs[ts].done_ns < w.rpcs[tl].done_ns);
	for (i = 0; i < w.trace.len; i++) {
		const struct homa_sim_trace_rec *r = &w.trace.recs[i];

		if (r->time > w.rpcs[ts].done_ns)
			break;
		if (is_grant_to(r, LONG_HOST))
			last_long = r->pkt.u.grant.priority;
		if (!is_grant_to(r, SHORT_HOST))
			continue;
		last_short = r->pkt.u.grant.priority;
		if (last_long >= 0) {
			assert_true(last_short > last_long);
			checked++;
		}
	}
	assert_true(last_short >= 0);
	assert_true(checked > 10);
	world_free(&w);
}

/**
 * srpt__one_at_a_time_no_grants_to_long() - With max_overcommit 1 and no
 * FIFO share, once the short message is scheduled the long one gets no
 * GRANT until the short one has all its grants, and grant offsets of each
 * message only grow.
 */
static void srpt__one_at_a_time_no_grants_to_long(void **state)
{
	struct world w;
	size_t tl, ts, i;
	uint32_t off_long = 0, off_short = 0, short_len = 300000;
	bool short_active = false;
	size_t long_grants_before = 0;

	(void)state;
	init(&w, 1, 0);
	run_pair(&w, 2000000, short_len, 40000, &tl, &ts);
	assert_true(w.rpcs[ts].done_ns < w.rpcs[tl].done_ns);
	for (i = 0; i < w.trace.len; i++) {
		const struct homa_sim_trace_rec *r = &w.trace.recs[i];

		if (is_grant_to(r, SHORT_HOST)) {
			assert_true(r->pkt.u.grant.offset > off_short);
			off_short = r->pkt.u.grant.offset;
			short_active = off_short < short_len;
		} else if (is_grant_to(r, LONG_HOST)) {
			assert_false(short_active);
			assert_true(r->pkt.u.grant.offset > off_long);
			off_long = r->pkt.u.grant.offset;
			if (!off_short)
				long_grants_before++;
		}
	}
	assert_true(off_short == short_len);
	assert_true(off_long == 2000000);
	assert_true(long_grants_before > 0);
	world_free(&w);
}

/**
 * srpt__remaining_not_total_size() - A 1 MB message that is nearly done
 * beats a 300 KB message that starts late: SRPT ranks by bytes remaining.
 */
static void srpt__remaining_not_total_size(void **state)
{
	struct world w;
	size_t tl, ts;

	(void)state;
	init(&w, 1, 0);
	/* 1 MB takes about 340 us at 25 Gbps; at 280 us about 150 KB remain */
	run_pair(&w, 1000000, 300000, 280000, &tl, &ts);
	assert_true(w.rpcs[tl].done_ns < w.rpcs[ts].done_ns);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(srpt__short_first_higher_grant_priority),
		cmocka_unit_test(srpt__one_at_a_time_no_grants_to_long),
		cmocka_unit_test(srpt__remaining_not_total_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
