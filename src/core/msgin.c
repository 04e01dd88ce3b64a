/* SPDX-License-Identifier: MIT */
/**
 * @file msgin.c
 * Reassembly of incoming messages from out-of-order, duplicated and
 * missing packets. Received bytes are tracked as recv_end (one past the
 * highest byte seen) plus a sorted list of holes below it.
 */
#include <string.h>

#include "internal.h"

/**
 * homa_msgin_init() - Start receiving a message of @length bytes of which
 * the sender will send @unsched without grants (a claim: at most
 * unsched_bytes, or the whole message if it is no longer than
 * homa_unsched_window(), as our senders send it). Charges the buffer to the
 * engine's rx budget and enters the message in the grant scheduler if it
 * needs grants.
 * Return: 0, HOMA_EAGAIN (rx budget exhausted) or HOMA_ENOMEM.
 */
int homa_msgin_init(homa_engine *e, struct homa_rpc *rpc, uint32_t length, uint32_t unsched)
{
	struct homa_msgin *in = &rpc->in;
	uint32_t cap;

	if (!homa_evict_room(e, rpc, length, HOMA_CHUNK))
		return HOMA_EAGAIN;
	in->msg = homa_msg_new(e, length);
	if (!in->msg)
		return HOMA_ENOMEM;
	if (e->has_rx_alloc)
		in->msg->chunk_alloc = &e->rx_alloc;
	e->rx_buffered += in->msg->charged;
	in->length = length;
	cap = length <= homa_unsched_window(e) ? length : e->s.unsched_bytes;
	if (unsched > cap)
		unsched = cap; /* a claim, bounded like any window we grant */
	in->granted = unsched < length ? unsched : length;
	in->scheduled = in->granted < length;
	in->birth = e->now;
	homa_cutoffs_record(e, length);
	if (in->scheduled) {
		homa_grant_add(e, rpc);
	} else {
		e->short_rx_ns = e->now; /* long messages' windows shrink (grant_short_window) */
		e->short_rx_seen = true;
	}
	homa_evict_track(e, rpc);
	return 0;
}

/**
 * add_gap() - Append hole [start, end) after the existing ones. The hole
 * list is charged to the rx budget like message bytes: tiny forged packets
 * every other byte would otherwise grow it to several times the cap.
 * Return: 0, HOMA_EAGAIN (rx budget) or HOMA_ENOMEM.
 */
static int add_gap(homa_engine *e, struct homa_msgin *in, uint32_t start, uint32_t end)
{
	if (in->ngaps == in->gaps_cap) {
		uint32_t cap = in->gaps_cap ? 2 * in->gaps_cap : 4;
		struct homa_gap *g;

		if (!homa_evict_room(e, homa_container_of(in, struct homa_rpc, in),
				     in->length - in->received, cap * sizeof(*g)))
			return HOMA_EAGAIN;
		g = homa_mem_alloc(e, cap * sizeof(*g));
		if (!g)
			return HOMA_ENOMEM;
		if (in->ngaps)
			memcpy(g, in->gaps, in->ngaps * sizeof(*g));
		homa_mem_free(e, in->gaps, in->gaps_cap * sizeof(*g));
		e->rx_buffered += (cap - in->gaps_cap) * sizeof(*g);
		in->gaps = g;
		in->gaps_cap = cap;
	}
	in->gaps[in->ngaps].start = start;
	in->gaps[in->ngaps].end = end;
	in->ngaps++;
	return 0;
}

/**
 * write_bytes() - Store [off, off+len) and keep the rx budget in step.
 * Return: as homa_msg_write().
 */
static int write_bytes(homa_engine *e, struct homa_msgin *in, uint32_t off,
		       const uint8_t *data, uint32_t len)
{
	uint64_t before = in->msg->charged;
	int err = homa_msg_write(e, in->msg, off, data, len);

	e->rx_buffered += in->msg->charged - before;
	if (!err)
		e->st.payload_copied_in += len;
	return err;
}

/**
 * fill_gaps() - Store the parts of [off, end) that fall in holes, shrinking,
 * splitting or removing holes; *@added grows by the new bytes stored.
 * On failure the holes still describe exactly what is missing (a range
 * whose hole could not be updated stays missing and uncounted).
 * Return: 0 or HOMA_ENOMEM.
 */
static int fill_gaps(homa_engine *e, struct homa_msgin *in, uint32_t off,
		     uint32_t end, const uint8_t *data, uint32_t *added)
{
	uint32_t i = 0;

	while (i < in->ngaps) {
		struct homa_gap *g = &in->gaps[i];
		uint32_t s = off > g->start ? off : g->start;
		uint32_t t = end < g->end ? end : g->end;

		if (s >= t) {
			i++;
			continue;
		}
		if (write_bytes(e, in, s, data + (s - off), t - s))
			return HOMA_ENOMEM;
		if (s == g->start && t == g->end) {
			memmove(g, g + 1, (in->ngaps - i - 1) * sizeof(*g));
			in->ngaps--;
		} else if (s == g->start) {
			g->start = t;
		} else if (t == g->end) {
			g->end = s;
		} else {
			uint32_t old_end = g->end;

			if (add_gap(e, in, t, old_end))
				return HOMA_ENOMEM;
			/* keep holes sorted: the new one belongs right after hole i */
			g = &in->gaps[i];
			g->end = s;
			memmove(&in->gaps[i + 2], &in->gaps[i + 1],
				(in->ngaps - i - 2) * sizeof(*g));
			in->gaps[i + 1].start = t;
			in->gaps[i + 1].end = old_end;
			i++;
		}
		*added += t - s;
	}
	return 0;
}

