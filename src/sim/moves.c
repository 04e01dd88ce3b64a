/* SPDX-License-Identifier: MIT */
/** @file moves.c Choosing a hostile peer's move (see moves.h). */
#include "sim/moves.h"

/** homa_sim_pick_move() - See moves.h. */
int homa_sim_pick_move(struct homa_rng *rng, uint32_t enabled, int nmoves)
{
	int m;

	do
		m = (int)homa_rng_below(rng, (uint64_t)nmoves);
	while (!(enabled & (1u << m)));
	return m;
}
