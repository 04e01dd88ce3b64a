/* SPDX-License-Identifier: MIT */
/**
 * @file mem.c
 * Allocation through the engine's hooks, and chunked message buffers
 * (struct homa_msg), including the public homa_msg_* accessors.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/** hook_alloc() - Allocate @size bytes through @a (malloc if it has none). */
static void *hook_alloc(const struct homa_alloc *a, size_t size)
{
	if (a && a->alloc)
		return a->alloc(a->ctx, size);
	return malloc(size);
}

/** hook_free() - Free @p (of @size bytes) through @a; NULL is ignored. */
static void hook_free(const struct homa_alloc *a, void *p, size_t size)
{
	if (!p)
		return;
	if (a && a->free)
		a->free(a->ctx, p, size);
	else
		free(p);
}

/** homa_hook_alloc() - hook_alloc() for the other files of the engine. */
void *homa_hook_alloc(const struct homa_alloc *a, size_t size)
{
	return hook_alloc(a, size);
}

/** homa_hook_free() - hook_free() for the other files of the engine. */
void homa_hook_free(const struct homa_alloc *a, void *p, size_t size)
{
	hook_free(a, p, size);
}

/** homa_mem_alloc() - Allocate @size bytes through the hooks. Return: NULL on failure. */
void *homa_mem_alloc(homa_engine *e, size_t size)
{
	return hook_alloc(&e->alloc, size);
}

/** homa_mem_zalloc() - Like homa_mem_alloc(), zero-filled. */
void *homa_mem_zalloc(homa_engine *e, size_t size)
{
	void *p = homa_mem_alloc(e, size);

	if (p)
		memset(p, 0, size);
	return p;
}

/** homa_mem_free() - Free @p (of @size bytes) through the hooks; NULL is ignored. */
void homa_mem_free(homa_engine *e, void *p, size_t size)
{
	hook_free(&e->alloc, p, size);
}

/** chunk_len() - Size of chunk @i of a message of @length bytes. */
static uint32_t chunk_len(uint32_t length, uint32_t i)
{
	uint32_t start = i << HOMA_CHUNK_SHIFT;

	return length - start < HOMA_CHUNK ? length - start : HOMA_CHUNK;
}

/** msg_block_size() - Bytes of a message record with room for @nchunks chunk pointers. */
static size_t msg_block_size(uint32_t nchunks)
{
	return sizeof(struct homa_msg) + (size_t)nchunks * sizeof(uint8_t *);
}

/** ref_block_size() - Bytes of a borrowed message's record with @nref gather entries. */
static size_t ref_block_size(uint32_t nref)
{
	return sizeof(struct homa_msg) + (size_t)nref * sizeof(struct homa_iov);
}

/** msg_new() - homa_msg_new() through the hooks @a. */
static struct homa_msg *msg_new(const struct homa_alloc *a, uint32_t length)
{
	uint32_t nchunks = (uint32_t)(((uint64_t)length + HOMA_CHUNK - 1) >> HOMA_CHUNK_SHIFT);
	struct homa_msg *m = hook_alloc(a, msg_block_size(nchunks));

	if (!m)
		return NULL;
	memset(m, 0, msg_block_size(nchunks));
	homa_list_init(&m->link);
	m->length = length;
	m->nchunks = nchunks;
	m->chunks = (uint8_t **)(m + 1);
	m->charged = msg_block_size(nchunks);
	return m;
}

/**
 * homa_msg_new() - Allocate an empty message of @length bytes (no chunks
 * yet). The chunk pointers follow the record in the same allocation.
 * Return: the message (engine owns) or NULL.
 */
struct homa_msg *homa_msg_new(homa_engine *e, uint32_t length)
{
	return msg_new(&e->alloc, length);
}

/**
 * get_chunk() - Chunk @i of @m, allocating it through m->chunk_alloc if
 * set, else @a. Return: NULL on failure.
 */
static uint8_t *get_chunk(const struct homa_alloc *a, struct homa_msg *m, uint32_t i)
{
	if (m->chunk_alloc)
		a = m->chunk_alloc;
	if (!m->chunks[i]) {
		uint32_t len = chunk_len(m->length, i);

		m->chunks[i] = hook_alloc(a, len);
		if (!m->chunks[i])
			return NULL;
		m->charged += len;
	}
	return m->chunks[i];
}

/**
 * msg_write() - homa_msg_write() through the hooks @a; with @defer not
 * NULL each piece's copy is left to @defer's caller (rxcopy.c).
 * Return: 0, HOMA_ENOMEM, or HOMA_EAGAIN (@defer's copy list is full);
 * pieces before the failing one are written or listed.
 */