static bool needs_chunk(const struct homa_msg *m, uint32_t off, uint32_t len);

/**
 * store_new() - Store [off, off+len), all bytes beyond recv_end: kept in
 * the buffer being lent when homa_engine_input_lend() offers one (lend.c),
 * copied otherwise. Return: 0, HOMA_EAGAIN (no rx room for a chunk) or
 * HOMA_ENOMEM.
 */
static int store_new(homa_engine *e, struct homa_msgin *in, uint32_t off,
		     const uint8_t *data, uint32_t len)
{
	uint64_t before = in->msg->charged;
	int err = homa_lend_take(e, in->msg, off, data, len);

	if (err == HOMA_EAGAIN) {
		if (needs_chunk(in->msg, off, len) &&
		    !homa_evict_room(e, homa_container_of(in, struct homa_rpc, in),
				     in->length - in->received, HOMA_CHUNK))
			return HOMA_EAGAIN;
		return write_bytes(e, in, off, data, len);
	}
	e->rx_buffered += in->msg->charged - before;
	if (!err)
		e->st.payload_lent_in += len;
	return err;
}

/**
 * lendable() - True if [off, off+len) would be kept in a lent buffer, not
 * in a chunk: homa_engine_input_lend() offers a buffer and the bytes all
 * lie beyond recv_end.
 */
static bool lendable(const homa_engine *e, const struct homa_msgin *in, uint32_t off)
{
	return e->lend && !e->lend_kept && off >= in->recv_end && !in->msg->ref &&
	       !in->msg->chunk_alloc;
}

/** needs_chunk() - True if storing [off, off+len) would allocate a new chunk. */
static bool needs_chunk(const struct homa_msg *m, uint32_t off, uint32_t len)
{
	return !m->chunks[off >> HOMA_CHUNK_SHIFT] ||
	       !m->chunks[(off + len - 1) >> HOMA_CHUNK_SHIFT];
}

/**
 * homa_msgin_add() - Store payload [off, off+len) (caller checked it lies
 * inside the message) and account the new bytes. On HOMA_ENOMEM the bytes
 * stored before the failure are accounted and the holes stay exact, so a
 * retransmission fills in the rest.
 * When the rx budget cannot take a new chunk, requests with more bytes
 * left are evicted to make room (evict.c).
 * Return: bytes that were new (0 for a pure duplicate), HOMA_EAGAIN when
 * the rx budget cannot take a new chunk or the caller's copy list
 * (homa_engine_defer_copies()) is full (packet dropped), or HOMA_ENOMEM.
 */
int homa_msgin_add(homa_engine *e, struct homa_rpc *rpc, uint32_t off,
		   const uint8_t *data, uint32_t len)
{
	struct homa_msgin *in = &rpc->in;
	uint32_t end = off + len, added = 0;
	int err = 0;

	if (len == 0)
		return 0; /* an empty message's packet: nothing to store */
	in->settled = homa_rxcopy_settled(in); /* before this packet's copies, if deferred */
	if (lendable(e, in, off)) {
		if (!homa_evict_room(e, rpc, in->length - in->received, len))
			return HOMA_EAGAIN;
	} else if (needs_chunk(in->msg, off, len) &&
		   !homa_evict_room(e, rpc, in->length - in->received, HOMA_CHUNK)) {
		return HOMA_EAGAIN;
	}
	if (off < in->recv_end)
		err = fill_gaps(e, in, off, end < in->recv_end ? end : in->recv_end, data, &added);
	if (!err && end > in->recv_end) {
		uint32_t s = off > in->recv_end ? off : in->recv_end;

		err = store_new(e, in, s, data + (s - off), end - s);
		if (!err && s > in->recv_end)
			err = add_gap(e, in, in->recv_end, s);
		if (!err) {
			added += end - s;
			in->recv_end = end;
		}
	}
	in->received += added;
	homa_evict_track(e, rpc);
	return err ? err : (int)added;
}

/**
 * homa_msgin_first_gap() - The first missing range below what we granted.
 * Return: true and [*start, *end) if bytes are missing, false otherwise.
 */
bool homa_msgin_first_gap(const struct homa_msgin *in, uint32_t *start, uint32_t *end)
{
	uint32_t limit = in->granted < in->length ? in->granted : in->length;

	if (in->ngaps) {
		*start = in->gaps[0].start;
		*end = in->gaps[0].end;
		return true;
	}
	if (in->recv_end < limit) {
		*start = in->recv_end;
		*end = limit;
		return true;
	}
	return false;
}

/**
 * homa_msgin_destroy() - Free the hole list and the message if still
 * attached (@in is the one embedded in an RPC); leaves the eviction buckets.
 */
void homa_msgin_destroy(homa_engine *e, struct homa_msgin *in)
{
	homa_evict_untrack(e, homa_container_of(in, struct homa_rpc, in));
	homa_mem_free(e, in->gaps, in->gaps_cap * sizeof(*in->gaps));
	e->rx_buffered -= in->gaps_cap * sizeof(*in->gaps);
	in->gaps = NULL;
	in->ngaps = in->gaps_cap = 0;
	if (in->msg) {
		e->rx_buffered -= in->msg->charged;
		homa_msg_free(e, in->msg);
		in->msg = NULL;
	}
}
