/* SPDX-License-Identifier: MIT */
/**
 * @file peer.c
 * Per-host state: the peer table, reference counts, and the acks a client
 * owes a server.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

/** peer_hash() - Table hash of a peer element (its key, made once by homa_peer_get()). */
static uint32_t peer_hash(const homa_engine *e, const void *el)
{
	(void)e;
	return ((const struct homa_peer *)el)->key;
}

/**
 * homa_peer_find() - The peer for @addr, or NULL if unknown. The peer
 * found last is kept (engine.peer_last) and matched first: packets and
 * RPCs mostly come from the host of the one before, and then no hash is
 * made.
 */
struct homa_peer *homa_peer_find(homa_engine *e, const homa_addr *addr)
{
	struct homa_peer *p = e->peer_last;

	if (p && homa_addr_equal(&p->addr, addr))
		return p;
	p = e->peers.buckets[homa_hash_addr(e, addr) & (e->peers.nbuckets - 1)];
	while (p && !homa_addr_equal(&p->addr, addr))
		p = p->hash_next;
	if (p)
		e->peer_last = p;
	return p;
}

/**
 * homa_peer_get() - The peer for @addr, created if needed, with its
 * reference count raised (drop it with homa_peer_put()).
 * Return: the peer, or NULL if memory ran out.
 */
struct homa_peer *homa_peer_get(homa_engine *e, const homa_addr *addr)
{
	struct homa_peer *p = homa_peer_find(e, addr);
	uint32_t b;

	if (!p) {
		p = homa_mem_zalloc(e, sizeof(*p));
		if (!p)
			return NULL;
		p->addr = *addr;
		homa_list_init(&p->ports);
		memcpy(p->cutoffs, e->s.unsched_cutoffs, sizeof(p->cutoffs));
		p->resend_tick = UINT64_MAX;
		p->unknown_tick = UINT64_MAX;
		p->heard_tick = e->tick;
		p->heard_ns = e->now;
		p->key = homa_hash_addr(e, addr);
		b = p->key & (e->peers.nbuckets - 1);
		p->hash_next = e->peers.buckets[b];
		e->peers.buckets[b] = p;
		e->peers.count++;
		homa_table_maybe_grow(e, &e->peers, offsetof(struct homa_peer, hash_next), peer_hash);
		homa_timer_arm(e); /* the timer frees the peer once idle */
	}
	p->rpcs++;
	return p;
}

/** peer_unlink_free() - Remove @p from the table and free it. */
static void peer_unlink_free(homa_engine *e, struct homa_peer *p)
{
	struct homa_peer **pp =
		(struct homa_peer **)&e->peers.buckets[p->key & (e->peers.nbuckets - 1)];

	if (e->peer_last == p)
		e->peer_last = NULL;
	while (*pp != p)
		pp = &(*pp)->hash_next;
	*pp = p->hash_next;
	e->peers.count--;
	homa_mem_free(e, p->acks, sizeof(*p->acks));
	homa_mem_free(e, p, sizeof(*p));
}

/** Idle peers kept (for their cutoffs) before homa_peer_put() frees them at once. */
#define HOMA_IDLE_PEERS 1024

/** port_find() - True if @port is in @tab (@n entries) until after @at (same unit as until). */
static bool port_find(const struct homa_peer_port *tab, int n, uint16_t port, uint64_t at)
{
	for (int i = 0; i < n; i++)
		if (tab[i].port == port && tab[i].until > at)
			return true;
	return false;
}

/**
 * port_set() - Remember @port in @tab (@n entries) until @until: its own
 * entry if it has one, else the entry closest to expiry.
 */
static void port_set(struct homa_peer_port *tab, int n, uint16_t port, uint64_t until)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		if (tab[i].port == port) {
			k = i;
			break;
		}
		if (tab[i].until < tab[k].until)
			k = i;
	}
	tab[k].port = port;
	tab[k].until = until;
}

/**
 * homa_peer_port_dead() - True if RPCs to @port of @p timed out recently
 * (within resend_ticks x tick_ns of engine time): new RPCs to that port
 * fail at once. Other ports of the same host are not affected.
 */
bool homa_peer_port_dead(const homa_engine *e, const struct homa_peer *p, uint16_t port)
{
	return port_find(p->dead, HOMA_PEER_DEAD_PORTS, port, e->now);
}

/**
 * homa_peer_mark_dead() - An RPC to @port of @p timed out: refuse new
 * ones to that port for resend_ticks x tick_ns of engine time (not ticks:
 * no tick may run while an application keeps sending to it). Keeps the
 * HOMA_PEER_DEAD_PORTS latest ports (the entry closest to expiry makes
 * room).
 * Return: true if the port was not already dead.
 */
bool homa_peer_mark_dead(homa_engine *e, struct homa_peer *p, uint16_t port)
{
	bool fresh = !homa_peer_port_dead(e, p, port);

	port_set(p->dead, HOMA_PEER_DEAD_PORTS, port,
		 e->now + (uint64_t)e->s.resend_ticks * e->s.tick_ns);
	return fresh;
}

