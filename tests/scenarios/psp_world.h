/* SPDX-License-Identifier: MIT */
/**
 * @file psp_world.h
 * Encrypted scenario worlds: every engine host of a world (world.h) seals
 * and opens its packets with PSP (include/homa/psp.h) through the
 * engine's packet hooks, with keys set up out of band between every pair
 * of hosts (the receiver issues an SPI and key, the sender installs
 * them), master-key rotations at chosen simulated times, and the PSP
 * hostile peer (sim/psp_hostile.h) on the world's switch. Links
 * homa_crypto (OpenSSL); the simulator itself does not.
 */
#ifndef HOMA_TEST_PSP_WORLD_H
#define HOMA_TEST_PSP_WORLD_H

#include "homa/psp.h"
#include "sim/psp_hostile.h"
#include "world.h"

/** The PSP state of a world's hosts. */
struct psp_world {
	struct world *w;
	int version;                          /**< enum homa_psp_version of every host */
	homa_psp *psp[WORLD_MAX_HOSTS];       /**< owned; NULL for hosts added later */
	struct homa_packet_hooks hooks[WORLD_MAX_HOSTS];
	uint64_t rotations;                   /**< rotations done (scheduled ones included) */
	int rotate_errors;                    /**< failed rotations or re-associations */
};

/**
 * psp_world_init() - Give every engine host of @w (already built) a PSP
 * state of @version, install its hooks and associate every ordered pair
 * of hosts. @pw must outlive @w's engines (free it after world_free()).
 * Return: 0, or the first HOMA_E* error of homa_psp_new() / rx_issue /
 * tx_add.
 */
int psp_world_init(struct psp_world *pw, struct world *w, int version);

/** psp_world_free() - Free every host's PSP state (after world_free()). */
void psp_world_free(struct psp_world *pw);

/**
 * psp_world_rotate() - Rotate host @h's master keys now; every other host
 * then learns a fresh SPI of @h's new key (so SPIs of the replaced key,
 * issued two rotations ago, are expired and nobody sends under them).
 * Return: 0 or the first HOMA_E* error.
 */
int psp_world_rotate(struct psp_world *pw, int h);

/**
 * psp_world_rotate_at() - psp_world_rotate() of host @h at simulated time
 * @t (errors counted in rotate_errors). Return: 0 or HOMA_ENOMEM.
 */
int psp_world_rotate_at(struct psp_world *pw, uint64_t t, int h);

/**
 * psp_world_add_attacker() - Add the PSP hostile peer configured by @cfg
 * (sim/psp_hostile.h) and link it to the world's switch like every host.
 * Return: its host id, or a HOMA_E* error.
 */
int psp_world_add_attacker(struct psp_world *pw, const struct homa_sim_psp_hostile_cfg *cfg,
			   struct homa_sim_psp_hostile **out);

/** psp_world_rejected() - Rejections of every host, summed, by reason, into @out. */
void psp_world_rejected(const struct psp_world *pw, uint64_t out[HOMA_PSP_REJ_REASONS]);

#endif
