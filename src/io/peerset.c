/* SPDX-License-Identifier: MIT */
/**
 * @file peerset.c
 * A set of peers with constant-time lookup (peerset.h).
 */
#include <stdlib.h>
#include <string.h>

#include "homa/errors.h"
#include "peerset.h"

/** home() - The entry where @addr:@port's probe starts in @s. */
static uint32_t home(const struct homa_peerset *s, const homa_addr *addr, uint16_t port)
{
	uint64_t x, y;

	memcpy(&x, addr->b, sizeof(x));
	memcpy(&y, addr->b + 8, sizeof(y));
	x ^= (y + port) * 0x9e3779b97f4a7c15ull;
	x ^= x >> 31;
	x *= 0xff51afd7ed558ccdull;
	return (uint32_t)(x >> 32) & s->mask;
}

/** same() - Whether entry @e holds @addr:@port. */
static bool same(const struct homa_peerset_entry *e, const homa_addr *addr, uint16_t port)
{
	return e->used && homa_peer_is(&e->addr, e->port, addr, port);
}

/**
 * find() - The entry holding @addr:@port, else the free entry where its
 * probe ended. Return: its index; *@hit says which.
 */
static uint32_t find(const struct homa_peerset *s, const homa_addr *addr, uint16_t port, bool *hit)
{
	uint32_t i = home(s, addr, port);

	while (s->e[i].used && !same(&s->e[i], addr, port))
		i = (i + 1) & s->mask;
	*hit = s->e[i].used;
	return i;
}

/** homa_peerset_init() - See peerset.h. */
int homa_peerset_init(struct homa_peerset *s, uint32_t cap)
{
	uint32_t size = 8;

	memset(s, 0, sizeof(*s));
	if (!cap)
		return 0;
	while (size < 2 * cap)
		size *= 2;
	s->e = calloc(size, sizeof(*s->e));
	if (!s->e)
		return HOMA_ENOMEM;
	s->mask = size - 1;
	s->cap = cap;
	return 0;
}

/** homa_peerset_free() - See peerset.h. */
void homa_peerset_free(struct homa_peerset *s)
{
	free(s->e);
	memset(s, 0, sizeof(*s));
}

/** homa_peerset_has() - See peerset.h. */
bool homa_peerset_has(const struct homa_peerset *s, const homa_addr *addr, uint16_t port)
{
	bool hit;

	if (!s->n)
		return false;
	find(s, addr, port, &hit);
	return hit;
}

/** homa_peerset_add() - See peerset.h. */
bool homa_peerset_add(struct homa_peerset *s, const homa_addr *addr, uint16_t port)
{
	bool hit;
	uint32_t i;

	if (!s->cap)
		return false;
	i = find(s, addr, port, &hit);
	if (hit)
		return true;
	if (s->n >= s->cap)
		return false;
	s->e[i] = (struct homa_peerset_entry){.addr = *addr, .port = port, .used = true};
	s->n++;
	return true;
}

/**
 * homa_peerset_del() - See peerset.h. The entries after the freed one in
 * its run move back into it while that shortens their probes, so every
 * probe still ends at the first free entry.
 */
void homa_peerset_del(struct homa_peerset *s, const homa_addr *addr, uint16_t port)
{
	uint32_t i, j;
	bool hit;

	if (!s->n)
		return;
	i = find(s, addr, port, &hit);
	if (!hit)
		return;
	s->e[i].used = false;
	s->n--;
	for (j = (i + 1) & s->mask; s->e[j].used; j = (j + 1) & s->mask) {
		uint32_t h = home(s, &s->e[j].addr, s->e[j].port);

		if (((j - h) & s->mask) >= ((j - i) & s->mask)) {
			s->e[i] = s->e[j];
			s->e[j].used = false;
			i = j;
		}
	}
}