static int msg_write(const struct homa_alloc *a, homa_engine *defer, struct homa_msg *m,
		     uint32_t off, const uint8_t *src, uint32_t len)
{
	while (len) {
		uint32_t i = off >> HOMA_CHUNK_SHIFT;
		uint32_t in = off & (HOMA_CHUNK - 1);
		uint32_t n = chunk_len(m->length, i) - in;
		uint8_t *c = get_chunk(a, m, i);

		if (!c)
			return HOMA_ENOMEM;
		if (n > len)
			n = len;
		if (defer) {
			int err = homa_rxcopy_add(defer, m, c + in, src, n);

			if (err)
				return err;
		} else {
			memcpy(c + in, src, n);
		}
		src += n;
		off += n;
		len -= n;
	}
	return 0;
}

/**
 * homa_msg_write() - Copy @len bytes from @src to offset @off of @m,
 * allocating chunks as needed, or leave the copy to the caller of
 * homa_engine_input() when it asked (homa_engine_defer_copies()). The
 * caller checked bounds.
 * Return: 0 or HOMA_ENOMEM (bytes before the failing chunk are written).
 */
int homa_msg_write(homa_engine *e, struct homa_msg *m, uint32_t off,
		   const uint8_t *src, uint32_t len)
{
	return msg_write(&e->alloc, e->copies ? e : NULL, m, off, src, len);
}

/** msg_fill() - Copy a gather list into @m from offset 0 through @a. Return: 0 or HOMA_ENOMEM. */
static int msg_fill(const struct homa_alloc *a, struct homa_msg *m,
		    const struct homa_iov *iov, int iovcnt)
{
	uint32_t off = 0;
	int i, err;

	for (i = 0; i < iovcnt; i++) {
		err = msg_write(a, NULL, m, off, iov[i].base, (uint32_t)iov[i].len);
		if (err)
			return err;
		off += (uint32_t)iov[i].len;
	}
	return 0;
}

/**
 * homa_msg_fill() - Copy a gather list into @m from offset 0.
 * Return: 0 or HOMA_ENOMEM.
 */
int homa_msg_fill(homa_engine *e, struct homa_msg *m,
		  const struct homa_iov *iov, int iovcnt)
{
	return msg_fill(&e->alloc, m, iov, iovcnt);
}

/**
 * msg_free() - Free @m and its chunks through @a; NULL is ignored. A
 * borrowed message's done callback runs last, once the engine holds
 * nothing of it. A message with copies still pending (rxcopy.c) is only
 * marked: homa_engine_copies_done() frees it once they are done.
 */
static void msg_free(const struct homa_alloc *a, struct homa_msg *m)
{
	void (*done)(void *ctx);
	void *ctx;
	uint32_t i;

	if (!m)
		return;
	homa_list_del(&m->link);
	if (m->copying) {
		m->orphan = true;
		return;
	}
	done = m->done;
	ctx = m->done_ctx;
	homa_lend_free(a, m);
	if (m->ref) {
		hook_free(a, m, ref_block_size(m->nref));
	} else {
		for (i = 0; i < m->nchunks; i++)
			hook_free(m->chunk_alloc ? m->chunk_alloc : a, m->chunks[i],
				  chunk_len(m->length, i));
		hook_free(a, m, msg_block_size(m->nchunks));
	}
	if (done)
		done(ctx);
}

/**
 * homa_msg_free() - Free @m and its chunks; NULL is ignored. A message
 * whose chunks a packet borrowed since the last homa_engine_output_sent()
 * (that packet may still be unsent) is retired instead: output_sent()
 * frees it.
 */
void homa_msg_free(homa_engine *e, struct homa_msg *m)
{
	if (m && m->ref_gen == e->ref_gen && !m->copying) {
		homa_list_del(&m->link);
		homa_list_add_tail(&e->retired, &m->link);
		return;
	}
	msg_free(&e->alloc, m);
}

/** homa_engine_output_sent() - See engine.h. */
void homa_engine_output_sent(homa_engine *e)
{
	if (!e)
		return;
	e->ref_gen++;
	while (!homa_list_empty(&e->retired))
		msg_free(&e->alloc, homa_container_of(e->retired.next, struct homa_msg, link));
}

/** homa_iov_length() - See engine.h. */
int homa_iov_length(const struct homa_iov *iov, int iovcnt, uint64_t *len)
{
	uint64_t total = 0;

	if (!len || iovcnt < 0 || (iovcnt > 0 && !iov))
		return HOMA_EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		if (!iov[i].base && iov[i].len)
			return HOMA_EINVAL;
		if (iov[i].len > UINT64_MAX - total)
			return HOMA_EINVAL;
		total += iov[i].len;
	}
	*len = total;
	return 0;
}

