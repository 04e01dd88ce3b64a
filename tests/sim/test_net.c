/* SPDX-License-Identifier: MIT */
/** @file test_net.c Tests of the network core: timing, hosts, routing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_agent.h"
#include "homa/errors.h"
#include "homa/wire.h"
#include "sim/net.h"

/* 1250 wire bytes take exactly 1000 ns at 10 Gbps. */
#define PAYLOAD (1250 - HOMA_DATA_HDR_LEN)
static const struct homa_sim_link_cfg link10 = {10000, 1000, 0};

static struct fake_agent agents[4];

/** make_star() - A network of @n fake hosts around one switch. */
static struct homa_sim_net *make_star(int n, const struct homa_sim_link_cfg *l)
{
	struct homa_sim_net *net;
	int i;

	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(fake_add(net, &agents[i]), i);
	assert_int_equal(homa_sim_star(net, l), 0);
	return net;
}

/** One packet takes serialization + delay on each of its two hops. */
static void net_timing__two_hops(void **state)
{
	struct homa_sim_net *net = make_star(2, &link10);

	(void)state;
	fake_script(&agents[0], 0, 1, 0, HOMA_PKT_DATA, PAYLOAD, 0, 2);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	assert_int_equal(agents[1].nrx, 1);
	assert_true(agents[1].rx[0].time == 4000);
	assert_int_equal(agents[1].rx[0].src, 0);
	assert_true(agents[1].rx[0].id == 2);
	assert_int_equal(homa_sim_pkts_in_flight(net), 0);
	homa_sim_net_free(net);
}

/** The NIC serializes: back-to-back packets leave one link time apart. */
static void net_host__nic_serializes(void **state)
{
	struct homa_sim_net *net = make_star(2, &link10);
	struct homa_sim_port_stats ps;
	int i;

	(void)state;
	for (i = 0; i < 3; i++)
		fake_script(&agents[0], 0, 1, 0, HOMA_PKT_DATA, PAYLOAD, 0, 2 + 2 * i);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	for (i = 0; i < 3; i++) {
		assert_true(agents[0].emit_time[i] == (uint64_t)i * 1000);
		assert_true(agents[1].rx[i].time == 4000 + (uint64_t)i * 1000);
	}
	assert_int_equal(homa_sim_host_port_stats(net, 0, &ps), 0);
	assert_true(ps.pkts == 3 && ps.bytes == 3750);
	homa_sim_net_free(net);
}

/** Agents are woken exactly at their deadline; scripted sends wait for it. */
static void net_host__timer_at_deadline(void **state)
{
	struct homa_sim_net *net = make_star(2, &link10);

	(void)state;
	agents[0].timer_deadline = 5000;
	fake_script(&agents[0], 7000, 1, 0, HOMA_PKT_DATA, PAYLOAD, 0, 2);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	assert_true(agents[0].timer_calls >= 1);
	assert_true(agents[0].emit_time[0] == 7000);
	assert_true(agents[1].rx[0].time == 11000);
	homa_sim_net_free(net);
}

/**
 * An agent whose deadline says "now" while its NIC is busy (as an engine
 * with packets queued does) is woken when the NIC frees up, not polled.
 */
static void net_host__no_polling_while_nic_busy(void **state)
{
	struct homa_sim_net *net = make_star(2, &link10);
	struct homa_sim_net_stats st;
	int i;

	(void)state;
	for (i = 0; i < 50; i++)
		fake_script(&agents[0], 0, 1, 0, HOMA_PKT_DATA, PAYLOAD, 0, 2 + 2 * (uint64_t)i);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	homa_sim_net_stats(net, &st);
	assert_int_equal(agents[1].nrx, 50);
	assert_true(agents[0].emit_time[49] == 49000);
	assert_true(st.busy_wakeups == 0);
	assert_true(st.events < 3 * 50 + 10);
	homa_sim_net_free(net);
}

/** An agent without a deadline op is still woken whenever its NIC frees up. */
static void net_host__agent_without_deadline_drains(void **state)
{
	struct homa_sim_agent_ops ops = fake_agent_ops;
	struct homa_sim_net *net;
	int i;

	(void)state;
	ops.next_deadline = NULL;
	ops.on_timer = NULL;
	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	fake_add(net, &agents[0]);
	memset(&agents[1], 0, sizeof(agents[1]));
	agents[1].net = net;
	agents[1].host = homa_sim_add_host(net, &ops, &agents[1]);
	homa_sim_star(net, &link10);
	for (i = 0; i < 20; i++)
		fake_script(&agents[1], 0, 0, 0, HOMA_PKT_DATA, PAYLOAD, 0, 2 + 2 * (uint64_t)i);
	homa_sim_host_kick(net, 1);
	homa_sim_run_until(net, 1000000);
	assert_int_equal(agents[0].nrx, 20);
	assert_true(agents[0].rx[19].time == 4000 + 19000);
	homa_sim_net_free(net);
}

/** Packets to or from a down host are dropped and counted. */
static void net_host__down_drops(void **state)
{
	struct homa_sim_net *net = make_star(3, &link10);
	struct homa_sim_net_stats st;

	(void)state;
	fake_script(&agents[0], 0, 1, 0, HOMA_PKT_DATA, PAYLOAD, 0, 2);
	fake_script(&agents[0], 0, 2, 0, HOMA_PKT_DATA, PAYLOAD, 0, 4);
	assert_int_equal(homa_sim_host_set_down(net, 1, true), 0);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	homa_sim_net_stats(net, &st);
	assert_int_equal(agents[1].nrx, 0);
	assert_int_equal(agents[2].nrx, 1);
	assert_true(st.drops[HOMA_SIM_DROP_HOST_DOWN] == 1);
	assert_true(st.pkts_emitted == 2 && st.pkts_delivered == 1);
	assert_int_equal(homa_sim_host_set_down(net, 9, true), HOMA_EINVAL);
	homa_sim_net_free(net);
}

