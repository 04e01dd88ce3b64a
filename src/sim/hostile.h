/* SPDX-License-Identifier: MIT */
/**
 * @file hostile.h
 * A hostile peer for the simulated network: a host that runs no engine
 * and sends well-formed Homa packets whose fields lie, at a set rate,
 * beside honest hosts. It cannot forge its source address (the network
 * stamps it; forging needs what docs/ENCRYPTION.md closes), so every lie
 * is one a real host on the network can tell. Its moves (enum
 * homa_sim_hostile_move), each chosen at random among the enabled ones
 * for every packet it sends:
 *
 * - GRANT_HOG: requests of cfg.hog_length bytes whose every DATA packet
 *   claims the whole message as `incoming`; then one packet now and then,
 *   never the rest, never an answer to a grant;
 * - ID_FLOOD: one-packet requests under fresh ids chosen to collide in an
 *   unkeyed table (equal low 20 bits), whose responses are never acked;
 * - LYING_DATA: DATA packets of one message whose message_length changes
 *   from packet to packet, with unaligned, overlapping offsets, random
 *   payload sizes, `incoming` claims and wire priorities;
 * - CUTOFFS: CUTOFFS packets that are unordered or extreme, with random
 *   versions;
 * - FORGE: ACK, RPC_UNKNOWN, GRANT (past the end, priority 7), RESEND
 *   (everything), BUSY and NEED_ACK naming honest RPCs it saw on the
 *   network (it sniffs every packet), sent to both ends of those RPCs;
 * - REPLAY: honest packets it saw, and its own earlier requests, sent
 *   again verbatim;
 * - RESTART: an earlier request id announced again as a new message of a
 *   different length;
 * - AMPLIFY: RESEND of everything and GRANTs past the end at priority 7
 *   for responses it was sent, again and again.
 *
 * Responses it receives are read (to learn its answered ids) and never
 * acknowledged. Deterministic for a given network seed and cfg.seed.
 */
#ifndef HOMA_SIM_HOSTILE_H
#define HOMA_SIM_HOSTILE_H

#include <stdint.h>

#include "sim/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The hostile peer's moves (bits of homa_sim_hostile_cfg.moves). */
enum homa_sim_hostile_move {
	HOMA_HOSTILE_GRANT_HOG = 0,
	HOMA_HOSTILE_ID_FLOOD,
	HOMA_HOSTILE_LYING_DATA,
	HOMA_HOSTILE_CUTOFFS,
	HOMA_HOSTILE_FORGE,
	HOMA_HOSTILE_REPLAY,
	HOMA_HOSTILE_RESTART,
	HOMA_HOSTILE_AMPLIFY,
	HOMA_HOSTILE_MOVES
};

/** Every move. */
#define HOMA_HOSTILE_ALL ((1u << HOMA_HOSTILE_MOVES) - 1)

/** How the hostile peer behaves. */
struct homa_sim_hostile_cfg {
	uint32_t moves;        /**< bit (1 << move) enables a move */
	int victim;            /**< host its own requests go to */
	uint16_t port;         /**< Homa port of the honest hosts */
	uint16_t sport;        /**< its own source port */
	uint64_t start_ns;     /**< first packet */
	uint64_t stop_ns;      /**< no packet at or after (0: never stops) */
	uint64_t interval_ns;  /**< one packet each (its NIC may make it later) */
	uint32_t hog_length;   /**< GRANT_HOG message length (10,000,000) */
	uint32_t mtu;          /**< largest packet it sends (1500) */
	uint64_t seed;         /**< its choices */
};

/** What it did, by move, and what it heard. */
struct homa_sim_hostile_stats {
	uint64_t sent[HOMA_HOSTILE_MOVES]; /**< packets sent per move */
	uint64_t received;                 /**< packets delivered to it */
	uint64_t responses;                /**< distinct responses it was sent (never acked) */
	uint64_t sniffed;                  /**< honest packets it saw */
};

struct homa_sim_hostile;

/** homa_sim_hostile_cfg_default() - All moves, a packet every 2 us, defaults above. */
void homa_sim_hostile_cfg_default(struct homa_sim_hostile_cfg *c);

/**
 * homa_sim_hostile_add() - Add the hostile host to @net (link it with
 * homa_sim_connect_host() or homa_sim_star() after) and start sniffing
 * (the observer installed now is chained: it still sees every event).
 * @out: receives the peer (the network owns it; freed with the net).
 * Return: its host id, or HOMA_EINVAL (no move, interval 0, mtu below
 * 128 or above 2048, hog_length not above mtu) / HOMA_ENOMEM.
 */
int homa_sim_hostile_add(struct homa_sim_net *net, const struct homa_sim_hostile_cfg *cfg,
			 struct homa_sim_hostile **out);

/** homa_sim_hostile_stats() - Copy its counters into @out. */
void homa_sim_hostile_stats(const struct homa_sim_hostile *h,
			    struct homa_sim_hostile_stats *out);

/** homa_sim_hostile_move_name() - Short name of @move ("grant_hog", ...), "?" if none. */
const char *homa_sim_hostile_move_name(int move);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_HOSTILE_H */
