/* SPDX-License-Identifier: MIT */
/**
 * @file incoming.c
 * Handling of each received packet type, after decoding. Handlers return
 * 0, or HOMA_DROP(reason) when the packet was not used.
 */
#include <string.h>

#include "internal.h"

/**
 * whole_message() - True if @pkt, announcing a message of @length bytes,
 * carries all of it (a one-packet request completes at once).
 */
static bool whole_message(const struct homa_pkt *pkt, uint32_t length)
{
	if (pkt->type != HOMA_PKT_DATA)
		return length == 0;
	return pkt->u.data.offset == 0 && pkt->u.data.payload_len >= length;
}

/**
 * peer_partial_cap() - Requests @peer may have partly received here at
 * once: settings.max_peer_partial_msgs, or for a stranger (no whole
 * message from it yet, no RPC of ours to it) the smaller
 * settings.max_stranger_partial_msgs. A host with no peer entry yet holds
 * none, so its first request always opens.
 */
static uint32_t peer_partial_cap(const homa_engine *e, const struct homa_peer *peer)
{
	uint32_t cap = e->s.max_peer_partial_msgs;

	if (!peer->proven && e->s.max_stranger_partial_msgs < cap)
		cap = e->s.max_stranger_partial_msgs;
	return cap;
}

/**
 * partial_limit() - Whether a packet from @src opening a request of
 * @length bytes may create it: a host with settings.max_peer_partial_msgs
 * requests partly received (settings.max_stranger_partial_msgs while it
 * is a stranger, peer_partial_cap()), or an engine with
 * settings.max_partial_msgs from all hosts, opens no more, except with a
 * packet that carries its whole message (it completes at once, holds no
 * grant list entry, and proves its host). The
 * check runs before any peer is created, so forged requests from many
 * (spoofed) hosts grow neither the peer table nor the grant list.
 * Return: 0 or the HOMA_DROP code (HOMA_DROP_PEER_LIMIT,
 * HOMA_DROP_PARTIAL_LIMIT).
 */
static int partial_limit(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt,
			 uint32_t length)
{
	struct homa_peer *peer;

	if (whole_message(pkt, length))
		return 0;
	peer = homa_peer_find(e, src);
	if (peer && peer->partial_in >= peer_partial_cap(e, peer))
		return HOMA_DROP(HOMA_DROP_PEER_LIMIT);
	if (e->partial_in >= e->s.max_partial_msgs)
		return HOMA_DROP(HOMA_DROP_PARTIAL_LIMIT);
	return 0;
}

/**
 * new_server_rpc() - Create the server side of an RPC announced by a
 * DATA or START_MSG packet from @src for a message of @length bytes;
 * @key is homa_rpc_key() of its id and @src (the caller's lookup made it).
 * Limited by partial_limit().
 * Return: the RPC or a HOMA_DROP code in *@drop (HOMA_DROP_NOT_SERVER,
 * HOMA_DROP_PEER_LIMIT, HOMA_DROP_PARTIAL_LIMIT, HOMA_DROP_COMPLETED,
 * HOMA_DROP_BAD_FIELD, HOMA_DROP_MEMORY).
 */
