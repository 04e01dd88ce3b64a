/* SPDX-License-Identifier: MIT */
/**
 * @file pkt.c
 * Slab pool of packet buffers.
 */
#include <stdlib.h>
#include <string.h>

#include "homa/errors.h"
#include "sim/pkt.h"

/** stride() - Bytes per packet in a slab, rounded up to keep alignment. */
static size_t stride(const struct homa_sim_pool *p)
{
	size_t s = sizeof(struct homa_sim_pkt) + p->buf_cap;

	return (s + 15) & ~(size_t)15;
}

/** homa_sim_pool_init() - See pkt.h. */
int homa_sim_pool_init(struct homa_sim_pool *p, size_t buf_cap)
{
	memset(p, 0, sizeof(*p));
	if (buf_cap == 0)
		return HOMA_EINVAL;
	p->buf_cap = buf_cap;
	p->per_slab = 256;
	return 0;
}

/** homa_sim_pool_free() - See pkt.h. */
void homa_sim_pool_free(struct homa_sim_pool *p)
{
	size_t i;

	for (i = 0; i < p->nslabs; i++)
		free(p->slabs[i]);
	free(p->slabs);
	p->slabs = NULL;
	p->nslabs = p->slabs_cap = 0;
	p->free = NULL;
	p->in_use = p->allocated = 0;
}

/** grow() - Carve a new slab into the free list. Return: 0 or HOMA_ENOMEM. */
static int grow(struct homa_sim_pool *p)
{
	size_t i, s = stride(p);
	uint8_t *slab;

	if (p->nslabs == p->slabs_cap) {
		size_t cap = p->slabs_cap ? 2 * p->slabs_cap : 16;
		void **n = realloc(p->slabs, cap * sizeof(*n));

		if (!n)
			return HOMA_ENOMEM;
		p->slabs = n;
		p->slabs_cap = cap;
	}
	slab = malloc(s * p->per_slab);
	if (!slab)
		return HOMA_ENOMEM;
	p->slabs[p->nslabs++] = slab;
	for (i = p->per_slab; i-- > 0;) {
		struct homa_sim_pkt *pkt = (struct homa_sim_pkt *)(slab + i * s);

		pkt->next = p->free;
		p->free = pkt;
	}
	p->allocated += p->per_slab;
	return 0;
}

/** homa_sim_pool_get() - See pkt.h. */
struct homa_sim_pkt *homa_sim_pool_get(struct homa_sim_pool *p)
{
	struct homa_sim_pkt *pkt;

	if (!p->free && grow(p))
		return NULL;
	pkt = p->free;
	p->free = pkt->next;
	memset(pkt, 0, sizeof(*pkt));
	p->in_use++;
	return pkt;
}

/** homa_sim_pool_put() - See pkt.h. */
void homa_sim_pool_put(struct homa_sim_pool *p, struct homa_sim_pkt *pkt)
{
	if (!pkt)
		return;
	pkt->next = p->free;
	p->free = pkt;
	p->in_use--;
}
