/* SPDX-License-Identifier: MIT */
/**
 * @file leafspine.c
 * Leaf-spine fabric builder, packet spraying, per-class queue statistics
 * and the unloaded transfer time of a message.
 */
#include <string.h>

#include "sim/leafspine.h"

/** homa_sim_leafspine_cfg_default() - See leafspine.h. */
void homa_sim_leafspine_cfg_default(struct homa_sim_leafspine_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->racks = 9;
	c->spines = 4;
	c->host_mbps = 10000;
	c->core_mbps = 40000;
	c->switch_delay_ns = 250;
}

/** homa_sim_leafspine_rack() - See leafspine.h. */
int homa_sim_leafspine_rack(const struct homa_sim_leafspine *ls, int host)
{
	return host / ls->per_rack;
}

/** homa_sim_leafspine_same_rack() - See leafspine.h. */
bool homa_sim_leafspine_same_rack(const struct homa_sim_leafspine *ls, int a, int b)
{
	return homa_sim_leafspine_rack(ls, a) == homa_sim_leafspine_rack(ls, b);
}

/** rack_hosts() - Hosts in rack @r (the leaf's first uplink port index). */
static int rack_hosts(const struct homa_sim_leafspine *ls, int r)
{
	int first = r * ls->per_rack, end = first + ls->per_rack;

	if (end > ls->hosts)
		end = ls->hosts;
	return end > first ? end - first : 0;
}

/**
 * spray_route() - Route function: a leaf sends a packet for another rack
 * up a random uplink; a spine sends it down to the destination's leaf.
 * Return: the egress port, or -1 (no route).
 */
static int spray_route(void *ctx, struct homa_sim_net *net, int sw,
		       const struct homa_sim_pkt *pkt)
{
	const struct homa_sim_leafspine *ls = ctx;
	int racks = ls->cfg.racks;

	if (pkt->dst < 0 || pkt->dst >= ls->hosts || racks < 2)
		return -1;
	if (sw < ls->first_spine)
		return rack_hosts(ls, sw - ls->first_leaf) +
		       (int)homa_rng_below(homa_sim_net_rng(net),
					       (uint64_t)ls->cfg.spines);
	return homa_sim_leafspine_rack(ls, pkt->dst);
}

/** cfg_ok() - True if @c can be built with @hosts hosts. */
static bool cfg_ok(const struct homa_sim_leafspine_cfg *c, int hosts)
{
	if (!c || hosts < 1 || c->racks < 1 || c->racks > hosts)
		return false;
	if (!c->host_mbps || (c->racks > 1 && (c->spines < 1 || !c->core_mbps)))
		return false;
	return true;
}