static struct homa_rpc *new_server_rpc(homa_engine *e, const homa_addr *src,
				       const struct homa_pkt *pkt, uint32_t length, uint32_t key,
				       int *drop)
{
	struct homa_peer *peer;
	struct homa_rpc *rpc;
	uint64_t done_f = 0, h = 0;

	if (!e->server) {
		*drop = HOMA_DROP(HOMA_DROP_NOT_SERVER);
		return NULL;
	}
	*drop = partial_limit(e, src, pkt, length);
	if (*drop)
		return NULL;
	if (e->done_cap) {
		/* the client's hash, kept in its RPC group if it has one */
		struct homa_peer *known = homa_peer_find(e, src);
		struct homa_pport *g = known ? homa_pport_near(known, pkt->sport) : NULL;

		h = g ? g->h : homa_done_client(e, src, pkt->sport);
		if (homa_done_seen_h(e, h, pkt->sender_id ^ 1)) {
			*drop = HOMA_DROP(HOMA_DROP_COMPLETED);
			return NULL;
		}
		done_f = homa_done_fp(h, pkt->sender_id ^ 1);
	}
	if (homa_rpc_find_host_key(e, key, pkt->sender_id ^ 1, src)) {
		/* ids are unique per host: the same id from another port of it */
		*drop = HOMA_DROP(HOMA_DROP_BAD_FIELD);
		return NULL;
	}
	/* a full rx budget gives way to a shorter message (evict.c); if it
	 * cannot, homa_rpc_new() or homa_msgin_init() refuses below */
	homa_evict_room(e, NULL, length, sizeof(*rpc) + HOMA_CHUNK);
	peer = homa_peer_get(e, src);
	/* the client's hash is its RPC group's key too */
	rpc = peer ? homa_rpc_new_key(e, key, pkt->sender_id ^ 1, peer, pkt->sport,
				      e->done_cap ? &h : NULL) : NULL;
	if (!rpc) {
		if (peer)
			homa_peer_put(e, peer);
		*drop = HOMA_DROP(HOMA_DROP_MEMORY);
		return NULL;
	}
	rpc->state = RPC_INCOMING;
	rpc->done_f = done_f;
	rpc->partial = true;
	peer->partial_in++;
	e->partial_in++;
	peer->ours |= pkt->ours;
	rpc->incast = (pkt->ext & HOMA_EXT_INCAST) != 0;
	return rpc;
}

/**
 * message_start() - Find or create the RPC a DATA/START_MSG packet is for
 * and make sure its incoming message exists with @length bytes.
 * Return: the RPC (NULL with *@drop set when the packet must be dropped,
 * or with *@drop = 0 when it is a harmless duplicate).
 */
static struct homa_rpc *message_start(homa_engine *e, const homa_addr *src,
				      const struct homa_pkt *pkt, uint32_t length,
				      uint32_t unsched, int *drop)
{
	uint32_t key = homa_rpc_key(e, pkt->sender_id ^ 1, src);
	struct homa_rpc *rpc = homa_rpc_find_host_key(e, key, pkt->sender_id ^ 1, src);
	bool created = false;
	int err;

	if (rpc && rpc->dport != pkt->sport)
		rpc = NULL;
	*drop = 0;
	if (length > e->s.max_message) {
		*drop = HOMA_DROP(HOMA_DROP_TOO_LONG);
		return NULL;
	}
	if (!rpc) {
		if (homa_is_client_id(pkt->sender_id ^ 1)) {
			*drop = HOMA_DROP(HOMA_DROP_UNKNOWN_RPC);
			return NULL;
		}
		rpc = new_server_rpc(e, src, pkt, length, key, drop);
		if (!rpc)
			return NULL;
		created = true;
	}
	homa_rpc_heard(e, rpc);
	if (homa_is_client_id(rpc->id))
		homa_peer_mark_served(e, rpc->peer, rpc->dport);
	if (homa_is_client_id(rpc->id) && rpc->state == RPC_OUTGOING) {
		/* a response means the server has the whole request */
		rpc->state = RPC_INCOMING;
		rpc->out.next_xmit = rpc->out.length;
		rpc->out.resend_start = rpc->out.resend_end = 0;
		rpc->out.start_pending = false;
		rpc->out.empty_pending = false;
		homa_tx_update(e, rpc);
	}
	if (rpc->state != RPC_INCOMING)
		return NULL; /* request already complete: duplicate */
	if (rpc->in.msg) {
		if (rpc->in.length != length) {
			*drop = HOMA_DROP(HOMA_DROP_LENGTH_CHANGED);
			return NULL;
		}
		return rpc;
	}
	err = homa_msgin_init(e, rpc, length, unsched);
	if (err) {
		if (created)
			homa_rpc_free(e, rpc);
		*drop = HOMA_DROP(HOMA_DROP_MEMORY);
		return NULL;
	}
	return rpc;
}

/**
 * message_complete() - All bytes of @rpc's incoming message are here:
 * hand the message to the application as an event. A client RPC ends
 * here (its ack is queued for the server); a server RPC waits for a reply.
 */
