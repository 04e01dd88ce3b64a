/* SPDX-License-Identifier: MIT */
/**
 * @file engine.c
 * The engine's public entry points (engine.h): creation and teardown,
 * settings, the application calls (send, reply, abort, shutdown), packet
 * input and output, timers, events and statistics.
 */
#include <string.h>

#include "internal.h"

/**
 * clock_in() - Time at an entry point: @now, unless the caller's clock
 * stepped back behind a time this engine already saw (callers read clocks
 * outside their locks, and clocks are not all monotonic). Time never moves
 * backwards inside the engine: a step back is held at the latest time seen,
 * so no "now - then" can wrap. Return: the time the engine uses, also
 * stored in e->now.
 */
static uint64_t clock_in(homa_engine *e, uint64_t now)
{
	if (now > e->now)
		e->now = now;
	return e->now;
}

/**
 * checked() - Run the invariant checker on @e (if not NULL) after an entry
 * point that returned @r. Return: @r.
 */
static int checked(homa_engine *e, int r)
{
	if (e)
		homa_check(e);
	return r;
}

/** homa_engine_new() - See engine.h. */
int homa_engine_new(homa_engine **out, const struct homa_settings *s,
		    const homa_addr *local, uint16_t port,
		    const struct homa_alloc *alloc, uint64_t now)
{
	struct homa_engine boot, *e;
	struct homa_settings def;

	if (!out || !local || port == 0)
		return HOMA_EINVAL;
	if (!s)
		homa_settings_default(&def);
	else if (homa_settings_import(&def, s))
		return HOMA_EINVAL;
	s = &def;
	if (homa_settings_validate(s, NULL))
		return HOMA_EINVAL;
	memset(&boot, 0, sizeof(boot));
	if (alloc)
		boot.alloc = *alloc;
	e = homa_mem_zalloc(&boot, sizeof(*e));
	if (!e)
		return HOMA_ENOMEM;
	e->alloc = boot.alloc;
	e->s = *s;
	homa_pacer_configure(e);
	e->local = *local;
	e->port = port;
	now = clock_in(e, now);
	homa_hash_default_key(e, now);
	e->next_client_id = (2 + ((now >> 10) << 1)) & HOMA_ID_COUNTER_MASK;
	if (!e->next_client_id)
		e->next_client_id = 2;
	e->next_server_handle = 1;
	e->next_tick_ns = UINT64_MAX;
	homa_list_init(&e->all_rpcs);
	homa_list_init(&e->grantable);
	homa_list_init(&e->outstanding);
	homa_list_init(&e->tx_list);
	homa_list_init(&e->events);
	homa_list_init(&e->delivered);
	homa_list_init(&e->retired);
	e->ref_gen = 1;
	homa_list_init(&e->spare_events);
	homa_evict_init(e);
	homa_cutoffs_init(e);
	if (homa_table_init(e, &e->rpcs, 64) || homa_table_init(e, &e->handles, 64) ||
	    homa_table_init(e, &e->peers, 16) || homa_table_init(e, &e->pports, 16) ||
	    homa_done_init(e)) {
		homa_engine_free(e);
		return HOMA_ENOMEM;
	}
	homa_check_budget_note(e);
	*out = e;
	return 0;
}

/** homa_engine_free() - See engine.h. */
void homa_engine_free(homa_engine *e)
{
	struct homa_event ev;

	if (!e)
		return;
	homa_engine_output_sent(e);  /* nothing is sent any more: free, never retire */
	while (!homa_list_empty(&e->all_rpcs))
		homa_rpc_free(e, homa_container_of(e->all_rpcs.next, struct homa_rpc, all_link));
	homa_scan_free(e);
	while (homa_engine_next_event(e, &ev))
		homa_engine_msg_release(e, ev.msg);
	while (!homa_list_empty(&e->delivered))
		homa_engine_msg_release(e, homa_container_of(e->delivered.next, struct homa_msg, link));
	homa_peers_free_all(e);
	if (e->rpcs.buckets)
		homa_table_destroy(e, &e->rpcs);
	if (e->handles.buckets)
		homa_table_destroy(e, &e->handles);
	if (e->peers.buckets)
		homa_table_destroy(e, &e->peers);
	if (e->pports.buckets)
		homa_table_destroy(e, &e->pports);
	homa_ctl_free(e);
	homa_done_free(e);
	homa_cache_drain(e, &e->rpc_cache, sizeof(struct homa_rpc));
	homa_cache_drain(e, &e->ev_cache, sizeof(struct homa_ev_node));
	homa_cache_drain(e, &e->pport_cache, sizeof(struct homa_pport));
	homa_mem_free(e, e, sizeof(*e));
}

