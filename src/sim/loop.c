/* SPDX-License-Identifier: MIT */
/**
 * @file loop.c
 * The event loop, hooks, host addressing and counters of the network.
 */
#include <string.h>

#include "sim/net_priv.h"

/** First address of the simulated hosts: host i is 10.0.0.0 + i + 1. */
#define HOST_NET 0x0a000000u

/** homa_sim_host_addr() - See net.h. */
homa_addr homa_sim_host_addr(int id)
{
	return homa_addr_ipv4(HOST_NET + (uint32_t)id + 1);
}

/** homa_sim_host_of() - See net.h. */
int homa_sim_host_of(const struct homa_sim_net *net, const homa_addr *a)
{
	uint32_t ip;

	if (!homa_addr_is_ipv4(a))
		return -1;
	ip = homa_addr_get_ipv4(a);
	if (ip <= HOST_NET || ip - HOST_NET > (uint32_t)net->nhosts)
		return -1;
	return (int)(ip - HOST_NET - 1);
}

/** homa_sim_num_hosts() - See net.h. */
int homa_sim_num_hosts(const struct homa_sim_net *net)
{
	return net->nhosts;
}

/** homa_sim_switch_ports() - See net.h. */
int homa_sim_switch_ports(const struct homa_sim_net *net, int sw)
{
	if (!net || sw < 0 || sw >= net->nswitches)
		return HOMA_EINVAL;
	return net->switches[sw]->nports;
}

/** homa_sim_set_route() - See net.h. */
void homa_sim_set_route(struct homa_sim_net *net, homa_sim_route_fn fn, void *ctx)
{
	net->route = fn;
	net->route_ctx = ctx;
}

/** homa_sim_set_filter() - See net.h. */
void homa_sim_set_filter(struct homa_sim_net *net, homa_sim_filter_fn fn, void *ctx)
{
	net->filter = fn;
	net->filter_ctx = ctx;
}

/** homa_sim_set_observer() - See net.h. */
void homa_sim_set_observer(struct homa_sim_net *net, homa_sim_observe_fn fn, void *ctx)
{
	net->observe = fn;
	net->observe_ctx = ctx;
}

/** homa_sim_get_observer() - See net.h. */
void homa_sim_get_observer(const struct homa_sim_net *net,
			   homa_sim_observe_fn *fn, void **ctx)
{
	*fn = net->observe;
	*ctx = net->observe_ctx;
}

/** homa_sim_host_set_down() - See net.h. */
int homa_sim_host_set_down(struct homa_sim_net *net, int id, bool down)
{
	if (!net || id < 0 || id >= net->nhosts)
		return HOMA_EINVAL;
	net->hosts[id]->down = down;
	if (!down)
		host_schedule_wake(net->hosts[id], net->now);
	return 0;
}

/** homa_sim_host_agent() - See net.h. */
void *homa_sim_host_agent(const struct homa_sim_net *net, int id)
{
	if (!net || id < 0 || id >= net->nhosts)
		return NULL;
	return net->hosts[id]->agent;
}

/** homa_sim_now() - See net.h. */
uint64_t homa_sim_now(const struct homa_sim_net *net)
{
	return net->now;
}

/** homa_sim_net_rng() - See net.h. */
struct homa_rng *homa_sim_net_rng(struct homa_sim_net *net)
{
	return &net->rng;
}

/** homa_sim_schedule() - See net.h. */
int homa_sim_schedule(struct homa_sim_net *net, uint64_t time,
		      homa_sim_event_fn fn, void *obj, void *ptr)
{
	if (time < net->now)
		time = net->now;
	return homa_sim_eventq_push(&net->q, time, fn, obj, ptr);
}

/** step_until() - Run the earliest event if it is due at or before @t_end. Return: 1 if one ran. */
static inline int step_until(struct homa_sim_net *net, uint64_t t_end)
{
	struct homa_sim_event ev;

	if (!homa_sim_eventq_pop_until(&net->q, t_end, &ev))
		return 0;
	net->now = ev.time;
	net->st.events++;
	ev.fn(ev.obj, ev.ptr, ev.time);
	return 1;
}

