/* SPDX-License-Identifier: MIT */
/** @file moves.c What the hostile peers share (see moves.h). */
#include <stdlib.h>

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

/** homa_sim_paced_deadline() - See moves.h. */
uint64_t homa_sim_paced_deadline(uint64_t next_ns, uint64_t stop_ns)
{
	return stop_ns && next_ns >= stop_ns ? UINT64_MAX : next_ns;
}

/** homa_sim_peer_free() - See moves.h. */
void homa_sim_peer_free(void *agent)
{
	free(agent);
}
