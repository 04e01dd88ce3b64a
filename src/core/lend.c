/* SPDX-License-Identifier: MIT */
/**
 * @file lend.c
 * Zero-copy receive: payload left in the driver's receive buffers
 * (homa_engine_input_lend()). A message keeps a sorted list of such
 * pieces (struct homa_frag) beside its chunks; each piece's buffer goes
 * back to the driver, through the message's struct homa_rx_lend, when
 * the message is freed.
 */
#include <string.h>

#include "internal.h"

/**
 * grow() - Make room for one more piece in @m's list (through @e's
 * hooks), charging the list to the rx budget.
 * Return: 0 or HOMA_ENOMEM.
 */
static int grow(homa_engine *e, struct homa_msg *m)
{
	uint32_t cap = m->frags_cap ? 2 * m->frags_cap : 8;
	struct homa_frag *f;

	if (m->nfrags < m->frags_cap)
		return 0;
	f = homa_mem_alloc(e, cap * sizeof(*f));
	if (!f)
		return HOMA_ENOMEM;
	if (m->nfrags)
		memcpy(f, m->frags, m->nfrags * sizeof(*f));
	homa_mem_free(e, m->frags, m->frags_cap * sizeof(*f));
	m->charged += (cap - m->frags_cap) * sizeof(*f);
	m->frags = f;
	m->frags_cap = cap;
	return 0;
}

/**
 * homa_lend_take() - Keep the payload [@off, @off+@len) at @data in place,
 * in the buffer homa_engine_input_lend() is handling, instead of copying
 * it into @m. Only for bytes beyond every piece @m holds (the caller
 * lends only at or past recv_end), once per packet, and only if @data
 * lies in that buffer and the buffer comes from the same lender as @m's
 * other pieces, and never when the application allocates the message's
 * pieces itself (homa_engine_set_rx_alloc(): it wants the bytes there). The bytes are charged to the rx budget like copied ones.
 * Return: 0 (kept: e->lend_kept is set); HOMA_EAGAIN (not lendable: copy
 * instead); HOMA_ENOMEM.
 */
int homa_lend_take(homa_engine *e, struct homa_msg *m, uint32_t off, const uint8_t *data,
		   uint32_t len)
{
	const struct homa_rx_lend *l = e->lend;
	struct homa_frag *f;

	if (!l || e->lend_kept || !len || data < e->lend_buf ||
	    (size_t)(data - e->lend_buf) + len > e->lend_len || m->ref || m->chunk_alloc)
		return HOMA_EAGAIN;
	if (m->nfrags && (m->lend.release != l->release || m->lend.ctx != l->ctx))
		return HOMA_EAGAIN;
	if (m->nfrags && off < m->frags[m->nfrags - 1].off + m->frags[m->nfrags - 1].len)
		return HOMA_EAGAIN;
	if (grow(e, m))
		return HOMA_ENOMEM;
	m->lend = *l;
	f = &m->frags[m->nfrags++];
	f->off = off;
	f->len = len;
	f->ptr = data;
	f->buf = e->lend_buf;
	m->charged += len;
	e->lend_kept = true;
	return 0;
}

/**
 * homa_lend_segment() - The lent piece of @m holding @offset: *@ptr and
 * its bytes from there. When no piece holds it, returns 0 and sets
 * *@limit to the bytes from @offset to the next piece (SIZE_MAX if none),
 * where chunk bytes end.
 */
size_t homa_lend_segment(const struct homa_msg *m, size_t offset, const uint8_t **ptr,
			 size_t *limit)
{
	uint32_t lo = 0, hi = m->nfrags;

	/* first piece that ends after offset */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if ((size_t)m->frags[mid].off + m->frags[mid].len <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	*limit = SIZE_MAX;
	if (lo == m->nfrags)
		return 0;
	if (offset < m->frags[lo].off) {
		*limit = m->frags[lo].off - offset;
		return 0;
	}
	*ptr = m->frags[lo].ptr + (offset - m->frags[lo].off);
	return m->frags[lo].off + m->frags[lo].len - offset;
}

/**
 * homa_lend_free() - Give every lent buffer of @m back to its lender and
 * free the list through @a (the message itself stays).
 */
void homa_lend_free(const struct homa_alloc *a, struct homa_msg *m)
{
	for (uint32_t i = 0; i < m->nfrags; i++)
		m->lend.release(m->lend.ctx, m->frags[i].buf);
	homa_hook_free(a, m->frags, m->frags_cap * sizeof(*m->frags));
	m->frags = NULL;
	m->nfrags = m->frags_cap = 0;
}
