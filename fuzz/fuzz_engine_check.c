/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_engine_check.c
 * Invariants of the single-engine fuzz target: memory stays within the
 * configured caps, every packet the engine emits is well formed and
 * carries exactly the bytes it was given, every delivered message is
 * bit-exact, each client RPC ends at most once, and the engine frees
 * everything it allocated.
 */
#include <string.h>

#include "fuzz_engine.h"
#include "fuzz_pattern.h"
#include "homa/wire.h"

/** fe_peer_index() - Index of @a among the simulated peers, or -1. */
int fe_peer_index(const struct fe_world *w, const homa_addr *a)
{
	int i;

	for (i = 0; i <= FE_PEERS; i++)
		if (homa_addr_equal(&w->peer[i], a))
			return i;
	return -1;
}

/** port_index() - Index of simulated port @port, or -1. */
static int port_index(uint16_t port)
{
	return port >= 5000 && port < 5000 + FE_PORTS ? port - 5000 : -1;
}

/**
 * fe_check_memory() - The caps hold: buffered incoming bytes stay within
 * max_rx_buffered + FE_RX_SLACK, and all memory the engine holds (counted
 * by the alloc hooks) stays within the rx and tx budgets, the finished-RPC
 * ring (itself capped by max_done_rpcs) and a bound on fixed-size state
 * (control ring, tables, peers, events).
 */
void fe_check_memory(struct fe_world *w)
{
	struct homa_stats st;
	size_t per_rpc, per_peer;
	uint64_t bound;

	homa_engine_stats(w->e, &st);
	homa_engine_state_sizes(&per_rpc, &per_peer);
	if (st.rx_buffered_bytes > w->s.max_rx_buffered + FE_RX_SLACK)
		fz_fail("rx_buffered_bytes %llu > cap %llu + slack",
			(unsigned long long)st.rx_buffered_bytes,
			(unsigned long long)w->s.max_rx_buffered);
	if (st.tx_buffered_bytes > w->s.max_tx_buffered + w->s.max_message + 65536)
		fz_fail("tx_buffered_bytes %llu over cap", (unsigned long long)st.tx_buffered_bytes);
	bound = w->s.max_rx_buffered + FE_RX_SLACK + st.tx_buffered_bytes + st.done_bytes +
		(uint64_t)w->s.max_control_queue * 128 + 65536 +
		(st.active_rpcs + st.peers + 2 * FE_MAX_CLIENT) * (per_peer + 256);
	if (w->fa.live_bytes > bound)
		fz_fail("engine holds %llu bytes, bound %llu (rx %llu, tx %llu, rpcs %llu, peers %llu)",
			(unsigned long long)w->fa.live_bytes, (unsigned long long)bound,
			(unsigned long long)st.rx_buffered_bytes,
			(unsigned long long)st.tx_buffered_bytes,
			(unsigned long long)st.active_rpcs, (unsigned long long)st.peers);
	if (st.done_rpcs > w->s.max_done_rpcs)
		fz_fail("finished RPCs remembered %llu > cap %u", (unsigned long long)st.done_rpcs,
			w->s.max_done_rpcs);
	if (st.control_queue > w->s.max_control_queue)
		fz_fail("control queue %llu > %u", (unsigned long long)st.control_queue,
			w->s.max_control_queue);
}

/** find_client() - Our record of client RPC @id, or NULL. */
static struct fe_client *find_client(struct fe_world *w, uint64_t id)
{
	int i;

	for (i = 0; i < w->ncl; i++)
		if (w->cl[i].id == id)
			return &w->cl[i];
	return NULL;
}

