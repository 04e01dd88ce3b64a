/* SPDX-License-Identifier: MIT */
/**
 * @file cutoffs.c
 * Unscheduled priority cutoffs. A receiver records the lengths of the
 * messages it sees (weighted by their unscheduled bytes) in a geometric
 * histogram, and once per tick, given enough samples, picks cutoffs that
 * split unscheduled bytes evenly across the unscheduled levels, shortest
 * messages highest. Senders learn them from CUTOFFS packets, sent whenever
 * a DATA packet shows a stale cutoff_version.
 */
#include <string.h>

#include "internal.h"

/** Messages recorded before cutoffs are recomputed. */
#define HOMA_CUTOFF_MIN_SAMPLES 200

/** bucket_bound() - Largest length counted in histogram bucket @b (grows by ~1.4x). */
static uint64_t bucket_bound(int b)
{
	int k = b + 4;

	return ((uint64_t)1 << (k >> 1)) * ((k & 1) ? 3 : 2) / 2;
}

/** bucket_of() - Histogram bucket of @length. */
static int bucket_of(uint32_t length)
{
	int b = 0;

	while (b < HOMA_CUTOFF_BUCKETS - 1 && length > bucket_bound(b))
		b++;
	return b;
}

/** homa_cutoffs_init() - Start from the configured cutoffs, version 1. */
void homa_cutoffs_init(homa_engine *e)
{
	memcpy(e->cutoffs, e->s.unsched_cutoffs, sizeof(e->cutoffs));
	e->cutoff_version = 1;
	e->st.cutoffs_version = 1;
}

/** homa_engine_rx_priority() - See engine.h. */
uint8_t homa_engine_rx_priority(const homa_engine *e, uint64_t length)
{
	if (!e)
		return 0;
	for (int p = (int)e->s.num_priorities - 1; p > 0; p--)
		if (length <= e->cutoffs[p])
			return (uint8_t)p;
	return 0;
}

/** homa_cutoffs_record() - Count one incoming message of @length bytes. */
void homa_cutoffs_record(homa_engine *e, uint32_t length)
{
	uint32_t unsched = length < e->s.unsched_bytes ? length : e->s.unsched_bytes;

	if (!e->s.dynamic_cutoffs)
		return;
	e->size_hist[bucket_of(length)] += unsched;
	e->size_hist_msgs++;
}

/** compute() - Fill @out with cutoffs splitting the histogram's bytes evenly. */
static void compute(const homa_engine *e, uint32_t *out)
{
	uint32_t levels = e->s.num_unsched_priorities;
	uint32_t top = e->s.num_priorities - 1;
	uint64_t total = 0, cum = 0;
	uint32_t level = 1;
	int b;

	memset(out, 0, HOMA_MAX_PRIORITIES * sizeof(*out));
	for (b = 0; b < HOMA_CUTOFF_BUCKETS; b++)
		total += e->size_hist[b];
	for (b = 0; b < HOMA_CUTOFF_BUCKETS && level < levels; b++) {
		cum += e->size_hist[b];
		while (level < levels && cum * levels >= total * level) {
			uint64_t bound = bucket_bound(b);

			out[top - (level - 1)] = bound > 0xfffffffeu ? 0xfffffffeu : (uint32_t)bound;
			level++;
		}
	}
	out[top - (levels - 1)] = 0xffffffffu;
}

/**
 * homa_cutoffs_maybe_update() - Recompute the cutoffs when enough new
 * messages were seen; bump the version if they changed. Old samples decay
 * by half each time so the cutoffs follow the workload.
 */
void homa_cutoffs_maybe_update(homa_engine *e)
{
	uint32_t n[HOMA_MAX_PRIORITIES];
	int b;

	if (!e->s.dynamic_cutoffs || e->size_hist_msgs < HOMA_CUTOFF_MIN_SAMPLES)
		return;
	compute(e, n);
	if (memcmp(n, e->cutoffs, sizeof(n)) != 0) {
		memcpy(e->cutoffs, n, sizeof(n));
		e->cutoff_version = (uint16_t)(e->cutoff_version + 1 ? e->cutoff_version + 1 : 1);
		e->st.cutoffs_version = e->cutoff_version;
	}
	for (b = 0; b < HOMA_CUTOFF_BUCKETS; b++)
		e->size_hist[b] /= 2;
	e->size_hist_msgs = 0;
}

/**
 * homa_cutoffs_check_peer() - A DATA packet of RPC @id (our local id) from
 * @p (port @dport) was sent with cutoff @version: if stale, send our
 * cutoffs (at most once per tick per peer, so a lost CUTOFFS is repeated
 * but never flooded; to strangers within homa_ctl_stranger_ok()). The CUTOFFS carries @id, as the module's do: the
 * module finds the destination socket from the id (a client id routes to
 * its client socket), and keeps cutoffs as int, so no value exceeds
 * HOMA_CUTOFF_WIRE_MAX.
 */
void homa_cutoffs_check_peer(homa_engine *e, struct homa_peer *p, uint16_t dport, uint16_t version,
			     uint64_t id)
{
	struct homa_pkt pkt;
	int i;

	if (version == e->cutoff_version)
		return;
	if (p->cutoffs_sent_version == e->cutoff_version && p->cutoffs_sent_tick == e->tick)
		return;
	if (!homa_ctl_stranger_ok(e, p))
		return;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_CUTOFFS;
	pkt.dport = dport;
	pkt.sender_id = id;
	for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
		pkt.u.cutoffs.cutoffs[i] = e->cutoffs[i] < HOMA_CUTOFF_WIRE_MAX ? e->cutoffs[i]
						: HOMA_CUTOFF_WIRE_MAX;
	pkt.u.cutoffs.version = e->cutoff_version;
	homa_ctl_send(e, &pkt, &p->addr, (uint8_t)(e->s.num_priorities - 1));
	p->cutoffs_sent_version = e->cutoff_version;
	p->cutoffs_sent_tick = e->tick;
}
