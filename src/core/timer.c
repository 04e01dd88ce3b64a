/* SPDX-License-Identifier: MIT */
/**
 * @file timer.c
 * The once-per-tick scan: RESENDs for missing data (at most one per peer
 * per tick, rotating among that peer's RPCs), NEED_ACK
 * for finished server RPCs, START_MSG repeats, and timeouts that abort
 * RPCs and mark their peer dead. An RPC times out when it was silent for
 * timeout_ticks and either its peer was silent as long, or the RPC's own
 * probes went unanswered for timeout_ticks worth of resend_interval turns:
 * a live peer busy answering other RPCs' RESENDs (one per tick) keeps
 * them alive, but not RPCs of a dead process on a live host (their port
 * answers nothing while the host keeps talking through other ports).
 */
#include "internal.h"

/** homa_timer_arm() - Make sure a tick is scheduled (called when work appears). */
void homa_timer_arm(homa_engine *e)
{
	if (e->next_tick_ns == UINT64_MAX)
		e->next_tick_ns = e->now + e->s.tick_ns;
}

/**
 * waiting() - True if @rpc is waiting on its peer (so silence counts):
 * not while we still have bytes to send, nor while a server's application
 * holds the request, nor while we ourselves withhold grants.
 */
static bool waiting(const struct homa_rpc *rpc)
{
	const struct homa_msgout *out = &rpc->out;
	uint32_t limit = out->granted < out->length ? out->granted : out->length;

	if (out->seal_refused)
		return true; /* cannot send: silence counts, as for loss */
	if (homa_list_linked(&out->tx_link) || out->next_xmit < limit)
		return false;
	if (rpc->state == RPC_IN_SERVICE)
		return false;
	if (rpc->state == RPC_INCOMING && rpc->in.msg)
		return rpc->in.received < rpc->in.granted;
	return true;
}

/** timeout() - @rpc's peer stayed silent for timeout_ticks. */
static void timeout(homa_engine *e, struct homa_rpc *rpc)
{
	e->st.rpcs_timed_out++;
	if (homa_is_client_id(rpc->id)) {
		if (homa_peer_mark_dead(e, rpc->peer, rpc->dport))
			e->st.peers_declared_dead++;
		homa_rpc_fail(e, rpc, HOMA_ETIMEDOUT);
	} else {
		homa_rpc_free(e, rpc);
	}
}

/** count_probe() - @rpc sent a probe that a live peer process must answer. */
static void count_probe(struct homa_rpc *rpc)
{
	if (rpc->probes < UINT16_MAX)
		rpc->probes++;
}

/**
 * resend_short_request() - Client @rpc's last probe went unanswered and
 * nothing of its response came: if its request went out whole without
 * grants (all of it unscheduled), queue it again (as a retransmission at
 * its DATA priority) beside the RESEND. A server that lost the request
 * answers a RESEND with RPC_UNKNOWN, but a newcomer is a stranger to it
 * and strangers' replies are capped (homa_ctl_stranger_ok()): under a
 * flood that spends them early in every tick the answer never came and
 * the RPC timed out. The request itself needs no reply; arriving whole,
 * it makes the client a known peer. A server that holds the request
 * drops the copy (a duplicate), and one that finished it drops it too
 * (done.c): at most once still holds.
 */
static void resend_short_request(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_msgout *out = &rpc->out;

	if (!out->msg || !out->length || out->unsched < out->length ||
	    out->next_xmit < out->length)
		return;
	out->resend_start = 0;
	out->resend_end = out->length;
	out->resend_priority = out->data_priority;
	e->st.requests_resent++;
	homa_tx_update(e, rpc);
}

/**
 * probe() - Ask @rpc's peer for what we miss: the first hole of the
 * incoming message, or (client, nothing received yet) the response's start;
 * a server with a fully sent reply asks for an ack, one whose reply waits
 * for grants asks whether the client is still there. RESEND and NEED_ACK
 * must be answered by a live peer process, so they count in rpc->probes.
 * Return: true if a RESEND went out (it counts against the peer's
 * one-per-tick budget).
 */
