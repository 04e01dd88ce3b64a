/* SPDX-License-Identifier: MIT */
/**
 * @file pport.c
 * The RPCs with one port of one peer host, as a group: every RPC belongs
 * to the group of (its peer, its dport); each peer lists its groups.
 * ICMP port unreachable (unreach.c) ends the RPCs of one group without
 * looking at the host's RPCs with other ports, and protocol unreachable
 * walks the host's groups. A group lives while it has RPCs; groups are
 * found through engine.pports, hashed with the engine's keyed hash (a
 * peer chooses its ports).
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

/** pport_key() - Keyed hash of (@addr, @port): homa_done_client(), the group's h. */
static uint64_t pport_key(const homa_engine *e, const homa_addr *addr, uint16_t port)
{
	return homa_hash_rpc(e, 0, addr, port);
}

/** pport_hash() - Table hash of a group element (its key, made once). */
static uint32_t pport_hash(const homa_engine *e, const void *el)
{
	(void)e;
	return ((const struct homa_pport *)el)->key;
}

/** find_key() - The group of @peer:@port whose key is @key, or NULL. */
static struct homa_pport *find_key(homa_engine *e, const struct homa_peer *peer, uint16_t port,
				   uint32_t key)
{
	struct homa_pport *g = e->pports.buckets[key & (e->pports.nbuckets - 1)];

	while (g && (g->peer != peer || g->port != port))
		g = g->hash_next;
	return g;
}

/** homa_pport_find() - See internal.h. */
struct homa_pport *homa_pport_find(homa_engine *e, const struct homa_peer *peer, uint16_t port)
{
	return find_key(e, peer, port, (uint32_t)pport_key(e, &peer->addr, port));
}

/** homa_pport_near() - See internal.h. */
struct homa_pport *homa_pport_near(const struct homa_peer *peer, uint16_t port)
{
	struct homa_link *l = peer->ports.next;

	for (int n = 0; n < HOMA_PPORT_NEAR && l != &peer->ports; n++, l = l->next) {
		struct homa_pport *g = homa_container_of(l, struct homa_pport, peer_link);

		if (g->port == port)
			return g;
	}
	return NULL;
}

/**
 * homa_pport_add() - See internal.h. The group's key is hashed once, here
 * when the group is made, and kept in it for the table and homa_pport_del();
 * a group among its peer's first few is found without a hash.
 */
int homa_pport_add(homa_engine *e, struct homa_rpc *rpc, const uint64_t *hash)
{
	struct homa_pport *g = homa_pport_near(rpc->peer, rpc->dport);
	uint64_t h = 0;

	if (!g) {
		h = hash ? *hash : pport_key(e, &rpc->peer->addr, rpc->dport);
		g = find_key(e, rpc->peer, rpc->dport, (uint32_t)h);
	}
	if (!g) {
		uint32_t b, key = (uint32_t)h;

		g = homa_cache_get(e, &e->pport_cache, sizeof(*g));
		if (!g)
			return HOMA_ENOMEM;
		memset(g, 0, sizeof(*g));
		g->peer = rpc->peer;
		g->port = rpc->dport;
		g->h = h;
		g->key = key;
		homa_list_init(&g->rpcs);
		homa_list_add_tail(&rpc->peer->ports, &g->peer_link);
		b = key & (e->pports.nbuckets - 1);
		g->hash_next = e->pports.buckets[b];
		e->pports.buckets[b] = g;
		e->pports.count++;
		homa_table_maybe_grow(e, &e->pports, offsetof(struct homa_pport, hash_next),
				      pport_hash);
	}
	homa_list_add_tail(&g->rpcs, &rpc->port_link);
	rpc->pport = g;
	return 0;
}

/** homa_pport_del() - See internal.h. */
void homa_pport_del(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_pport *g = rpc->pport, **pp;

	if (!g)
		return;
	homa_list_del(&rpc->port_link);
	rpc->pport = NULL;
	if (!homa_list_empty(&g->rpcs))
		return;
	pp = (struct homa_pport **)&e->pports.buckets[g->key & (e->pports.nbuckets - 1)];
	while (*pp != g)
		pp = &(*pp)->hash_next;
	*pp = g->hash_next;
	e->pports.count--;
	homa_list_del(&g->peer_link);
	homa_cache_put(e, &e->pport_cache, g, sizeof(*g));
}
