/* SPDX-License-Identifier: MIT */
/** @file test_leafspine.c Tests of the leaf-spine builder (src/sim/leafspine.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "sim/leafspine.h"
#include "sim/net.h"

/** A host that sends @left packets of @len bytes to @dst as fast as its NIC allows. */
struct blaster {
	int dst;
	int left;
	uint32_t len;
};

/** blast_input() - Agent op: received packets are only seen by the observer. */
static void blast_input(void *agent, const homa_addr *src, uint8_t *buf, size_t len,
			uint64_t now)
{
	(void)agent, (void)src, (void)buf, (void)len, (void)now;
}

/** blast_output() - Agent op: the next packet, if any is left. */
static int blast_output(void *agent, uint64_t now, uint8_t *buf, size_t cap,
			struct homa_tx *tx)
{
	struct blaster *b = agent;

	(void)now;
	if (!b->left || cap < b->len)
		return 0;
	b->left--;
	memset(buf, 0, b->len);
	tx->dst = homa_sim_host_addr(b->dst);
	tx->priority = 0;
	return (int)b->len;
}

/** blast_deadline() - Agent op: "now" while packets are left, else never. */
static uint64_t blast_deadline(void *agent)
{
	return ((struct blaster *)agent)->left ? 0 : UINT64_MAX;
}

/** blast_timer() - Agent op: nothing runs on timers. */
static void blast_timer(void *agent, uint64_t now)
{
	(void)agent, (void)now;
}

static const struct homa_sim_agent_ops blast_ops = {.input = blast_input,
						     .output = blast_output,
						     .next_deadline = blast_deadline,
						     .on_timer = blast_timer};

/** What the observer saw: deliveries, with time and hops of the last one. */
struct seen {
	int delivered;
	uint64_t last_time;
	int last_hops;
};

/** observe() - Count deliveries. */
static void observe(void *ctx, const struct homa_sim_pkt *pkt, int what, uint64_t now)
{
	struct seen *s = ctx;

	if (what != HOMA_SIM_DELIVER)
		return;
	s->delivered++;
	s->last_time = now;
	s->last_hops = pkt->hops;
}

static struct blaster hosts[16];
static struct seen seen;
static struct homa_sim_leafspine ls;

/** make_delay() - @n blasters, @racks racks, 2 spines, 10/40 Gbit/s, host delay @hd. */
static struct homa_sim_net *make_delay(int n, int racks, uint64_t hd)
{
	struct homa_sim_leafspine_cfg c;
	struct homa_sim_net *net;
	int i;

	memset(hosts, 0, sizeof(hosts));
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(homa_sim_add_host(net, &blast_ops, &hosts[i]), i);
	homa_sim_leafspine_cfg_default(&c);
	c.racks = racks;
	c.spines = 2;
	c.host_delay_ns = hd;
	assert_int_equal(homa_sim_leafspine_build(net, &c, &ls), 0);
	homa_sim_set_observer(net, observe, &seen);
	return net;
}

/** make() - As make_delay() without host delay. */
static struct homa_sim_net *make(int n, int racks)
{
	return make_delay(n, racks, 0);
}

/** The receiving host's software time delays every packet once. */
static void leafspine_build__host_delay(void **state)
{
	struct homa_sim_net *net = make_delay(8, 2, 1500);

	(void)state;
	hosts[0] = (struct blaster){6, 2, 1250};
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	assert_int_equal(seen.delivered, 2);
	/* second packet: 2 x 1000 at 10G, 250 at 40G (twice), 1000 at 10G, 750 + 1500 */
	assert_true(seen.last_time == 2000 + 500 + 1000 + 750 + 1500);
	assert_true(homa_sim_leafspine_unloaded_ns(&ls, false, 1250, 1250, 2, 0) ==
		    seen.last_time);
	homa_sim_net_free(net);
}

/** Hosts split evenly into racks; leaves get host ports then uplinks. */
static void leafspine_build__layout(void **state)
{
	struct homa_sim_net *net = make(8, 2);

	(void)state;
	assert_int_equal(ls.per_rack, 4);
	assert_int_equal(homa_sim_leafspine_rack(&ls, 3), 0);
	assert_int_equal(homa_sim_leafspine_rack(&ls, 4), 1);
	assert_true(homa_sim_leafspine_same_rack(&ls, 0, 3));
	assert_false(homa_sim_leafspine_same_rack(&ls, 3, 4));
	assert_int_equal(homa_sim_switch_ports(net, 0), 4 + 2);
	assert_int_equal(homa_sim_switch_ports(net, 1), 4 + 2);
	assert_int_equal(homa_sim_switch_ports(net, 2), 2);
	assert_int_equal(homa_sim_switch_ports(net, 3), 2);
	homa_sim_net_free(net);
}

