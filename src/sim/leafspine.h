/* SPDX-License-Identifier: MIT */
/**
 * @file leafspine.h
 * A two-level leaf-spine fabric on a homa_sim_net: hosts split evenly into
 * racks, one top-of-rack (leaf) switch per rack, every leaf linked to every
 * spine. Packets between racks are sprayed: each one takes an uplink chosen
 * at random (the network's seeded generator), and the spine forwards it to
 * the destination's leaf. Each switch adds a fixed forwarding delay, which
 * is modelled as the delay of every link that ends at a switch.
 *
 * The builder owns nothing in the network; it keeps the layout (which
 * switch is which, where each host hangs) in a small struct the caller
 * owns, also used for route decisions and for queue statistics.
 */
#ifndef HOMA_SIM_LEAFSPINE_H
#define HOMA_SIM_LEAFSPINE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Shape and speeds of the fabric. */
struct homa_sim_leafspine_cfg {
	int racks;                 /**< leaf switches (>= 1); hosts split evenly */
	int spines;                /**< spine switches (>= 1 when racks > 1) */
	uint64_t host_mbps;        /**< host <-> leaf links */
	uint64_t core_mbps;        /**< leaf <-> spine links (one per pair) */
	uint64_t switch_delay_ns;  /**< forwarding delay of every switch */
	uint64_t link_delay_ns;    /**< propagation delay of every link */
	uint64_t queue_bytes;      /**< buffer of every switch port; 0 = unlimited */
	/**
	 * Software time of the receiving host per packet, added to the delay
	 * of every leaf -> host link (a pure pipeline delay, like the net's
	 * host_rx_delay_ns, but without an extra event per packet).
	 */
	uint64_t host_delay_ns;
};

/** The built fabric. Switch ids: leaves 0..racks-1, spines after them. */
struct homa_sim_leafspine {
	struct homa_sim_leafspine_cfg cfg;
	int hosts;
	int per_rack;              /**< hosts per rack (last rack may hold fewer) */
	int first_leaf, first_spine;
	int leaf_up0;              /**< port index of the first uplink on every leaf */
};

/** Occupancy of one class of switch ports (bytes waiting, not counting the one on the wire). */
struct homa_sim_port_class {
	int ports;
	uint64_t max_bytes;        /**< largest occupancy of any port of the class */
	double mean_bytes;         /**< time-weighted mean, averaged over the ports */
	double max_mean_bytes;     /**< largest time-weighted mean of one port */
	uint64_t drops;
	uint64_t bytes;            /**< wire bytes transmitted */
};

/** Queue statistics by port class. */
struct homa_sim_leafspine_queues {
	struct homa_sim_port_class tor_down;  /**< leaf -> host */
	struct homa_sim_port_class tor_up;    /**< leaf -> spine */
	struct homa_sim_port_class spine_down;/**< spine -> leaf */
};

/**
 * homa_sim_leafspine_cfg_default() - The SIGCOMM 2018 fabric: 9 racks,
 * 4 spines, 10 Gbit/s host links, 40 Gbit/s core links, 250 ns per
 * switch, no propagation delay, unlimited buffers.
 */
void homa_sim_leafspine_cfg_default(struct homa_sim_leafspine_cfg *c);

/**
 * homa_sim_leafspine_build() - Connect every host of @net (all hosts must
 * be added first, none connected) into a leaf-spine fabric and install the
 * spraying route function (which keeps a pointer to @ls: it must outlive
 * @net's use).
 * @ls: caller-owned, filled here.
 * Return: 0, HOMA_EINVAL (no hosts, racks < 1, racks > hosts, spines < 1
 * with several racks, a zero rate), or an error of homa_sim_connect_*().
 */
int homa_sim_leafspine_build(struct homa_sim_net *net,
			     const struct homa_sim_leafspine_cfg *cfg,
			     struct homa_sim_leafspine *ls);

/** homa_sim_leafspine_rack() - Rack of host @host. */
int homa_sim_leafspine_rack(const struct homa_sim_leafspine *ls, int host);

/** homa_sim_leafspine_same_rack() - True if hosts @a and @b share a leaf. */
bool homa_sim_leafspine_same_rack(const struct homa_sim_leafspine *ls, int a, int b);

/**
 * homa_sim_leafspine_queues() - Gather port statistics of @net's switches
 * by class (since the last homa_sim_reset_port_stats()).
 */
void homa_sim_leafspine_queues(const struct homa_sim_leafspine *ls,
			       const struct homa_sim_net *net,
			       struct homa_sim_leafspine_queues *out);

/**
 * homa_sim_leafspine_unloaded_ns() - Time from the first bit of a message
 * leaving the sender's NIC until its last packet reaches the receiving host
 * on an idle fabric: store-and-forward of every packet at every hop, the
 * links' rates and delays (cfg.host_delay_ns included), plus
 * @host_delay_ns once at the receiver (for software time modelled outside
 * the fabric, such as homa_sim_config.host_rx_delay_ns).
 * The message is @n packets (>= 1): @n - 1 of @full_wire wire bytes, then
 * one of @last_wire. Serialization is rounded up to whole ns per packet
 * and hop, as the network does. Return: ns.
 */
uint64_t homa_sim_leafspine_unloaded_ns(const struct homa_sim_leafspine *ls,
					bool same_rack, uint32_t full_wire,
					uint32_t last_wire, uint32_t n,
					uint64_t host_delay_ns);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_LEAFSPINE_H */
