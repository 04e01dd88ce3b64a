/* SPDX-License-Identifier: MIT */
/**
 * @file psp_hostile.h
 * A hostile peer against encrypted hosts (engines sealing with PSP,
 * include/homa/psp.h) on the simulated network. It sniffs the sealed
 * packets the network delivers, may steal a few on their way (an on-path
 * attacker: the network loses them, the sender resends under a new IV;
 * it records whose RPC each belonged to, homa_sim_psp_hostile_stolen()),
 * and sends at a set rate, one move per packet chosen at random among
 * the enabled ones (enum homa_sim_psp_move):
 *
 * - FORGE: random bytes behind a live PSP header of the victim (SPI of a
 *   packet just delivered to it, an IV past any its sender used);
 * - FLIP: a captured sealed packet with one bit flipped, walking every
 *   bit of the packet in turn (header, SPI, IV, clear Homa header,
 *   ciphertext, ICV), then the next captured packet;
 * - WRONG_SPI: a sealed packet under an SPI the victim never issued;
 * - EXPIRED: a packet captured before the victim's master key rotation
 *   that expires its SPI, sent after it (needs cfg.expire_*);
 * - TRUNCATE: a captured sealed packet cut short at a random length;
 * - REPLAY: a sealed packet just delivered (to any host), sent again to
 *   its destination, inside the replay window;
 * - TOO_OLD: a sealed packet captured early, sent again once its sender
 *   has used more than a replay window of newer IVs on its SPI;
 * - CLEAR: a cleartext Homa request (homa_wire_encode()).
 *
 * For each packet it sends it knows the reject reason (enum
 * homa_psp_reject) the victim must count, where that is determined (the
 * reason of a flipped SPI or IV bit depends on SPIs and IVs the victim
 * holds, so those are "undetermined"), and it counts the packets the
 * network delivered by that expected reason.
 *
 * What the simulation models: the attacker sees every byte of every
 * packet delivered (a tap on the fabric), may drop packets it steals
 * (cfg.steal_*), and sends from its own address only (the network stamps
 * the source, as the fabric's ingress checks would). It does not model
 * an attacker that forges source addresses, one that overtakes a packet
 * with its own copy (it sniffs on delivery: a copy that overtook the
 * original would deliver authentic bytes once and the original would be
 * the replay), or timing side channels. It needs no cipher: every
 * packet it sends is built from bytes it saw. Deterministic for a given
 * network seed and cfg.seed.
 */
#ifndef HOMA_SIM_PSP_HOSTILE_H
#define HOMA_SIM_PSP_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

#include "homa/psp.h"
#include "sim/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The peer's moves (bits of homa_sim_psp_hostile_cfg.moves). */
enum homa_sim_psp_move {
	HOMA_PSP_HOSTILE_FORGE = 0,
	HOMA_PSP_HOSTILE_FLIP,
	HOMA_PSP_HOSTILE_WRONG_SPI,
	HOMA_PSP_HOSTILE_EXPIRED,
	HOMA_PSP_HOSTILE_TRUNCATE,
	HOMA_PSP_HOSTILE_REPLAY,
	HOMA_PSP_HOSTILE_TOO_OLD,
	HOMA_PSP_HOSTILE_CLEAR,
	HOMA_PSP_HOSTILE_MOVES
};

/** Every move. */
#define HOMA_PSP_HOSTILE_ALL ((1u << HOMA_PSP_HOSTILE_MOVES) - 1)

