/* SPDX-License-Identifier: MIT */
/**
 * @file evict.c
 * What the receiver gives up when its rx budget (max_rx_buffered) is full.
 * Incomplete incoming requests (server RPCs still receiving) are filed in
 * buckets by bytes still to receive (bucket b holds 2^b <= left < 2^(b+1))
 * together with the bytes each one holds (RPC state, message, hole list).
 * A packet that needs memory the budget cannot give evicts requests with
 * strictly more bytes left than its own message, longest bucket first
 * (SRPT: the message closest to completion keeps the memory), instead of
 * being dropped. An evicted request is freed like a timed-out one: it was
 * never delivered and is not in the done cache, so its genuine client
 * learns of the loss through RESEND -> RPC_UNKNOWN, restarts from byte 0
 * and the request still runs exactly once. Responses are never evicted:
 * only RPCs we started have them, so a forger cannot create them. Under
 * memory pressure the timer also frees requests that never got beyond
 * their unscheduled bytes and whose sender went silent (homa_evict_stale()).
 */
#include "internal.h"

/** In-bucket candidates looked at when the newcomer falls in the same bucket. */
#define SAME_BUCKET_SCAN 8

/** bucket_of() - Bucket of a message with @left bytes to receive (floor log2; 0 for 0). */
static uint32_t bucket_of(uint32_t left)
{
	return left ? 31u - (uint32_t)__builtin_clz(left) : 0;
}

/** left_of() - Bytes @rpc's incoming message still has to receive. */
static uint32_t left_of(const struct homa_rpc *rpc)
{
	return rpc->in.length - rpc->in.received;
}

/** charge_of() - rx budget bytes that freeing @rpc gives back. */
static uint64_t charge_of(const struct homa_rpc *rpc)
{
	return sizeof(*rpc) + rpc->in.msg->charged +
	       (uint64_t)rpc->in.gaps_cap * sizeof(struct homa_gap);
}

/** homa_evict_init() - Empty buckets (engine creation). */
void homa_evict_init(homa_engine *e)
{
	uint32_t b;

	for (b = 0; b < HOMA_EVICT_BUCKETS; b++) {
		homa_list_init(&e->evict[b]);
		e->evict_bytes[b] = 0;
	}
}

/**
 * homa_evict_track() - File (or re-file) @rpc after its incoming message
 * changed. Only requests being received are evictable; anything else is
 * left alone (and untracked if it was tracked).
 */
void homa_evict_track(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_msgin *in = &rpc->in;
	uint32_t b;

	if (homa_is_client_id(rpc->id) || rpc->state != RPC_INCOMING || !in->msg ||
	    in->received >= in->length) {
		homa_evict_untrack(e, rpc);
		return;
	}
	b = bucket_of(left_of(rpc));
	if (in->evict_tracked) {
		e->evict_bytes[in->evict_bucket] -= in->evict_charge;
		if (b != in->evict_bucket)
			homa_list_del(&in->evict_link);
	}
	if (!in->evict_tracked || b != in->evict_bucket)
		homa_list_add_tail(&e->evict[b], &in->evict_link);
	in->evict_tracked = true;
	in->evict_bucket = (uint8_t)b;
	in->evict_charge = charge_of(rpc);
	e->evict_bytes[b] += in->evict_charge;
}

/** homa_evict_untrack() - Take @rpc out of the buckets (no-op if absent). */
void homa_evict_untrack(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_msgin *in = &rpc->in;

	if (!in->evict_tracked)
		return;
	homa_list_del(&in->evict_link);
	e->evict_bytes[in->evict_bucket] -= in->evict_charge;
	in->evict_tracked = false;
	in->evict_charge = 0;
}

/**
 * pick() - A request with strictly more than @left bytes to receive, other
 * than @self, from the highest non-empty bucket. Return: it or NULL.
 */
static struct homa_rpc *pick(homa_engine *e, const struct homa_rpc *self, uint32_t left)
{
	uint32_t mine = bucket_of(left), b = HOMA_EVICT_BUCKETS;

	while (b-- > mine) {
		struct homa_link *pos = e->evict[b].next;
		uint32_t scan = SAME_BUCKET_SCAN;

		for (; pos != &e->evict[b] && scan; pos = pos->next) {
			struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, in.evict_link);

			if (r != self && left_of(r) > left)
				return r;
			if (b == mine)
				scan--;
		}
	}
	return NULL;
}

/** evict() - Free request @victim to give its memory to a shorter message. */
static void evict(homa_engine *e, struct homa_rpc *victim)
{
	e->st.msgs_evicted++;
	e->st.evicted_bytes += victim->in.received;
	homa_rpc_free(e, victim);
}

/**
 * homa_evict_room() - Make room for @need more rx bytes for a message with
 * @left bytes to receive (@self: its RPC, or NULL before one exists) by
 * evicting requests that have more bytes left. Evicts nothing unless the
 * budget is short.
 * Return: true if rx_buffered + @need now fits max_rx_buffered.
 */
bool homa_evict_room(homa_engine *e, const struct homa_rpc *self, uint32_t left, uint64_t need)
{
	while (e->rx_buffered + need > e->s.max_rx_buffered) {
		struct homa_rpc *victim = pick(e, self, left);

		if (!victim)
			return false;
		evict(e, victim);
	}
	return true;
}

/**
 * homa_evict_headroom() - rx bytes a message with @left bytes to receive
 * could get: what is free plus what requests in higher buckets (all with
 * more bytes left) hold. The grant scheduler uses it for backpressure.
 */
uint64_t homa_evict_headroom(const homa_engine *e, uint32_t left)
{
	uint64_t room = e->rx_buffered < e->s.max_rx_buffered
			? e->s.max_rx_buffered - e->rx_buffered : 0;
	uint32_t b;

	for (b = bucket_of(left) + 1; b < HOMA_EVICT_BUCKETS; b++)
		room += e->evict_bytes[b];
	return room;
}

/** homa_evict_pressure() - True if the rx budget cannot absorb max_incoming more bytes. */
bool homa_evict_pressure(const homa_engine *e)
{
	return e->rx_buffered + e->s.max_incoming > e->s.max_rx_buffered;
}

/**
 * homa_evict_stale() - Timer check for @rpc, silent for rpc->silent_ticks
 * ticks while its sender owes bytes. In a tick that began under memory
 * pressure (engine.evict_sweep) a request that never got beyond its
 * unscheduled bytes is freed after resend_ticks instead of being asked for
 * them again: a forged first packet holds memory for resend_ticks ticks,
 * not timeout_ticks, and a genuine sender loses at most its unscheduled
 * bytes (it restarts after RPC_UNKNOWN). The whole tick sweeps, so one
 * freed request that relieves the pressure does not shield the others.
 * Return: true if @rpc was freed.
 */
bool homa_evict_stale(homa_engine *e, struct homa_rpc *rpc)
{
	if (!e->evict_sweep || !rpc->in.evict_tracked ||
	    rpc->silent_ticks < e->s.resend_ticks || rpc->in.received > homa_unsched_window(e))
		return false;
	e->st.stale_evicted++;
	evict(e, rpc);
	return true;
}