static void message_complete(homa_engine *e, struct homa_rpc *rpc)
{
	bool scheduled = homa_list_linked(&rpc->in.grant_link);
	uint64_t freed = 0;
	struct homa_event ev;

	homa_grant_remove(e, rpc);
	homa_evict_untrack(e, rpc);
	rpc->peer->proven = true; /* no longer a stranger (homa_ctl_stranger_ok()) */
	memset(&ev, 0, sizeof(ev));
	ev.id = rpc->handle;
	ev.cookie = rpc->cookie;
	ev.peer = rpc->peer->addr;
	ev.peer_port = rpc->dport;
	ev.msg = rpc->in.msg;
	ev.start_ns = rpc->start_ns;
	homa_hist_add(e->st.rx_msg_size_hist, rpc->in.length);
	rpc->in.msg = NULL; /* now owned by the event, still charged to rx_buffered */
	if (homa_is_client_id(rpc->id)) {
		ev.type = HOMA_EV_RESPONSE;
		e->st.client_rpcs_completed++;
		homa_hist_add(e->st.rpc_latency_hist, e->now - rpc->start_ns);
		homa_peer_add_ack(e, rpc->peer, rpc->id, rpc->dport);
	} else {
		ev.type = HOMA_EV_REQUEST;
		rpc->state = RPC_IN_SERVICE;
		rpc->partial = false;
		rpc->peer->partial_in--;
		e->partial_in--;
		e->st.server_requests_received++;
	}
	if (homa_rpc_event(e, rpc, &ev)) {
		freed = ev.msg->charged;
		e->rx_buffered -= freed;
		homa_msg_free(e, ev.msg);
	} else {
		homa_list_add_tail(&e->delivered, &ev.msg->link);
	}
	if (homa_is_client_id(rpc->id))
		homa_rpc_free(e, rpc);
	/* a message that was never scheduled leaves the grant budget as it
	 * was: no pass (under a flood it walked the forged partial messages) */
	if (scheduled || e->grant_module)
		homa_grant_defer(e);
	else if (freed)
		homa_grant_released(e, freed);
}

/**
 * handle_ack_entry() - Host @src acked @ack: free our server RPC. The ack
 * may come from any client socket of that host (the module keeps one ack
 * list per host, mixing its sockets), so the RPC is found by id and host.
 * Return: true if one was freed.
 */
static bool handle_ack_entry(homa_engine *e, const homa_addr *src, const struct homa_ack *ack)
{
	struct homa_rpc *rpc;

	if (ack->server_port != e->port || !homa_is_client_id(ack->client_id))
		return false;
	rpc = homa_rpc_find_host(e, ack->client_id ^ 1, src);
	if (!rpc || rpc->state != RPC_DONE)
		return false;
	e->st.acks_received++;
	homa_rpc_free(e, rpc);
	return true;
}

/**
 * announce() - The first bytes of server @rpc's request arrived and did
 * not complete it: queue HOMA_EV_REQUEST_BEGIN once, if asked for
 * (homa_engine_announce_requests()). An event lost to memory is not an
 * error: the request is still delivered whole.
 */
static void announce(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_event ev;

	if (!e->announce || rpc->announced || homa_is_client_id(rpc->id))
		return;
	rpc->announced = true;
	memset(&ev, 0, sizeof(ev));
	ev.type = HOMA_EV_REQUEST_BEGIN;
	ev.id = rpc->handle;
	ev.peer = rpc->peer->addr;
	ev.peer_port = rpc->dport;
	homa_event_push(e, &ev);
}

/** homa_announce_arriving() - See internal.h. */
void homa_announce_arriving(homa_engine *e)
{
	for (struct homa_link *pos = e->all_rpcs.next; pos != &e->all_rpcs; pos = pos->next) {
		struct homa_rpc *rpc = homa_container_of(pos, struct homa_rpc, all_link);

		if (rpc->partial && rpc->in.received > 0)
			announce(e, rpc);
	}
}