/** homa_engine_set_settings() - See engine.h. Cutoffs given here replace learned ones. */
int homa_engine_set_settings(homa_engine *e, const struct homa_settings *given)
{
	struct homa_settings full, *s = &full;

	if (!e || !given || homa_settings_import(&full, given) ||
	    homa_settings_validate(s, NULL))
		return HOMA_EINVAL;
	if (!s->max_done_rpcs != !e->s.max_done_rpcs)
		return HOMA_EINVAL;  /* finished-RPC memory on or off is fixed at creation */
	if (memcmp(s->unsched_cutoffs, e->s.unsched_cutoffs, sizeof(s->unsched_cutoffs))) {
		memcpy(e->cutoffs, s->unsched_cutoffs, sizeof(e->cutoffs));
		e->cutoff_version = (uint16_t)(e->cutoff_version + 1 ? e->cutoff_version + 1 : 1);
		e->st.cutoffs_version = e->cutoff_version;
	}
	e->s = *s;
	homa_pacer_configure(e);
	homa_check_budget_note(e);
	if (e->next_tick_ns != UINT64_MAX)
		e->next_tick_ns = e->now + e->s.tick_ns;
	return checked(e, 0);
}

/** homa_engine_settings() - See engine.h. */
const struct homa_settings *homa_engine_settings(const homa_engine *e)
{
	return e ? &e->s : NULL;
}

/** homa_engine_set_hooks() - See engine.h. */
void homa_engine_set_hooks(homa_engine *e, const struct homa_packet_hooks *h)
{
	if (!e)
		return;
	e->has_hooks = h != NULL;
	if (h)
		e->hooks = *h;
	else
		memset(&e->hooks, 0, sizeof(e->hooks));
}

/** homa_engine_set_server() - See engine.h. */
void homa_engine_set_server(homa_engine *e, bool serve)
{
	if (e)
		e->server = serve && !e->shut;
}

/** homa_engine_set_ack_pool() - See engine.h. */
void homa_engine_set_ack_pool(homa_engine *e, const struct homa_ack_pool *pool)
{
	if (!e)
		return;
	if (pool && pool->put && pool->take)
		e->ack_pool = *pool;
	else
		memset(&e->ack_pool, 0, sizeof(e->ack_pool));
}

/** homa_engine_set_rx_alloc() - See engine.h. */
int homa_engine_set_rx_alloc(homa_engine *e, const struct homa_alloc *a)
{
	if (!e || (a && (!a->alloc || !a->free)) || e->rpcs.count ||
	    !homa_list_empty(&e->delivered))
		return HOMA_EINVAL;
	e->has_rx_alloc = a != NULL;
	if (a)
		e->rx_alloc = *a;
	return 0;
}

/** homa_engine_port() - See engine.h. */
uint16_t homa_engine_port(const homa_engine *e)
{
	return e ? e->port : 0;
}

/** An outgoing message as the application gives it: a gather list or a built message. */
struct outmsg {
	const struct homa_iov *iov;
	int iovcnt;
	bool borrow;          /**< reference the iov bytes instead of copying them */
	homa_msg *msg;        /**< if not NULL: built already (homa_msg_build()) */
};

/**
 * check_message() - Validate an outgoing message.
 * An empty message is valid (it goes out as one DATA packet without payload).
 * Return: 0, HOMA_EINVAL (NULL list or pieces, iovcnt < 1, total wraps),
 * HOMA_EMSGSIZE, or HOMA_EAGAIN when the tx budget cannot take it now.
 */
static int check_message(homa_engine *e, const struct outmsg *m)
{
	uint64_t len = 0;

	if (m->msg)
		len = m->msg->length;
	else if (m->iovcnt < 1 || homa_iov_length(m->iov, m->iovcnt, &len))
		return HOMA_EINVAL;
	if (len > e->s.max_message)
		return HOMA_EMSGSIZE;
	if (e->tx_buffered && e->tx_buffered + len > e->s.max_tx_buffered) {
		e->st.sends_refused++;
		return HOMA_EAGAIN;
	}
	return 0;
}