/** Bad shapes are refused. */
static void leafspine_build__rejects_bad_config(void **state)
{
	struct homa_sim_leafspine_cfg c;
	struct homa_sim_net *net;
	int i;

	(void)state;
	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	homa_sim_leafspine_cfg_default(&c);
	assert_int_equal(homa_sim_leafspine_build(net, &c, &ls), HOMA_EINVAL);
	for (i = 0; i < 2; i++)
		homa_sim_add_host(net, &blast_ops, &hosts[i]);
	c.racks = 3;
	assert_int_equal(homa_sim_leafspine_build(net, &c, &ls), HOMA_EINVAL);
	c.racks = 2;
	c.spines = 0;
	assert_int_equal(homa_sim_leafspine_build(net, &c, &ls), HOMA_EINVAL);
	c.spines = 1;
	c.core_mbps = 0;
	assert_int_equal(homa_sim_leafspine_build(net, &c, &ls), HOMA_EINVAL);
	homa_sim_net_free(net);
}

/** A packet between racks crosses leaf, spine, leaf, at the unloaded time. */
static void leafspine_route__cross_rack(void **state)
{
	struct homa_sim_net *net = make(8, 2);

	(void)state;
	hosts[1] = (struct blaster){6, 1, 1000};
	homa_sim_host_kick(net, 1);
	homa_sim_run_until(net, 1000000);
	assert_int_equal(seen.delivered, 1);
	assert_int_equal(seen.last_hops, 3);
	/* 1000 B: 800 ns at 10G, 200 ns at 40G (twice), 800 ns at 10G, 3 x 250 ns */
	assert_true(seen.last_time == 800 + 200 + 200 + 800 + 750);
	assert_true(homa_sim_leafspine_unloaded_ns(&ls, false, 1000, 1000, 1, 0) ==
		    seen.last_time);
	homa_sim_net_free(net);
}

/** Within a rack a packet takes one switch; a train pipelines. */
static void leafspine_route__same_rack_train(void **state)
{
	struct homa_sim_net *net = make(8, 2);

	(void)state;
	hosts[0] = (struct blaster){2, 5, 1250};
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	assert_int_equal(seen.delivered, 5);
	assert_int_equal(seen.last_hops, 1);
	assert_true(seen.last_time == 5 * 1000 + 250 + 1000);
	assert_true(homa_sim_leafspine_unloaded_ns(&ls, true, 1250, 1250, 5, 0) ==
		    seen.last_time);
	assert_true(homa_sim_leafspine_unloaded_ns(&ls, true, 1250, 1250, 5, 1500) ==
		    seen.last_time + 1500);
	ls.cfg.host_delay_ns = 700;
	assert_true(homa_sim_leafspine_unloaded_ns(&ls, true, 1250, 1250, 5, 0) ==
		    seen.last_time + 700);
	homa_sim_net_free(net);
}

/** Packets to another rack are spread over every uplink of the leaf. */
static void leafspine_spray__uses_every_uplink(void **state)
{
	struct homa_sim_net *net = make(8, 2);
	struct homa_sim_port_stats ps;
	int p;

	(void)state;
	hosts[0] = (struct blaster){5, 400, 500};
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 10000000);
	assert_int_equal(seen.delivered, 400);
	for (p = 4; p < 6; p++) {
		assert_int_equal(homa_sim_port_stats(net, 0, p, &ps), 0);
		assert_true(ps.pkts > 150 && ps.pkts < 250);
	}
	homa_sim_net_free(net);
}

/** Queue statistics are grouped by port class. */
static void leafspine_queues__classes(void **state)
{
	struct homa_sim_net *net = make(8, 2);
	struct homa_sim_leafspine_queues q;

	(void)state;
	hosts[0] = (struct blaster){5, 10, 1500};
	hosts[1] = (struct blaster){5, 10, 1500};
	homa_sim_host_kick(net, 0);
	homa_sim_host_kick(net, 1);
	homa_sim_run_until(net, 10000000);
	homa_sim_leafspine_queues(&ls, net, &q);
	assert_int_equal(q.tor_down.ports, 8);
	assert_int_equal(q.tor_up.ports, 4);
	assert_int_equal(q.spine_down.ports, 4);
	/* two senders at 10G into one 10G port: a queue builds at the last leaf */
	assert_true(q.tor_down.max_bytes >= 1500);
	assert_true(q.tor_down.bytes == 20 * 1500);
	homa_sim_net_free(net);
}

/** One rack needs no spines. */
static void leafspine_build__single_rack(void **state)
{
	struct homa_sim_net *net = make(4, 1);

	(void)state;
	assert_int_equal(ls.cfg.spines, 0);
	assert_int_equal(homa_sim_switch_ports(net, 0), 4);
	hosts[0] = (struct blaster){3, 1, 1250};
	homa_sim_host_kick(net, 0);
	homa_sim_run_until(net, 1000000);
	assert_int_equal(seen.delivered, 1);
	assert_true(seen.last_time == 1000 + 250 + 1000);
	homa_sim_net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leafspine_build__layout),
		cmocka_unit_test(leafspine_build__rejects_bad_config),
		cmocka_unit_test(leafspine_build__single_rack),
		cmocka_unit_test(leafspine_build__host_delay),
		cmocka_unit_test(leafspine_route__cross_rack),
		cmocka_unit_test(leafspine_route__same_rack_train),
		cmocka_unit_test(leafspine_spray__uses_every_uplink),
		cmocka_unit_test(leafspine_queues__classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
