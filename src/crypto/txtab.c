/* SPDX-License-Identifier: MIT */
/**
 * @file txtab.c
 * The table of send associations, by destination address and Homa port:
 * chained hashing that doubles when the load passes one. Destinations are
 * installed by the application or the key exchange, not by packets.
 */
#include <stdlib.h>
#include <string.h>

#include "psp_int.h"

/** hash() - FNV-1a of @dst and @dport. */
static uint64_t hash(const homa_addr *dst, uint16_t dport)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 16; i++)
		h = (h ^ dst->b[i]) * 0x100000001b3ull;
	h = (h ^ (dport & 0xff)) * 0x100000001b3ull;
	return (h ^ (dport >> 8)) * 0x100000001b3ull;
}

/** link_of() - The link that points at @dst:@dport's entry (or the chain's NULL end). */
static struct psp_tx **link_of(const struct psp_txtab *t, const homa_addr *dst, uint16_t dport)
{
	struct psp_tx **l = &t->buckets[hash(dst, dport) & (t->nbuckets - 1)];

	while (*l && ((*l)->dport != dport || memcmp(&(*l)->dst, dst, sizeof(*dst))))
		l = &(*l)->next;
	return l;
}

/** psp_txtab_find() - See psp_int.h. */
struct psp_tx *psp_txtab_find(const struct psp_txtab *t, const homa_addr *dst, uint16_t dport)
{
	return t->nbuckets ? *link_of(t, dst, dport) : NULL;
}

/** grow() - Double the buckets (or make the first 16). Return: 0 or HOMA_ENOMEM. */
static int grow(struct psp_txtab *t)
{
	size_t n = t->nbuckets ? t->nbuckets * 2 : 16;
	struct psp_tx **b = calloc(n, sizeof(*b));

	if (!b)
		return HOMA_ENOMEM;
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct psp_tx *x = t->buckets[i], *next;

		for (; x; x = next) {
			size_t k = hash(&x->dst, x->dport) & (n - 1);

			next = x->next;
			x->next = b[k];
			b[k] = x;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
	return 0;
}

/** psp_txtab_insert() - See psp_int.h. */
int psp_txtab_insert(struct psp_txtab *t, struct psp_tx *x)
{
	struct psp_tx **l;

	if (t->count + 1 > t->nbuckets && grow(t))
		return HOMA_ENOMEM;
	l = &t->buckets[hash(&x->dst, x->dport) & (t->nbuckets - 1)];
	x->next = *l;
	*l = x;
	t->count++;
	return 0;
}

/** psp_txtab_unlink() - See psp_int.h. */
struct psp_tx *psp_txtab_unlink(struct psp_txtab *t, const homa_addr *dst, uint16_t dport)
{
	struct psp_tx **l, *x;

	if (!t->nbuckets)
		return NULL;
	l = link_of(t, dst, dport);
	x = *l;
	if (x) {
		*l = x->next;
		t->count--;
	}
	return x;
}

/** psp_txtab_free() - See psp_int.h. */
void psp_txtab_free(struct psp_txtab *t)
{
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct psp_tx *x = t->buckets[i], *next;

		for (; x; x = next) {
			next = x->next;
			psp_aead_free(&x->aead);
			free(x);
		}
	}
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}
