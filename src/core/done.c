/* SPDX-License-Identifier: MIT */
/**
 * @file done.c
 * Memory of finished server RPCs, for at-most-once execution: a request
 * packet (a late duplicate, or a client's restart after RPC_UNKNOWN) for
 * an RPC this server already executed must not run it again.
 *
 * The promise is by time. A client gives up on an RPC it has not heard
 * about for HOMA_CLIENT_RETRY_TIMEOUTS timeouts (timer.c), so a finished
 * RPC is remembered for homa_done_horizon_ns() (one timeout more, for
 * packets still in flight): the ring forgets its oldest entry only once it
 * is older than that, and grows instead (doubling, from HOMA_DONE_MIN up to
 * settings.max_done_rpcs). When the cap forces out an entry still inside
 * the horizon, the client's (address, port) slot of a small watermark
 * table records the highest such id and when: until the horizon passes,
 * any request from that client at or below it counts as finished. Such a
 * request is answered as finished (the client gets HOMA_EABANDONED) and
 * never runs a second time; an RPC that never ran but hides below the
 * watermark fails the same way. Slots are shared by hash, which only adds
 * such errors, never a second run.
 *
 * Entries are 64-bit fingerprints of (client id, client address, client
 * port) with their finish time, in a FIFO ring in finish order, plus an
 * open-addressing index over the fingerprints (linear probing, at most
 * half full, backward-shift deletion) for a constant-time lookup. The
 * fingerprint mixes the client's keyed hash (homa_done_client(), the same
 * hash as its RPC group's key) with the id by a bijection, so two ids of
 * one client never share a fingerprint.
 *
 * The common case touches only hot memory. Each watermark slot also keeps
 * the highest id of its clients in the ring: a request above it (a
 * client's ids grow) is new without a look at the index. The index is
 * brought up to date only by a lookup that cannot be answered so (the
 * ring's newest entries are added then), so finishing an RPC writes the
 * ring's next entry and forgetting one reads its oldest: both sequential.
 * A lookup that must search adds at most the entries finished since the
 * last such lookup, so the index work is never more than one insert and
 * one removal per finished RPC (engine.done_probes counts it for tests).
 */
#include <string.h>

#include "internal.h"

/** One remembered RPC. */
struct homa_done_ent {
	uint64_t f;    /**< fingerprint, non-zero */
	uint64_t t;    /**< when it finished (engine time) */
	uint64_t id;   /**< its local id (for the watermark if forced out) */
	uint32_t mark; /**< its client's slot in engine.done_marks */
};

/**
 * homa_done_client() - The keyed hash of client @addr:@port that its
 * finished RPCs' fingerprints and its watermark slot are made from (the
 * one hash a lookup makes; its low 32 bits are the RPC group's key).
 */
uint64_t homa_done_client(const homa_engine *e, const homa_addr *addr, uint16_t port)
{
	return homa_hash_rpc(e, 0, addr, port);
}

/**
 * homa_done_fp() - Non-zero fingerprint of server RPC @id of the client
 * whose homa_done_client() hash is @h: a bijective mix of @h and @id.
 */
uint64_t homa_done_fp(uint64_t h, uint64_t id)
{
	uint64_t x = h ^ (id * 0x9e3779b97f4a7c15ull);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x ? x : 1;
}

/** homa_done_fingerprint() - homa_done_fp() of server RPC @id from @addr:@port (one hash). */
uint64_t homa_done_fingerprint(const homa_engine *e, uint64_t id, const homa_addr *addr,
			       uint16_t port)
{
	return homa_done_fp(homa_done_client(e, addr, port), id);
}

/** mask() - Index slots minus one (the index has twice the ring's slots). */
static uint32_t mask(const homa_engine *e)
{
	return 2 * e->done_cap - 1;
}

/** home() - The index slot where probing for @f starts. */
static uint32_t home(const homa_engine *e, uint64_t f)
{
	return (uint32_t)(f ^ (f >> 32)) & mask(e);
}