/** handle_data() - A DATA packet. */
static int handle_data(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_rpc *rpc;
	uint32_t before;
	int drop, added;

	if (pkt->u.data.ack.client_id)
		handle_ack_entry(e, src, &pkt->u.data.ack);
	rpc = message_start(e, src, pkt, pkt->u.data.message_length, pkt->u.data.incoming, &drop);
	if (!rpc) {
		if (!drop)
			e->st.duplicate_bytes += pkt->u.data.payload_len;
		return drop;
	}
	/* pkt->u.data.incoming was read once, when the message was created
	 * (message_start()): what we have granted is ours to decide, and a
	 * sender claiming more must not push the budget past max_incoming */
	before = rpc->in.received;
	added = homa_msgin_add(e, rpc, pkt->u.data.offset, pkt->u.data.payload, pkt->u.data.payload_len);
	if (added < 0) {
		/* bytes stored before a failure count as received (msgin.c):
		 * they leave the grant accounting's outstanding share too */
		if (rpc->in.received > before)
			homa_grant_received(e, rpc, rpc->in.received - before);
		return HOMA_DROP(HOMA_DROP_MEMORY);
	}
	if ((uint32_t)added < pkt->u.data.payload_len)
		e->st.duplicate_bytes += pkt->u.data.payload_len - (uint32_t)added;
	homa_cutoffs_check_peer(e, rpc->peer, pkt->sport, pkt->u.data.cutoff_version, rpc->id);
	homa_grant_received(e, rpc, (uint32_t)added);
	if (rpc->in.received == rpc->in.length) {
		message_complete(e, rpc);
		return 0;
	}
	if (added)
		announce(e, rpc);
	if (rpc->in.scheduled && added)
		homa_grant_defer(e); /* one pass per input batch, before output */
	return 0;
}

/** handle_start() - A START_MSG: the receiver schedules the message from byte 0. */
static int handle_start(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_rpc *rpc = homa_rpc_find(e, pkt->sender_id ^ 1, src, pkt->sport);
	int drop;

	if (rpc && rpc->in.msg) {
		/* a repeat: we know the message; tell the sender we are alive */
		homa_rpc_heard(e, rpc);
		homa_ctl_simple(e, rpc, HOMA_PKT_BUSY);
		e->st.busy_sent++;
		return 0;
	}
	rpc = message_start(e, src, pkt, pkt->u.start.message_length, 0, &drop);
	if (!rpc)
		return drop;
	homa_grant_check(e);
	return 0;
}

/** handle_grant() - A GRANT for a message we are sending. */
static int handle_grant(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_rpc *rpc = homa_rpc_find(e, pkt->sender_id ^ 1, src, pkt->sport);
	struct homa_msgout *out;

	if (!rpc || !rpc->out.msg)
		return HOMA_DROP(HOMA_DROP_UNKNOWN_RPC);
	out = &rpc->out;
	if (pkt->u.grant.offset > out->length)
		return HOMA_DROP(HOMA_DROP_BAD_OFFSET);
	homa_rpc_heard(e, rpc);
	if (homa_is_client_id(rpc->id))
		homa_peer_mark_served(e, rpc->peer, rpc->dport);
	out->start_ticks = 0;
	if (pkt->u.grant.offset > out->granted)
		out->granted = pkt->u.grant.offset;
	out->sched_priority = pkt->u.grant.priority < e->s.num_priorities
			      ? pkt->u.grant.priority : (uint8_t)(e->s.num_priorities - 1);
	homa_tx_update(e, rpc);
	return 0;
}

/**
 * handle_resend() - The receiver of one of our messages asks for
 * [offset, offset+length) again. Bytes not yet sent, or a server still
 * working on the request, get a BUSY; an unknown RPC gets RPC_UNKNOWN.
 */
