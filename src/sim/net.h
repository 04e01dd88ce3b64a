/* SPDX-License-Identifier: MIT */
/**
 * @file net.h
 * A deterministic discrete-event network: hosts and switches joined by
 * full-duplex links with a rate and a delay. Every egress port of a switch
 * has 8 strict-priority FIFO queues sharing one byte limit (drop-tail) and
 * tracks its occupancy (time-weighted mean and max). A host runs an
 * "agent" (normally a Homa engine, see engine_host.h; tests can plug in a
 * fake traffic source): the host pulls packets from its agent only while
 * its NIC is free, so the NIC serializes at its link rate.
 *
 * Hooks let users shape the network without touching it: a route function
 * for topologies with more than one switch, a packet filter that decides
 * each packet's fate when it leaves its host (drop, duplicate, extra
 * delay), and an observer that sees every packet event (for traces).
 *
 * Time is in nanoseconds and starts at 0. A network with the same
 * configuration, seed and inputs produces the same events in the same
 * order. Not thread-safe; one network per thread.
 */
#ifndef HOMA_SIM_NET_H
#define HOMA_SIM_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "homa/engine.h"
#include "sim/eventq.h"
#include "sim/pkt.h"
#include "util/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

struct homa_sim_net;

/** Parameters of one direction of a link (the egress port feeding it). */
struct homa_sim_link_cfg {
	uint64_t mbps;        /**< rate, megabits per second (> 0) */
	uint64_t delay_ns;    /**< propagation plus forwarding delay */
	uint64_t queue_bytes; /**< egress buffer of a switch port; 0 = unlimited */
};

/** Network-wide settings; fill with homa_sim_config_default(). */
struct homa_sim_config {
	uint64_t seed;            /**< seeds homa_sim_net_rng() (default 1) */
	uint32_t max_pkt_bytes;   /**< largest packet a host may emit (2048) */
	uint32_t wire_overhead;   /**< bytes added to each packet's link time (0) */
	uint64_t host_rx_delay_ns;/**< software delay before a host sees a packet (0) */
	uint64_t engine_cache_bytes; /**< engines added by homa_sim_engine_host_add() recycle
					  their small objects through a cache of up to this many
					  free bytes (objcache.h); 0: they use malloc (default) */
};

/** The code a host runs. Only input and output are required. */
struct homa_sim_agent_ops {
	/** A packet arrived from host address @src; @buf may be modified. */
	void (*input)(void *agent, const homa_addr *src, uint8_t *buf,
		      size_t len, uint64_t now);
	/** Next packet to send into @buf (like homa_engine_output()). */
	int (*output)(void *agent, uint64_t now, uint8_t *buf, size_t cap,
		      struct homa_tx *tx);
	/**
	 * When the agent wants on_timer, and to be asked for output again
	 * while its NIC is idle (UINT64_MAX: never).
	 */
	uint64_t (*next_deadline)(void *agent);
	/** Called at or after next_deadline (NULL: nothing to run then). */
	void (*on_timer)(void *agent, uint64_t now);
	/** Called by homa_sim_net_free(): release the agent. */
	void (*destroy)(void *agent);
};

/** What happened to a packet, as told to the observer. */
enum homa_sim_pkt_event {
	HOMA_SIM_EMIT = 0,        /**< a host put it on its NIC (once per packet) */
	HOMA_SIM_DELIVER,         /**< handed to the destination's agent */
	HOMA_SIM_DROP_FILTER,     /**< the filter dropped it (or this copy) */
	HOMA_SIM_DROP_QUEUE,      /**< a switch port's buffer was full */
	HOMA_SIM_DROP_ROUTE,      /**< no route to the destination */
	HOMA_SIM_DROP_HOST_DOWN,  /**< the destination or source host is down */
	HOMA_SIM_PKT_EVENTS
};

/** Most copies the filter may ask for (original plus duplicates). */
#define HOMA_SIM_MAX_COPIES 4

/** The filter's verdict on one emitted packet. */
struct homa_sim_fate {
	int copies; /**< 0 drops it, 1 delivers it, 2.. adds duplicates */
	uint64_t extra_delay_ns[HOMA_SIM_MAX_COPIES]; /**< per copy, on the first link */
};

/**
 * A packet filter, called once per emitted packet with @fate preset to
 * one copy and no extra delay. It may change @fate, not the packet.
 */
typedef void (*homa_sim_filter_fn)(void *ctx, const struct homa_sim_pkt *pkt,
				   uint64_t now, struct homa_sim_fate *fate);

/** Observer of packet events (see enum homa_sim_pkt_event). */
typedef void (*homa_sim_observe_fn)(void *ctx, const struct homa_sim_pkt *pkt,
				    int what, uint64_t now);

