/* SPDX-License-Identifier: MIT */
/**
 * @file pkt.h
 * Packets in flight in the simulated network, and the pool they come from.
 * Buffers are carved from slabs and recycled through a free list, so the
 * steady state allocates nothing per packet.
 */
#ifndef HOMA_SIM_PKT_H
#define HOMA_SIM_PKT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A packet crossing the network. The pool owns it; the network holds it. */
struct homa_sim_pkt {
	struct homa_sim_pkt *next; /**< link in a port queue or the free list */
	uint64_t uid;      /**< emission number (0, 1, 2, ... per network); copies share it */
	uint64_t sent_ns;  /**< when the source host put it on its NIC */
	int32_t src;       /**< source host id */
	int32_t dst;       /**< destination host id (-1: no such host) */
	uint32_t len;      /**< bytes in data[] */
	uint32_t wire_len; /**< bytes that take link time (len + network overhead) */
	uint8_t prio;      /**< 0 (lowest) .. 7 (highest) */
	uint8_t type;      /**< Homa packet type byte (data[11]) or 0 */
	uint8_t copy;      /**< 0 for the original, 1.. for duplicates */
	uint8_t hops;      /**< switch hops taken so far */
	uint8_t data[];    /**< the Homa packet, header first */
};

/** A pool of equally sized packet buffers. */
struct homa_sim_pool {
	size_t buf_cap;            /**< bytes of data[] per packet */
	size_t per_slab;           /**< packets carved per slab */
	struct homa_sim_pkt *free; /**< free list */
	void **slabs;              /**< owned slabs */
	size_t nslabs, slabs_cap;
	size_t in_use;             /**< packets handed out and not returned */
	size_t allocated;          /**< packets carved in total */
};

/**
 * homa_sim_pool_init() - Prepare an empty pool of @buf_cap-byte packets.
 * Return: 0 or HOMA_EINVAL (@buf_cap of 0).
 */
int homa_sim_pool_init(struct homa_sim_pool *p, size_t buf_cap);

/** homa_sim_pool_free() - Release every slab (packets still out become invalid). */
void homa_sim_pool_free(struct homa_sim_pool *p);

/**
 * homa_sim_pool_get() - Take a packet (fields zeroed except data[]).
 * Return: the packet, or NULL if a new slab could not be allocated.
 */
struct homa_sim_pkt *homa_sim_pool_get(struct homa_sim_pool *p);

/** homa_sim_pool_put() - Return @pkt to the pool. NULL is ignored. */
void homa_sim_pool_put(struct homa_sim_pool *p, struct homa_sim_pkt *pkt);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_PKT_H */
