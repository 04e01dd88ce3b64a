/* SPDX-License-Identifier: MIT */
/**
 * @file table.c
 * Bucket arrays for the engine's chained hash tables (RPCs, peers).
 * The element types chain themselves through their own hash_next field;
 * rpc.c and peer.c do lookups and growth.
 */
#include <string.h>

#include "internal.h"

/**
 * homa_table_init() - Allocate @nbuckets (a power of two) empty buckets.
 * Return: 0 or HOMA_ENOMEM.
 */
int homa_table_init(homa_engine *e, struct homa_table *t, uint32_t nbuckets)
{
	t->buckets = homa_mem_zalloc(e, nbuckets * sizeof(void *));
	if (!t->buckets)
		return HOMA_ENOMEM;
	t->nbuckets = nbuckets;
	t->count = 0;
	return 0;
}

/** homa_table_destroy() - Free the bucket array (not the elements). */
void homa_table_destroy(homa_engine *e, struct homa_table *t)
{
	homa_mem_free(e, t->buckets, t->nbuckets * sizeof(void *));
	t->buckets = NULL;
	t->nbuckets = 0;
}

/**
 * homa_table_maybe_grow() - Double the buckets when the table is over two
 * elements per bucket. Elements are chained through a pointer at byte
 * offset @next_off; @hash gives an element's hash. An allocation failure
 * keeps the old (still correct, just slower) table.
 */
void homa_table_maybe_grow(homa_engine *e, struct homa_table *t, size_t next_off,
			   uint32_t (*hash)(const homa_engine *e, const void *elem))
{
	struct homa_table n;
	uint32_t i;

	if (t->count <= 2 * t->nbuckets || homa_table_init(e, &n, 2 * t->nbuckets))
		return;
	for (i = 0; i < t->nbuckets; i++) {
		void *el = t->buckets[i];

		while (el) {
			void **next = (void **)((char *)el + next_off);
			void *after = *next;
			uint32_t b = hash(e, el) & (n.nbuckets - 1);

			*next = n.buckets[b];
			n.buckets[b] = el;
			el = after;
		}
	}
	n.count = t->count;
	homa_table_destroy(e, t);
	*t = n;
}
