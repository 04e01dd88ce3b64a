/* SPDX-License-Identifier: MIT */
/**
 * @file net.c
 * The network object: configuration, topology, hooks, the event loop and
 * counters. Queues and links are in port.c, hosts in host.c.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/net_priv.h"


/** homa_sim_config_default() - See net.h. */
void homa_sim_config_default(struct homa_sim_config *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->max_pkt_bytes = 2048;
}

/** homa_sim_net_new() - See net.h. */
int homa_sim_net_new(struct homa_sim_net **out, const struct homa_sim_config *cfg)
{
	struct homa_sim_net *net;

	*out = NULL;
	net = calloc(1, sizeof(*net));
	if (!net)
		return HOMA_ENOMEM;
	if (cfg)
		net->cfg = *cfg;
	else
		homa_sim_config_default(&net->cfg);
	if (net->cfg.max_pkt_bytes < 64) {
		free(net);
		return HOMA_EINVAL;
	}
	homa_sim_eventq_init(&net->q);
	homa_sim_pool_init(&net->pool, net->cfg.max_pkt_bytes);
	homa_rng_seed(&net->rng, net->cfg.seed);
	homa_sim_objcache_init(&net->engine_mem, net->cfg.engine_cache_bytes);
	net->engine_alloc.alloc = homa_sim_objcache_alloc;
	net->engine_alloc.free = homa_sim_objcache_free;
	net->engine_alloc.ctx = &net->engine_mem;
	*out = net;
	return 0;
}

/** homa_sim_engine_alloc() - See net.h. */
const struct homa_alloc *homa_sim_engine_alloc(struct homa_sim_net *net)
{
	return net->cfg.engine_cache_bytes ? &net->engine_alloc : NULL;
}

/** homa_sim_net_free() - See net.h. */
void homa_sim_net_free(struct homa_sim_net *net)
{
	int i, p;

	if (!net)
		return;
	for (i = 0; i < net->nhosts; i++) {
		struct homa_sim_host *h = net->hosts[i];

		if (h->ops->destroy)
			h->ops->destroy(h->agent);
		port_free(h->nic);
		free(h);
	}
	for (i = 0; i < net->nswitches; i++) {
		struct homa_sim_switch *sw = net->switches[i];

		for (p = 0; p < sw->nports; p++)
			port_free(sw->ports[p]);
		free(sw->ports);
		free(sw->host_port);
		free(sw);
	}
	free(net->hosts);
	free(net->switches);
	homa_sim_eventq_free(&net->q);
	homa_sim_pool_free(&net->pool);
	homa_sim_objcache_release(&net->engine_mem); /* after the agents: engines free into it */
	free(net);
}

/** grow_array() - Make room for one more pointer in *@arr. Return: 0 or HOMA_ENOMEM. */
static int grow_array(void ***arr, int len, int *cap)
{
	void **n;
	int c;

	if (len < *cap)
		return 0;
	c = *cap ? 2 * *cap : 16;
	n = realloc(*arr, (size_t)c * sizeof(*n));
	if (!n)
		return HOMA_ENOMEM;
	*arr = n;
	*cap = c;
	return 0;
}

/** homa_sim_add_host() - See net.h. */
int homa_sim_add_host(struct homa_sim_net *net,
		      const struct homa_sim_agent_ops *ops, void *agent)
{
	struct homa_sim_host *h;

	if (!net || !ops || !ops->input || !ops->output)
		return HOMA_EINVAL;
	if (grow_array((void ***)&net->hosts, net->nhosts, &net->hosts_cap))
		return HOMA_ENOMEM;
	h = calloc(1, sizeof(*h));
	if (!h)
		return HOMA_ENOMEM;
	h->net = net;
	h->id = net->nhosts;
	h->addr = homa_sim_host_addr(h->id);
	h->ops = ops;
	h->agent = agent;
	h->wake_at = UINT64_MAX;
	net->hosts[net->nhosts++] = h;
	return h->id;
}

/** homa_sim_add_switch() - See net.h. */
int homa_sim_add_switch(struct homa_sim_net *net)
{
	struct homa_sim_switch *sw;

	if (!net)
		return HOMA_EINVAL;
	if (grow_array((void ***)&net->switches, net->nswitches, &net->switches_cap))
		return HOMA_ENOMEM;
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return HOMA_ENOMEM;
	sw->id = net->nswitches;
	net->switches[net->nswitches++] = sw;
	return sw->id;
}

