/* SPDX-License-Identifier: MIT */
/**
 * @file port.c
 * Egress ports: 8 strict-priority FIFOs sharing a drop-tail byte limit,
 * serialization at the link rate, propagation delay, and forwarding of
 * packets that arrive at a switch.
 */
#include <stdlib.h>

#include "sim/net_priv.h"

static void port_done(void *obj, void *ptr, uint64_t now);

/** port_new() - Allocate a port feeding a link described by @cfg. Return: NULL on ENOMEM. */
struct homa_sim_port *port_new(struct homa_sim_net *net,
			       const struct homa_sim_link_cfg *cfg,
			       int peer_kind, int peer)
{
	struct homa_sim_port *port = calloc(1, sizeof(*port));

	if (!port)
		return NULL;
	port->net = net;
	port->peer_kind = peer_kind;
	port->peer = peer;
	port->mbps = cfg->mbps;
	port->delay_ns = cfg->delay_ns;
	port->queue_limit = cfg->queue_bytes;
	port->stats_start = port->area_since = net->now;
	return port;
}

/** port_free() - Return queued packets to the pool and free @port. NULL is ignored. */
void port_free(struct homa_sim_port *port)
{
	int p;

	if (!port)
		return;
	for (p = 0; p < 8; p++) {
		while (port->fifo[p].head) {
			struct homa_sim_pkt *pkt = port->fifo[p].head;

			port->fifo[p].head = pkt->next;
			homa_sim_pool_put(&port->net->pool, pkt);
		}
	}
	free(port);
}

/** net_drop() - Count, report and recycle a packet dropped for reason @why. */
void net_drop(struct homa_sim_net *net, struct homa_sim_pkt *pkt, int why)
{
	net->st.drops[why]++;
	net_observe(net, pkt, why);
	homa_sim_pool_put(&net->pool, pkt);
}

/** ser_ns() - Nanoseconds to serialize @bytes at @mbps, rounded up. */
static inline uint64_t ser_ns(uint64_t bytes, uint64_t mbps)
{
	return (bytes * 8000 + mbps - 1) / mbps;
}

/** port_occupancy_update() - Bring the occupancy integral up to @now. */
void port_occupancy_update(struct homa_sim_port *port, uint64_t now)
{
	if (now > port->area_since) {
		port->area += port->queued_bytes * (now - port->area_since);
		port->area_since = now;
	}
}

/** switch_forward() - Pick @pkt's egress port at switch @sw and queue it there. */
static void switch_forward(struct homa_sim_net *net, struct homa_sim_switch *sw,
			   struct homa_sim_pkt *pkt)
{
	int port = -1;

	if (pkt->dst >= 0 && pkt->dst < sw->host_port_len)
		port = sw->host_port[pkt->dst];
	if (port < 0 && pkt->dst >= 0 && net->route)
		port = net->route(net->route_ctx, net, sw->id, pkt);
	if (port < 0 || port >= sw->nports) {
		net_drop(net, pkt, HOMA_SIM_DROP_ROUTE);
		return;
	}
	pkt->hops++;
	port_enqueue(sw->ports[port], pkt);
}

/** port_arrive() - Event: @ptr (a packet) reached the far end of port @obj's link. */
static void port_arrive(void *obj, void *ptr, uint64_t now)
{
	struct homa_sim_port *port = obj;
	struct homa_sim_net *net = port->net;

	(void)now;
	if (port->peer_kind == NODE_HOST)
		host_deliver(net->hosts[port->peer], ptr);
	else
		switch_forward(net, net->switches[port->peer], ptr);
}

/** launch() - Schedule @pkt's arrival at @t; drops it if no event memory. */
static void launch(struct homa_sim_port *port, struct homa_sim_pkt *pkt, uint64_t t)
{
	struct homa_sim_net *net = port->net;

	if (homa_sim_eventq_push(&net->q, t, port_arrive, port, pkt)) {
		net->st.alloc_failures++;
		homa_sim_pool_put(&net->pool, pkt);
	}
}