/** index_insert() - Add @f to the index (a multiset: duplicates are kept). */
static void index_insert(homa_engine *e, uint64_t f)
{
	uint32_t i = home(e, f);

	while (e->done_index[i]) {
		e->done_probes++;
		i = (i + 1) & mask(e);
	}
	e->done_probes++;
	e->done_index[i] = f;
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
static void index_remove(homa_engine *e, uint64_t f)
{
	uint64_t *ix = e->done_index;
	uint32_t i = home(e, f), j;

	e->done_probes++;
	while (ix[i] != f) {
		if (!ix[i])
			return;
		i = (i + 1) & mask(e);
		e->done_probes++;
	}
	for (j = i;;) {
		j = (j + 1) & mask(e);
		e->done_probes++;
		if (!ix[j])
			break;
		if (between(i, home(e, ix[j]), j))
			continue;
		ix[i] = ix[j];
		i = j;
	}
	ix[i] = 0;
}

/** alloc_cap() - Allocate an empty ring and index of @cap entries. Return: 0 or HOMA_ENOMEM. */
static int alloc_cap(homa_engine *e, uint32_t cap, struct homa_done_ent **ring, uint64_t **ix)
{
	*ring = homa_mem_alloc(e, cap * sizeof(**ring));
	*ix = homa_mem_zalloc(e, 2 * (size_t)cap * sizeof(**ix));
	if (*ring && *ix)
		return 0;
	homa_mem_free(e, *ring, cap * sizeof(**ring));
	homa_mem_free(e, *ix, 2 * (size_t)cap * sizeof(**ix));
	*ring = NULL;
	*ix = NULL;
	return HOMA_ENOMEM;
}

/** free_cap() - Free the current ring and index. */
static void free_cap(homa_engine *e)
{
	homa_mem_free(e, e->done, e->done_cap * sizeof(*e->done));
	homa_mem_free(e, e->done_index, 2 * (size_t)e->done_cap * sizeof(*e->done_index));
	e->done = NULL;
	e->done_index = NULL;
}

/**
 * homa_done_init() - Allocate the ring and index at HOMA_DONE_MIN, or
 * nothing with settings.max_done_rpcs 0 (no finished RPC is remembered, as
 * in the Linux module). Return: 0 or HOMA_ENOMEM.
 */
int homa_done_init(homa_engine *e)
{
	e->done_cap = 0;
	e->done_head = 0;
	e->done_count = 0;
	e->done_unindexed = 0;
	memset(e->done_marks, 0, sizeof(e->done_marks));
	if (!e->s.max_done_rpcs)
		return 0;
	e->done_cap = HOMA_DONE_MIN;
	if (alloc_cap(e, HOMA_DONE_MIN, &e->done, &e->done_index)) {
		e->done_cap = 0;
		return HOMA_ENOMEM;
	}
	return 0;
}

/** homa_done_free() - Free the ring and index. */
void homa_done_free(homa_engine *e)
{
	if (e->done_cap)
		free_cap(e);
	e->done_cap = 0;
}

/** homa_done_horizon_ns() - How long a finished RPC is remembered at least (see the file comment). */
uint64_t homa_done_horizon_ns(const homa_engine *e)
{
	return (uint64_t)(HOMA_CLIENT_RETRY_TIMEOUTS + 1) * e->s.timeout_ticks * e->s.tick_ns;
}

/** homa_done_count() - Finished RPCs remembered now. */
uint32_t homa_done_count(const homa_engine *e)
{
	return e->done_count;
}

/** homa_done_capacity() - Entries the ring holds before it must grow or forget. */
uint32_t homa_done_capacity(const homa_engine *e)
{
	return e->done_cap;
}

/** homa_done_bytes() - Memory the ring and its index hold now. */
uint64_t homa_done_bytes(const homa_engine *e)
{
	return (uint64_t)e->done_cap * (sizeof(*e->done) + 2 * sizeof(*e->done_index));
}

/**
 * grow() - Double the ring (the oldest entry is still inside the horizon).
 * Return: true if it grew; false at the cap or out of memory.
 */
static bool grow(homa_engine *e)
{
	uint32_t cap = 2 * e->done_cap, n = e->done_count;
	struct homa_done_ent *ring, *old = e->done;
	uint64_t *ix;

	if (cap > e->s.max_done_rpcs || alloc_cap(e, cap, &ring, &ix))
		return false;
	/* the ring is full: its oldest entry is at done_head */
	for (uint32_t i = 0; i < n; i++)
		ring[i] = old[(e->done_head + i) % e->done_cap];
	free_cap(e);
	e->done = ring;
	e->done_index = ix;
	e->done_cap = cap;
	e->done_head = n;
	e->done_unindexed = n; /* the next lookup that searches indexes them */
	return true;
}

/**
 * mark_slot() - The watermark slot of client @addr:@port: the low bits of
 * the same keyed hash as its RPC group's key (pport.c), so that
 * homa_done_add() takes it from the group without hashing again.
 */
static uint32_t mark_slot(const homa_engine *e, const homa_addr *addr, uint16_t port)
{
	return (uint32_t)homa_done_client(e, addr, port) % HOMA_DONE_MARKS;
}

/**
 * rpc_mark_slot() - mark_slot() of server RPC @rpc's client, from its
 * group's key when it is in one.
 */
static uint32_t rpc_mark_slot(const homa_engine *e, const struct homa_rpc *rpc)
{
	if (rpc->pport)
		return rpc->pport->key % HOMA_DONE_MARKS;
	return mark_slot(e, &rpc->peer->addr, rpc->dport);
}

/**
 * forget_oldest() - Drop the oldest entry to make room. One still inside
 * the horizon raises its client's watermark (see the file comment).
 */
static void forget_oldest(homa_engine *e)
{
	const struct homa_done_ent *old = &e->done[e->done_head];
	struct homa_done_mark *m = &e->done_marks[old->mark];
	uint64_t horizon = homa_done_horizon_ns(e);

	if (e->done_count > e->done_unindexed)
		index_remove(e, old->f);
	else
		e->done_unindexed--;
	e->done_count--;
	m->count--;
	if (e->now - old->t < horizon) {
		e->done_forced_out++;
		if (!m->t || e->now - m->t >= horizon || old->id > m->max_id)
			m->max_id = old->id;
		m->t = e->now ? e->now : 1;
	}
	/* none of the slot's clients left: only a live watermark bounds it */
	if (!m->count)
		m->max_added = m->t && e->now - m->t < horizon ? m->max_id : 0;
}

/**
 * homa_done_add() - Remember that server RPC @rpc finished now. A full
 * ring grows while its oldest entry is inside the horizon, else forgets it.
 * Hashes nothing when @rpc carries its fingerprint (homa_rpc.done_f) and
 * is in its RPC group: both keys were made when it arrived.
 */
void homa_done_add(homa_engine *e, const struct homa_rpc *rpc)
{
	struct homa_done_ent *ent;
	struct homa_done_mark *m;

	if (!e->done_cap)
		return;
	if (e->done_count == e->done_cap &&
	    (e->now - e->done[e->done_head].t >= homa_done_horizon_ns(e) || !grow(e)))
		forget_oldest(e);
	ent = &e->done[e->done_head];
	if (rpc->done_f) {
		ent->f = rpc->done_f;
		ent->mark = rpc_mark_slot(e, rpc);
	} else {
		uint64_t h = homa_done_client(e, &rpc->peer->addr, rpc->dport);

		ent->f = homa_done_fp(h, rpc->id);
		ent->mark = (uint32_t)h % HOMA_DONE_MARKS;
	}
	ent->t = e->now;
	ent->id = rpc->id;
	m = &e->done_marks[ent->mark];
	m->count++;
	if (rpc->id > m->max_added)
		m->max_added = rpc->id;
	e->done_unindexed++;
	e->done_count++;
	e->done_head = (e->done_head + 1) % e->done_cap;
}

/** index_newest() - Add the ring's unindexed newest entries to the index. */
static void index_newest(homa_engine *e)
{
	uint32_t i = (e->done_head + e->done_cap - e->done_unindexed) % e->done_cap;

	for (; e->done_unindexed; e->done_unindexed--, i = (i + 1) % e->done_cap)
		index_insert(e, e->done[i].f);
}

/**
 * homa_done_seen_h() - homa_done_seen() for a caller that already made
 * the client's hash @h (homa_done_client()). Hashes nothing; searches the
 * index only for an id at or below the highest one its watermark slot
 * holds (the rare case: a client's ids grow).
 */
bool homa_done_seen_h(homa_engine *e, uint64_t h, uint64_t id)
{
	const struct homa_done_mark *m = &e->done_marks[(uint32_t)h % HOMA_DONE_MARKS];
	uint64_t f;

	if (!e->done_cap || id > m->max_added)
		return false;
	index_newest(e);
	f = homa_done_fp(h, id);
	for (uint32_t i = home(e, f);; i = (i + 1) & mask(e)) {
		e->done_probes++;
		if (!e->done_index[i])
			break;
		if (e->done_index[i] == f)
			return true;
	}
	return m->t && e->now - m->t < homa_done_horizon_ns(e) && id <= m->max_id;
}

/**
 * homa_done_seen() - True if server RPC @id from @addr:@port may have
 * finished: it is remembered, or it lies at or below its client's live
 * watermark (the cap forced out a newer RPC of that client). One hash.
 */
bool homa_done_seen(homa_engine *e, uint64_t id, const homa_addr *addr, uint16_t port)
{
	if (!e->done_cap)
		return false;
	return homa_done_seen_h(e, homa_done_client(e, addr, port), id);
}
