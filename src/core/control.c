/* SPDX-License-Identifier: MIT */
/**
 * @file control.c
 * Control packets (GRANT, RESEND, BUSY, NEED_ACK, ACK, CUTOFFS,
 * RPC_UNKNOWN): built and encoded at once, queued in a bounded ring, and
 * emitted ahead of DATA by homa_engine_output().
 */
#include <string.h>

#include "internal.h"

/** homa_count_sent() - Account one emitted packet in the stats. */
void homa_count_sent(homa_engine *e, uint8_t type, uint8_t priority, size_t len)
{
	e->st.pkts_sent[type - HOMA_PKT_FIRST]++;
	e->st.bytes_sent[type - HOMA_PKT_FIRST] += len;
	e->st.pkts_sent_prio[priority & 7]++;
}

/**
 * homa_seal() - Pass an outgoing packet to host @dst through the packet
 * hooks (seal_to() if set, else seal()).
 * Return: the final length, or a negative value if the hook refused it.
 */
int homa_seal(homa_engine *e, const homa_addr *dst, uint8_t *buf, size_t hdr, size_t len,
	      size_t cap)
{
	if (!e->has_hooks)
		return (int)len;
	if (e->hooks.seal_to)
		return e->hooks.seal_to(e->hooks.ctx, dst, buf, hdr, len, cap);
	if (!e->hooks.seal)
		return (int)len;
	return e->hooks.seal(e->hooks.ctx, buf, hdr, len, cap);
}

/** grow_ring() - Double the control ring up to max_control_queue. Return: 0 or -1. */
static int grow_ring(homa_engine *e)
{
	uint32_t cap = e->ctl_cap ? 2 * e->ctl_cap : 64;
	struct homa_ctl *n;
	uint32_t i;

	if (cap > e->s.max_control_queue)
		cap = e->s.max_control_queue;
	if (cap <= e->ctl_cap)
		return -1;
	n = homa_mem_alloc(e, cap * sizeof(*n));
	if (!n)
		return -1;
	for (i = 0; i < e->ctl_count; i++)
		n[i] = e->ctl[(e->ctl_head + i) % e->ctl_cap];
	homa_mem_free(e, e->ctl, e->ctl_cap * sizeof(*n));
	e->ctl = n;
	e->ctl_cap = cap;
	e->ctl_head = 0;
	return 0;
}

/**
 * homa_ctl_send() - Encode @pkt (sport filled in here) and queue it for
 * @dst. When the ring is full the packet is dropped: every control packet
 * is repeated by a timer if it matters.
 * Return: the packet's ring sequence number plus one, or 0 if dropped.
 */
uint64_t homa_ctl_send(homa_engine *e, struct homa_pkt *pkt, const homa_addr *dst, uint8_t priority)
{
	struct homa_ctl *c;
	int len;

	if (e->ctl_count == e->ctl_cap && grow_ring(e))
		return 0;
	c = &e->ctl[(e->ctl_head + e->ctl_count) % e->ctl_cap];
	pkt->sport = e->port;
	len = homa_wire_encode(pkt, c->bytes, sizeof(c->bytes));
	if (len <= 0)
		return 0;
	c->len = (uint8_t)len;
	c->dst = *dst;
	c->dport = pkt->dport;
	c->priority = priority;
	e->ctl_count++;
	return e->ctl_taken + e->ctl_count;
}

/**
 * queued() - The ring entry with sequence number @seq_plus_one - 1 if it
 * has not been taken yet, else NULL.
 */
static struct homa_ctl *queued(homa_engine *e, uint64_t seq_plus_one)
{
	uint64_t seq = seq_plus_one - 1;

	if (!seq_plus_one || seq < e->ctl_taken || seq >= e->ctl_taken + e->ctl_count)
		return NULL;
	return &e->ctl[(e->ctl_head + (seq - e->ctl_taken)) % e->ctl_cap];
}

/** ctl_prio() - Control packets go at the highest priority in use. */
static uint8_t ctl_prio(const homa_engine *e)
{
	return (uint8_t)(e->s.num_priorities - 1);
}

/** start_pkt() - Zero @pkt and fill the common fields for @rpc. */
static void start_pkt(struct homa_pkt *pkt, struct homa_rpc *rpc, uint8_t type)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->type = type;
	pkt->dport = rpc->dport;
	pkt->sender_id = rpc->id;
}

/** homa_ctl_simple() - Queue a header-only packet (BUSY, NEED_ACK, ...) for @rpc. */
void homa_ctl_simple(homa_engine *e, struct homa_rpc *rpc, uint8_t type)
{
	struct homa_pkt pkt;

	start_pkt(&pkt, rpc, type);
	homa_ctl_send(e, &pkt, &rpc->peer->addr, ctl_prio(e));
}

/**
 * homa_ctl_grant() - Queue a GRANT for @rpc up to @offset at @priority. If
 * a GRANT for @rpc is still queued (the application has not taken the
 * packets the last batch of input produced), that one is rewritten to the
 * new offset and priority instead: a later GRANT supersedes an earlier one,
 * and a batch of DATA packets then costs one GRANT, not one per packet.
 */
void homa_ctl_grant(homa_engine *e, struct homa_rpc *rpc, uint32_t offset, uint8_t priority)
{
	struct homa_ctl *c = queued(e, rpc->in.grant_seq);
	struct homa_pkt pkt;

	start_pkt(&pkt, rpc, HOMA_PKT_GRANT);
	pkt.sport = e->port;
	pkt.u.grant.offset = offset;
	pkt.u.grant.priority = priority;
	if (c && homa_wire_encode(&pkt, c->bytes, sizeof(c->bytes)) == c->len) {
		e->st.grants_merged++;
		return;
	}
	rpc->in.grant_seq = homa_ctl_send(e, &pkt, &rpc->peer->addr, ctl_prio(e));
	e->st.grants_sent++;
}

