/* SPDX-License-Identifier: MIT */
/**
 * @file rxcopy.c
 * Payload copies left to the caller of homa_engine_input()
 * (homa_engine_defer_copies()): the engine decides where received bytes
 * go (allocating the message's chunks) and lists each copy; the caller
 * copies after letting go of whatever lock guards the engine and then
 * reports them done. Until then a message with copies pending is neither
 * handed to the application (homa_engine_next_event() passes over its
 * event), nor read as it arrives (homa_engine_rx_progress() reports what
 * was present before), nor freed (mem.c marks it an orphan, freed here).
 */
#include "internal.h"

/** homa_engine_defer_copies() - See engine.h. */
int homa_engine_defer_copies(homa_engine *e, struct homa_rx_copy *list, uint32_t cap,
			     uint32_t *n)
{
	if (!e || (list && (!cap || !n)))
		return HOMA_EINVAL;
	e->copies = list;
	e->copies_cap = list ? cap : 0;
	e->ncopies = list ? n : NULL;
	return 0;
}

/**
 * homa_rxcopy_add() - List the copy of @len bytes from @src to @dst, a
 * place in @m's chunks, for the caller of homa_engine_input() (e->copies
 * is set). With the list full nothing is copied: the engine never copies
 * payload while the caller holds its lock. The piece is counted
 * (rx_copies_refused) and left missing, so the sender resends it.
 * Return: 0, or HOMA_EAGAIN (list full).
 */
int homa_rxcopy_add(homa_engine *e, struct homa_msg *m, uint8_t *dst, const uint8_t *src,
		    uint32_t len)
{
	struct homa_rx_copy *c;

	if (*e->ncopies >= e->copies_cap) {
		e->st.rx_copies_refused++;
		return HOMA_EAGAIN;
	}
	c = &e->copies[(*e->ncopies)++];
	c->dst = dst;
	c->src = src;
	c->len = len;
	c->msg = m;
	m->copying++;
	return 0;
}

/**
 * homa_rxcopy_settled() - Bytes of @in's message present from offset 0
 * on, counting only copies already done.
 */
uint32_t homa_rxcopy_settled(const struct homa_msgin *in)
{
	if (in->msg && in->msg->copying)
		return in->settled;
	return in->ngaps ? in->gaps[0].start : in->recv_end;
}

/** homa_engine_copies_done() - See engine.h. */
void homa_engine_copies_done(homa_engine *e, const struct homa_rx_copy *list, uint32_t n)
{
	if (!e || !list)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct homa_msg *m = list[i].msg;

		if (!m || !m->copying)
			continue;
		if (--m->copying == 0 && m->orphan)
			homa_msg_free(e, m);
	}
}