/** attach_message() - Give @rpc the message @m. Return: 0 or HOMA_ENOMEM. */
static int attach_message(homa_engine *e, struct homa_rpc *rpc, const struct outmsg *m,
			  uint32_t unsched)
{
	if (!m->msg)
		return homa_msgout_init(e, rpc, m->iov, m->iovcnt, unsched, m->borrow);
	homa_msgout_attach(e, rpc, m->msg, unsched);
	return 0;
}

/**
 * outmsg_length() - Bytes in @m (checked by check_message() already).
 */
static uint64_t outmsg_length(const struct outmsg *m)
{
	uint64_t len = 0;

	if (m->msg)
		return m->msg->length;
	homa_iov_length(m->iov, m->iovcnt, &len);
	return len;
}

/**
 * fits_peer() - True unless the message @m is longer than the Linux
 * module accepts and @p is not known to be ours (homa_peer_ext()).
 */
static bool fits_peer(const homa_engine *e, const struct homa_peer *p,
		      const struct outmsg *m)
{
	return outmsg_length(m) <= HOMA_MODULE_MAX_MESSAGE || homa_peer_ext(e, p);
}

/**
 * next_id() - Give out the next client RPC id: the local port in the top
 * 16 bits, a counter (clock-seeded, even) in the rest, so that ids are
 * unique per host, not just per process (the module finds RPCs by
 * client address and id, whatever the client port).
 */
static uint64_t next_id(homa_engine *e)
{
	uint64_t id = e->next_client_id;

	e->next_client_id = (id + 2) & HOMA_ID_COUNTER_MASK;
	if (!e->next_client_id)
		e->next_client_id = 2;
	return ((uint64_t)e->port << 48) | id;
}

/** homa_engine_reserve_id() - See engine.h. */
uint64_t homa_engine_reserve_id(homa_engine *e, bool server)
{
	if (!e)
		return 0;
	if (server)
		return e->next_server_handle += 2;
	return next_id(e);
}

/** homa_engine_replies_pending() - See engine.h. */
uint32_t homa_engine_replies_pending(const homa_engine *e)
{
	struct homa_link *pos;
	uint32_t n = 0;

	if (!e)
		return 0;
	for (pos = e->all_rpcs.next; pos != &e->all_rpcs; pos = pos->next) {
		const struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, all_link);

		n += !homa_is_client_id(r->id) && (r->state == RPC_OUTGOING || r->state == RPC_DONE);
	}
	return n;
}

/** homa_engine_peer_heard() - See engine.h. */
bool homa_engine_peer_heard(homa_engine *e, const homa_addr *addr, uint64_t *heard_ns)
{
	const struct homa_peer *p = e && addr && heard_ns ? homa_peer_find(e, addr) : NULL;

	if (!p || !p->rx_ns)
		return false;
	*heard_ns = p->rx_ns;
	return true;
}

/** homa_engine_peer_waiting() - See engine.h. */
uint32_t homa_engine_peer_waiting(const homa_engine *e, const homa_addr *addr, uint16_t port,
				  uint32_t *probes)
{
	struct homa_link *pos;
	uint32_t n = 0, most = 0;

	for (pos = e && addr ? e->all_rpcs.next : NULL; pos && pos != &e->all_rpcs;
	     pos = pos->next) {
		const struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, all_link);

		if (!homa_is_client_id(r->id) || r->dport != port ||
		    !homa_addr_equal(&r->peer->addr, addr))
			continue;
		n++;
		most = r->probes > most ? r->probes : most;
	}
	if (probes)
		*probes = most;
	return n;
}

/**
 * start_request() - Start a client RPC carrying @m.
 * Return: as homa_engine_send_request().
 */