static int handle_resend(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_rpc *rpc = homa_rpc_find(e, pkt->sender_id ^ 1, src, pkt->sport);
	struct homa_peer *peer;
	struct homa_msgout *out;
	uint64_t end;

	if (!rpc) {
		peer = homa_peer_get(e, src);
		if (peer) {
			homa_ctl_reply_unknown(e, src, pkt, peer);
			homa_peer_put(e, peer);
		}
		return HOMA_DROP(HOMA_DROP_UNKNOWN_RPC);
	}
	e->st.resends_received++;
	homa_rpc_heard(e, rpc);
	out = &rpc->out;
	end = (uint64_t)pkt->u.resend.offset + pkt->u.resend.length;
	if (pkt->u.resend.length == HOMA_RESEND_ALL)
		end = out->next_xmit; /* "all you sent": the module's RESEND(0, -1), not a grant */
	if (end > out->length)
		end = out->length;
	if (out->msg && end > out->granted) {
		/* a RESEND also grants what it asks for (covers a lost GRANT) */
		out->granted = (uint32_t)end;
		homa_tx_update(e, rpc);
	}
	if (out->msg && out->length == 0 && !out->empty_pending &&
	    rpc->state != RPC_OUTGOING) {
		/* an empty message: its one packet went out; send it again */
		out->empty_pending = true;
		homa_tx_update(e, rpc);
		return 0;
	}
	if (!out->msg || pkt->u.resend.offset >= out->next_xmit) {
		homa_ctl_simple(e, rpc, HOMA_PKT_BUSY);
		e->st.busy_sent++;
		return 0;
	}
	if (end > out->next_xmit)
		end = out->next_xmit;
	if (out->resend_start < out->resend_end) {
		if (pkt->u.resend.offset < out->resend_start)
			out->resend_start = pkt->u.resend.offset;
		if (end > out->resend_end)
			out->resend_end = (uint32_t)end;
	} else {
		out->resend_start = pkt->u.resend.offset;
		out->resend_end = (uint32_t)end;
	}
	out->resend_priority = pkt->u.resend.priority < e->s.num_priorities
			       ? pkt->u.resend.priority : (uint8_t)(e->s.num_priorities - 1);
	homa_tx_update(e, rpc);
	return 0;
}

/**
 * restarts_spent() - True if @rpc may restart no more (restart()): it
 * spent settings.max_restarts restarts, its port showed no sign of serving
 * within timeout_ticks (homa_peer_port_serves()), and, when the
 * RPC_UNKNOWN came from an endpoint of ours (@ours), it has been
 * restarting for timeout_ticks of engine time. An endpoint of ours that
 * does not serve says so (HOMA_EXT_NOSERVER), so its plain RPC_UNKNOWN
 * means a server that lost the request: under a flood that overflows its
 * receive buffer it loses one request again and again before it answers
 * anything, and the count alone failed honest RPCs within a few resend
 * intervals. A module host's plain RPC_UNKNOWN is also its answer from a
 * port that does not serve, so the count alone ends those.
 */
static bool restarts_spent(const homa_engine *e, const struct homa_rpc *rpc, bool ours)
{
	if (rpc->restarts < e->s.max_restarts || homa_peer_port_serves(e, rpc->peer, rpc->dport))
		return false;
	if (!ours || !rpc->restarts)
		return true;
	return e->now - rpc->restart_ns >= (uint64_t)e->s.timeout_ticks * e->s.tick_ns;
}

/**
 * restart() - The server lost @rpc's request before answering (@ours: the
 * RPC_UNKNOWN came from an endpoint of ours): send it again from byte 0,
 * or, once its restarts are spent (restarts_spent()), fail the RPC with
 * HOMA_EABANDONED (a server answers at that port but dropped the request
 * every time). The cap does not apply while that port showed within
 * timeout_ticks that it serves (homa_peer_port_serves():
 * a GRANT, BUSY or response byte for one of our requests), and lost this
 * request (a flood overflowing its receive buffer loses most packets, and
 * four losses in a row failed honest RPCs; a server whose threads fell
 * behind completes no response for a while but still answers BUSY); the
 * RPC keeps restarting, and fails at the cap once that port stops
 * answering. Only a definite report that nothing
 * serves there (HOMA_EXT_NOSERVER, ICMP unreachable: unreach.c) gives
 * HOMA_ENOSERVER.
 */
static void restart(homa_engine *e, struct homa_rpc *rpc, bool ours)
{
	if (restarts_spent(e, rpc, ours)) {
		homa_rpc_fail(e, rpc, HOMA_EABANDONED);
		return;
	}
	if (!rpc->restarts)
		rpc->restart_ns = e->now;
	if (rpc->restarts < UINT16_MAX)
		rpc->restarts++;
	/* RPC_UNKNOWNs that arrive before our next RESEND answer RESENDs
	 * sent before now (handle_unknown() skips them); counting those
	 * RESENDs instead skipped the answers to later ones when most of
	 * them had been lost (a flood: the RPC timed out) */
	rpc->start_resends = 0;
	rpc->state = RPC_OUTGOING;
	homa_rpc_heard(e, rpc);
	homa_msgout_restart(e, rpc);
	e->st.rpc_restarts++;
}

