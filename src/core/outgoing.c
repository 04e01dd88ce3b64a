/* SPDX-License-Identifier: MIT */
/**
 * @file outgoing.c
 * Outgoing messages: buffering, the sender's SRPT queue, DATA and START_MSG
 * packets (the pacer that gates them is pacer.c).
 */
#include <string.h>

#include "internal.h"

/** homa_data_payload() - Payload bytes in a full DATA packet. */
uint32_t homa_data_payload(const homa_engine *e)
{
	uint32_t over = e->has_hooks ? (uint32_t)e->hooks.overhead : 0;

	return e->s.mtu - HOMA_DATA_HDR_LEN - over;
}

/**
 * homa_whole_packets() - @bytes rounded up to whole full DATA packets
 * (homa_data_payload()), at most UINT32_MAX.
 */
uint32_t homa_whole_packets(const homa_engine *e, uint32_t bytes)
{
	uint64_t pkt = homa_data_payload(e);
	uint64_t whole = ((uint64_t)bytes + pkt - 1) / pkt * pkt;

	return whole > UINT32_MAX ? UINT32_MAX : (uint32_t)whole;
}

/**
 * homa_unsched_window() - settings.unsched_bytes rounded up to whole DATA
 * packets: a message no longer than this goes all unscheduled (its last
 * packet would otherwise start inside the window and wait a GRANT round
 * trip for a short tail), and a receiver accepts such a message's claim
 * of its whole length (homa_msgin_init()).
 */
uint32_t homa_unsched_window(const homa_engine *e)
{
	return homa_whole_packets(e, e->s.unsched_bytes);
}

/**
 * homa_unsched_priority() - Priority for unscheduled bytes of a message of
 * @length bytes sent to @p, from the cutoffs @p announced.
 */
uint8_t homa_unsched_priority(const homa_engine *e, const struct homa_peer *p, uint32_t length)
{
	int prio;

	for (prio = (int)e->s.num_priorities - 1; prio > 0; prio--)
		if (length <= p->cutoffs[prio])
			return (uint8_t)prio;
	return 0;
}

/**
 * store_message() - Give @out its message of @len bytes from @iov: a copy
 * in engine chunks, or with @borrow only a copy of the gather list (the
 * caller's bytes are read at send time). A borrowed message is charged
 * the same to the tx budget as a copied one.
 * Return: 0 or HOMA_ENOMEM (nothing is kept then).
 */
static int store_message(homa_engine *e, struct homa_msgout *out, const struct homa_iov *iov,
			 int iovcnt, uint64_t len, bool borrow)
{
	out->msg = homa_msg_new(e, (uint32_t)len);
	if (!out->msg)
		return HOMA_ENOMEM;
	if (borrow) {
		out->ref = homa_mem_alloc(e, (size_t)iovcnt * sizeof(*iov));
		if (out->ref) {
			memcpy(out->ref, iov, (size_t)iovcnt * sizeof(*iov));
			out->nref = (uint32_t)iovcnt;
			out->msg->charged += len;
			return 0;
		}
	} else if (!homa_msg_fill(e, out->msg, iov, iovcnt)) {
		e->st.payload_copied_out += len;
		return 0;
	}
	homa_msg_free(e, out->msg);
	out->msg = NULL;
	return HOMA_ENOMEM;
}

/**
 * start_mode() - True if @rpc's message may be announced with START_MSG
 * (settings.start_msg, and a peer known to understand it: the Linux module
 * drops the type silently).
 */
static bool start_mode(const homa_engine *e, const struct homa_rpc *rpc)
{
	return e->s.start_msg && homa_peer_ext(e, rpc->peer);
}

/**
 * homa_msgout_init() - Buffer the message in @iov for @rpc (a copy, or
 * with @borrow a reference to the caller's bytes, see
 * homa_engine_send_request_ref()) and queue it for transmission.
 * @unsched is how many bytes may go without grants (the whole message if
 * it fits in @unsched rounded up to whole packets); in START_MSG mode a
 * message longer than that is announced with START_MSG and sent only as
 * granted (only to a peer that understands it, homa_peer_ext()).
 * Return: 0 or HOMA_ENOMEM.
 */
int homa_msgout_init(homa_engine *e, struct homa_rpc *rpc, const struct homa_iov *iov,
		     int iovcnt, uint32_t unsched, bool borrow)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].len;
	if (store_message(e, &rpc->out, iov, iovcnt, len, borrow))
		return HOMA_ENOMEM;
	homa_msgout_attach(e, rpc, rpc->out.msg, unsched);
	return 0;
}