static int start_request(homa_engine *e, const homa_addr *dst, uint16_t dport,
			 const struct outmsg *m, uint64_t cookie, uint64_t now, uint64_t *id)
{
	struct homa_peer *peer;
	struct homa_rpc *rpc;
	int err;

	if (!e || !dst || !id || dport == 0)
		return HOMA_EINVAL;
	if (e->shut)
		return HOMA_ESHUTDOWN;
	err = check_message(e, m);
	if (err)
		return err;
	now = clock_in(e, now);
	peer = homa_peer_get(e, dst);
	if (!peer)
		return HOMA_ENOMEM;
	if (homa_peer_port_dead(e, peer, dport)) {
		homa_peer_put(e, peer);
		return HOMA_EPEERDEAD;
	}
	if (!fits_peer(e, peer, m)) {
		homa_peer_put(e, peer);
		return HOMA_EMSGSIZE;
	}
	rpc = homa_rpc_new(e, next_id(e), peer, dport);
	if (!rpc) {
		homa_peer_put(e, peer);
		e->st.sends_refused++;
		return HOMA_EAGAIN;
	}
	rpc->cookie = cookie;
	rpc->start_ns = now;
	rpc->state = RPC_OUTGOING;
	peer->client_rpcs++;
	peer->proven = true;
	if (attach_message(e, rpc, m, e->s.unsched_bytes)) {
		homa_rpc_free(e, rpc);
		return HOMA_ENOMEM;
	}
	e->st.client_rpcs_started++;
	*id = rpc->id;
	return 0;
}

/** homa_engine_send_request() - See engine.h. */
int homa_engine_send_request(homa_engine *e, const homa_addr *dst, uint16_t dport,
			     const struct homa_iov *iov, int iovcnt, uint64_t cookie,
			     uint64_t now, uint64_t *id)
{
	struct outmsg m = {iov, iovcnt, false, NULL};

	return checked(e, start_request(e, dst, dport, &m, cookie, now, id));
}

/** homa_engine_send_request_ref() - See engine.h. */
int homa_engine_send_request_ref(homa_engine *e, const homa_addr *dst, uint16_t dport,
				 const struct homa_iov *iov, int iovcnt, uint64_t cookie,
				 uint64_t now, uint64_t *id)
{
	struct outmsg m = {iov, iovcnt, true, NULL};

	return checked(e, start_request(e, dst, dport, &m, cookie, now, id));
}

/** homa_engine_send_request_msg() - See engine.h. */
int homa_engine_send_request_msg(homa_engine *e, const homa_addr *dst, uint16_t dport,
				 homa_msg *msg, uint64_t cookie, uint64_t now, uint64_t *id)
{
	struct outmsg m = {NULL, 0, false, msg};

	if (!msg)
		return HOMA_EINVAL;
	return checked(e, start_request(e, dst, dport, &m, cookie, now, id));
}

/** send_reply() - Answer server RPC @id with @m. Return: as homa_engine_send_reply(). */
static int send_reply(homa_engine *e, uint64_t id, const struct outmsg *m, uint64_t now)
{
	struct homa_rpc *rpc;
	uint32_t unsched;
	int err;

	if (!e)
		return HOMA_EINVAL;
	rpc = homa_rpc_find_handle(e, id);
	if (!rpc || homa_is_client_id(rpc->id))
		return HOMA_ENOTFOUND;
	if (rpc->state != RPC_IN_SERVICE)
		return HOMA_ESTATE;
	err = check_message(e, m);
	if (err)
		return err;
	if (!fits_peer(e, rpc->peer, m))
		return HOMA_EMSGSIZE;
	now = clock_in(e, now);
	unsched = e->s.unsched_bytes;
	if (rpc->incast && e->s.incast_unsched_bytes < unsched)
		unsched = e->s.incast_unsched_bytes;
	if (attach_message(e, rpc, m, unsched))
		return HOMA_ENOMEM;
	rpc->state = RPC_OUTGOING;
	homa_rpc_heard(e, rpc);
	e->st.server_replies_sent++;
	return 0;
}

/** homa_engine_send_reply() - See engine.h. */
int homa_engine_send_reply(homa_engine *e, uint64_t id, const struct homa_iov *iov,
			   int iovcnt, uint64_t now)
{
	struct outmsg m = {iov, iovcnt, false, NULL};

	return checked(e, send_reply(e, id, &m, now));
}

/** homa_engine_send_reply_msg() - See engine.h. */
int homa_engine_send_reply_msg(homa_engine *e, uint64_t id, homa_msg *msg, uint64_t now)
{
	struct outmsg m = {NULL, 0, false, msg};

	if (!msg)
		return HOMA_EINVAL;
	return checked(e, send_reply(e, id, &m, now));
}

