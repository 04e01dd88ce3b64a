/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_pair_net.c
 * The network of the two-engine fuzz target. Packets are pulled from an
 * engine and given a fate by the input (deliver, drop, duplicate, delay);
 * queued packets are delivered in an input-chosen order (reordering).
 * fp_settle_step() runs a perfect network to let every RPC finish.
 */
#include <sanitizer/asan_interface.h>
#include <stddef.h>
#include <string.h>

#include "fuzz_pair.h"

/**
 * fp_net_init() - Empty wire, every pool slot free. Called once per
 * input, after the world was reset. The slots are poisoned (under ASan)
 * the first time; after that slot_free() keeps every free slot poisoned.
 */
void fp_net_init(struct fp_world *w)
{
	int i;

	w->nnet = 0;
	w->nspare = FP_MAX_INFLIGHT;
	for (i = 0; i < FP_MAX_INFLIGHT; i++) {
		w->spare[i] = &w->pool[i];
		if (!w->pool_poisoned)
			ASAN_POISON_MEMORY_REGION(w->pool[i].guard,
						  sizeof(w->pool[i].guard) + FP_PKT_CAP);
	}
	w->pool_poisoned = true;
}

/** slot_free() - Give packet @p's slot back to the pool (poisoned again). */
static void slot_free(struct fp_world *w, struct fp_pkt *p)
{
	ASAN_POISON_MEMORY_REGION(p->bytes, p->len);
	w->spare[w->nspare++] = p;
}

/** enqueue() - Put a copy of @len bytes from engine @from on the wire, due at @due. */
static void enqueue(struct fp_world *w, int from, const uint8_t *b, uint32_t len, uint64_t due)
{
	struct fp_pkt *p;

	if (w->nnet == FP_MAX_INFLIGHT || len > FP_PKT_CAP)
		return; /* a full switch drops */
	p = w->spare[--w->nspare];
	ASAN_UNPOISON_MEMORY_REGION(p->bytes, len); /* exactly the bytes in use */
	p->from = from;
	p->due = due;
	p->len = len;
	memcpy(p->bytes, b, len);
	w->net[w->nnet++] = p;
}

/** to_liar() - True if @tx goes to the lying peer's host (fuzz_pair_liar.c), any port. */
static bool to_liar(const struct fp_world *w, const struct homa_tx *tx)
{
	return homa_addr_equal(&tx->dst, &w->liar);
}

/**
 * fp_pump() - Pull up to @n packets from engine @from; the input gives
 * each a fate. Return: nothing; packets land in the queue.
 */
void fp_pump(struct fp_world *w, int from, int n)
{
	struct homa_tx tx;
	int i, len;

	for (i = 0; i < n; i++) {
		uint8_t fate;

		len = homa_engine_output(w->e[from], w->now, w->buf, sizeof(w->buf), &tx);
		if (len < 0)
			fz_fail("output failed with %d", len);
		if (len == 0)
			return;
		if (to_liar(w, &tx))
			continue; /* the liar never answers */
		if (!homa_addr_equal(&tx.dst, &w->addr[!from]) || tx.dport != w->port[!from])
			fz_fail("engine %d sent to a stranger", from);
		fp_liar_sniff(w, from, w->buf, (uint32_t)len);
		fate = fz_u8(&w->in);
		if (fate < 150) {
			enqueue(w, from, w->buf, (uint32_t)len, w->now);
		} else if (fate < 200) {
			continue; /* lost */
		} else if (fate < 220) {
			enqueue(w, from, w->buf, (uint32_t)len, w->now);
			enqueue(w, from, w->buf, (uint32_t)len, w->now + (fate & 7) * 10000ull);
		} else {
			enqueue(w, from, w->buf, (uint32_t)len, w->now + (fate & 31) * 50000ull);
		}
	}
}

/** deliver_at() - Hand queued packet @i to its receiver and remove it. */
static void deliver_at(struct fp_world *w, int i)
{
	struct fp_pkt *p = w->net[i];
	int to = !p->from, r;

	w->net[i] = w->net[--w->nnet];
	r = homa_engine_input(w->e[to], &w->addr[p->from], p->bytes, p->len, w->now);
	if (r != 0 && r < HOMA_INPUT_DROPPED)
		fz_fail("input returned %d", r);
	slot_free(w, p);
}

/**
 * fp_deliver() - Deliver up to @n due packets, each chosen among the due
 * ones by an input byte (so the input reorders them).
 */
void fp_deliver(struct fp_world *w, int n)
{
	int i, j, due[FP_MAX_INFLIGHT], ndue;

	for (i = 0; i < n; i++) {
		ndue = 0;
		for (j = 0; j < w->nnet; j++)
			if (w->net[j]->due <= w->now)
				due[ndue++] = j;
		if (!ndue)
			return;
		deliver_at(w, due[fz_u8(&w->in) % ndue]);
	}
}

/** fp_timers() - Run both engines' timers that are due. */
void fp_timers(struct fp_world *w)
{
	int i, k;

	for (i = 0; i < 2; i++)
		for (k = 0; k < 100 && homa_engine_next_deadline(w->e[i]) <= w->now; k++) {
			homa_engine_on_timer(w->e[i], w->now);
			if (homa_engine_want_output(w->e[i], w->now))
				break;
		}
}

/** next_time() - Earliest moment something is due (engine deadline or packet). */
static uint64_t next_time(const struct fp_world *w)
{
	uint64_t t = homa_engine_next_deadline(w->e[0]);
	uint64_t d = homa_engine_next_deadline(w->e[1]);
	int i;

	if (d < t)
		t = d;
	for (i = 0; i < w->nnet; i++)
		if (w->net[i]->due < t)
			t = w->net[i]->due;
	return t;
}

/**
 * fp_settle_step() - One step of a perfect network: deliver what is due
 * in order, move every packet the engines have, or else jump to the next
 * deadline. Return: false when nothing is left to happen.
 */
bool fp_settle_step(struct fp_world *w)
{
	struct homa_tx tx;
	uint64_t t;
	int i, len, moved = 0;

	for (i = 0; i < w->nnet;) {
		if (w->net[i]->due <= w->now) {
			deliver_at(w, i);
			moved++;
		} else {
			i++;
		}
	}
	for (i = 0; i < 2; i++)
		while ((len = homa_engine_output(w->e[i], w->now, w->buf, sizeof(w->buf), &tx)) > 0) {
			if (!to_liar(w, &tx))
				enqueue(w, i, w->buf, (uint32_t)len, w->now);
			moved++;
		}
	if (moved)
		return true;
	fp_timers(w);
	t = next_time(w);
	if (t == UINT64_MAX)
		return false;
	if (t > w->now)
		w->now = t;
	return true;
}

/** fp_net_free() - Drop every packet still on the wire. */
void fp_net_free(struct fp_world *w)
{
	while (w->nnet)
		slot_free(w, w->net[--w->nnet]);
}