/**
 * homa_ctl_resend() - Queue a RESEND for [offset, offset+length) of the
 * message @rpc is receiving. Retransmitted data comes back at the highest
 * priority, as in the Linux module: bytes that went missing were most
 * likely dropped from the queue of their own (scheduled) priority, which
 * may be full of other traffic (TCP shares the lowest class on a switch
 * that does not separate it), and a copy sent into it again would meet the
 * same fate.
 */
void homa_ctl_resend(homa_engine *e, struct homa_rpc *rpc, uint32_t offset, uint32_t length)
{
	homa_ctl_resend_at(e, rpc, offset, length, ctl_prio(e));
}

/**
 * homa_ctl_resend_at() - See internal.h. The data asked for still comes
 * back at the highest priority; only the RESEND travels at @prio.
 */
void homa_ctl_resend_at(homa_engine *e, struct homa_rpc *rpc, uint32_t offset, uint32_t length,
			uint8_t prio)
{
	struct homa_pkt pkt;

	start_pkt(&pkt, rpc, HOMA_PKT_RESEND);
	pkt.u.resend.offset = offset;
	pkt.u.resend.length = length;
	pkt.u.resend.priority = ctl_prio(e);
	homa_ctl_send(e, &pkt, &rpc->peer->addr, prio);
	e->st.resends_sent++;
}

/**
 * homa_ctl_stranger_ok() - May one more reply go to @p now? Always for a
 * proven peer (a whole message came from it, or we started an RPC to
 * it); to strangers at most HOMA_STRANGER_REPLIES per tick_ns of engine
 * time, all strangers together, so that a flood from many addresses
 * draws a bounded number of replies (homa-flood from 8 addresses drew
 * about 20 per millisecond: RESEND, RPC_UNKNOWN, CUTOFFS). A genuine
 * newcomer's recovery waits for the budget under such a flood; it asks
 * again at its next RESEND. Counts a refusal in engine.stranger_refused.
 * Return: true if the caller may send it (and it is counted).
 */
bool homa_ctl_stranger_ok(homa_engine *e, const struct homa_peer *p)
{
	uint64_t w = e->now / e->s.tick_ns;

	if (p->proven)
		return true;
	if (w != e->stranger_window) {
		e->stranger_window = w;
		e->stranger_replies = 0;
	}
	if (e->stranger_replies >= HOMA_STRANGER_REPLIES) {
		e->stranger_refused++;
		return false;
	}
	e->stranger_replies++;
	return true;
}

/**
 * homa_ctl_reply_unknown() - Answer a packet about an RPC we do not have
 * with RPC_UNKNOWN, with HOMA_EXT_FINISHED if it is a server RPC we
 * finished, or HOMA_EXT_NOSERVER if it is a request and this endpoint does
 * not serve (so a client of ours gives up rather than restarting it; the
 * bits are in the window field, which a module client ignores).
 * Limited to a few per peer per tick, and to strangers by
 * homa_ctl_stranger_ok(), so that forged packets cannot turn this
 * endpoint into an amplifier.
 */
void homa_ctl_reply_unknown(homa_engine *e, const homa_addr *src, const struct homa_pkt *in,
			    struct homa_peer *p)
{
	struct homa_pkt pkt;

	if (p->unknown_tick != e->tick) {
		p->unknown_tick = e->tick;
		p->unknown_sent = 0;
	}
	if (p->unknown_sent >= 4 || !homa_ctl_stranger_ok(e, p)) {
		e->st.unknown_replies_suppressed++;
		return;
	}
	p->unknown_sent++;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_RPC_UNKNOWN;
	pkt.dport = in->sport;
	pkt.sender_id = in->sender_id ^ 1;
	if (homa_done_seen(e, in->sender_id ^ 1, src, in->sport))
		pkt.ext = HOMA_EXT_FINISHED;
	else if (!e->server && !homa_is_client_id(in->sender_id ^ 1))
		pkt.ext = HOMA_EXT_NOSERVER;
	homa_ctl_send(e, &pkt, src, ctl_prio(e));
}

/**
 * homa_ctl_output() - Emit the oldest queued control packet.
 * Return: bytes written, 0 if none is queued, HOMA_ENOSPC.
 */
int homa_ctl_output(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap, struct homa_tx *tx)
{
	struct homa_ctl *c;
	int len;

	while (e->ctl_count) {
		c = &e->ctl[e->ctl_head];
		if (cap < (size_t)c->len + (e->has_hooks ? e->hooks.overhead : 0))
			return HOMA_ENOSPC;
		e->ctl_head = (e->ctl_head + 1) % e->ctl_cap;
		e->ctl_count--;
		e->ctl_taken++;
		memcpy(buf, c->bytes, c->len);
		len = homa_seal(e, &c->dst, buf, c->len, c->len, cap);
		if (len <= 0)
			continue;
		homa_pacer_account(e, now, (size_t)len);
		homa_count_sent(e, c->bytes[11], c->priority, (size_t)len);
		tx->dst = c->dst;
		tx->dport = c->dport;
		tx->priority = c->priority;
		tx->type = c->bytes[11];
		tx->len = (size_t)len;
		return len;
	}
	return 0;
}

/** homa_ctl_free() - Free the control ring. */
void homa_ctl_free(homa_engine *e)
{
	homa_mem_free(e, e->ctl, e->ctl_cap * sizeof(*e->ctl));
	e->ctl = NULL;
	e->ctl_taken += e->ctl_count; /* sequence numbers are never reused */
	e->ctl_cap = e->ctl_count = e->ctl_head = 0;
}