/**
 * homa_peer_mark_served() - @port of @p answered one of our requests as
 * only a server does (a GRANT, a BUSY or response bytes): that port
 * serves, for the next timeout_ticks (homa_peer_port_serves()). Keeps the
 * HOMA_PEER_SERVED_PORTS latest ports.
 */
void homa_peer_mark_served(homa_engine *e, struct homa_peer *p, uint16_t port)
{
	port_set(p->served, HOMA_PEER_SERVED_PORTS, port, e->tick + e->s.timeout_ticks);
}

/**
 * homa_peer_port_serves() - True if @port of @p answered a request of ours
 * as a server within timeout_ticks (homa_peer_mark_served()): an
 * RPC_UNKNOWN from that port means it lost a request (a flood overflowing
 * its receive buffer), not that nothing serves there.
 */
bool homa_peer_port_serves(const homa_engine *e, const struct homa_peer *p, uint16_t port)
{
	return port_find(p->served, HOMA_PEER_SERVED_PORTS, port, e->tick);
}

/** homa_peer_port_alive() - A packet came from @port of @p: it is not dead. */
void homa_peer_port_alive(struct homa_peer *p, uint16_t port)
{
	for (int i = 0; i < HOMA_PEER_DEAD_PORTS; i++)
		if (p->dead[i].port == port)
			p->dead[i].until = 0;
}

/** any_dead() - True if some port of @p is still remembered as dead. */
static bool any_dead(const homa_engine *e, const struct homa_peer *p)
{
	for (int i = 0; i < HOMA_PEER_DEAD_PORTS; i++)
		if (p->dead[i].until > e->now)
			return true;
	return false;
}

/** peer_idle() - True if @p has no RPCs, owes no acks and is not quarantined. */
static bool peer_idle(const homa_engine *e, const struct homa_peer *p)
{
	return p->rpcs == 0 && p->num_acks == 0 && !any_dead(e, p);
}

/**
 * homa_peer_put() - Drop a reference. Idle peers are normally kept for
 * timeout_ticks so what they taught us (cutoffs) survives between RPCs,
 * and freed by the timer; past HOMA_IDLE_PEERS peers an idle one is freed
 * at once, which keeps memory proportional to live RPCs even under a flood
 * of forged source addresses.
 */
void homa_peer_put(homa_engine *e, struct homa_peer *p)
{
	p->rpcs--;
	if (peer_idle(e, p) && e->peers.count > HOMA_IDLE_PEERS)
		peer_unlink_free(e, p);
}

/**
 * pooled() - Whether acks owed to @p go through the engine's shared pool
 * (homa_engine_set_ack_pool()): a pool is set and @p is a host not known
 * to be ours (homa_peer_ext()).
 */
static bool pooled(const homa_engine *e, const struct homa_peer *p)
{
	return e->ack_pool.put && !homa_peer_ext(e, p);
}

/**
 * send_acks() - Send an ACK packet to @server_port of @p carrying the acks
 * that may go there (homa_peer_take_ack()).
 */
static void send_acks(homa_engine *e, struct homa_peer *p, uint16_t server_port)
{
	struct homa_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_ACK;
	pkt.sport = e->port;
	pkt.dport = server_port;
	while (pkt.u.ack.num_acks < HOMA_MAX_ACKS &&
	       homa_peer_take_ack(e, p, server_port, &pkt.u.ack.acks[pkt.u.ack.num_acks]))
		pkt.u.ack.num_acks++;
	pkt.sender_id = pkt.u.ack.acks[0].client_id;
	homa_ctl_send(e, &pkt, &p->addr, (uint8_t)(e->s.num_priorities - 1));
}

/**
 * send_one_ack() - Send an ACK packet to @server_port of @p carrying only
 * the ack of @client_id (no memory for @p's ack list).
 */
static void send_one_ack(homa_engine *e, struct homa_peer *p, uint64_t client_id,
			 uint16_t server_port)
{
	struct homa_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_ACK;
	pkt.sport = e->port;
	pkt.dport = server_port;
	pkt.u.ack.num_acks = 1;
	pkt.u.ack.acks[0].client_id = client_id;
	pkt.u.ack.acks[0].server_port = server_port;
	pkt.sender_id = client_id;
	homa_ctl_send(e, &pkt, &p->addr, (uint8_t)(e->s.num_priorities - 1));
}

/**
 * ack_list() - @p's ack list, allocated if it has none yet (NULL if memory
 * ran out).
 */
static struct homa_peer_acks *ack_list(homa_engine *e, struct homa_peer *p)
{
	if (!p->acks)
		p->acks = homa_mem_zalloc(e, sizeof(*p->acks));
	return p->acks;
}