/** How the peer behaves. */
struct homa_sim_psp_hostile_cfg {
	uint32_t moves;           /**< bit (1 << move) enables a move */
	int victim;               /**< host its forgeries go to (replays go where they went) */
	uint16_t port;            /**< Homa port of the victim (CLEAR) */
	uint64_t start_ns;        /**< first packet */
	uint64_t stop_ns;         /**< no packet at or after (0: never stops) */
	uint64_t interval_ns;     /**< one packet each (its NIC may make it later) */
	uint32_t steal_every;     /**< steal every n-th sealed packet to the victim (0: never) */
	uint32_t steal_max;       /**< steal at most this many in all */
	uint64_t steal_from_ns;   /**< steal only packets emitted at or after this */
	uint64_t expire_before_ns;/**< packets emitted before this carry SPIs that ... */
	uint64_t expire_at_ns;    /**< ... the victim expires at this time (0: none do) */
	uint64_t seed;            /**< its choices */
};

/** What it did and what the network delivered of it. */
struct homa_sim_psp_hostile_stats {
	uint64_t sent[HOMA_PSP_HOSTILE_MOVES];      /**< packets sent, by move */
	uint64_t delivered[HOMA_PSP_HOSTILE_MOVES]; /**< of those, delivered to a host */
	uint64_t expect[HOMA_PSP_REJ_REASONS];      /**< delivered, by the reason they must get */
	uint64_t undetermined;    /**< delivered whose reason it cannot tell (SPI, IV flips) */
	uint64_t sniffed;         /**< sealed honest packets it saw delivered */
	uint64_t stolen;          /**< sealed packets it took off the network */
	uint64_t walked;          /**< captured packets whose every bit it has flipped */
	uint64_t walked_max;      /**< bytes of the longest of those */
	uint64_t received;        /**< packets delivered to it */
};

/** Stolen packets whose RPC it records (homa_sim_psp_hostile_stolen()). */
#define HOMA_SIM_PSP_STOLEN_LOG 64

/**
 * A packet it stole, read from the packet's clear Homa common header (PSP
 * leaves it unencrypted): whose RPC lost it. The honest hosts recover
 * such a packet as any lost one, by RESEND.
 */
struct homa_sim_psp_stolen {
	int src, dst;             /**< sender and receiver host ids */
	uint64_t sender_id;       /**< the header's sender_id: the sender's id of the RPC */
	uint8_t type;             /**< Homa packet type */
	uint64_t sent_ns;         /**< when its sender emitted it */
};

struct homa_sim_psp_hostile;

/** homa_sim_psp_hostile_cfg_default() - All moves but EXPIRED, a packet every 2 us, victim 0. */
void homa_sim_psp_hostile_cfg_default(struct homa_sim_psp_hostile_cfg *c);

/**
 * homa_sim_psp_hostile_add() - Add the peer to @net (link it with
 * homa_sim_connect_host() or homa_sim_star() after), start sniffing (the
 * observer installed now is chained) and, with cfg.steal_every, install
 * the network's packet filter (replacing any).
 * @out: receives the peer (the network owns it; freed with the net).
 * Return: its host id, or HOMA_EINVAL (no move, interval 0, EXPIRED
 * without expire_at_ns) / HOMA_ENOMEM.
 */
int homa_sim_psp_hostile_add(struct homa_sim_net *net, const struct homa_sim_psp_hostile_cfg *cfg,
			     struct homa_sim_psp_hostile **out);

/** homa_sim_psp_hostile_stats() - Copy its counters into @out. */
void homa_sim_psp_hostile_stats(const struct homa_sim_psp_hostile *h,
				struct homa_sim_psp_hostile_stats *out);

/**
 * homa_sim_psp_hostile_stolen() - The packets it stole, in the order it
 * stole them: the first min(@max, HOMA_SIM_PSP_STOLEN_LOG) into @out.
 * Return: how many it wrote; fewer than stats.stolen if it stole more
 * than it records.
 */
size_t homa_sim_psp_hostile_stolen(const struct homa_sim_psp_hostile *h,
				   struct homa_sim_psp_stolen *out, size_t max);

/** homa_sim_psp_hostile_move_name() - Short name of @move ("forge", ...), "?" if none. */
const char *homa_sim_psp_hostile_move_name(int move);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_PSP_HOSTILE_H */
