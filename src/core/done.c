/* SPDX-License-Identifier: MIT */
/**
 * @file done.c
 * Memory of recently finished server RPCs, for at-most-once execution
 * when the network delivers a request packet again after the server
 * already executed the request, replied and was acked (a duplicated or
 * long-delayed packet would otherwise start the RPC anew).
 *
 * The last HOMA_DONE_SLOTS finished RPCs are remembered exactly: a FIFO
 * ring of 64-bit fingerprints of (client id, client address, client port),
 * and an open-addressing index over the same fingerprints (linear probing,
 * at most half full, backward-shift deletion) for a constant-time lookup.
 * Only age forgets an RPC: the oldest leaves the index when the ring
 * overwrites it. (A direct-mapped table forgot an RPC whenever a later
 * one hashed to its slot: 0.4% of RPCs were forgotten after only 15 more,
 * and fuzz_pair ran a request twice.) Constant memory: 96 KiB per engine.
 */
#include "internal.h"

/** Index slots: twice the ring, a power of two. */
#define DONE_INDEX (2 * HOMA_DONE_SLOTS)

/** fingerprint() - Non-zero 64-bit hash of an RPC's identity. */
static uint64_t fingerprint(uint64_t id, const homa_addr *addr, uint16_t port)
{
	uint64_t h = (id ^ ((uint64_t)port << 48)) * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)homa_hash_addr(addr) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 31;
	return h ? h : 1;
}

/** home() - The index slot where probing for @f starts. */
static uint32_t home(uint64_t f)
{
	return (uint32_t)(f ^ (f >> 32)) & (DONE_INDEX - 1);
}

/** index_of() - The index: it follows the ring in e->done. */
static uint64_t *index_of(const homa_engine *e)
{
	return e->done + HOMA_DONE_SLOTS;
}

/** index_insert() - Add @f to the index (a multiset: duplicates are kept). */
static void index_insert(uint64_t *ix, uint64_t f)
{
	uint32_t i = home(f);

	while (ix[i])
		i = (i + 1) & (DONE_INDEX - 1);
	ix[i] = f;
}

/** between() - True if @k lies cyclically in (@i, @j]. */
static bool between(uint32_t i, uint32_t k, uint32_t j)
{
	return i <= j ? i < k && k <= j : i < k || k <= j;
}

/**
 * index_remove() - Remove one copy of @f, shifting later entries of its
 * probe run back so that no lookup passes an empty slot too early.
 */
static void index_remove(uint64_t *ix, uint64_t f)
{
	uint32_t i = home(f), j;

	while (ix[i] != f) {
		if (!ix[i])
			return;
		i = (i + 1) & (DONE_INDEX - 1);
	}
	for (j = i;;) {
		j = (j + 1) & (DONE_INDEX - 1);
		if (!ix[j])
			break;
		if (between(i, home(ix[j]), j))
			continue;
		ix[i] = ix[j];
		i = j;
	}
	ix[i] = 0;
}

/** homa_done_init() - Allocate the ring and index. Return: 0 or HOMA_ENOMEM. */
int homa_done_init(homa_engine *e)
{
	e->done = homa_mem_zalloc(e, (HOMA_DONE_SLOTS + DONE_INDEX) * sizeof(*e->done));
	e->done_head = 0;
	e->done_count = 0;
	return e->done ? 0 : HOMA_ENOMEM;
}

/** homa_done_free() - Free the ring and index. */
void homa_done_free(homa_engine *e)
{
	homa_mem_free(e, e->done, (HOMA_DONE_SLOTS + DONE_INDEX) * sizeof(*e->done));
	e->done = NULL;
}

/** homa_done_add() - Remember that server RPC @rpc finished (forgetting the oldest if full). */
void homa_done_add(homa_engine *e, const struct homa_rpc *rpc)
{
	uint64_t f = fingerprint(rpc->id, &rpc->peer->addr, rpc->dport);

	if (e->done_count == HOMA_DONE_SLOTS)
		index_remove(index_of(e), e->done[e->done_head]);
	else
		e->done_count++;
	e->done[e->done_head] = f;
	index_insert(index_of(e), f);
	e->done_head = (e->done_head + 1) % HOMA_DONE_SLOTS;
}

/** homa_done_seen() - True if a server RPC with this identity finished among the last HOMA_DONE_SLOTS. */
bool homa_done_seen(const homa_engine *e, uint64_t id, const homa_addr *addr, uint16_t port)
{
	const uint64_t *ix = index_of(e);
	uint64_t f = fingerprint(id, addr, port);

	for (uint32_t i = home(f); ix[i]; i = (i + 1) & (DONE_INDEX - 1))
		if (ix[i] == f)
			return true;
	return false;
}
