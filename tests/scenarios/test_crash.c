/* SPDX-License-Identifier: MIT */
/**
 * @file test_crash.c
 * Scenario 6, crashes. A server crash (the host stops sending and
 * receiving and its engine is dropped without a word): every client RPC
 * to it, whether its request was being sent, its response being received
 * or it was issued after the crash, ends with HOMA_ETIMEDOUT no later than
 * timeout_ticks * tick_ns (plus two ticks of slack) after the server went
 * silent, and not much earlier. A client crash: the server frees every
 * RPC of that client (stats.active_rpcs back to 0, no buffered bytes)
 * within the same bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "world.h"

#define CRASH_AT 150000ull  /* ns: the 1 MB transfers are about half done */

/** init() - Two hosts: 0 is the client, 1 the server. */
static void init(struct world *w)
{
	struct world_opts o;

	world_opts_default(&o);
	assert_int_equal(world_init(w, &o), 0);
}

/** bound_ns() - The configured timeout plus two ticks of slack. */
static uint64_t bound_ns(const struct world *w)
{
	return (w->o.settings.timeout_ticks + 2) * w->o.settings.tick_ns;
}

/** crash__server_rpcs_time_out() - Client RPCs fail with HOMA_ETIMEDOUT in bound. */
static void crash__server_rpcs_time_out(void **state)
{
	struct world w;
	struct homa_stats st;
	size_t a, b, c, d, i;
	uint64_t floor;

	(void)state;
	init(&w);
	a = world_rpc(&w, 0, 1, 1000000, 100);   /* request in flight at the crash */
	b = world_rpc(&w, 0, 1, 100, 1000000);   /* response in flight at the crash */
	homa_sim_run_until(w.net, CRASH_AT);
	assert_int_equal(w.pending, 2);
	homa_sim_engine_host_crash(w.eh[1]);
	c = world_rpc_at(&w, CRASH_AT + 50000, 0, 1, 5000, 5000); /* after the crash */
	assert_int_equal(world_run(&w, 10 * bound_ns(&w)), 0);
	floor = (w.o.settings.timeout_ticks - 1) * w.o.settings.tick_ns;
	for (i = a; i <= c; i++) {
		uint64_t from = i == c ? w.rpcs[c].sent_ns : CRASH_AT;

		assert_int_equal(w.rpcs[i].status, HOMA_ETIMEDOUT);
		assert_true(w.rpcs[i].done_ns <= from + bound_ns(&w));
		assert_true(w.rpcs[i].done_ns >= from + floor);
		assert_int_equal(w.rpcs[i].responses, 0);
	}
	(void)b;
	world_stats(&w, 0, &st);
	assert_int_equal(st.active_rpcs, 0);
	assert_int_equal(st.rpcs_timed_out, 3);
	assert_int_equal(st.tx_buffered_bytes, 0);
	assert_int_equal(st.rx_buffered_bytes, 0);

	/* a new RPC to the dead peer fails at once or times out the same way */
	d = world_rpc(&w, 0, 1, 100, 100);
	assert_int_equal(world_run(&w, 10 * bound_ns(&w)), 0);
	assert_true(w.rpcs[d].status == HOMA_EPEERDEAD ||
		    (w.rpcs[d].status == HOMA_ETIMEDOUT &&
		     w.rpcs[d].done_ns <= w.rpcs[d].sent_ns + bound_ns(&w)));
	world_free(&w);
}

/** crash__client_state_freed() - The server forgets a crashed client in bound. */
static void crash__client_state_freed(void **state)
{
	struct world w;
	struct homa_stats st;
	uint64_t freed_at = 0, t;

	(void)state;
	init(&w);
	world_rpc(&w, 0, 1, 1000000, 100);   /* server receiving the request */
	world_rpc(&w, 0, 1, 100, 2000000);   /* server sending the response */
	world_rpc(&w, 0, 1, 100, 100);       /* done; the ack may not have left */
	homa_sim_run_until(w.net, CRASH_AT);
	world_stats(&w, 1, &st);
	assert_true(st.active_rpcs >= 2);
	homa_sim_engine_host_crash(w.eh[0]);
	for (t = CRASH_AT; t <= CRASH_AT + 3 * bound_ns(&w); t += w.o.settings.tick_ns / 4) {
		homa_sim_run_until(w.net, t);
		world_stats(&w, 1, &st);
		if (st.active_rpcs == 0) {
			freed_at = t;
			break;
		}
	}
	assert_true(freed_at != 0);
	assert_true(freed_at <= CRASH_AT + bound_ns(&w));
	assert_int_equal(st.rx_buffered_bytes, 0);
	assert_int_equal(st.tx_buffered_bytes, 0);
	assert_int_equal(w.bad_requests + w.unmatched, 0);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crash__server_rpcs_time_out),
		cmocka_unit_test(crash__client_state_freed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
