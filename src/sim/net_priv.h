/* SPDX-License-Identifier: MIT */
/**
 * @file net_priv.h
 * Internal structures of the simulated network, shared by net.c (setup
 * and the event loop), port.c (queues and links) and host.c (agents).
 */
#ifndef HOMA_SIM_NET_PRIV_H
#define HOMA_SIM_NET_PRIV_H

#include "sim/net.h"
#include "sim/objcache.h"

/** Kinds of node a port can lead to. */
enum { NODE_HOST = 1, NODE_SWITCH = 2 };

/** One FIFO of a port. */
struct pkt_fifo {
	struct homa_sim_pkt *head, *tail;
};

/** An egress port and the link direction it feeds. */
struct homa_sim_port {
	struct homa_sim_net *net;
	int peer_kind;             /**< NODE_HOST or NODE_SWITCH */
	int peer;                  /**< host or switch id at the far end */
	uint64_t mbps, delay_ns, queue_limit;
	uint64_t busy_until;       /**< the link is serializing until then */
	bool done_pending;         /**< a port_done event is scheduled */
	unsigned nonempty;         /**< bit p set if fifo[p] has packets */
	struct pkt_fifo fifo[8];
	uint64_t queued_bytes;     /**< wire bytes waiting in the fifos */
	uint64_t area;             /**< integral of queued_bytes over ns, since stats_start */
	uint64_t area_since;       /**< time area was last brought up to date */
	uint64_t stats_start;
	struct homa_sim_port_stats st;
};

/** A host: one agent behind one NIC port. */
struct homa_sim_host {
	struct homa_sim_net *net;
	int id;
	homa_addr addr;
	const struct homa_sim_agent_ops *ops;
	void *agent;
	struct homa_sim_port *nic; /**< NULL until connected */
	bool down;
	uint64_t wake_at;          /**< the scheduled wakeup, UINT64_MAX if none */
	struct homa_sim_timer wake; /**< its event (one per host, moved when it changes) */
};

/** A switch: ports plus the port toward each directly attached host. */
struct homa_sim_switch {
	int id;
	struct homa_sim_port **ports;
	int nports;
	int *host_port;            /**< indexed by host id; -1 if not attached */
	int host_port_len;
};

/** The network. */
struct homa_sim_net {
	struct homa_sim_config cfg;
	struct homa_sim_eventq q;
	struct homa_sim_pool pool;
	struct homa_rng rng;
	uint64_t now;
	uint64_t next_uid;
	struct homa_sim_host **hosts;
	int nhosts, hosts_cap;
	struct homa_sim_switch **switches;
	int nswitches, switches_cap;
	homa_sim_route_fn route; void *route_ctx;
	homa_sim_filter_fn filter; void *filter_ctx;
	homa_sim_observe_fn observe; void *observe_ctx;
	struct homa_sim_net_stats st;
	struct homa_sim_objcache engine_mem; /**< see homa_sim_engine_alloc() */
	struct homa_alloc engine_alloc;
};

/** Tell the observer about @pkt (if there is one). */
static inline void net_observe(struct homa_sim_net *net,
			       const struct homa_sim_pkt *pkt, int what)
{
	if (net->observe)
		net->observe(net->observe_ctx, pkt, what, net->now);
}

/* port.c */
struct homa_sim_port *port_new(struct homa_sim_net *net,
			       const struct homa_sim_link_cfg *cfg,
			       int peer_kind, int peer);
void port_free(struct homa_sim_port *port);
uint64_t port_occupy(struct homa_sim_port *port, const struct homa_sim_pkt *pkt);
uint64_t port_send(struct homa_sim_port *port, struct homa_sim_pkt *pkt,
		   uint64_t extra_delay);
void port_send_copy(struct homa_sim_port *port, struct homa_sim_pkt *pkt,
		    uint64_t depart, uint64_t extra_delay);
void port_enqueue(struct homa_sim_port *port, struct homa_sim_pkt *pkt);
void port_occupancy_update(struct homa_sim_port *port, uint64_t now);
void net_drop(struct homa_sim_net *net, struct homa_sim_pkt *pkt, int why);

/* host.c */
void host_deliver(struct homa_sim_host *h, struct homa_sim_pkt *pkt);
void host_schedule_wake(struct homa_sim_host *h, uint64_t t);

#endif /* HOMA_SIM_NET_PRIV_H */
