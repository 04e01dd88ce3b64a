/* SPDX-License-Identifier: MIT */
/**
 * @file moves.h
 * What the simulator's hostile peers (hostile.h, psp_hostile.h) share:
 * choosing one of their enabled moves.
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

#endif /* HOMA_SIM_MOVES_H */
