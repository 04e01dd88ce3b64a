/* SPDX-License-Identifier: MIT */
/**
 * @file moves.h
 * What the simulator's hostile peers (hostile.h, psp_hostile.h) share:
 * choosing one of their enabled moves, their deadline (the next packet's
 * time until they stop) and their release.
 */
#ifndef HOMA_SIM_MOVES_H
#define HOMA_SIM_MOVES_H

#include <stdint.h>

#include "util/rng.h"

/**
 * homa_sim_pick_move() - One move of @enabled (bit m: move m) at random,
 * uniform among those below @nmoves: draws from @rng until it hits one.
 * @enabled must hold a bit below @nmoves (the peers check at add time),
 * or this never returns.
 * Return: the move, in [0, @nmoves).
 */
int homa_sim_pick_move(struct homa_rng *rng, uint32_t enabled, int nmoves);

/**
 * homa_sim_paced_deadline() - A hostile peer's next_deadline: @next_ns,
 * the time its next packet is due, or UINT64_MAX once that is at or past
 * @stop_ns (0: it never stops).
 */
uint64_t homa_sim_paced_deadline(uint64_t next_ns, uint64_t stop_ns);

/**
 * homa_sim_peer_free() - Agent op (destroy) of a hostile peer, which is
 * one allocation owned by the network: free()s @agent.
 */
void homa_sim_peer_free(void *agent);

#endif /* HOMA_SIM_MOVES_H */