/**
 * port_occupy() - Start serializing @pkt now on @port's idle link and count
 * it. Return: the time the link is free again.
 */
uint64_t port_occupy(struct homa_sim_port *port, const struct homa_sim_pkt *pkt)
{
	port->busy_until = port->net->now + ser_ns(pkt->wire_len, port->mbps);
	port->st.pkts++;
	port->st.bytes += pkt->wire_len;
	port->st.prio_pkts[pkt->prio & 7]++;
	return port->busy_until;
}

/**
 * port_send() - Serialize @pkt now on an idle link and schedule its
 * arrival (@extra_delay later than the link alone would). Return: the time
 * the link is free again.
 */
uint64_t port_send(struct homa_sim_port *port, struct homa_sim_pkt *pkt,
		   uint64_t extra_delay)
{
	uint64_t done = port_occupy(port, pkt);

	launch(port, pkt, done + port->delay_ns + extra_delay);
	return done;
}

/** port_send_copy() - Schedule a duplicate that left with the original (no link time). */
void port_send_copy(struct homa_sim_port *port, struct homa_sim_pkt *pkt,
		    uint64_t depart, uint64_t extra_delay)
{
	launch(port, pkt, depart + port->delay_ns + extra_delay);
}

/** fifo_pop_highest() - Remove the first packet of the highest non-empty priority. */
static struct homa_sim_pkt *fifo_pop_highest(struct homa_sim_port *port)
{
	int p = 31 - __builtin_clz(port->nonempty);
	struct pkt_fifo *f = &port->fifo[p];
	struct homa_sim_pkt *pkt = f->head;

	f->head = pkt->next;
	if (!f->head) {
		f->tail = NULL;
		port->nonempty &= ~(1u << p);
	}
	pkt->next = NULL;
	return pkt;
}

/** schedule_done() - Make sure a port_done event fires when the link frees up. */
static void schedule_done(struct homa_sim_port *port)
{
	if (port->done_pending)
		return;
	if (homa_sim_eventq_push(&port->net->q, port->busy_until, port_done,
				 port, NULL)) {
		port->net->st.alloc_failures++;
		return;
	}
	port->done_pending = true;
}

/** port_done() - Event: the link of port @obj is free; send the next queued packet. */
static void port_done(void *obj, void *ptr, uint64_t now)
{
	struct homa_sim_port *port = obj;
	struct homa_sim_pkt *pkt;

	(void)ptr;
	port->done_pending = false;
	if (!port->nonempty)
		return;
	port_occupancy_update(port, now);
	pkt = fifo_pop_highest(port);
	port->st.queued_bytes = port->queued_bytes -= pkt->wire_len;
	port_send(port, pkt, 0);
	if (port->nonempty)
		schedule_done(port);
}

/**
 * port_enqueue() - A switch hands @pkt to egress @port: sent at once if
 * the link is idle and nothing waits, else queued by priority, or dropped
 * (HOMA_SIM_DROP_QUEUE) if the buffer limit would be exceeded.
 */
void port_enqueue(struct homa_sim_port *port, struct homa_sim_pkt *pkt)
{
	struct homa_sim_net *net = port->net;
	struct pkt_fifo *f;

	if (!port->nonempty && port->busy_until <= net->now) {
		port_send(port, pkt, 0);
		return;
	}
	if (port->queue_limit &&
	    port->queued_bytes + pkt->wire_len > port->queue_limit) {
		port->st.drops++;
		net_drop(net, pkt, HOMA_SIM_DROP_QUEUE);
		return;
	}
	port_occupancy_update(port, net->now);
	f = &port->fifo[pkt->prio & 7];
	pkt->next = NULL;
	if (f->tail)
		f->tail->next = pkt;
	else
		f->head = pkt;
	f->tail = pkt;
	port->nonempty |= 1u << (pkt->prio & 7);
	port->queued_bytes += pkt->wire_len;
	port->st.queued_bytes = port->queued_bytes;
	if (port->queued_bytes > port->st.max_queued_bytes)
		port->st.max_queued_bytes = port->queued_bytes;
	schedule_done(port);
}