static bool probe(homa_engine *e, struct homa_rpc *rpc)
{
	uint32_t start, end;

	if (rpc->state == RPC_DONE) {
		homa_ctl_simple(e, rpc, HOMA_PKT_NEED_ACK);
		count_probe(rpc);
		return false;
	}
	if (rpc->state == RPC_OUTGOING && !homa_is_client_id(rpc->id)) {
		/* waiting for grants: a RESEND past the request's end costs a
		 * live client nothing and draws a BUSY (or RPC_UNKNOWN) */
		homa_ctl_resend(e, rpc, rpc->in.length, 0);
		count_probe(rpc);
		return true;
	}
	if (!rpc->in.msg) {
		if (!homa_is_client_id(rpc->id))
			return false;
		/* nothing of the response yet: the probe travels at the priority
		 * of the request's latest DATA packet, so it queues behind that
		 * data (a switch's queue of that priority, a receiver's queue of
		 * bulk packets) rather than overtaking it: a server that met the
		 * RESEND before the request would answer RPC_UNKNOWN, and the
		 * request would be sent again whole */
		homa_ctl_resend_at(e, rpc, 0, e->s.unsched_bytes,
				   rpc->out.msg ? rpc->out.data_priority
						: (uint8_t)(e->s.num_priorities - 1));
		if (rpc->start_resends < UINT16_MAX)
			rpc->start_resends++;
		if (rpc->probes)
			resend_short_request(e, rpc);
		count_probe(rpc);
		return true;
	}
	if (!homa_msgin_first_gap(&rpc->in, &start, &end))
		return false;
	homa_ctl_resend(e, rpc, start, end - start);
	count_probe(rpc);
	return true;
}

/**
 * start_repeat() - For a message announced by START_MSG and not granted
 * yet, the START_MSG is the probe: repeat it every resend_ticks silent
 * ticks (each repeat counts as an unanswered probe until GRANT or BUSY).
 * Return: true if @rpc is waiting for its first grant (no other probe).
 */
static bool start_repeat(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_msgout *out = &rpc->out;

	if (!out->start_sent || out->granted > 0 || !out->msg)
		return false;
	if (out->start_pending || ++out->start_ticks < e->s.resend_ticks)
		return true;
	out->start_pending = true;
	count_probe(rpc);
	e->st.start_msgs_resent++;
	homa_tx_update(e, rpc);
	return true;
}

/**
 * unanswered() - True if @rpc sent as many probes as fit in timeout_ticks
 * (at least one) without hearing back, whatever its peer does meanwhile.
 */
static bool unanswered(const homa_engine *e, const struct homa_rpc *rpc)
{
	uint32_t turns = e->s.timeout_ticks / e->s.resend_interval;

	return rpc->probes >= (turns ? turns : 1);
}

/**
 * retry_expired() - True if, for HOMA_CLIENT_RETRY_TIMEOUTS timeouts of
 * engine time, client RPC @rpc heard nothing about itself and its server's
 * host sent nothing at all. Ticks alone do not bound this: a paused process
 * runs one tick when it resumes (this check runs before the packets that
 * waited are read). The bound is what lets servers forget finished RPCs
 * (done.c): a server frees an RPC only after its client stopped answering
 * for a timeout, so a client that resumes later than this gives up rather
 * than asking again. A live server host (busy answering other RPCs'
 * RESENDs one per tick) keeps its RPCs alive, as the tick rules do.
 */
static bool retry_expired(const homa_engine *e, const struct homa_rpc *rpc)
{
	uint64_t limit = (uint64_t)HOMA_CLIENT_RETRY_TIMEOUTS * e->s.timeout_ticks * e->s.tick_ns;
	uint64_t heard = rpc->heard_ns > rpc->peer->heard_ns ? rpc->heard_ns : rpc->peer->heard_ns;

	return homa_is_client_id(rpc->id) && e->now - heard >= limit;
}

/**
 * retry_due() - Apply retry_expired() to @rpc: the first tick that finds
 * it only stops the RPC's probes (no RESEND past the bound) and marks it;
 * the next tick that still finds it fails the RPC with HOMA_ETIMEDOUT.
 * A process that was not scheduled for the bound runs one tick when it
 * resumes, before it reads the packets that waited meanwhile: failing the
 * RPC in that tick lost a response that sat in the socket (homa-flood at
 * load 12 with 20 ms timeouts: the client's thread stalled 80-104 ms).
 * The runtime reads input between two ticks, so the second tick knows.
 * Return: true if @rpc is past the bound (nothing else to do this tick).
 */
