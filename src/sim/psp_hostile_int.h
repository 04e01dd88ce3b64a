/* SPDX-License-Identifier: MIT */
/**
 * @file psp_hostile_int.h
 * Internals of the PSP hostile peer (psp_hostile.h), shared by its tap
 * (psp_hostile_tap.c: what it sees and steals, what the network delivered
 * of its packets) and its moves (psp_hostile.c).
 */
#ifndef HOMA_SIM_PSP_HOSTILE_INT_H
#define HOMA_SIM_PSP_HOSTILE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/psp_hostile.h"
#include "util/rng.h"

#define PH_RECENT 16      /**< packets just delivered, kept for REPLAY */
#define PH_OLD 16         /**< early packets to the victim, kept for TOO_OLD and EXPIRED */
#define PH_STOLEN 8       /**< stolen packets kept (their IVs are fresh) */
#define PH_SPIS 256       /**< (destination, SPI) pairs whose top IV it tracks */
#define PH_SENT 8192      /**< its own packets in flight it remembers */
#define PH_BYTES 2048     /**< longest packet kept */
#define PH_MIN_SEALED (HOMA_PSP_HDR_LEN + 28 + HOMA_PSP_ICV_LEN) /**< shortest sealed packet */
#define PH_UNKNOWN (-1)   /**< expected reason not determined */

/** A captured sealed packet. */
struct ph_cap {
	uint64_t at;       /**< when its sender emitted (sealed) it */
	int src, dst;
	uint32_t len;      /**< 0: empty slot */
	bool fresh;        /**< stolen: its IV was never delivered */
	uint8_t b[PH_BYTES];
};

/** The highest IV delivered on one SPI of one receiver. */
struct ph_spi {
	int dst;
	uint32_t spi;
	uint64_t top;
};

/** One of its packets: the move that made it and the reason it must get. */
struct ph_sent {
	uint64_t uid;
	int move;
	int expect;        /**< enum homa_psp_reject or PH_UNKNOWN */
};

/** The peer. */
struct homa_sim_psp_hostile {
	struct homa_sim_net *net;
	int host;
	struct homa_sim_psp_hostile_cfg cfg;
	struct homa_rng rng;
	uint64_t next_ns;
	struct ph_cap recent[PH_RECENT];
	uint32_t nrecent;
	struct ph_cap last;            /**< last sealed packet delivered to the victim */
	struct ph_cap old[PH_OLD];
	uint32_t nold;
	struct ph_cap stolen[PH_STOLEN];
	struct homa_sim_psp_stolen stolen_log[HOMA_SIM_PSP_STOLEN_LOG]; /**< whose RPCs lost them */
	uint64_t to_victim;            /**< sealed packets emitted to the victim */
	struct ph_cap walk;            /**< packet whose bits FLIP walks */
	uint64_t walk_bit;
	uint64_t walk_src;             /**< stolen count when walk was taken */
	struct ph_spi spis[PH_SPIS];
	uint32_t nspis;
	struct ph_sent sent[PH_SENT];
	int cur_move, cur_expect;      /**< of the packet being emitted */
	uint64_t clear_seq;
	homa_sim_observe_fn prev_obs;
	void *prev_ctx;
	struct homa_sim_psp_hostile_stats st;
};

/** ph_is_sealed() - True if @len bytes at @b start like a sealed PSP packet. */
bool ph_is_sealed(const uint8_t *b, uint32_t len);

/** ph_spi_of() - The SPI field of sealed packet @b. */
uint32_t ph_spi_of(const uint8_t *b);

/** ph_iv_of() - The IV field of sealed packet @b. */
uint64_t ph_iv_of(const uint8_t *b);

/** ph_set_iv() - Write @iv into the IV field of sealed packet @b. */
void ph_set_iv(uint8_t *b, uint64_t iv);

/** ph_top() - The highest IV delivered on @spi to @dst (0: none seen). */
uint64_t ph_top(const struct homa_sim_psp_hostile *h, int dst, uint32_t spi);

/**
 * ph_tap_install() - Chain the peer's observer (sniffing, and counting its
 * own packets delivered) and, with cfg.steal_every, install its filter.
 */
void ph_tap_install(struct homa_sim_psp_hostile *h);

#endif /* HOMA_SIM_PSP_HOSTILE_INT_H */