/** switch_add_port() - Append @port to @sw. Return: its index or HOMA_ENOMEM. */
static int switch_add_port(struct homa_sim_switch *sw, struct homa_sim_port *port)
{
	struct homa_sim_port **n = realloc(sw->ports, (size_t)(sw->nports + 1) * sizeof(*n));

	if (!n)
		return HOMA_ENOMEM;
	sw->ports = n;
	sw->ports[sw->nports] = port;
	return sw->nports++;
}

/** set_host_port() - Remember that @host hangs off @sw's port @port. */
static int set_host_port(struct homa_sim_switch *sw, int host, int port)
{
	if (host >= sw->host_port_len) {
		int len = host + 16, i;
		int *n = realloc(sw->host_port, (size_t)len * sizeof(*n));

		if (!n)
			return HOMA_ENOMEM;
		for (i = sw->host_port_len; i < len; i++)
			n[i] = -1;
		sw->host_port = n;
		sw->host_port_len = len;
	}
	sw->host_port[host] = port;
	return 0;
}

/** link_ok() - True if @c describes a usable link. */
static bool link_ok(const struct homa_sim_link_cfg *c)
{
	return c && c->mbps > 0;
}

/** homa_sim_connect_host() - See net.h. */
int homa_sim_connect_host(struct homa_sim_net *net, int host, int sw_id,
			  const struct homa_sim_link_cfg *up,
			  const struct homa_sim_link_cfg *down)
{
	struct homa_sim_switch *sw;
	struct homa_sim_port *nic, *port;
	int idx;

	if (!net || host < 0 || host >= net->nhosts || sw_id < 0 ||
	    sw_id >= net->nswitches || !link_ok(up) || !link_ok(down) ||
	    net->hosts[host]->nic)
		return HOMA_EINVAL;
	sw = net->switches[sw_id];
	nic = port_new(net, up, NODE_SWITCH, sw_id);
	port = port_new(net, down, NODE_HOST, host);
	if (!nic || !port || set_host_port(sw, host, sw->nports)) {
		port_free(nic);
		port_free(port);
		return HOMA_ENOMEM;
	}
	idx = switch_add_port(sw, port);
	if (idx < 0) {
		sw->host_port[host] = -1;
		port_free(nic);
		port_free(port);
		return idx;
	}
	nic->queue_limit = 0;
	net->hosts[host]->nic = nic;
	return idx;
}

/** homa_sim_connect_switches() - See net.h. */
int homa_sim_connect_switches(struct homa_sim_net *net, int a, int b,
			      const struct homa_sim_link_cfg *ab,
			      const struct homa_sim_link_cfg *ba, int *port_b)
{
	struct homa_sim_port *pa, *pb;
	int ia, ib;

	if (!net || a < 0 || b < 0 || a >= net->nswitches || b >= net->nswitches ||
	    a == b || !link_ok(ab) || !link_ok(ba))
		return HOMA_EINVAL;
	pa = port_new(net, ab, NODE_SWITCH, b);
	pb = port_new(net, ba, NODE_SWITCH, a);
	if (!pa || !pb) {
		port_free(pa);
		port_free(pb);
		return HOMA_ENOMEM;
	}
	ia = switch_add_port(net->switches[a], pa);
	if (ia < 0) {
		port_free(pa);
		port_free(pb);
		return ia;
	}
	ib = switch_add_port(net->switches[b], pb);
	if (ib < 0) {
		net->switches[a]->nports--;
		port_free(pa);
		port_free(pb);
		return ib;
	}
	if (port_b)
		*port_b = ib;
	return ia;
}

/** homa_sim_star() - See net.h. */
int homa_sim_star(struct homa_sim_net *net, const struct homa_sim_link_cfg *link)
{
	int sw, i, rc;

	if (!net || !link_ok(link))
		return HOMA_EINVAL;
	sw = homa_sim_add_switch(net);
	if (sw < 0)
		return sw;
	for (i = 0; i < net->nhosts; i++) {
		if (net->hosts[i]->nic)
			continue;
		rc = homa_sim_connect_host(net, i, sw, link, link);
		if (rc < 0)
			return rc;
	}
	return sw;
}