/**
 * homa_peer_add_ack() - Remember that client RPC @client_id to
 * @server_port is complete, so the server can free it. An ack owed to a
 * host not known to be ours goes to the engine's shared pool, if it has
 * one with room; otherwise to @p's list, and when that is full, the
 * oldest acks go out at once in an ACK packet.
 */
void homa_peer_add_ack(homa_engine *e, struct homa_peer *p, uint64_t client_id,
		       uint16_t server_port)
{
	if (pooled(e, p) && e->ack_pool.put(e->ack_pool.ctx, &p->addr, client_id, server_port))
		return;
	if (!ack_list(e, p)) {
		send_one_ack(e, p, client_id, server_port);
		return;
	}
	if (p->num_acks == HOMA_PEER_ACKS)
		send_acks(e, p, p->acks->ports[0]);
	p->acks->ids[p->num_acks] = client_id;
	p->acks->ports[p->num_acks] = server_port;
	p->num_acks++;
}

/**
 * homa_peer_owes_ack() - Whether @p's own ack list already holds the ack
 * of client RPC @client_id (a NEED_ACK that crossed it: it leaves with
 * the next request or tick). The engine's shared pool is not searched.
 * Reads only; no errors.
 */
bool homa_peer_owes_ack(const struct homa_peer *p, uint64_t client_id)
{
	for (uint32_t i = 0; i < p->num_acks; i++)
		if (p->acks->ids[i] == client_id)
			return true;
	return false;
}

/**
 * homa_peer_take_ack() - Remove the oldest ack @p is owed that may ride
 * on a packet to @server_port of that host. A Linux module host (a peer
 * not known to be ours in module-compatible mode) keeps one ack list per
 * host and finds each ack's socket by its own server port, so any ack
 * goes, as the module's own clients send them; our hosts (UDP driver) see
 * only packets to their own port, so toward them only acks for
 * @server_port go. Toward a module host, once @p's list is empty, acks
 * come from the engine's shared pool (those other engines owe that host).
 * Return: true and fills @out, or false if none may go.
 */
bool homa_peer_take_ack(const homa_engine *e, struct homa_peer *p, uint16_t server_port,
			struct homa_ack *out)
{
	bool any_port = !homa_peer_ext(e, p);
	uint32_t i, rest;

	for (i = 0; i < p->num_acks; i++) {
		if (!any_port && p->acks->ports[i] != server_port)
			continue;
		out->client_id = p->acks->ids[i];
		out->server_port = p->acks->ports[i];
		rest = p->num_acks - i - 1;
		memmove(&p->acks->ids[i], &p->acks->ids[i + 1], rest * sizeof(p->acks->ids[0]));
		memmove(&p->acks->ports[i], &p->acks->ports[i + 1], rest * sizeof(p->acks->ports[0]));
		p->num_acks--;
		return true;
	}
	return pooled(e, p) &&
	       e->ack_pool.take(e->ack_pool.ctx, &p->addr, &out->client_id, &out->server_port);
}

/** homa_peer_flush_acks() - Send every ack @p is owed now (also in the pool), in ACK packets. */
void homa_peer_flush_acks(homa_engine *e, struct homa_peer *p)
{
	uint64_t id;
	uint16_t port;

	while (p->num_acks)
		send_acks(e, p, p->acks->ports[0]);
	/* the pool's: each ACK packet goes to the first one's port and takes the others along */
	while (pooled(e, p) && e->ack_pool.take(e->ack_pool.ctx, &p->addr, &id, &port)) {
		if (!ack_list(e, p)) {
			send_one_ack(e, p, id, port);
			continue;
		}
		p->acks->ids[0] = id;
		p->acks->ports[0] = port;
		p->num_acks = 1;
		send_acks(e, p, port);
	}
}

/**
 * homa_peers_tick() - Once per tick: send every owed ack (so servers learn
 * of completions without waiting for NEED_ACK) and free peers idle for
 * timeout_ticks.
 */
void homa_peers_tick(homa_engine *e)
{
	uint32_t i;

	for (i = 0; i < e->peers.nbuckets; i++) {
		struct homa_peer *p = e->peers.buckets[i];

		while (p) {
			struct homa_peer *next = p->hash_next;

			homa_peer_flush_acks(e, p);
			if (peer_idle(e, p) && e->tick - p->heard_tick >= e->s.timeout_ticks)
				peer_unlink_free(e, p);
			p = next;
		}
	}
}

/** homa_peers_free_all() - Free every peer (engine teardown). */
void homa_peers_free_all(homa_engine *e)
{
	uint32_t i;

	for (i = 0; i < e->peers.nbuckets; i++) {
		struct homa_peer *p = e->peers.buckets[i];

		while (p) {
			struct homa_peer *next = p->hash_next;

			homa_mem_free(e, p->acks, sizeof(*p->acks));
			homa_mem_free(e, p, sizeof(*p));
			p = next;
		}
		e->peers.buckets[i] = NULL;
	}
	e->peers.count = 0;
	e->peer_last = NULL;
}