/**
 * homa_msgout_attach() - Make @m (its bytes already in engine-compatible
 * chunks; the engine owns it from now on) @rpc's outgoing message and
 * queue it for transmission. @unsched: as homa_msgout_init().
 */
void homa_msgout_attach(homa_engine *e, struct homa_rpc *rpc, struct homa_msg *m,
			uint32_t unsched)
{
	struct homa_msgout *out = &rpc->out;

	out->msg = m;
	e->tx_buffered += out->msg->charged;
	out->length = m->length;
	if (m->length <= homa_whole_packets(e, unsched))
		unsched = m->length; /* no short tail behind a GRANT round trip */
	out->unsched = unsched < m->length ? unsched : m->length;
	out->birth = e->now;
	if (start_mode(e, rpc) && out->unsched < out->length)
		out->unsched = 0;
	homa_msgout_restart(e, rpc);
}

/**
 * homa_msgout_restart() - (Re)start sending @rpc's message from byte 0:
 * used at first send and when the server answered RPC_UNKNOWN.
 */
void homa_msgout_restart(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_msgout *out = &rpc->out;

	out->next_xmit = 0;
	out->granted = out->unsched;
	out->resend_start = out->resend_end = 0;
	out->sched_priority = 0;
	out->start_sent = out->unsched == 0 && out->length && start_mode(e, rpc);
	out->start_pending = out->start_sent;
	out->start_ticks = 0;
	out->empty_pending = out->length == 0;
	homa_tx_update(e, rpc);
}

/**
 * homa_msgout_destroy() - Free the buffered message, if any (a borrowed
 * message: the engine's copy of the gather list; the bytes are the caller's).
 */
void homa_msgout_destroy(homa_engine *e, struct homa_msgout *out)
{
	if (!out->msg)
		return;
	e->tx_buffered -= out->msg->charged;
	homa_msg_free(e, out->msg);
	out->msg = NULL;
	homa_mem_free(e, out->ref, out->nref * sizeof(*out->ref));
	out->ref = NULL;
	out->nref = 0;
}

/**
 * msgout_copy() - Copy @len bytes from offset @off of @out's message
 * (engine chunks, or the borrowed caller bytes) into @dst.
 * Return: bytes copied (fewer only if the message is shorter).
 */
static size_t msgout_copy(const struct homa_msgout *out, uint32_t off, uint8_t *dst,
			  uint32_t len)
{
	size_t done = 0, at = off;
	uint32_t i;

	if (!out->ref)
		return homa_msg_copy(out->msg, off, dst, len);
	for (i = 0; i < out->nref && done < len; i++) {
		size_t piece = out->ref[i].len, n;

		if (at >= piece) {
			at -= piece;
			continue;
		}
		n = piece - at < len - done ? piece - at : len - done;
		memcpy(dst + done, (const uint8_t *)out->ref[i].base + at, n);
		done += n;
		at = 0;
	}
	return done;
}

/** sendable() - True if @out has something to put on the wire now. */
static bool sendable(const struct homa_msgout *out)
{
	uint32_t limit = out->granted < out->length ? out->granted : out->length;

	return out->msg && (out->start_pending || out->empty_pending ||
			    out->resend_start < out->resend_end || out->next_xmit < limit);
}

/** remaining() - Bytes of @out never sent (the SRPT key). */
static uint32_t remaining(const struct homa_msgout *out)
{
	return out->length - out->next_xmit;
}

/**
 * homa_tx_update() - Put @rpc on the sender's SRPT list if it has
 * something to send (kept sorted by bytes left), or take it off.
 */
void homa_tx_update(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_link *pos;
	uint32_t mine = remaining(&rpc->out);

	homa_list_del(&rpc->out.tx_link);
	if (!sendable(&rpc->out))
		return;
	for (pos = e->tx_list.next; pos != &e->tx_list; pos = pos->next) {
		struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, out.tx_link);

		if (remaining(&r->out) > mine)
			break;
	}
	homa_list_insert_before(pos, &rpc->out.tx_link);
}

/** pick_rpc() - Next message to serve: SRPT head, or the oldest for the FIFO share. */
static struct homa_rpc *pick_rpc(homa_engine *e)
{
	struct homa_rpc *best = homa_container_of(e->tx_list.next, struct homa_rpc, out.tx_link);
	uint64_t quantum = 1000ull * e->s.mtu;
	struct homa_link *pos;

	if (!e->s.pacer_fifo_fraction || e->pacer_fifo_credit < quantum)
		return best;
	e->pacer_fifo_credit -= quantum;
	for (pos = e->tx_list.next; pos != &e->tx_list; pos = pos->next) {
		struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, out.tx_link);