/** homa_engine_abort() - See engine.h. */
int homa_engine_abort(homa_engine *e, uint64_t id, uint64_t now)
{
	struct homa_rpc *rpc;

	if (!e)
		return HOMA_EINVAL;
	rpc = homa_rpc_find_handle(e, id);
	if (!rpc)
		return HOMA_ENOTFOUND;
	now = clock_in(e, now);
	e->st.rpcs_aborted++;
	homa_rpc_free(e, rpc);
	return checked(e, 0);
}

/** homa_engine_shutdown() - See engine.h. */
void homa_engine_shutdown(homa_engine *e, uint64_t now)
{
	if (!e)
		return;
	now = clock_in(e, now);
	e->shut = true;
	e->server = false;
	while (!homa_list_empty(&e->all_rpcs))
		homa_rpc_fail(e, homa_container_of(e->all_rpcs.next, struct homa_rpc, all_link),
			      HOMA_ESHUTDOWN);
	homa_check(e);
}

/** decode_drop() - Map a homa_wire_decode_why() reason to a drop reason. */
static int decode_drop(enum homa_wire_error why, const uint8_t *buf)
{
	if (why == HOMA_WIRE_TRUNCATED)
		return HOMA_DROP_TRUNCATED;
	if (why == HOMA_WIRE_BAD_TYPE)
		return HOMA_DROP_BAD_TYPE;
	return buf[11] == HOMA_PKT_DATA ? HOMA_DROP_BAD_OFFSET : HOMA_DROP_BAD_FIELD;
}

/** drop() - Count a dropped packet. Return: homa_engine_input()'s code for it. */
static int drop(homa_engine *e, int reason)
{
	e->st.drops[reason]++;
	return HOMA_INPUT_DROPPED + reason;
}

/** input() - homa_engine_input() without the invariant check. */
static int input(homa_engine *e, const homa_addr *src, uint8_t *buf, size_t len, uint64_t now)
{
	enum homa_wire_error why;
	struct homa_pkt pkt;
	int r;

	if (!e || !src || !buf)
		return HOMA_EINVAL;
	now = clock_in(e, now);
	if (e->has_hooks && e->hooks.open) {
		r = e->hooks.open(e->hooks.ctx, src, buf, len);
		if (r < 0)
			return drop(e, HOMA_DROP_VERIFY);
		len = (size_t)r;
	}
	if (homa_wire_decode_why(buf, len, &pkt, &why))
		return drop(e, decode_drop(why, buf));
	if (pkt.dport != e->port) {
		r = homa_incoming_foreign(e, src, &pkt);  /* acks for us only */
		return r < 0 ? drop(e, -r - 1) : 0;
	}
	e->rx_link_ns += homa_wire_ns(e, len);
	e->st.pkts_recv[pkt.type - HOMA_PKT_FIRST]++;
	e->st.bytes_recv[pkt.type - HOMA_PKT_FIRST] += len;
	r = homa_incoming(e, src, &pkt);
	return r < 0 ? drop(e, -r - 1) : 0;
}

/** homa_engine_input() - See engine.h. */
int homa_engine_input(homa_engine *e, const homa_addr *src, uint8_t *buf, size_t len,
		      uint64_t now)
{
	return checked(e, input(e, src, buf, len, now));
}

/** homa_engine_input_lend() - See engine.h. */
int homa_engine_input_lend(homa_engine *e, const homa_addr *src, uint8_t *buf, size_t len,
			   uint64_t now, const struct homa_rx_lend *lend, bool *kept)
{
	int r;

	if (!e || !kept || (lend && !lend->release))
		return HOMA_EINVAL;
	e->lend = lend;
	e->lend_buf = buf;
	e->lend_len = len;
	e->lend_kept = false;
	r = homa_engine_input(e, src, buf, len, now);
	*kept = e->lend_kept;
	e->lend = NULL;
	e->lend_buf = NULL;
	e->lend_kept = false;
	return r;
}

/** homa_engine_unreachable() - See engine.h. */
int homa_engine_unreachable(homa_engine *e, const homa_addr *dst, int kind,
			    const uint8_t *quoted, size_t len, uint64_t now)
{
	if (!e || !dst || !quoted)
		return HOMA_EINVAL;
	clock_in(e, now);
	return checked(e, homa_unreach(e, dst, kind, quoted, len));
}