/** route_up() - Route everything not local through port 0 (the uplink). */
static int route_up(void *ctx, struct homa_sim_net *net, int sw,
		    const struct homa_sim_pkt *pkt)
{
	int *calls = ctx;

	(void)net;
	(void)sw;
	(void)pkt;
	(*calls)++;
	return 0;
}

/** Two switches: the route hook carries packets between them. */
static void net_route__hook(void **state)
{
	struct homa_sim_net *net;
	struct homa_sim_net_stats st;
	int sw0, sw1, pb = -1, calls = 0;

	(void)state;
	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	fake_add(net, &agents[0]);
	fake_add(net, &agents[1]);
	sw0 = homa_sim_add_switch(net);
	sw1 = homa_sim_add_switch(net);
	assert_int_equal(homa_sim_connect_switches(net, sw0, sw1, &link10, &link10, &pb), 0);
	assert_int_equal(pb, 0);
	assert_int_equal(homa_sim_connect_host(net, 0, sw0, &link10, &link10), 1);
	assert_int_equal(homa_sim_connect_host(net, 1, sw1, &link10, &link10), 1);
	assert_int_equal(homa_sim_connect_host(net, 1, sw1, &link10, &link10), HOMA_EINVAL);
	fake_script(&agents[0], 0, 1, 0, HOMA_PKT_DATA, PAYLOAD, 0, 2);
	fake_script(&agents[0], 0, 1, 0, HOMA_PKT_DATA, PAYLOAD, 0, 4);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 100000);
	homa_sim_net_stats(net, &st);
	assert_int_equal(agents[1].nrx, 0);
	assert_true(st.drops[HOMA_SIM_DROP_ROUTE] == 2);

	homa_sim_set_route(net, route_up, &calls);
	fake_script(&agents[0], 0, 1, 0, HOMA_PKT_DATA, PAYLOAD, 0, 6);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 200000);
	assert_int_equal(agents[1].nrx, 1);
	assert_int_equal(calls, 1);
	/* three hops of 1000 ns serialization + 1000 ns delay after t=100000 */
	assert_true(agents[1].rx[0].time == 106000);
	assert_int_equal(homa_sim_switch_ports(net, sw0), 2);
	homa_sim_net_free(net);
}

/** A destination address outside the network is dropped as unroutable. */
static void net_route__unknown_address(void **state)
{
	struct homa_sim_net *net = make_star(2, &link10);
	struct homa_sim_net_stats st;
	homa_addr other = homa_addr_ipv4(0xc0a80001);

	(void)state;
	assert_int_equal(homa_sim_host_of(net, &other), -1);
	fake_script(&agents[0], 0, 7, 0, HOMA_PKT_DATA, PAYLOAD, 0, 2);
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 100000);
	homa_sim_net_stats(net, &st);
	assert_true(st.drops[HOMA_SIM_DROP_ROUTE] == 1);
	assert_int_equal(homa_sim_pkts_in_flight(net), 0);
	homa_sim_net_free(net);
}

/** Addresses map to host ids and back. */
static void net_addr__roundtrip(void **state)
{
	struct homa_sim_net *net = make_star(3, &link10);
	homa_addr a = homa_sim_host_addr(2);

	(void)state;
	assert_int_equal(homa_sim_host_of(net, &a), 2);
	assert_true(homa_addr_get_ipv4(&a) == 0x0a000003);
	a = homa_sim_host_addr(3);
	assert_int_equal(homa_sim_host_of(net, &a), -1);
	homa_sim_net_free(net);
}

/** Bad arguments get HOMA_EINVAL. */
static void net_setup__bad_args(void **state)
{
	struct homa_sim_net *net;
	struct homa_sim_config cfg;
	struct homa_sim_agent_ops none = {0};
	struct homa_sim_link_cfg zero = {0, 0, 0};

	(void)state;
	homa_sim_config_default(&cfg);
	cfg.max_pkt_bytes = 10;
	assert_int_equal(homa_sim_net_new(&net, &cfg), HOMA_EINVAL);
	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	assert_int_equal(homa_sim_add_host(net, &none, NULL), HOMA_EINVAL);
	assert_int_equal(homa_sim_star(net, &zero), HOMA_EINVAL);
	assert_int_equal(homa_sim_connect_switches(net, 0, 0, &link10, &link10, NULL),
			 HOMA_EINVAL);
	assert_int_equal(homa_sim_host_kick(net, 0), HOMA_EINVAL);
	homa_sim_net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(net_timing__two_hops),
		cmocka_unit_test(net_host__nic_serializes),
		cmocka_unit_test(net_host__timer_at_deadline),
		cmocka_unit_test(net_host__no_polling_while_nic_busy),
		cmocka_unit_test(net_host__agent_without_deadline_drains),
		cmocka_unit_test(net_host__down_drops),
		cmocka_unit_test(net_route__hook),
		cmocka_unit_test(net_route__unknown_address),
		cmocka_unit_test(net_addr__roundtrip),
		cmocka_unit_test(net_setup__bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