/** homa_sim_step() - See net.h. */
int homa_sim_step(struct homa_sim_net *net)
{
	return step_until(net, UINT64_MAX);
}

/** homa_sim_run_until() - See net.h. */
uint64_t homa_sim_run_until(struct homa_sim_net *net, uint64_t t_end)
{
	uint64_t n = 0;

	while (step_until(net, t_end))
		n++;
	if (t_end > net->now)
		net->now = t_end;
	return n;
}

/** homa_sim_run_while() - See net.h. */
int homa_sim_run_while(struct homa_sim_net *net, uint64_t t_end,
		       bool (*more)(void *ctx), void *ctx)
{
	while (more(ctx)) {
		if (!step_until(net, t_end))
			return HOMA_ETIMEDOUT;
	}
	return 0;
}

/** homa_sim_net_stats() - See net.h. */
void homa_sim_net_stats(const struct homa_sim_net *net, struct homa_sim_net_stats *out)
{
	*out = net->st;
}

/** fill_port_stats() - Copy @port's counters with the mean brought up to now. */
static void fill_port_stats(const struct homa_sim_port *port, uint64_t now,
			    struct homa_sim_port_stats *out)
{
	uint64_t area = port->area, span;

	if (now > port->area_since)
		area += port->queued_bytes * (now - port->area_since);
	*out = port->st;
	span = now - port->stats_start;
	out->mean_queued_bytes = span ? (double)area / (double)span : 0.0;
}

/** homa_sim_port_stats() - See net.h. */
int homa_sim_port_stats(const struct homa_sim_net *net, int sw, int port,
			struct homa_sim_port_stats *out)
{
	if (!net || sw < 0 || sw >= net->nswitches || port < 0 ||
	    port >= net->switches[sw]->nports)
		return HOMA_EINVAL;
	fill_port_stats(net->switches[sw]->ports[port], net->now, out);
	return 0;
}

/** homa_sim_host_port_stats() - See net.h. */
int homa_sim_host_port_stats(const struct homa_sim_net *net, int id,
			     struct homa_sim_port_stats *out)
{
	if (!net || id < 0 || id >= net->nhosts || !net->hosts[id]->nic)
		return HOMA_EINVAL;
	fill_port_stats(net->hosts[id]->nic, net->now, out);
	return 0;
}

/** reset_port() - Zero @port's counters, keeping what is queued now. */
static void reset_port(struct homa_sim_port *port, uint64_t now)
{
	uint64_t queued = port->queued_bytes;

	memset(&port->st, 0, sizeof(port->st));
	port->st.queued_bytes = port->st.max_queued_bytes = queued;
	port->area = 0;
	port->area_since = port->stats_start = now;
}

/** homa_sim_reset_port_stats() - See net.h. */
void homa_sim_reset_port_stats(struct homa_sim_net *net)
{
	int i, p;

	for (i = 0; i < net->nhosts; i++)
		if (net->hosts[i]->nic)
			reset_port(net->hosts[i]->nic, net->now);
	for (i = 0; i < net->nswitches; i++)
		for (p = 0; p < net->switches[i]->nports; p++)
			reset_port(net->switches[i]->ports[p], net->now);
}

/** homa_sim_pkts_in_flight() - See net.h. */
size_t homa_sim_pkts_in_flight(const struct homa_sim_net *net)
{
	return net->pool.in_use;
}

/** homa_sim_event_name() - See net.h. */
const char *homa_sim_event_name(int what)
{
	static const char *const names[HOMA_SIM_PKT_EVENTS] = {
		"emit", "deliver", "drop_filter", "drop_queue", "drop_route",
		"drop_host_down"};

	if (what < 0 || what >= HOMA_SIM_PKT_EVENTS)
		return "unknown";
	return names[what];
}