/**
 * output() - homa_engine_output(), or with @ref homa_engine_output_refs()
 * (@nref entries), without the invariant check.
 */
static int output(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap, struct homa_tx *tx,
		  struct homa_iov *ref, int nref)
{
	int r;

	if (!e || !buf || !tx)
		return HOMA_EINVAL;
	now = clock_in(e, now);
	homa_grant_flush(e);
	homa_pacer_note_call(e, now);
	r = homa_ctl_output(e, now, buf, cap, tx);
	if (r)
		return r;
	r = homa_output_data(e, now, buf, cap, tx, ref, nref);
	/* 0 also comes from a packet the seal hook refused: count only real waits */
	if (r == 0 && !homa_list_empty(&e->tx_list) && e->link_idle_ns > now + homa_pacer_bound(e)) {
		e->st.pacer_throttled_ns += e->link_idle_ns - (now + homa_pacer_bound(e));
		homa_pacer_note_held(e);
	}
	return r;
}

/** homa_engine_output() - See engine.h. */
int homa_engine_output(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap,
		       struct homa_tx *tx)
{
	return checked(e, output(e, now, buf, cap, tx, NULL, 0));
}

/** homa_engine_output_refs() - See engine.h. */
int homa_engine_output_refs(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap,
			    struct homa_tx *tx, struct homa_iov *ref, int nref)
{
	if (!ref || nref < 1)
		return HOMA_EINVAL;
	for (int i = 0; i < nref; i++)
		ref[i] = (struct homa_iov){NULL, 0};
	return checked(e, output(e, now, buf, cap, tx, ref, nref));
}

/** homa_engine_output_ref() - See engine.h. */
int homa_engine_output_ref(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap,
			   struct homa_tx *tx, struct homa_iov *ref)
{
	return homa_engine_output_refs(e, now, buf, cap, tx, ref, 1);
}

/**
 * deadline() - Now (0) if control packets or a deferred grant pass
 * (homa_grant_defer()) wait, else the earlier of the
 * pacer's deadline and the next tick plus @tick_leeway; UINT64_MAX if none.
 */
static uint64_t deadline(const homa_engine *e, uint64_t tick_leeway)
{
	uint64_t d = homa_pacer_deadline(e), t = e->next_tick_ns;

	if (e->ctl_count || e->grant_pending)
		return 0;
	if (t != UINT64_MAX)
		t += tick_leeway;
	return d < t ? d : t;
}

/** homa_engine_next_deadline() - See engine.h. */
uint64_t homa_engine_next_deadline(const homa_engine *e)
{
	return e ? deadline(e, 0) : UINT64_MAX;
}

/** homa_engine_wake_by() - See engine.h. */
uint64_t homa_engine_wake_by(const homa_engine *e)
{
	return e ? deadline(e, e->s.tick_ns / 2) : UINT64_MAX;
}

/** homa_engine_has_output() - See engine.h. */
bool homa_engine_has_output(const homa_engine *e)
{
	return e && (e->ctl_count || e->grant_pending || !homa_list_empty(&e->tx_list) ||
		     e->pacer_due_ns);
}

/** homa_engine_want_output() - See engine.h. */
bool homa_engine_want_output(const homa_engine *e, uint64_t now)
{
	return e && (e->ctl_count || e->grant_pending || homa_pacer_deadline(e) <= now);
}

/** idle() - True if no RPC or owed ack needs the timer. */
static bool idle(const homa_engine *e)
{
	return e->rpcs.count == 0 && e->peers.count == 0;
}

/** homa_engine_on_timer() - See engine.h. Runs at most one tick per call. */
void homa_engine_on_timer(homa_engine *e, uint64_t now)
{
	if (!e)
		return;
	now = clock_in(e, now);
	if (now < e->next_tick_ns)
		return;
	homa_timer_tick(e); /* its grant pass also runs a deferred one */
	e->next_tick_ns += e->s.tick_ns;
	if (e->next_tick_ns <= now)
		e->next_tick_ns = now + e->s.tick_ns;
	if (idle(e))
		e->next_tick_ns = UINT64_MAX;
	homa_check(e);
}