		if (r->out.birth < best->out.birth)
			best = r;
	}
	return best;
}

/** fill_start() - Describe a START_MSG for @rpc in @pkt. Return: its priority. */
static uint8_t fill_start(homa_engine *e, struct homa_rpc *rpc, struct homa_pkt *pkt)
{
	pkt->type = HOMA_PKT_START_MSG;
	pkt->u.start.message_length = rpc->out.length;
	return (uint8_t)(e->s.num_priorities - 1);
}

/**
 * fill_data() - Describe @rpc's next DATA packet (a retransmission first,
 * else new bytes) in @pkt, taking an owed ack along. The message does not
 * advance here: commit() does that once the packet is sealed, and
 * unfill() gives the ack back if it is not. Return: its priority.
 */
static uint8_t fill_data(homa_engine *e, struct homa_rpc *rpc, struct homa_pkt *pkt)
{
	struct homa_msgout *out = &rpc->out;
	uint32_t max = homa_data_payload(e);
	uint32_t limit = out->granted < out->length ? out->granted : out->length;
	uint32_t off, n;
	uint8_t prio;

	if (out->resend_start < out->resend_end) {
		off = out->resend_start;
		n = out->resend_end - off;
		prio = out->resend_priority;
		pkt->u.data.retransmit = 1;
	} else {
		off = out->next_xmit;
		n = limit - off;
		/* an empty message's one packet is unscheduled too */
		prio = off < out->unsched || !out->length
		       ? homa_unsched_priority(e, rpc->peer, out->length) : out->sched_priority;
	}
	if (n > max)
		n = max;
	pkt->type = HOMA_PKT_DATA;
	pkt->seq = off;
	pkt->u.data.message_length = out->length;
	pkt->u.data.incoming = limit;
	pkt->u.data.cutoff_version = rpc->peer->cutoff_version;
	pkt->u.data.offset = off;
	pkt->u.data.payload_len = n;
	homa_peer_take_ack(e, rpc->peer, rpc->dport, &pkt->u.data.ack);
	if (homa_is_client_id(rpc->id) && e->s.incast_threshold &&
	    rpc->peer->client_rpcs > e->s.incast_threshold && homa_peer_ext(e, rpc->peer))
		pkt->ext |= HOMA_EXT_INCAST;
	return prio;
}

/**
 * commit() - @pkt (filled by fill_start() or fill_data(), payload length
 * @n) was sealed and goes out: advance @rpc's message past it.
 */
static void commit(homa_engine *e, struct homa_rpc *rpc, const struct homa_pkt *pkt, uint32_t n)
{
	struct homa_msgout *out = &rpc->out;

	out->seal_refused = false;
	if (pkt->type == HOMA_PKT_START_MSG) {
		out->start_pending = false;
		out->start_ticks = 0;
	} else if (pkt->u.data.retransmit) {
		out->resend_start += n;
		e->st.retransmitted_bytes += n;
	} else {
		out->next_xmit += n;
		out->empty_pending = false;
	}
}

/**
 * unfill() - The seal hook refused @pkt: nothing about @rpc advances (the
 * same packet is built again next time), and the ack it carried is owed
 * again. The RPC leaves the send list until the next tick puts it back
 * (timer.c), or until something else it hears does (homa_tx_update()):
 * meanwhile other messages go, and the engine does not ask to be called
 * again at once for a packet the hook would refuse again (a driver
 * waiting for homa_engine_next_deadline() would spin). The refusal lets
 * the RPC's silence count, so a peer the hook keeps refusing times out.
 */
static void unfill(homa_engine *e, struct homa_rpc *rpc, const struct homa_pkt *pkt)
{
	rpc->out.seal_refused = true;
	homa_list_del(&rpc->out.tx_link);
	if (pkt->type == HOMA_PKT_DATA && pkt->u.data.ack.client_id)
		homa_peer_add_ack(e, rpc->peer, pkt->u.data.ack.client_id,
				  pkt->u.data.ack.server_port);
}

/** after_send() - State changes once @rpc's message has no unsent bytes. */
static void after_send(struct homa_rpc *rpc)
{
	if (rpc->out.next_xmit < rpc->out.length)
		return;
	if (rpc->state == RPC_OUTGOING)
		rpc->state = homa_is_client_id(rpc->id) ? RPC_INCOMING : RPC_DONE;
}

/**
 * caller_seals() - True if packet hooks only reserve overhead: the
 * caller of homa_engine_output_ref() seals each packet itself, out of
 * place, so a copy of the payload into the packet first would be wasted.
 */
