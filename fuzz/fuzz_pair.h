/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_pair.h
 * State of the two-engine fuzz target (fuzz_pair.c): a real client and a
 * real server engine joined by a network whose losses, duplicates,
 * reordering and delays are chosen by the fuzz input (fuzz_pair_net.c).
 */
#ifndef HOMA_FUZZ_PAIR_H
#define HOMA_FUZZ_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "fuzz_alloc.h"
#include "fuzz_input.h"
#include "homa/engine.h"

#define FP_MAX_REQ 64
#define FP_MAX_INFLIGHT 512
#define FP_MAX_HELD 16
#define FP_PKT_CAP 9100
#define FP_LIAR_PORT 102  /**< the lying peer's port (fuzz_pair_liar.c) */

/**
 * One packet on the wire, a slot of the world's packet pool. Under ASan
 * everything around the packet's @len bytes is poisoned (the guard before
 * them, the unused tail after them, the whole slot while it is free), so a
 * read outside the packet is caught exactly as with a malloc of @len bytes.
 */
struct fp_pkt {
	int from;            /**< 0 = client, 1 = server */
	uint64_t due;        /**< earliest delivery time */
	uint32_t len;
	_Alignas(16) uint8_t guard[16]; /**< always poisoned */
	uint8_t bytes[FP_PKT_CAP];
};

/** One client request, identified by its serial (written in its first 8 bytes). */
struct fp_req {
	uint64_t id;          /**< client RPC id */
	uint32_t len;
	uint32_t resp_len;
	bool aborted;
	bool done;            /**< response or error seen */
	int executed;         /**< times the server application saw it */
};

/** Everything one run needs. */
struct fp_world {
	struct fz_in in;
	struct fz_alloc fa[2];
	struct homa_alloc hooks[2];
	struct homa_settings s;
	homa_engine *e[2];
	homa_addr addr[2];
	uint16_t port[2];
	uint64_t now;
	struct fp_req req[FP_MAX_REQ];
	int nreq;
	struct fp_pkt *net[FP_MAX_INFLIGHT];  /**< on the wire, from the pool */
	int nnet;
	struct fp_pkt *spare[FP_MAX_INFLIGHT]; /**< free pool slots */
	int nspare;
	uint64_t held[FP_MAX_HELD];   /**< server handles awaiting a reply */
	uint64_t held_serial[FP_MAX_HELD];
	int nheld;
	homa_addr liar;      /**< the lying peer's address (fuzz_pair_liar.c) */
	uint32_t liar_flood; /**< its flood ids so far */
	uint64_t lies;       /**< lies told */
	uint32_t sniff_len;  /**< latest honest packet (0: none) */
	int sniff_to;        /**< its receiver */
	uint8_t buf[FP_PKT_CAP];
	uint8_t liar_buf[FP_PKT_CAP];
	uint8_t sniff[FP_PKT_CAP];
	uint8_t msg[1 << 18];
	bool pool_poisoned;  /**< pool slots poisoned once (kept across inputs) */
	struct fp_pkt pool[FP_MAX_INFLIGHT];
};

/** fp_req_seed() - Pattern of request @serial. */
static inline uint64_t fp_req_seed(uint64_t serial)
{
	return serial * 0x100000001b3ull + 17;
}

/** fp_resp_seed() - Pattern of the response to request @serial. */
static inline uint64_t fp_resp_seed(uint64_t serial)
{
	return fp_req_seed(serial) ^ 0xfeedfacecafeull;
}

/* fuzz_pair_net.c */
void fp_pump(struct fp_world *w, int from, int n);
void fp_deliver(struct fp_world *w, int n);
void fp_timers(struct fp_world *w);
bool fp_settle_step(struct fp_world *w);
void fp_net_init(struct fp_world *w);
void fp_net_free(struct fp_world *w);

/* fuzz_pair_liar.c */
void fp_liar(struct fp_world *w);
void fp_liar_sniff(struct fp_world *w, int from, const uint8_t *buf, uint32_t len);
bool fp_liar_request(struct fp_world *w, const struct homa_event *ev);

#endif
