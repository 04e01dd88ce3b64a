/* SPDX-License-Identifier: MIT */
/**
 * @file chaos.h
 * A ready-made packet filter (homa_sim_set_filter()) for seeded random
 * loss, duplication and delay jitter (which reorders packets), plus
 * scripted drops of chosen packets by their emission number (uid).
 */
#ifndef HOMA_SIM_CHAOS_H
#define HOMA_SIM_CHAOS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/net.h"
#include "util/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Filter settings and counters; set the fields after homa_sim_chaos_init(). */
struct homa_sim_chaos {
	uint32_t loss_ppm;     /**< chance per packet of being dropped, per million */
	uint32_t dup_ppm;      /**< chance per packet of a second copy */
	uint32_t jitter_ppm;   /**< chance per copy of an extra delay */
	uint64_t jitter_ns;    /**< extra delay is uniform in [1, jitter_ns] */
	uint32_t type_mask;    /**< only packets with type bit (type - 0x10) set; 0 = all */
	const uint64_t *drop_uids; /**< scripted: drop exactly these uids (caller owns) */
	size_t ndrop_uids;
	struct homa_rng rng;
	uint64_t dropped, duplicated, delayed; /**< what the filter did */
};

/** homa_sim_chaos_init() - No loss, no duplicates, no jitter; PRNG seeded by @seed. */
void homa_sim_chaos_init(struct homa_sim_chaos *c, uint64_t seed);

/** homa_sim_chaos_filter() - The filter function; @ctx is a struct homa_sim_chaos. */
void homa_sim_chaos_filter(void *ctx, const struct homa_sim_pkt *pkt,
			   uint64_t now, struct homa_sim_fate *fate);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_CHAOS_H */