/** check_data_out() - A DATA packet the engine sent carries the right bytes. */
static void check_data_out(struct fe_world *w, const struct homa_pkt *p, int peer, int port)
{
	const struct fe_client *c;
	uint64_t seed;

	if ((p->sender_id & 1) == 0) {
		c = find_client(w, p->sender_id);
		if (!c || c->peer != peer || c->port != port)
			fz_fail("DATA for unknown client RPC %llu", (unsigned long long)p->sender_id);
		if (p->u.data.message_length != c->len)
			fz_fail("request %llu sent with length %u, want %u",
				(unsigned long long)c->id, p->u.data.message_length, c->len);
		seed = c->seed;
	} else {
		seed = fe_reply_seed(peer, port, p->sender_id ^ 1);
	}
	if (peer == FE_RAW_PEER ||
	    fz_pattern_match(p->u.data.payload, seed, p->u.data.offset, p->u.data.payload_len))
		return;
	/* a reply to an ambiguous request carries the anonymous seed of its client port */
	if (!(p->sender_id & 1) || !w->anon[peer][port] ||
	    !fz_pattern_match(p->u.data.payload, fe_reply_seed(peer, port, FE_ANON_C),
			      p->u.data.offset, p->u.data.payload_len))
		fz_fail("DATA %u@%u from the engine has wrong bytes", p->u.data.payload_len,
			p->u.data.offset);
}

/** check_output() - One packet the engine emitted is well formed. */
static void check_output(struct fe_world *w, int len, const struct homa_tx *tx)
{
	struct homa_pkt p;
	int peer, port;

	if ((size_t)len != tx->len || tx->len > w->s.mtu)
		fz_fail("output returned %d, tx.len %zu, mtu %u", len, tx->len, w->s.mtu);
	if (homa_wire_decode(w->out, tx->len, &p))
		fz_fail("engine emitted an undecodable %zu-byte packet (type 0x%02x)", tx->len,
			w->out[11]);
	if (p.type != tx->type || p.dport != tx->dport || p.sport != w->lport)
		fz_fail("tx metadata disagrees with the packet");
	if (tx->priority >= w->s.num_priorities)
		fz_fail("priority %u with %u levels", tx->priority, w->s.num_priorities);
	peer = fe_peer_index(w, &tx->dst);
	port = port_index(tx->dport);
	if (peer < 0 || (peer != FE_RAW_PEER && port < 0))
		fz_fail("packet sent to an address or port nobody used");
	if (p.type == HOMA_PKT_DATA)
		check_data_out(w, &p, peer, port);
}

/** fe_drain_output() - Take up to @max packets from the engine, checking each. */
void fe_drain_output(struct fe_world *w, int max)
{
	struct homa_tx tx;
	int i, n;

	for (i = 0; i < max; i++) {
		n = homa_engine_output(w->e, w->now, w->out, sizeof(w->out), &tx);
		if (n < 0)
			fz_fail("output failed with %d", n);
		if (n == 0)
			break;
		check_output(w, n, &tx);
	}
}

/**
 * tuple_for() - The simulated request @m (from @peer:@port) is, or NULL.
 * A short message can match the patterns of several requests (one byte
 * matches by chance one time in 256); then *@ambiguous is set, as the
 * engine's reply will carry a wire id the bytes do not tell.
 */
static const struct fe_tuple *tuple_for(struct fe_world *w, int peer, int port, const homa_msg *m,
					bool *ambiguous)
{
	const struct fe_tuple *found = NULL;
	int i;

	*ambiguous = false;
	for (i = 0; i < w->ntu; i++) {
		const struct fe_tuple *t = &w->tu[i];

		if (t->peer != peer || t->port != port || t->len != homa_msg_length(m) ||
		    !fz_msg_matches(m, fe_request_seed(peer, port, t->c, t->len), t->len))
			continue;
		if (found)
			*ambiguous = true;
		else
			found = t;
	}
	return found;
}

/** on_request() - A request was delivered: check it and remember it for replies. */
static void on_request(struct fe_world *w, const struct homa_event *ev, int peer, int port)
{
	const struct fe_tuple *t = NULL;
	struct fe_server *sv;
	bool ambiguous = false;

	if ((ev->id & 1) == 0)
		fz_fail("server handle %llu is even", (unsigned long long)ev->id);
	if (peer != FE_RAW_PEER) {
		t = tuple_for(w, peer, port, ev->msg, &ambiguous);
		if (!t)
			fz_fail("request of %zu bytes from peer %d matches nothing it sent",
				homa_msg_length(ev->msg), peer);
	}
	if (w->nsv == FE_MAX_SERVER)
		return;
	sv = &w->sv[w->nsv++];
	sv->handle = ev->id;
	sv->peer = peer;
	sv->port = port;
	sv->c = t ? t->c : 0;
	sv->ambiguous = ambiguous;
	sv->open = true;
}

