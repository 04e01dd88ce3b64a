/* SPDX-License-Identifier: MIT */
/** @file test_chaos.c Tests of the packet filter hook and sim/chaos.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_agent.h"
#include "homa/wire.h"
#include "sim/chaos.h"
#include "sim/net.h"
#include "sim/trace.h"

#define PAYLOAD 1000
static const struct homa_sim_link_cfg link25 = {25000, 1000, 0};
static struct fake_agent agents[4];

/**
 * run_traffic() - 4 hosts, each sends @per packets to the others in turn
 * (ids 2, 4, ... per host) through @chaos; returns the network after it
 * went quiet. @trace, if not NULL, records every event.
 */
static struct homa_sim_net *run_traffic(struct homa_sim_chaos *chaos, int per,
					uint64_t seed, struct homa_sim_trace *trace)
{
	struct homa_sim_config cfg;
	struct homa_sim_net *net;
	int h, i;

	homa_sim_config_default(&cfg);
	cfg.seed = seed;
	assert_int_equal(homa_sim_net_new(&net, &cfg), 0);
	for (h = 0; h < 4; h++)
		fake_add(net, &agents[h]);
	homa_sim_star(net, &link25);
	for (h = 0; h < 4; h++) {
		for (i = 0; i < per; i++)
			fake_script(&agents[h], (uint64_t)i * 100, (h + 1 + i % 3) % 4,
				    (uint8_t)(i % 8), HOMA_PKT_DATA, PAYLOAD, 0,
				    2 + 2 * (uint64_t)i);
		homa_sim_host_kick(net, h);
	}
	if (chaos)
		homa_sim_set_filter(net, homa_sim_chaos_filter, chaos);
	if (trace)
		homa_sim_trace_attach(trace, net, 0);
	homa_sim_run_until(net, 10000000);
	return net;
}

/** total_rx() - Packets received by all hosts. */
static int total_rx(void)
{
	int h, n = 0;

	for (h = 0; h < 4; h++)
		n += agents[h].nrx;
	return n;
}

/** Scripted drops remove exactly the listed packets. */
static void chaos_filter__scripted_drop(void **state)
{
	static const uint64_t drops[] = {0, 5, 17};
	struct homa_sim_chaos c;
	struct homa_sim_trace t = {0};
	struct homa_sim_net *net;
	struct homa_sim_net_stats st;
	size_t i;

	(void)state;
	homa_sim_chaos_init(&c, 1);
	c.drop_uids = drops;
	c.ndrop_uids = 3;
	net = run_traffic(&c, 10, 1, &t);
	homa_sim_net_stats(net, &st);
	assert_int_equal(total_rx(), 37);
	assert_true(st.drops[HOMA_SIM_DROP_FILTER] == 3 && c.dropped == 3);
	for (i = 0; i < t.len; i++)
		if (t.recs[i].what == HOMA_SIM_DROP_FILTER)
			assert_true(t.recs[i].uid == 0 || t.recs[i].uid == 5 ||
				    t.recs[i].uid == 17);
	homa_sim_set_observer(net, NULL, NULL);
	homa_sim_trace_free(&t);
	homa_sim_net_free(net);
}

/** Duplication delivers every packet twice; loss drops about the rate asked. */
static void chaos_filter__dup_and_loss(void **state)
{
	struct homa_sim_chaos c;
	struct homa_sim_net *net;
	struct homa_sim_net_stats st;

	(void)state;
	homa_sim_chaos_init(&c, 2);
	c.dup_ppm = 1000000;
	net = run_traffic(&c, 50, 1, NULL);
	homa_sim_net_stats(net, &st);
	assert_int_equal(total_rx(), 400);
	assert_true(st.duplicates == 200 && c.duplicated == 200);
	homa_sim_net_free(net);

	homa_sim_chaos_init(&c, 3);
	c.loss_ppm = 100000;
	net = run_traffic(&c, 250, 1, NULL);
	assert_in_range(total_rx(), 850, 950);
	assert_int_equal(total_rx() + (int)c.dropped, 1000);
	homa_sim_net_free(net);
}

/** Jitter reorders packets between one pair of hosts; none is lost. */
static void chaos_filter__jitter_reorders(void **state)
{
	struct homa_sim_chaos c;
	struct homa_sim_net *net;
	int h, i, inversions = 0;

	(void)state;
	homa_sim_chaos_init(&c, 4);
	c.jitter_ppm = 300000;
	c.jitter_ns = 20000;
	net = run_traffic(&c, 60, 1, NULL);
	assert_int_equal(total_rx(), 240);
	for (h = 0; h < 4; h++)
		for (i = 1; i < agents[h].nrx; i++)
			if (agents[h].rx[i].src == agents[h].rx[i - 1].src &&
			    agents[h].rx[i].id < agents[h].rx[i - 1].id)
				inversions++;
	assert_true(inversions > 5);
	assert_true(c.delayed > 0);
	homa_sim_net_free(net);
}

/** The type mask limits the filter to chosen packet types. */
static void chaos_filter__type_mask(void **state)
{
	struct homa_sim_chaos c;
	struct homa_sim_net *net;

	(void)state;
	homa_sim_chaos_init(&c, 5);
	c.loss_ppm = 1000000;
	c.type_mask = 1u << (HOMA_PKT_GRANT - HOMA_PKT_FIRST);
	net = run_traffic(&c, 20, 1, NULL);
	assert_int_equal(total_rx(), 80);
	homa_sim_net_free(net);
}

/** render_run() - Trace text of one run with loss, dups and jitter. */
static char *render_run(uint64_t seed)
{
	struct homa_sim_chaos c;
	struct homa_sim_trace t = {0};
	struct homa_sim_net *net;
	char *s;

	homa_sim_chaos_init(&c, seed);
	c.loss_ppm = 50000;
	c.dup_ppm = 50000;
	c.jitter_ppm = 200000;
	c.jitter_ns = 5000;
	net = run_traffic(&c, 100, seed, &t);
	s = homa_sim_trace_render(&t, 0, HOMA_SIM_TRACE_TIME | HOMA_SIM_TRACE_ID);
	homa_sim_net_free(net);
	homa_sim_trace_free(&t);
	return s;
}

/** Same seed, same events byte for byte; another seed, other events. */
static void net_determinism__same_seed_same_trace(void **state)
{
	char *a = render_run(77), *b = render_run(77), *c = render_run(78);

	(void)state;
	assert_non_null(a);
	assert_true(strlen(a) > 1000);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chaos_filter__scripted_drop),
		cmocka_unit_test(chaos_filter__dup_and_loss),
		cmocka_unit_test(chaos_filter__jitter_reorders),
		cmocka_unit_test(chaos_filter__type_mask),
		cmocka_unit_test(net_determinism__same_seed_same_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