/**
 * handle_unknown() - The other side has no record of the RPC. A server
 * forgets the RPC. A client restarts its request (restart()) only while
 * no response byte has arrived, as the Linux module does: a server with
 * no memory of finished RPCs would run a late restart twice. Later, the
 * packet is ignored (the RPC times out unless the response completes).
 * An RPC_UNKNOWN answers one of our RESENDs: after a restart, those that
 * arrive before our next RESEND answer RESENDs sent before it (a slow
 * server answers a queue of them in a burst), are about the request
 * before it and are ignored, so
 * that one loss counts as one restart toward settings.max_restarts. A
 * server of ours that finished the RPC says so (HOMA_EXT_FINISHED): the
 * client fails it with HOMA_EABANDONED instead of restarting it; an
 * endpoint of ours that does not serve says so (HOMA_EXT_NOSERVER): the
 * client fails it with HOMA_ENOSERVER.
 */
static int handle_unknown(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_rpc *rpc = homa_rpc_find(e, pkt->sender_id ^ 1, src, pkt->sport);

	if (!rpc)
		return HOMA_DROP(HOMA_DROP_UNKNOWN_RPC);
	if (!homa_is_client_id(rpc->id)) {
		homa_rpc_free(e, rpc);
		return 0;
	}
	if (pkt->ext & (HOMA_EXT_FINISHED | HOMA_EXT_NOSERVER)) {
		homa_rpc_fail(e, rpc, pkt->ext & HOMA_EXT_NOSERVER ? HOMA_ENOSERVER : HOMA_EABANDONED);
		return 0;
	}
	if (rpc->in.msg)
		return HOMA_DROP(HOMA_DROP_UNKNOWN_RPC); /* response under way: no restart */
	if (rpc->restarts && !rpc->start_resends)
		return HOMA_DROP(HOMA_DROP_UNKNOWN_RPC); /* answers a RESEND from before the restart */
	restart(e, rpc, pkt->ours);
	return 0;
}

/**
 * handle_busy() - The peer is alive and deliberately not sending. A BUSY
 * for a request of ours comes from a server that holds it: its port
 * serves (homa_peer_mark_served()).
 */
static int handle_busy(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_rpc *rpc = homa_rpc_find(e, pkt->sender_id ^ 1, src, pkt->sport);

	if (!rpc)
		return HOMA_DROP(HOMA_DROP_UNKNOWN_RPC);
	homa_rpc_heard(e, rpc);
	if (homa_is_client_id(rpc->id))
		homa_peer_mark_served(e, rpc->peer, rpc->dport);
	rpc->out.start_ticks = 0;
	return 0;
}

/**
 * handle_need_ack() - A server asks whether we (the client) are done with
 * an RPC. If we no longer have it, we are: answer with an ACK for it plus
 * any other acks owed to that server port. If we still have it (part of
 * the reply was lost and our RESEND waits for its turn), answer BUSY so
 * the server knows this process is alive and keeps the RPC.
 */
static int handle_need_ack(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	uint64_t id = pkt->sender_id ^ 1;
	struct homa_peer *peer;
	struct homa_rpc *rpc;

	if (!homa_is_client_id(id))
		return HOMA_DROP(HOMA_DROP_BAD_FIELD);
	rpc = homa_rpc_find(e, id, src, pkt->sport);
	if (rpc) {
		homa_ctl_simple(e, rpc, HOMA_PKT_BUSY);
		e->st.busy_sent++;
		return 0;
	}
	peer = homa_peer_get(e, src);
	if (!peer)
		return HOMA_DROP(HOMA_DROP_MEMORY);
	/* owed acks leave in ACK packets of five, when the list fills or at the
	 * next tick: a flood of forged NEED_ACKs draws fewer bytes than it
	 * sends; a stranger's (we never started an RPC to it) within the
	 * strangers' replies (its server asks again if it matters); an ack
	 * already owed is not added twice (the copy would ride a request in
	 * place of a newer ack) */
	if (!homa_peer_owes_ack(peer, id) && homa_ctl_stranger_ok(e, peer))
		homa_peer_add_ack(e, peer, id, pkt->sport);
	homa_peer_put(e, peer);
	return 0;
}

