/* SPDX-License-Identifier: MIT */
/**
 * @file trace.h
 * A packet trace: an observer (homa_sim_set_observer()) that records each
 * packet event, decoded with homa_wire_decode(), and renders them as a
 * readable log such as "h0->h1 DATA 1400@0 p4; h1->h0 GRANT 10000 gp3 p7".
 * Tests analyze the records (grants, resends) or compare rendered text.
 */
#ifndef HOMA_SIM_TRACE_H
#define HOMA_SIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa/wire.h"
#include "sim/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One recorded packet event. */
struct homa_sim_trace_rec {
	uint64_t time;    /**< ns */
	uint64_t uid;     /**< emission number of the packet */
	int32_t src, dst; /**< host ids */
	uint8_t what;     /**< enum homa_sim_pkt_event */
	uint8_t prio;     /**< packet priority */
	uint8_t copy;     /**< 0 original, 1.. duplicate */
	uint32_t len;     /**< bytes of the Homa packet */
	int decode_err;   /**< 0, or homa_wire_decode()'s error */
	struct homa_pkt pkt; /**< decoded header (payload pointer cleared) */
};

/** A trace; zero-initialize, then homa_sim_trace_attach(). */
struct homa_sim_trace {
	struct homa_sim_trace_rec *recs; /**< owned */
	size_t len, cap;
	size_t max_recs;      /**< stop recording after this many (0: no limit) */
	bool truncated;       /**< max_recs was reached or memory ran out */
	uint32_t what_mask;   /**< bit (1 << event) to record; 0 = every event */
	homa_sim_observe_fn next; /**< observer that was installed before (chained) */
	void *next_ctx;
};

/** Bits for what_mask. */
#define HOMA_SIM_TRACE_MASK(ev) (1u << (ev))

/** Rendering options for homa_sim_trace_format(). */
enum {
	HOMA_SIM_TRACE_TIME = 1, /**< prefix "@<ns> " */
	HOMA_SIM_TRACE_ID = 2,   /**< add " id<sender_id>" after the type */
	HOMA_SIM_TRACE_UID = 4,  /**< prefix "#<uid> " */
};

/**
 * homa_sim_trace_attach() - Start recording @net's packet events into @t
 * (which must be zeroed or freed before). The observer installed before
 * keeps being called.
 */
void homa_sim_trace_attach(struct homa_sim_trace *t, struct homa_sim_net *net,
			   uint32_t what_mask);

/** homa_sim_trace_observe() - The observer function; @ctx is the trace. */
void homa_sim_trace_observe(void *ctx, const struct homa_sim_pkt *pkt, int what,
			    uint64_t now);

/** homa_sim_trace_clear() - Forget the records (keeps the memory). */
void homa_sim_trace_clear(struct homa_sim_trace *t);

/** homa_sim_trace_free() - Release the records. Detach from the net first. */
void homa_sim_trace_free(struct homa_sim_trace *t);

/**
 * homa_sim_trace_format() - Render one record ("h0->h1 DATA 1400@0 p4",
 * with " [drop_filter]" etc. for events other than emit) into @buf.
 * Return: the length the text needs, as snprintf.
 */
int homa_sim_trace_format(const struct homa_sim_trace_rec *r, unsigned flags,
			  char *buf, size_t cap);

/**
 * homa_sim_trace_render() - The records whose event is in @what_mask
 * (0: all), joined with "; ".
 * Return: a malloc'd string the caller frees, or NULL on ENOMEM.
 */
char *homa_sim_trace_render(const struct homa_sim_trace *t, uint32_t what_mask,
			    unsigned flags);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_TRACE_H */
