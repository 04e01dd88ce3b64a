/* SPDX-License-Identifier: MIT */
/** @file test_queue.c Tests of switch egress ports: priorities, limits, occupancy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_agent.h"
#include "homa/wire.h"
#include "sim/net.h"

#define PAYLOAD (1250 - HOMA_DATA_HDR_LEN)

static struct fake_agent agents[2];

/**
 * make_bottleneck() - Host 0 sends at 100 Gbps into a switch whose port
 * toward host 1 runs at 10 Gbps with @limit bytes of buffer; host 0 sends
 * 4 packets at priority 0 (ids 2..8) then 4 at priority 7 (ids 10..16).
 */
static struct homa_sim_net *make_bottleneck(uint64_t limit)
{
	struct homa_sim_link_cfg fast = {100000, 0, 0}, slow = {10000, 0, limit};
	struct homa_sim_net *net;
	int sw, i;

	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	fake_add(net, &agents[0]);
	fake_add(net, &agents[1]);
	sw = homa_sim_add_switch(net);
	assert_int_equal(homa_sim_connect_host(net, 0, sw, &fast, &fast), 0);
	assert_int_equal(homa_sim_connect_host(net, 1, sw, &fast, &slow), 1);
	for (i = 0; i < 8; i++)
		fake_script(&agents[0], 0, 1, i < 4 ? 0 : 7, HOMA_PKT_DATA, PAYLOAD,
			    0, 2 + 2 * (uint64_t)i);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	return net;
}

/** Queued high-priority packets overtake queued low-priority ones. */
static void port_queue__strict_priority(void **state)
{
	static const uint64_t order[8] = {2, 10, 12, 14, 16, 4, 6, 8};
	struct homa_sim_net *net = make_bottleneck(0);
	struct homa_sim_port_stats ps;
	int i;

	(void)state;
	assert_int_equal(agents[1].nrx, 8);
	for (i = 0; i < 8; i++) {
		assert_true(agents[1].rx[i].id == order[i]);
		assert_true(agents[1].rx[i].time == 1100 + 1000 * (uint64_t)i);
	}
	assert_int_equal(homa_sim_port_stats(net, 0, 1, &ps), 0);
	assert_true(ps.pkts == 8 && ps.prio_pkts[0] == 4 && ps.prio_pkts[7] == 4);
	assert_true(ps.drops == 0 && ps.queued_bytes == 0);
	homa_sim_net_free(net);
}

/** A full buffer drops arrivals (drop-tail on the port's byte total). */
static void port_queue__byte_limit(void **state)
{
	struct homa_sim_net *net = make_bottleneck(2500);
	struct homa_sim_net_stats st;
	struct homa_sim_port_stats ps;

	(void)state;
	assert_int_equal(agents[1].nrx, 3);
	assert_true(agents[1].rx[0].id == 2 && agents[1].rx[1].id == 4 &&
		    agents[1].rx[2].id == 6);
	homa_sim_net_stats(net, &st);
	assert_true(st.drops[HOMA_SIM_DROP_QUEUE] == 5);
	homa_sim_port_stats(net, 0, 1, &ps);
	assert_true(ps.drops == 5 && ps.max_queued_bytes == 2500);
	assert_int_equal(homa_sim_pkts_in_flight(net), 0);
	homa_sim_net_free(net);
}

/**
 * Occupancy: max is 7 packets; the time-weighted mean matches the integral
 * computed by hand (queue grows by 1250 every 100 ns from t=200 to 800,
 * then drains by 1250 every 1000 ns from t=1100).
 */
static void port_queue__occupancy(void **state)
{
	struct homa_sim_net *net = make_bottleneck(0);
	struct homa_sim_port_stats ps;
	uint64_t area = 0;
	int k;

	(void)state;
	homa_sim_port_stats(net, 0, 1, &ps);
	assert_true(ps.max_queued_bytes == 7 * 1250);
	for (k = 1; k <= 6; k++)
		area += (uint64_t)k * 1250 * 100;  /* 200..800 */
	area += 7ull * 1250 * 300;                 /* 800..1100 */
	for (k = 6; k >= 1; k--)
		area += (uint64_t)k * 1250 * 1000; /* 1100..7100 */
	assert_true(ps.mean_queued_bytes > (double)area / 1000000 - 0.01);
	assert_true(ps.mean_queued_bytes < (double)area / 1000000 + 0.01);
	homa_sim_reset_port_stats(net);
	homa_sim_run_until(net, 2000000);
	homa_sim_port_stats(net, 0, 1, &ps);
	assert_true(ps.pkts == 0 && ps.max_queued_bytes == 0);
	assert_true(ps.mean_queued_bytes == 0.0);
	homa_sim_net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(port_queue__strict_priority),
		cmocka_unit_test(port_queue__byte_limit),
		cmocka_unit_test(port_queue__occupancy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
