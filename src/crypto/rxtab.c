/* SPDX-License-Identifier: MIT */
/**
 * @file rxtab.c
 * The table of receive SPIs this endpoint issued: open addressing with
 * linear probing. SPIs are chosen by this endpoint (sequential numbers),
 * never by a peer, so a multiplicative hash spreads them well.
 */
#include <stdlib.h>

#include "psp_int.h"

/** Marks a deleted slot. */
static struct psp_rx tomb_entry;
#define TOMB (&tomb_entry)

/** slot_of() - First slot to probe for @spi in a table of @cap slots. */
static size_t slot_of(uint32_t spi, size_t cap)
{
	return (size_t)((spi * 0x9e3779b1u) >> 7) & (cap - 1);
}

/** psp_rxtab_find() - See psp_int.h. */
struct psp_rx *psp_rxtab_find(const struct psp_rxtab *t, uint32_t spi)
{
	if (!t->cap)
		return NULL;
	for (size_t i = slot_of(spi, t->cap), n = 0; n < t->cap; i = (i + 1) & (t->cap - 1), n++) {
		struct psp_rx *r = t->slots[i];

		if (!r)
			return NULL;
		if (r != TOMB && r->spi == spi)
			return r;
	}
	return NULL;
}

/** place() - Put @r in the first free slot of @slots (no growth). */
static void place(struct psp_rx **slots, size_t cap, struct psp_rx *r)
{
	size_t i = slot_of(r->spi, cap);

	while (slots[i] && slots[i] != TOMB)
		i = (i + 1) & (cap - 1);
	slots[i] = r;
}

/** rehash() - Move every entry into a new array of @cap slots. Return: 0 or HOMA_ENOMEM. */
static int rehash(struct psp_rxtab *t, size_t cap)
{
	struct psp_rx **s = calloc(cap, sizeof(*s));

	if (!s)
		return HOMA_ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i] && t->slots[i] != TOMB)
			place(s, cap, t->slots[i]);
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	t->tomb = 0;
	return 0;
}

/** psp_rxtab_add() - See psp_int.h. Keeps the table at most half full. */
int psp_rxtab_add(struct psp_rxtab *t, struct psp_rx *r)
{
	if ((t->used + t->tomb + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap : 16;

		while ((t->used + 1) * 4 > cap)  /* a quarter full after a rehash */
			cap *= 2;
		if (rehash(t, cap))
			return HOMA_ENOMEM;
	}
	place(t->slots, t->cap, r);
	t->used++;
	return 0;
}

/** psp_rxtab_remove_if() - See psp_int.h. Frees the array once empty. */
void psp_rxtab_remove_if(struct psp_rxtab *t, bool (*pred)(const struct psp_rx *, void *),
			 void *ctx, void (*fn)(struct psp_rx *))
{
	for (size_t i = 0; i < t->cap; i++) {
		struct psp_rx *r = t->slots[i];

		if (!r || r == TOMB || !pred(r, ctx))
			continue;
		t->slots[i] = TOMB;
		t->used--;
		t->tomb++;
		fn(r);
	}
	if (!t->used) {
		free(t->slots);
		t->slots = NULL;
		t->cap = t->tomb = 0;
	}
}

/** psp_rxtab_count() - See psp_int.h. */
size_t psp_rxtab_count(const struct psp_rxtab *t)
{
	return t->used;
}
