/* SPDX-License-Identifier: MIT */
/**
 * @file chaos.c
 * Seeded loss, duplication and jitter, and scripted drops by uid.
 */
#include <string.h>

#include "sim/chaos.h"

/** homa_sim_chaos_init() - See chaos.h. */
void homa_sim_chaos_init(struct homa_sim_chaos *c, uint64_t seed)
{
	memset(c, 0, sizeof(*c));
	homa_rng_seed(&c->rng, seed);
}

/** scripted_drop() - True if @uid is in the drop list. */
static int scripted_drop(const struct homa_sim_chaos *c, uint64_t uid)
{
	size_t i;

	for (i = 0; i < c->ndrop_uids; i++)
		if (c->drop_uids[i] == uid)
			return 1;
	return 0;
}

/** homa_sim_chaos_filter() - See chaos.h. Draws random numbers in a fixed order. */
void homa_sim_chaos_filter(void *ctx, const struct homa_sim_pkt *pkt,
			   uint64_t now, struct homa_sim_fate *fate)
{
	struct homa_sim_chaos *c = ctx;
	int i;

	(void)now;
	if (scripted_drop(c, pkt->uid)) {
		c->dropped++;
		fate->copies = 0;
		return;
	}
	if (c->type_mask && (pkt->type < 0x10 || pkt->type >= 0x30 ||
			     !(c->type_mask & (1u << (pkt->type - 0x10)))))
		return;
	if (homa_rng_chance(&c->rng, c->loss_ppm)) {
		c->dropped++;
		fate->copies = 0;
		return;
	}
	if (homa_rng_chance(&c->rng, c->dup_ppm)) {
		c->duplicated++;
		fate->copies = 2;
	}
	for (i = 0; i < fate->copies && c->jitter_ns; i++) {
		if (!homa_rng_chance(&c->rng, c->jitter_ppm))
			continue;
		c->delayed++;
		fate->extra_delay_ns[i] = 1 + homa_rng_below(&c->rng, c->jitter_ns);
	}
}