/**
 * Route function for packets whose destination host is not attached to
 * switch @sw. Return: the egress port index on @sw, or -1 (dropped as
 * HOMA_SIM_DROP_ROUTE). It may use homa_sim_net_rng() (packet spraying).
 */
typedef int (*homa_sim_route_fn)(void *ctx, struct homa_sim_net *net, int sw,
				 const struct homa_sim_pkt *pkt);

/** Counters of one egress port. */
struct homa_sim_port_stats {
	uint64_t pkts;           /**< packets transmitted */
	uint64_t bytes;          /**< wire bytes transmitted */
	uint64_t drops;          /**< packets dropped on a full buffer */
	uint64_t queued_bytes;   /**< now waiting (not counting the one on the wire) */
	uint64_t max_queued_bytes;
	double mean_queued_bytes;/**< time-weighted since the last reset */
	uint64_t prio_pkts[8];   /**< transmitted, by priority */
};

/** Network-wide counters. */
struct homa_sim_net_stats {
	uint64_t events;             /**< events processed */
	uint64_t pkts_emitted;       /**< packets hosts put on their NICs */
	uint64_t bytes_emitted;
	uint64_t pkts_delivered;     /**< copies handed to agents */
	uint64_t bytes_delivered;
	uint64_t drops[HOMA_SIM_PKT_EVENTS]; /**< by HOMA_SIM_DROP_* */
	uint64_t duplicates;         /**< extra copies made by the filter */
	uint64_t output_errors;      /**< agent output() returned an error */
	uint64_t alloc_failures;     /**< packet or event memory exhausted */
	uint64_t busy_wakeups;       /**< host serviced with its deadline still past */
};

/** homa_sim_config_default() - Fill @c with the defaults documented per field. */
void homa_sim_config_default(struct homa_sim_config *c);

/**
 * homa_sim_net_new() - Create an empty network.
 * @cfg: settings (copied); NULL for the defaults.
 * Return: 0 and *@out (caller frees with homa_sim_net_free()),
 * HOMA_EINVAL (max_pkt_bytes below 64) or HOMA_ENOMEM.
 */
int homa_sim_net_new(struct homa_sim_net **out, const struct homa_sim_config *cfg);

/**
 * homa_sim_net_free() - Destroy @net, its packets, ports and pending
 * events; calls each agent's destroy op. NULL is ignored.
 */
void homa_sim_net_free(struct homa_sim_net *net);

/**
 * homa_sim_engine_alloc() - The allocation hooks engines on @net should
 * use: the network's recycling cache (sim/objcache.h), which it frees
 * after its agents. Return: NULL when config.engine_cache_bytes is 0 (malloc).
 */
const struct homa_alloc *homa_sim_engine_alloc(struct homa_sim_net *net);

/**
 * homa_sim_add_host() - Add a host running @agent. Its address is
 * homa_sim_host_addr(id).
 * Return: the host id (0, 1, ...), or HOMA_EINVAL (no input/output op),
 * HOMA_ENOMEM.
 */
int homa_sim_add_host(struct homa_sim_net *net,
		      const struct homa_sim_agent_ops *ops, void *agent);

/** homa_sim_add_switch() - Add a switch. Return: its id (0, 1, ...) or HOMA_ENOMEM. */
int homa_sim_add_switch(struct homa_sim_net *net);

/**
 * homa_sim_connect_host() - Link @host's NIC to switch @sw.
 * @up: host to switch (the NIC rate; queue_bytes unused: hosts queue in
 * their agent); @down: switch to host (the switch port feeding the host).
 * Return: the port index on @sw, HOMA_EINVAL (bad id or rate, or the
 * host is already connected), HOMA_ENOMEM.
 */
int homa_sim_connect_host(struct homa_sim_net *net, int host, int sw,
			  const struct homa_sim_link_cfg *up,
			  const struct homa_sim_link_cfg *down);

/**
 * homa_sim_connect_switches() - Link switch @a to switch @b.
 * @port_b: if not NULL, receives the new port index on @b.
 * Return: the port index on @a, HOMA_EINVAL, HOMA_ENOMEM.
 */
int homa_sim_connect_switches(struct homa_sim_net *net, int a, int b,
			      const struct homa_sim_link_cfg *ab,
			      const struct homa_sim_link_cfg *ba, int *port_b);

/**
 * homa_sim_star() - Add one switch and link every host that has no link
 * yet to it, both directions with @link.
 * Return: the switch id, or a negative error as homa_sim_connect_host().
 */
int homa_sim_star(struct homa_sim_net *net, const struct homa_sim_link_cfg *link);