/** connect_core() - Link every leaf to every spine. Return: 0 or an error. */
static int connect_core(struct homa_sim_net *net, struct homa_sim_leafspine *ls)
{
	const struct homa_sim_leafspine_cfg *c = &ls->cfg;
	struct homa_sim_link_cfg up = {c->core_mbps, c->switch_delay_ns + c->link_delay_ns,
				       c->queue_bytes};
	int r, s, rc;

	for (r = 0; r < c->racks; r++) {
		for (s = 0; s < c->spines; s++) {
			rc = homa_sim_connect_switches(net, ls->first_leaf + r,
						       ls->first_spine + s, &up, &up, NULL);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/** homa_sim_leafspine_build() - See leafspine.h. */
int homa_sim_leafspine_build(struct homa_sim_net *net,
			     const struct homa_sim_leafspine_cfg *cfg,
			     struct homa_sim_leafspine *ls)
{
	int hosts = net ? homa_sim_num_hosts(net) : 0;
	struct homa_sim_link_cfg up, down;
	int i, rc;

	if (!net || !ls || !cfg_ok(cfg, hosts))
		return HOMA_EINVAL;
	memset(ls, 0, sizeof(*ls));
	ls->cfg = *cfg;
	if (cfg->racks < 2)
		ls->cfg.spines = 0;
	ls->hosts = hosts;
	ls->per_rack = (hosts + cfg->racks - 1) / cfg->racks;
	for (i = 0; i < ls->cfg.racks + ls->cfg.spines; i++) {
		rc = homa_sim_add_switch(net);
		if (rc < 0)
			return rc;
		if (i == 0)
			ls->first_leaf = rc;
	}
	ls->first_spine = ls->first_leaf + ls->cfg.racks;
	up = (struct homa_sim_link_cfg){cfg->host_mbps,
					cfg->switch_delay_ns + cfg->link_delay_ns, 0};
	down = (struct homa_sim_link_cfg){cfg->host_mbps,
					  cfg->link_delay_ns + cfg->host_delay_ns,
					  cfg->queue_bytes};
	for (i = 0; i < hosts; i++) {
		rc = homa_sim_connect_host(net, i, ls->first_leaf + i / ls->per_rack,
					   &up, &down);
		if (rc < 0)
			return rc;
	}
	rc = connect_core(net, ls);
	if (rc < 0)
		return rc;
	homa_sim_set_route(net, spray_route, ls);
	return 0;
}

/** add_port() - Fold one port's counters into class @c. */
static void add_port(struct homa_sim_port_class *c, const struct homa_sim_port_stats *ps)
{
	c->mean_bytes += ps->mean_queued_bytes;
	if (ps->max_queued_bytes > c->max_bytes)
		c->max_bytes = ps->max_queued_bytes;
	if (ps->mean_queued_bytes > c->max_mean_bytes)
		c->max_mean_bytes = ps->mean_queued_bytes;
	c->drops += ps->drops;
	c->bytes += ps->bytes;
	c->ports++;
}

/** homa_sim_leafspine_queues() - See leafspine.h. */
void homa_sim_leafspine_queues(const struct homa_sim_leafspine *ls,
			       const struct homa_sim_net *net,
			       struct homa_sim_leafspine_queues *out)
{
	struct homa_sim_port_stats ps;
	struct homa_sim_port_class *cl[3] = {&out->tor_down, &out->tor_up, &out->spine_down};
	int r, p, n, i;

	memset(out, 0, sizeof(*out));
	for (r = 0; r < ls->cfg.racks + ls->cfg.spines; r++) {
		int sw = ls->first_leaf + r;

		n = homa_sim_switch_ports(net, sw);
		for (p = 0; p < n; p++) {
			if (homa_sim_port_stats(net, sw, p, &ps))
				continue;
			if (r >= ls->cfg.racks)
				add_port(&out->spine_down, &ps);
			else if (p < rack_hosts(ls, r))
				add_port(&out->tor_down, &ps);
			else
				add_port(&out->tor_up, &ps);
		}
	}
	for (i = 0; i < 3; i++)
		if (cl[i]->ports)
			cl[i]->mean_bytes /= cl[i]->ports;
}

/** ser() - ns to serialize @bytes at @mbps, rounded up like the network. */
static uint64_t ser(uint64_t bytes, uint64_t mbps)
{
	return (bytes * 8000 + mbps - 1) / mbps;
}

/** homa_sim_leafspine_unloaded_ns() - See leafspine.h. */
uint64_t homa_sim_leafspine_unloaded_ns(const struct homa_sim_leafspine *ls,
					bool same_rack, uint32_t full_wire,
					uint32_t last_wire, uint32_t n,
					uint64_t host_delay_ns)
{
	const struct homa_sim_leafspine_cfg *c = &ls->cfg;
	uint64_t mbps[4], delay[4], free_at[4] = {0, 0, 0, 0}, t = 0;
	int hops, h;
	uint32_t i;

	mbps[0] = c->host_mbps;
	delay[0] = c->switch_delay_ns + c->link_delay_ns;
	if (same_rack || c->racks < 2) {
		hops = 2;
	} else {
		hops = 4;
		mbps[1] = mbps[2] = c->core_mbps;
		delay[1] = delay[2] = c->switch_delay_ns + c->link_delay_ns;
	}
	mbps[hops - 1] = c->host_mbps;
	delay[hops - 1] = c->link_delay_ns + c->host_delay_ns;
	for (i = 0; i < n; i++) {
		uint32_t w = i + 1 < n ? full_wire : last_wire;

		t = 0;
		for (h = 0; h < hops; h++) {
			uint64_t start = t > free_at[h] ? t : free_at[h];

			free_at[h] = start + ser(w, mbps[h]);
			t = free_at[h] + delay[h];
		}
	}
	return t + host_delay_ns;
}