/** on_client_end() - A client RPC ended (response or error): exactly once. */
static void on_client_end(struct fe_world *w, const struct homa_event *ev, int peer, int port)
{
	struct fe_client *c = find_client(w, ev->id);

	if (!c || c->done)
		fz_fail("event %d for client RPC %llu that is %s", ev->type,
			(unsigned long long)ev->id, c ? "already finished" : "unknown");
	if (c->peer != peer || c->port != port)
		fz_fail("client RPC %llu ended from the wrong peer", (unsigned long long)ev->id);
	c->done = true;
	if (ev->type == HOMA_EV_ERROR) {
		/* HOMA_EABANDONED: the fuzzed peer answered RPC_UNKNOWN past
		 * max_restarts (or marked it finished); HOMA_ENOSERVER: it said it
		 * does not serve */
		if (ev->error != HOMA_ETIMEDOUT && ev->error != HOMA_ESHUTDOWN &&
		    ev->error != HOMA_ENOSERVER && ev->error != HOMA_EABANDONED)
			fz_fail("client RPC failed with %d", ev->error);
		return;
	}
	if (!fz_msg_matches(ev->msg, fe_response_seed(peer, port, c->id, (uint32_t)homa_msg_length(ev->msg)),
			    homa_msg_length(ev->msg)))
		fz_fail("response to %llu is not what the server sent", (unsigned long long)c->id);
}

/**
 * fe_take_events() - Take every queued event and check it. Messages are
 * released at once, or (@hold) kept by the "application" while room remains.
 */
void fe_take_events(struct fe_world *w, bool hold)
{
	struct homa_event ev;
	int peer, port;

	while (homa_engine_next_event(w->e, &ev)) {
		peer = fe_peer_index(w, &ev.peer);
		port = port_index(ev.peer_port);
		if (peer < 0 || (peer != FE_RAW_PEER && port < 0))
			fz_fail("event from an unknown peer");
		if (ev.type == HOMA_EV_REQUEST)
			on_request(w, &ev, peer, port);
		else if (ev.type == HOMA_EV_RESPONSE || ev.type == HOMA_EV_ERROR)
			on_client_end(w, &ev, peer, port);
		else
			fz_fail("event of type %d", ev.type);
		if ((ev.type == HOMA_EV_ERROR) != (ev.msg == NULL))
			fz_fail("event %d with%s message", ev.type, ev.msg ? "" : "out");
		if (ev.msg && hold && w->nheld < FE_MAX_HELD)
			w->held[w->nheld++] = ev.msg;
		else if (ev.msg)
			homa_engine_msg_release(w->e, ev.msg);
	}
}

/** fe_release_held() - The application gives back every message it kept. */
void fe_release_held(struct fe_world *w)
{
	while (w->nheld)
		homa_engine_msg_release(w->e, w->held[--w->nheld]);
}

/**
 * fe_finish() - End of input: shut down, take the last events, check the
 * budgets return to zero, free the engine and check every byte came back.
 */
void fe_finish(struct fe_world *w)
{
	struct homa_stats st;

	fz_alloc_fail(&w->fa, FZ_FAIL_NONE, 0);
	fe_take_events(w, false);
	fe_release_held(w);
	homa_engine_shutdown(w->e, w->now);
	fe_take_events(w, false);
	fe_drain_output(w, 100000);
	homa_engine_stats(w->e, &st);
	if (st.active_rpcs || st.rx_buffered_bytes || st.tx_buffered_bytes)
		fz_fail("after shutdown: %llu RPCs, rx %llu, tx %llu bytes still charged",
			(unsigned long long)st.active_rpcs,
			(unsigned long long)st.rx_buffered_bytes,
			(unsigned long long)st.tx_buffered_bytes);
	homa_engine_free(w->e);
	w->e = NULL;
	fz_alloc_check_clean(&w->fa, "engine");
}