/** handle_ack() - A client acknowledges responses: free those server RPCs. */
static int handle_ack(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_ack self = {pkt->sender_id, e->port};
	bool any = handle_ack_entry(e, src, &self);
	uint16_t i;

	for (i = 0; i < pkt->u.ack.num_acks; i++)
		any |= handle_ack_entry(e, src, &pkt->u.ack.acks[i]);
	return any ? 0 : HOMA_DROP(HOMA_DROP_UNKNOWN_RPC);
}

/**
 * cutoffs_ordered() - True if @c, read over the priority levels we use,
 * never asks a longer message to go at a higher priority than a shorter
 * one: the non-zero cutoffs (zero marks a level unused for unscheduled
 * bytes) do not increase with the priority.
 */
static bool cutoffs_ordered(const homa_engine *e, const uint32_t *c)
{
	uint32_t prev = UINT32_MAX;

	for (uint32_t i = 0; i < e->s.num_priorities; i++) {
		if (!c[i])
			continue;
		if (c[i] > prev)
			return false;
		prev = c[i];
	}
	return true;
}

/**
 * handle_cutoffs() - A receiver tells us its unscheduled cutoffs. Only a
 * peer we have an RPC with may set them (its answer to our DATA), and
 * only ordered ones (cutoffs_ordered()); anything else is dropped as
 * HOMA_DROP_UNKNOWN_RPC or HOMA_DROP_BAD_FIELD and changes nothing.
 */
static int handle_cutoffs(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_peer *peer = homa_peer_find(e, src);

	if (!peer || !peer->rpcs)
		return HOMA_DROP(HOMA_DROP_UNKNOWN_RPC);
	if (!cutoffs_ordered(e, pkt->u.cutoffs.cutoffs))
		return HOMA_DROP(HOMA_DROP_BAD_FIELD);
	memcpy(peer->cutoffs, pkt->u.cutoffs.cutoffs, sizeof(peer->cutoffs));
	peer->cutoff_version = pkt->u.cutoffs.version;
	return 0;
}

/**
 * homa_incoming_foreign() - A packet from @src for another port of this
 * host (a raw socket sees them all): act only on the acks it carries for
 * our port (the Linux module piggybacks any ack it owes this host on any
 * packet to it). Return: 0 if one freed an RPC, else
 * HOMA_DROP(HOMA_DROP_WRONG_PORT).
 */
int homa_incoming_foreign(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	bool any = false;
	uint16_t i;

	if (pkt->type == HOMA_PKT_DATA && pkt->u.data.ack.client_id)
		any = handle_ack_entry(e, src, &pkt->u.data.ack);
	else if (pkt->type == HOMA_PKT_ACK)
		for (i = 0; i < pkt->u.ack.num_acks; i++)
			any |= handle_ack_entry(e, src, &pkt->u.ack.acks[i]);
	return any ? 0 : HOMA_DROP(HOMA_DROP_WRONG_PORT);
}

/**
 * homa_incoming() - Dispatch a decoded packet from @src to its handler.
 * Return: 0 or HOMA_DROP(reason).
 */
int homa_incoming(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt)
{
	struct homa_peer *peer = homa_peer_find(e, src);

	if (peer) {
		homa_peer_port_alive(peer, pkt->sport);
		peer->heard_tick = e->tick;
		peer->ours |= pkt->ours;
		peer->heard_ns = e->now;
		peer->rx_ns = e->now;
	}
	switch (pkt->type) {
	case HOMA_PKT_DATA: return handle_data(e, src, pkt);
	case HOMA_PKT_GRANT: return handle_grant(e, src, pkt);
	case HOMA_PKT_RESEND: return handle_resend(e, src, pkt);
	case HOMA_PKT_RPC_UNKNOWN: return handle_unknown(e, src, pkt);
	case HOMA_PKT_BUSY: return handle_busy(e, src, pkt);
	case HOMA_PKT_CUTOFFS: return handle_cutoffs(e, src, pkt);
	case HOMA_PKT_NEED_ACK: return handle_need_ack(e, src, pkt);
	case HOMA_PKT_ACK: return handle_ack(e, src, pkt);
	case HOMA_PKT_START_MSG: return handle_start(e, src, pkt);
	default: return 0; /* FREEZE: counted, nothing to do */
	}
}