static bool caller_seals(const homa_engine *e)
{
	return e->has_hooks && !e->hooks.seal && !e->hooks.seal_to;
}

/**
 * borrow_payload() - With @ref (homa_engine_output_refs(), @nref
 * entries), no packet hooks that seal, and @out's @n bytes at @off in at
 * most @nref pieces: point @ref at them instead of copying. A borrowed
 * message (homa_msg_build_ref()) lends the caller's buffers, in one
 * piece; the engine's own chunks are lent only to a caller that seals
 * (caller_seals()) and at least HOMA_REF_MIN_CHUNK bytes at a time, and
 * the message is then marked with this generation of borrows (freed in
 * it, it is retired: homa_msg_free()).
 * Return: true if the payload is borrowed (else every @ref entry is empty).
 */
static bool borrow_payload(homa_engine *e, const struct homa_msgout *out, uint32_t off,
			   uint32_t n, struct homa_iov *ref, int nref)
{
	const uint8_t *p;
	uint32_t done = 0;
	bool chunks;
	int i;

	if (!ref || !n || (e->has_hooks && (e->hooks.seal || e->hooks.seal_to)))
		return false;
	chunks = !out->msg->ref && !out->ref;
	if (chunks && (!caller_seals(e) || n < HOMA_REF_MIN_CHUNK))
		return false;
	if (!chunks)
		nref = 1;
	for (i = 0; i < nref && done < n; i++) {
		size_t seg = homa_msg_segment(out->msg, off + done, &p);

		if (!seg)
			break;
		ref[i].base = p;
		ref[i].len = seg < n - done ? seg : n - done;
		done += (uint32_t)ref[i].len;
	}
	if (done < n) {
		while (i-- > 0)
			ref[i] = (struct homa_iov){NULL, 0};
		return false;
	}
	if (chunks)
		out->msg->ref_gen = e->ref_gen;
	return true;
}

/**
 * homa_output_data() - Emit the next paced DATA or START_MSG packet; its
 * payload is copied after the header in @buf, or with @ref not NULL
 * (@nref entries) possibly left where it is (borrow_payload()).
 * Return: bytes written to @buf, 0 if nothing may go now, HOMA_ENOSPC.
 */
int homa_output_data(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap,
		     struct homa_tx *tx, struct homa_iov *ref, int nref)
{
	struct homa_rpc *rpc;
	struct homa_pkt pkt;
	uint32_t payload_len = 0;
	size_t copied, wire;
	uint8_t prio;
	int len;

	if (homa_list_empty(&e->tx_list) || e->link_idle_ns > now + homa_pacer_bound(e))
		return 0;
	if (cap < e->s.mtu)
		return HOMA_ENOSPC;
	rpc = pick_rpc(e);
	memset(&pkt, 0, sizeof(pkt));
	pkt.sport = e->port;
	pkt.dport = rpc->dport;
	pkt.sender_id = rpc->id;
	prio = rpc->out.start_pending ? fill_start(e, rpc, &pkt) : fill_data(e, rpc, &pkt);
	if (pkt.type == HOMA_PKT_DATA) {
		/* header first, then the payload straight from the message chunks */
		payload_len = pkt.u.data.payload_len;
		pkt.u.data.payload_len = 0;
	}
	len = homa_wire_encode(&pkt, buf, cap);
	if (borrow_payload(e, &rpc->out, pkt.u.data.offset, payload_len, ref, nref)) {
		wire = (size_t)len + payload_len;
	} else {
		copied = msgout_copy(&rpc->out, pkt.u.data.offset, buf + len, payload_len);
		e->st.payload_copied_out += copied;
		len += (int)copied;
		len = homa_seal(e, &rpc->peer->addr, buf, homa_wire_header_len(pkt.type),
				(size_t)len, cap);
		if (len <= 0) {
			unfill(e, rpc, &pkt);
			return 0;
		}
		wire = (size_t)len;
	}
	commit(e, rpc, &pkt, payload_len);
	if (pkt.type == HOMA_PKT_DATA)
		rpc->out.data_priority = prio;
	homa_tx_update(e, rpc);
	after_send(rpc);
	homa_pacer_account(e, now, wire);
	e->pacer_fifo_credit += (uint64_t)wire * e->s.pacer_fifo_fraction;
	homa_count_sent(e, pkt.type, prio, wire);
	tx->dst = rpc->peer->addr;
	tx->dport = rpc->dport;
	tx->priority = prio;
	tx->type = pkt.type;
	tx->len = (size_t)len;
	return len;
}