/**
 * out_length() - Check the arguments of a new outgoing message: @len
 * receives the gather list's total. Return: 0; HOMA_EINVAL (NULL @out,
 * or as homa_iov_length()); HOMA_EMSGSIZE (more than 2^32-1 bytes).
 */
static int out_length(const struct homa_iov *iov, int iovcnt, homa_msg **out, uint64_t *len)
{
	int err = out ? homa_iov_length(iov, iovcnt, len) : HOMA_EINVAL;

	if (!err && *len > UINT32_MAX)
		err = HOMA_EMSGSIZE;
	return err;
}

/** homa_msg_build() - See engine.h. */
int homa_msg_build(const struct homa_alloc *alloc, const struct homa_iov *iov,
		   int iovcnt, homa_msg **out)
{
	struct homa_msg *m;
	uint64_t len;
	int err = out_length(iov, iovcnt, out, &len);

	if (err)
		return err;
	m = msg_new(alloc, (uint32_t)len);
	if (!m)
		return HOMA_ENOMEM;
	if (msg_fill(alloc, m, iov, iovcnt)) {
		msg_free(alloc, m);
		return HOMA_ENOMEM;
	}
	*out = m;
	return 0;
}

/** homa_msg_build_ref() - See engine.h. */
int homa_msg_build_ref(const struct homa_alloc *alloc, const struct homa_iov *iov,
		       int iovcnt, void (*done)(void *ctx), void *ctx, homa_msg **out)
{
	struct homa_iov *copy;
	struct homa_msg *m;
	uint64_t len;
	int err = out_length(iov, iovcnt, out, &len);

	if (err)
		return err;
	m = hook_alloc(alloc, ref_block_size((uint32_t)iovcnt));
	if (!m)
		return HOMA_ENOMEM;
	memset(m, 0, sizeof(*m));
	homa_list_init(&m->link);
	copy = (struct homa_iov *)(m + 1);
	memcpy(copy, iov, (size_t)iovcnt * sizeof(*iov));
	m->length = (uint32_t)len;
	m->ref = copy;
	m->nref = (uint32_t)iovcnt;
	/* charged like a copy: the tx budget bounds what senders queue */
	m->charged = ref_block_size(m->nref) + len;
	m->done = done;
	m->done_ctx = ctx;
	*out = m;
	return 0;
}

/** homa_msg_discard() - See engine.h. */
void homa_msg_discard(const struct homa_alloc *alloc, homa_msg *m)
{
	msg_free(alloc, m);
}

/** homa_msg_length() - See engine.h. */
size_t homa_msg_length(const homa_msg *m)
{
	return m ? m->length : 0;
}

/** ref_segment() - homa_msg_segment() of a borrowed message: the piece holding @offset. */
static size_t ref_segment(const homa_msg *m, size_t offset, const uint8_t **ptr)
{
	for (uint32_t i = 0; i < m->nref; i++) {
		if (offset < m->ref[i].len) {
			*ptr = (const uint8_t *)m->ref[i].base + offset;
			return m->ref[i].len - offset;
		}
		offset -= m->ref[i].len;
	}
	return 0;
}

/**
 * homa_msg_segment() - See engine.h. Unwritten chunks read as absent (0);
 * bytes in lent buffers (lend.c) come from there, chunk bytes stop where
 * the next lent piece starts.
 */
size_t homa_msg_segment(const homa_msg *m, size_t offset, const uint8_t **ptr)
{
	size_t n, limit;
	uint32_t i, in;

	if (!m || !ptr || offset >= m->length)
		return 0;
	if (m->ref)
		return ref_segment(m, offset, ptr);
	n = homa_lend_segment(m, offset, ptr, &limit);
	if (n)
		return n;
	i = (uint32_t)(offset >> HOMA_CHUNK_SHIFT);
	in = (uint32_t)(offset & (HOMA_CHUNK - 1));
	if (!m->chunks[i])
		return 0;
	*ptr = m->chunks[i] + in;
	n = chunk_len(m->length, i) - in;
	return n < limit ? n : limit;
}

/** homa_msg_copy() - See engine.h. */
size_t homa_msg_copy(const homa_msg *m, size_t offset, void *dst, size_t len)
{
	size_t done = 0;

	while (dst && done < len) {
		const uint8_t *p;
		size_t n = homa_msg_segment(m, offset + done, &p);

		if (!n)
			break;
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)dst + done, p, n);
		done += n;
	}
	return done;
}