/** homa_engine_next_event() - See engine.h. */
int homa_engine_next_event(homa_engine *e, struct homa_event *ev)
{
	struct homa_ev_node *n = NULL;
	struct homa_link *l;

	if (!e || !ev)
		return 0;
	/* a message whose copies are pending waits (rxcopy.c); later events pass it */
	for (l = e->events.next; l != &e->events && !n; l = l->next) {
		n = homa_container_of(l, struct homa_ev_node, link);
		if (n->ev.msg && n->ev.msg->copying)
			n = NULL;
	}
	if (!n)
		return 0;
	homa_list_del(&n->link);
	e->nevents--;
	*ev = n->ev;
	homa_cache_put(e, &e->ev_cache, n, sizeof(*n));
	return checked(e, 1);
}

/** homa_engine_msg_release() - See engine.h. NULL is ignored. */
void homa_engine_msg_release(homa_engine *e, homa_msg *m)
{
	uint64_t charged;

	if (!e || !m)
		return;
	charged = m->charged;
	e->rx_buffered -= charged;
	homa_msg_free(e, m);
	homa_grant_released(e, charged);
	homa_check(e);
}

/** homa_engine_msg_adopt() - See engine.h. */
void homa_engine_msg_adopt(homa_engine *e, homa_msg *m)
{
	if (!e || !m)
		return;
	e->rx_buffered += m->charged;
	homa_list_add_tail(&e->delivered, &m->link);
	homa_check(e);
}

/** homa_engine_announce_requests() - See engine.h. */
void homa_engine_announce_requests(homa_engine *e, bool on)
{
	if (!e)
		return;
	if (on && !e->announce) {
		e->announce = true;
		homa_announce_arriving(e);
	}
	e->announce = on;
}

/** homa_engine_rx_progress() - See engine.h. */
int64_t homa_engine_rx_progress(homa_engine *e, uint64_t id, const homa_msg **msg)
{
	struct homa_rpc *rpc = e ? homa_rpc_find_handle(e, id) : NULL;
	const struct homa_msgin *in;

	if (!rpc)
		return HOMA_ENOTFOUND;
	in = &rpc->in;
	if (msg)
		*msg = in->msg;
	if (!in->msg)
		return 0;
	return homa_rxcopy_settled(in);
}

/** homa_engine_rpc_peer() - See engine.h. */
int homa_engine_rpc_peer(homa_engine *e, uint64_t id, homa_addr *addr, uint16_t *port)
{
	struct homa_rpc *rpc = e ? homa_rpc_find_handle(e, id) : NULL;

	if (!rpc)
		return HOMA_ENOTFOUND;
	if (addr)
		*addr = rpc->peer->addr;
	if (port)
		*port = rpc->dport;
	return 0;
}

/** homa_engine_count_drop() - See engine.h. */
void homa_engine_count_drop(homa_engine *e, int reason, uint64_t n)
{
	if (e && reason >= 0 && reason < HOMA_DROP_REASONS)
		e->st.drops[reason] += n;
}

/** homa_engine_stats() - See engine.h. Gauges are computed here. */
void homa_engine_stats(const homa_engine *e, struct homa_stats *out)
{
	struct homa_link *pos;

	if (!out)
		return;
	if (!e) {
		memset(out, 0, sizeof(*out));
		return;
	}
	*out = e->st;
	out->active_rpcs = e->rpcs.count;
	out->rx_buffered_bytes = e->rx_buffered;
	out->tx_buffered_bytes = e->tx_buffered;
	out->peers = e->peers.count;
	out->control_queue = e->ctl_count;
	out->pacer_slack_ns = e->pacer_slack_ns;
	out->done_rpcs = homa_done_count(e);
	out->done_bytes = homa_done_bytes(e);
	out->outgoing_msgs = 0;
	out->pacer_backlog_bytes = 0;
	for (pos = e->tx_list.next; pos != &e->tx_list; pos = pos->next) {
		const struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, out.tx_link);
		uint32_t limit = r->out.granted < r->out.length ? r->out.granted : r->out.length;

		out->outgoing_msgs++;
		out->pacer_backlog_bytes += limit > r->out.next_xmit ? limit - r->out.next_xmit : 0;
	}
}

/** homa_engine_state_sizes() - See engine.h. */
void homa_engine_state_sizes(size_t *per_rpc, size_t *per_peer)
{
	if (per_rpc)
		*per_rpc = sizeof(struct homa_rpc);
	if (per_peer)
		*per_peer = sizeof(struct homa_peer);
}
