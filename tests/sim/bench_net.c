/* SPDX-License-Identifier: MIT */
/**
 * @file bench_net.c
 * Microbenchmark of the network core (not a test): @hosts blasting hosts
 * around one switch send MTU-sized packets to random destinations at 8
 * priorities through 100 Gbps links with bounded switch buffers, for a
 * fixed number of packets. Prints events and packets per CPU second, so
 * the cost of the simulator itself (without an engine) is known.
 *   bench_sim_net [hosts] [packets]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/net.h"
#include "util/rng.h"

/** A host that sends @left packets as fast as its NIC allows. */
struct blaster {
	struct homa_sim_net *net;
	int id, hosts;
	uint64_t left, received;
};

/** bl_input() - Count a packet. */
static void bl_input(void *agent, const homa_addr *src, uint8_t *buf, size_t len,
		     uint64_t now)
{
	(void)src;
	(void)buf;
	(void)len;
	(void)now;
	((struct blaster *)agent)->received++;
}

/** bl_output() - A 1500-byte packet to a random other host. */
static int bl_output(void *agent, uint64_t now, uint8_t *buf, size_t cap,
		     struct homa_tx *tx)
{
	struct blaster *b = agent;
	struct homa_rng *r = homa_sim_net_rng(b->net);
	int dst;

	(void)now;
	if (!b->left || cap < 1500)
		return 0;
	b->left--;
	dst = (b->id + 1 + (int)homa_rng_below(r, (uint64_t)b->hosts - 1)) % b->hosts;
	memset(buf, 0, 64);
	buf[11] = 0x10;
	tx->dst = homa_sim_host_addr(dst);
	tx->priority = (uint8_t)homa_rng_below(r, 8);
	tx->len = 1500;
	return 1500;
}

static const struct homa_sim_agent_ops bl_ops = {.input = bl_input, .output = bl_output};

int main(int argc, char **argv)
{
	int hosts = argc > 1 ? atoi(argv[1]) : 16, i;
	uint64_t per = (argc > 2 ? strtoull(argv[2], NULL, 10) : 2000000) / (uint64_t)hosts;
	struct homa_sim_link_cfg link = {100000, 250, 500000};
	struct homa_sim_net_stats st;
	struct homa_sim_net *net;
	struct blaster *b;
	clock_t c0, c1;
	double cpu;

	if (hosts < 2 || homa_sim_net_new(&net, NULL))
		return 2;
	b = calloc((size_t)hosts, sizeof(*b));
	for (i = 0; i < hosts; i++) {
		b[i] = (struct blaster){net, i, hosts, per, 0};
		homa_sim_add_host(net, &bl_ops, &b[i]);
	}
	homa_sim_star(net, &link);
	for (i = 0; i < hosts; i++)
		homa_sim_host_kick(net, i);
	c0 = clock();
	while (homa_sim_step(net))
		;
	c1 = clock();
	cpu = (double)(c1 - c0) / CLOCKS_PER_SEC;
	homa_sim_net_stats(net, &st);
	printf("hosts %d packets %" PRIu64 " delivered %" PRIu64 " queue drops %" PRIu64
	       " events %" PRIu64 " cpu %.3f s: %.2f M events/s, %.2f M packets/s\n",
	       hosts, st.pkts_emitted, st.pkts_delivered, st.drops[HOMA_SIM_DROP_QUEUE],
	       st.events, cpu, st.events / cpu / 1e6, st.pkts_emitted / cpu / 1e6);
	homa_sim_net_free(net);
	free(b);
	return 0;
}