static bool retry_due(homa_engine *e, struct homa_rpc *rpc)
{
	if (!retry_expired(e, rpc)) {
		rpc->retry_due = false;
		return false;
	}
	if (rpc->retry_due)
		timeout(e, rpc);
	else
		rpc->retry_due = true;
	return true;
}

/**
 * parkable() - True if the ticks may skip @rpc (scan.c): a server RPC
 * receiving its request, whose waiting() only a packet can end (and a
 * packet unparks it). Not under memory pressure, whose ticks visit every
 * RPC (homa_evict_stale()).
 */
static bool parkable(const homa_engine *e, const struct homa_rpc *rpc)
{
	return !homa_is_client_id(rpc->id) && rpc->state == RPC_INCOMING && !rpc->out.msg &&
	       !e->evict_sweep;
}

/**
 * park_quiet() - @rpc, just checked and still alive, owes nothing until
 * its next RESEND turn or its timeout: if parkable(), let the ticks until
 * then skip it.
 */
static void park_quiet(homa_engine *e, struct homa_rpc *rpc)
{
	uint32_t wake = rpc->resend_at > e->s.resend_ticks ? rpc->resend_at : e->s.resend_ticks;

	if (!parkable(e, rpc))
		return;
	if (wake > e->s.timeout_ticks)
		wake = e->s.timeout_ticks;
	if (rpc->silent_ticks < wake)
		homa_scan_park(e, rpc, e->tick + (wake - rpc->silent_ticks));
}

/**
 * park_behind() - @rpc's RESEND is due but its peer's went to another RPC
 * this tick: if parkable() and its probes are not all unanswered (which
 * could time it out), let the ticks that find the same skip it.
 */
static void park_behind(homa_engine *e, struct homa_rpc *rpc)
{
	if (parkable(e, rpc) && !unanswered(e, rpc))
		homa_scan_park_behind(e, rpc);
}

/** check_rpc() - Per-tick work for one RPC (homa_scan_walk()'s visit). */
static void check_rpc(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_peer *peer = rpc->peer;
	uint32_t first;

	homa_scan_wake(e, rpc);
	if (rpc->out.seal_refused && !homa_list_linked(&rpc->out.tx_link))
		homa_tx_update(e, rpc); /* the seal hook refused its packet: try again */
	if (!waiting(rpc)) {
		homa_rpc_heard(e, rpc);
		return;
	}
	rpc->silent_ticks++;
	if (rpc->silent_ticks >= e->s.timeout_ticks &&
	    (e->tick - peer->heard_tick >= e->s.timeout_ticks || unanswered(e, rpc))) {
		timeout(e, rpc);
		return;
	}
	if (retry_due(e, rpc))
		return;
	if (homa_evict_stale(e, rpc))
		return; /* memory pressure: freed rather than asked again */
	/* after the silence count: our own START_MSG repeat is not a sign of life */
	if (start_repeat(e, rpc))
		return;
	first = rpc->state == RPC_DONE ? e->s.request_ack_ticks : e->s.resend_ticks;
	if (rpc->silent_ticks < first || rpc->silent_ticks < rpc->resend_at) {
		park_quiet(e, rpc);
		return;
	}
	if (peer->resend_tick == e->tick) {
		/* this peer already got its RESEND this tick */
		park_behind(e, rpc);
		return;
	}
	rpc->resend_at = rpc->silent_ticks + e->s.resend_interval;
	if (!homa_ctl_stranger_ok(e, peer)) {
		/* a stranger's request, strangers' replies spent: the turn
		 * counts as an unanswered probe, so it still times out */
		count_probe(rpc);
		park_quiet(e, rpc);
		return;
	}
	if (probe(e, rpc)) {
		peer->resend_tick = e->tick;
		homa_scan_rotate(e, rpc);
	}
	park_quiet(e, rpc);
}

/** homa_timer_tick() - One timer tick over the whole engine. */
void homa_timer_tick(homa_engine *e)
{
	e->tick++;
	e->evict_sweep = homa_evict_pressure(e);
	homa_cutoffs_maybe_update(e);
	homa_peers_tick(e);
	homa_scan_walk(e, e->evict_sweep, check_rpc);
	/*
	 * Messages waiting for grants get them when data arrives or a message
	 * ends; an RPC freed another way (abort, RPC_UNKNOWN, timeout) frees
	 * budget without a pass, so run one per tick as well.
	 */
	homa_grant_check(e);
}
