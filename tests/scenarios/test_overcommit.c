/* SPDX-License-Identifier: MIT */
/**
 * @file test_overcommit.c
 * Scenario 3, overcommitment: many clients send long requests to one
 * server at once. Reading the packet trace (GRANTs the server emitted,
 * DATA the server received), at no moment do more than max_overcommit
 * RPCs, plus the shortest one, have granted-but-unreceived bytes, and
 * max_overcommit is reached. The shortest message is granted at once even
 * when max_overcommit others still drain granted bytes (src/core/grant.c),
 * so a message that was just fully granted does not leave the receiver
 * idle for a round trip before the next one starts.
 *
 * FIFO grants are turned off here (grant_fifo_fraction = 0): by design they
 * go to a message outside the SRPT set, which would add one more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "world.h"

/**
 * max_granted_at_once() - Replay the trace: per client, the highest grant
 * offset the server sent and the bytes it received; return the largest
 * number of clients with granted > received at any moment.
 */
static int max_granted_at_once(const struct world *w, int server)
{
	uint64_t granted[WORLD_MAX_HOSTS] = {0}, received[WORLD_MAX_HOSTS] = {0};
	int most = 0, n, c;
	size_t i;

	for (i = 0; i < w->trace.len; i++) {
		const struct homa_sim_trace_rec *r = &w->trace.recs[i];

		if (r->decode_err)
			continue;
		if (r->what == HOMA_SIM_EMIT && r->src == server &&
		    r->pkt.type == HOMA_PKT_GRANT && r->pkt.u.grant.offset > granted[r->dst])
			granted[r->dst] = r->pkt.u.grant.offset;
		else if (r->what == HOMA_SIM_DELIVER && r->dst == server &&
			 r->pkt.type == HOMA_PKT_DATA)
			received[r->src] += r->pkt.u.data.payload_len;
		else
			continue;
		for (n = 0, c = 0; c < WORLD_MAX_HOSTS; c++)
			n += granted[c] > received[c];
		if (n > most)
			most = n;
	}
	return most;
}

/** run() - @clients clients each send one @len-byte request to the last host. */
static void run(int clients, uint32_t overcommit, uint32_t len)
{
	struct world w;
	struct world_opts o;
	int c, most;
	size_t i;

	world_opts_default(&o);
	o.nhosts = clients + 1;
	o.trace = true;
	o.settings.max_overcommit = overcommit;
	o.settings.grant_fifo_fraction = 0;
	assert_int_equal(world_init(&w, &o), 0);
	for (c = 0; c < clients; c++)
		world_rpc(&w, c, clients, len, 100);
	assert_int_equal(world_run(&w, 1000000000ull), 0);
	for (i = 0; i < w.nrpcs; i++)
		assert_int_equal(w.rpcs[i].status, 1);
	assert_int_equal(w.bad_requests + w.unmatched, 0);
	most = max_granted_at_once(&w, clients);
	assert_true(most >= (int)overcommit && most <= (int)overcommit + 1);
	world_free(&w);
}

/** overcommit__limit_4_of_10() - 10 senders, max_overcommit 4. */
static void overcommit__limit_4_of_10(void **state)
{
	(void)state;
	run(10, 4, 300000);
}

/** overcommit__default_8_of_12() - 12 senders, the default max_overcommit 8. */
static void overcommit__default_8_of_12(void **state)
{
	(void)state;
	run(12, 8, 200000);
}

/** overcommit__limit_1_of_3() - The extreme: one message granted at a time. */
static void overcommit__limit_1_of_3(void **state)
{
	(void)state;
	run(3, 1, 500000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(overcommit__limit_4_of_10),
		cmocka_unit_test(overcommit__default_8_of_12),
		cmocka_unit_test(overcommit__limit_1_of_3),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
