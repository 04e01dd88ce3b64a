/* SPDX-License-Identifier: MIT */
/**
 * @file peerset.h
 * A set of peers (address and port) with constant-time lookup: open
 * addressing, linear probing, deletion by backward shift (no tombstones),
 * room for a fixed number of peers chosen at init. The known peers'
 * table (known.h) uses it so that naming an already known peer known
 * again (every completed message does) costs one lookup, not a scan of
 * the slots. Not thread-safe: the caller serialises.
 */
#ifndef HOMA_IO_PEERSET_H
#define HOMA_IO_PEERSET_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "homa/engine.h"

/** One entry. */
struct homa_peerset_entry {
	homa_addr addr;
	uint16_t port;
	bool used;
};

/** homa_peer_is() - Whether @a:@pa and @b:@pb are the same peer (address and port). */
static inline bool homa_peer_is(const homa_addr *a, uint16_t pa, const homa_addr *b, uint16_t pb)
{
	return pa == pb && !memcmp(a, b, sizeof(*a));
}

/** A set of at most cap peers. */
struct homa_peerset {
	struct homa_peerset_entry *e; /**< mask + 1 entries, at least twice cap */
	uint32_t mask;
	uint32_t cap, n;
};

/**
 * homa_peerset_init() - Room for @cap peers (0: an empty set that holds
 * none). Return: 0, or HOMA_ENOMEM (then @s holds none).
 */
int homa_peerset_init(struct homa_peerset *s, uint32_t cap);

/** homa_peerset_free() - Free @s's entries (@s then holds none). */
void homa_peerset_free(struct homa_peerset *s);

/** homa_peerset_has() - Whether @addr:@port is in @s. */
bool homa_peerset_has(const struct homa_peerset *s, const homa_addr *addr, uint16_t port);

/**
 * homa_peerset_add() - Put @addr:@port in @s. Return: true if it is in
 * @s now (also when it was already), false if @s holds cap peers.
 */
bool homa_peerset_add(struct homa_peerset *s, const homa_addr *addr, uint16_t port);

/** homa_peerset_del() - Take @addr:@port out of @s, if it is there. */
void homa_peerset_del(struct homa_peerset *s, const homa_addr *addr, uint16_t port);

#endif /* HOMA_IO_PEERSET_H */