/** homa_sim_set_route() - Install the route function (NULL removes it). */
void homa_sim_set_route(struct homa_sim_net *net, homa_sim_route_fn fn, void *ctx);

/** homa_sim_set_filter() - Install the packet filter (NULL removes it). */
void homa_sim_set_filter(struct homa_sim_net *net, homa_sim_filter_fn fn, void *ctx);

/** homa_sim_set_observer() - Install the observer (NULL removes it). */
void homa_sim_set_observer(struct homa_sim_net *net, homa_sim_observe_fn fn, void *ctx);

/** homa_sim_get_observer() - The observer installed now (for chaining). */
void homa_sim_get_observer(const struct homa_sim_net *net,
			   homa_sim_observe_fn *fn, void **ctx);

/** homa_sim_host_addr() - The address of host @id (10.0.0.0 + id + 1). */
homa_addr homa_sim_host_addr(int id);

/** homa_sim_host_of() - The host id with address @a, or -1. */
int homa_sim_host_of(const struct homa_sim_net *net, const homa_addr *a);

/** homa_sim_num_hosts() - Hosts added so far. */
int homa_sim_num_hosts(const struct homa_sim_net *net);

/** homa_sim_switch_ports() - Ports of switch @sw, or HOMA_EINVAL. */
int homa_sim_switch_ports(const struct homa_sim_net *net, int sw);

/**
 * homa_sim_host_kick() - Ask host @id to service its agent now (after
 * the caller gave the agent work, such as a new RPC). Return: 0 or HOMA_EINVAL.
 */
int homa_sim_host_kick(struct homa_sim_net *net, int id);

/**
 * homa_sim_host_set_down() - Take host @id off the network (true) or
 * back (false). A down host emits nothing, is never serviced, and packets
 * to it are dropped (HOMA_SIM_DROP_HOST_DOWN). Return: 0 or HOMA_EINVAL.
 */
int homa_sim_host_set_down(struct homa_sim_net *net, int id, bool down);

/** homa_sim_host_agent() - The agent of host @id, or NULL. */
void *homa_sim_host_agent(const struct homa_sim_net *net, int id);

/** homa_sim_now() - Current simulated time, ns. */
uint64_t homa_sim_now(const struct homa_sim_net *net);

/** homa_sim_net_rng() - The network's seeded generator (for hooks and traffic). */
struct homa_rng *homa_sim_net_rng(struct homa_sim_net *net);

/**
 * homa_sim_schedule() - Run @fn(@obj, @ptr, @time) at @time (not earlier
 * than now; earlier times are moved to now). Return: 0 or HOMA_ENOMEM.
 */
int homa_sim_schedule(struct homa_sim_net *net, uint64_t time,
		      homa_sim_event_fn fn, void *obj, void *ptr);

/** homa_sim_step() - Process one event. Return: 1, or 0 if none is pending. */
int homa_sim_step(struct homa_sim_net *net);

/**
 * homa_sim_run_until() - Process every event due at or before @t_end,
 * then set the clock to @t_end (if it is later than now).
 * Return: events processed.
 */
uint64_t homa_sim_run_until(struct homa_sim_net *net, uint64_t t_end);

/**
 * homa_sim_run_while() - Process events until @more(@ctx) is false
 * (checked before each event), the next event is after @t_end, or none is left.
 * Return: 0 if @more became false, HOMA_ETIMEDOUT otherwise.
 */
int homa_sim_run_while(struct homa_sim_net *net, uint64_t t_end,
		       bool (*more)(void *ctx), void *ctx);

/** homa_sim_net_stats() - Copy the network counters into @out. */
void homa_sim_net_stats(const struct homa_sim_net *net, struct homa_sim_net_stats *out);

/**
 * homa_sim_port_stats() - Counters of egress port @port of switch @sw
 * (mean occupancy up to now). Return: 0 or HOMA_EINVAL.
 */
int homa_sim_port_stats(const struct homa_sim_net *net, int sw, int port,
			struct homa_sim_port_stats *out);

/**
 * homa_sim_host_port_stats() - Counters of host @id's NIC (its
 * transmissions; the queue fields stay 0). Return: 0 or HOMA_EINVAL.
 */
int homa_sim_host_port_stats(const struct homa_sim_net *net, int id,
			     struct homa_sim_port_stats *out);

/** homa_sim_reset_port_stats() - Zero every port's counters and restart means now. */
void homa_sim_reset_port_stats(struct homa_sim_net *net);

/** homa_sim_pkts_in_flight() - Packets held by the network now (leak checks). */
size_t homa_sim_pkts_in_flight(const struct homa_sim_net *net);

/** homa_sim_event_name() - Short name of a packet event ("emit", "deliver", ...). */
const char *homa_sim_event_name(int what);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_NET_H */
