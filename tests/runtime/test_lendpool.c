/* SPDX-License-Identifier: MIT */
/**
 * @file test_lendpool.c
 * Tests of the UDP driver's lend pool (src/io/lendpool.c), driven the way
 * the driver and the runtime drive it: a batch read into the table's
 * slots, the packets the engine kept marked, settle() before the next
 * read, release() when the engine gives a packet back (before or after
 * that settle, from this thread or another). Covers init's checks, which
 * table entries settle() replaces, slots shared by GRO segments, releases
 * that come before the settle, running out of free slots, the lendable
 * threshold, foreign pointers, and a releasing thread racing the
 * receiving one.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lendpool.h"

/** Bytes per slot in most tests: room for three GRO segments of 1000. */
#define SLOT 4096

/** slot_index() - The slot of @p that @buf lies in (@buf in the arena). */
static uint32_t slot_index(const struct homa_lendpool *p, const uint8_t *buf)
{
	return (uint32_t)((size_t)(buf - p->arena) / p->slot_size);
}

/**
 * pkt() - A received packet of @len bytes at @off in table entry @e's
 * slot, lendable and kept as given (what recv() and the runtime set).
 */
static struct homa_io_rx pkt(const struct homa_lendpool *p, uint32_t e, size_t off,
			     size_t len, bool lendable, bool kept)
{
	struct homa_io_rx r = {.data = p->table[e] + off, .len = len,
			       .lendable = lendable, .kept = kept};

	return r;
}

/** in_table() - Whether slot @s is one of @p's table entries'. */
static bool in_table(const struct homa_lendpool *p, uint32_t s)
{
	for (uint32_t e = 0; e < p->batch; e++)
		if (p->table_slot[e] == s)
			return true;
	return false;
}

/** in_free() - How many times slot @s is on @p's free list. */
static uint32_t in_free(const struct homa_lendpool *p, uint32_t s)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->nfree; i++)
		n += p->free[i] == s;
	return n;
}

/**
 * check_table() - @p's table holds batch distinct slot-aligned addresses
 * inside the arena, each the address of the slot table_slot names.
 */
static void check_table(const struct homa_lendpool *p)
{
	for (uint32_t e = 0; e < p->batch; e++) {
		uint8_t *a = p->table[e];

		assert_true(homa_lendpool_owns(p, a));
		assert_int_equal((size_t)(a - p->arena) % p->slot_size, 0);
		assert_ptr_equal(a, p->arena + (size_t)p->table_slot[e] * p->slot_size);
		for (uint32_t f = 0; f < e; f++)
			assert_ptr_not_equal(p->table[f], a);
	}
}

/**
 * check_partition() - Every slot of @p is either in the table, on the free
 * list, or out (held, or released and not yet taken in): never in two of
 * those, never twice; @out[s] says which slots are out (NULL: none).
 */
static void check_partition(const struct homa_lendpool *p, const bool *out)
{
	uint32_t nout = 0;

	check_table(p);
	for (uint32_t s = 0; s < p->nslots; s++) {
		uint32_t where = in_table(p, s) + in_free(p, s) + (out && out[s]);

		assert_int_equal(where, 1);
		nout += out && out[s];
	}
	assert_int_equal(homa_lendpool_held(p), nout);
}

/**
 * homa_lendpool_init__refuses_zero_and_too_many() - batch 0, extra 0,
 * slot_size 0 and extra above HOMA_LEND_SLOTS_MAX are HOMA_EINVAL, and
 * leave a pool that owns nothing and may be freed.
 */
static void homa_lendpool_init__refuses_zero_and_too_many(void **state)
{
	struct homa_lendpool p;
	uint8_t byte = 0;

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 0, 8, SLOT), HOMA_EINVAL);
	assert_int_equal(homa_lendpool_init(&p, 8, 0, SLOT), HOMA_EINVAL);
	assert_int_equal(homa_lendpool_init(&p, 8, 8, 0), HOMA_EINVAL);
	assert_int_equal(homa_lendpool_init(&p, 8, HOMA_LEND_SLOTS_MAX + 1, SLOT),
			 HOMA_EINVAL);
	assert_null(p.arena);
	assert_false(homa_lendpool_owns(&p, &byte));
	homa_lendpool_free(&p);
	/* the largest extra is allowed (the mapping is reserved, not touched) */
	assert_int_equal(homa_lendpool_init(&p, 1, HOMA_LEND_SLOTS_MAX, 64), 0);
	homa_lendpool_free(&p);
}

/**
 * homa_lendpool_init__table_of_distinct_slots() - A good init: the table
 * holds batch distinct slot-aligned addresses in the arena, the other
 * extra slots are free, nothing is held, and lending is possible exactly
 * when extra >= batch.
 */
static void homa_lendpool_init__table_of_distinct_slots(void **state)
{
	struct homa_lendpool p;

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 16, 16, SLOT), 0);
	assert_int_equal(p.nslots, 32);
	assert_true(p.arena_len >= 32 * (size_t)SLOT);
	check_partition(&p, NULL);
	assert_int_equal(p.nfree, 16);
	assert_int_equal(homa_lendpool_held(&p), 0);
	assert_int_equal(homa_lendpool_spare(&p), 16);
	assert_ptr_equal(p.lend.ctx, &p);
	assert_ptr_equal(p.lend.release, homa_lendpool_release);
	/* writable where the kernel will write */
	memset(p.table[15], 0xab, SLOT);
	homa_lendpool_free(&p);

	assert_int_equal(homa_lendpool_init(&p, 16, 15, SLOT), 0);
	check_partition(&p, NULL);
	assert_int_equal(homa_lendpool_spare(&p), 15);  /* 15 of a batch's 16 entries may be lent */
	homa_lendpool_free(&p);
}

/**
 * homa_lendpool_settle__no_keeps_changes_nothing() - A batch the engine
 * kept nothing of (lendable or not) leaves every table entry where it
 * was and returns 0; so does an empty batch.
 */
static void homa_lendpool_settle__no_keeps_changes_nothing(void **state)
{
	struct homa_lendpool p;
	struct homa_io_rx pkts[8];
	uint8_t *before[8];

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 8, 8, SLOT), 0);
	memcpy(before, p.table, sizeof(before));
	for (uint32_t e = 0; e < 8; e++)
		pkts[e] = pkt(&p, e, 0, SLOT, e % 2 == 0, false);
	assert_int_equal(homa_lendpool_settle(&p, pkts, 8), 0);
	assert_memory_equal(before, p.table, sizeof(before));
	assert_int_equal(homa_lendpool_settle(&p, pkts, 0), 0);
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	assert_memory_equal(before, p.table, sizeof(before));
	assert_int_equal(homa_lendpool_held(&p), 0);
	assert_int_equal(p.nfree, 8);
	homa_lendpool_free(&p);
}

/**
 * homa_lendpool_settle__replaces_kept_entries_only() - Of a batch where
 * entry 0 has a kept packet, entry 3 two, entry 5 one, entry 1 a
 * lendable packet not kept and entry 2 a kept one not lendable, settle()
 * replaces entries 0, 3 and 5 only (returns 3), each with a slot no other
 * entry has and none of the kept ones; the three kept slots are held,
 * neither in the table nor free.
 */
static void homa_lendpool_settle__replaces_kept_entries_only(void **state)
{
	struct homa_lendpool p;
	struct homa_io_rx pkts[8];
	uint8_t *before[8];
	bool out[24] = {false};
	int n = 0;

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 8, 16, SLOT), 0);
	memcpy(before, p.table, sizeof(before));
	pkts[n++] = pkt(&p, 0, 0, SLOT, true, true);
	pkts[n++] = pkt(&p, 1, 0, SLOT, true, false);
	pkts[n++] = pkt(&p, 2, 0, SLOT, false, true);
	pkts[n++] = pkt(&p, 3, 0, 1000, true, true);
	pkts[n++] = pkt(&p, 3, 1000, 1000, true, true);
	pkts[n++] = pkt(&p, 4, 0, 100, false, false);
	pkts[n++] = pkt(&p, 5, 0, SLOT, true, true);
	assert_int_equal(homa_lendpool_settle(&p, pkts, n), 3);
	for (uint32_t e = 0; e < 8; e++) {
		bool moved = e == 0 || e == 3 || e == 5;

		if (!moved) {
			assert_ptr_equal(p.table[e], before[e]);
			continue;
		}
		assert_ptr_not_equal(p.table[e], before[e]);
		for (uint32_t f = 0; f < 8; f++)  /* none of the kept slots */
			assert_ptr_not_equal(p.table[e], before[f]);
		out[slot_index(&p, before[e])] = true;
	}
	check_partition(&p, out);
	assert_int_equal(homa_lendpool_held(&p), 3);
	assert_int_equal(p.nfree, 13);
	homa_lendpool_free(&p);
}

/**
 * homa_lendpool_release__last_segment_frees_slot() - A slot holding three
 * kept GRO segments (at +0, +1000 and +2000) stays held while any of
 * them is kept, the settles between releases notwithstanding; once the
 * last is released, the next settle frees it (held() drops to 0), and
 * later batches, kept and released in turn, bring it back into the table.
 */
static void homa_lendpool_release__last_segment_frees_slot(void **state)
{
	struct homa_lendpool p;
	struct homa_io_rx pkts[4];
	bool out[6] = {false}, back = false;
	uint32_t s;

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 2, 4, SLOT), 0);
	s = p.table_slot[0];
	for (int i = 0; i < 3; i++)
		pkts[i] = pkt(&p, 0, 1000 * (size_t)i, 1000, true, true);
	pkts[3] = pkt(&p, 1, 0, 1000, true, false);
	assert_int_equal(homa_lendpool_settle(&p, pkts, 4), 1);
	out[s] = true;
	check_partition(&p, out);
	homa_lendpool_release(&p, pkts[0].data);
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	check_partition(&p, out);
	homa_lendpool_release(&p, pkts[2].data);
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	check_partition(&p, out);
	assert_int_equal(homa_lendpool_held(&p), 1);
	homa_lendpool_release(&p, pkts[1].data);
	assert_int_equal(homa_lendpool_held(&p), 1);  /* as of the latest settle */
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	out[s] = false;
	check_partition(&p, out);
	assert_int_equal(homa_lendpool_held(&p), 0);
	assert_int_equal(in_free(&p, s), 1);
	/* drain: entry 0 kept and given back, batch after batch */
	for (uint32_t i = 0; i < p.nslots && !back; i++) {
		pkts[0] = pkt(&p, 0, 0, SLOT, true, true);
		assert_int_equal(homa_lendpool_settle(&p, pkts, 1), 1);
		homa_lendpool_release(&p, pkts[0].data);
		back = in_table(&p, s);
	}
	assert_true(back);
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	check_partition(&p, NULL);
	homa_lendpool_free(&p);
}

/**
 * homa_lendpool_release__before_settle_frees_once() - A packet the engine
 * gives back before the driver's next settle: its slot (and one of two
 * packets released before, the other after) ends up free exactly once,
 * neither held nor lost.
 */
static void homa_lendpool_release__before_settle_frees_once(void **state)
{
	struct homa_lendpool p;
	struct homa_io_rx pkts[3];
	bool out[12] = {false};
	uint32_t s0, s1;

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 4, 8, SLOT), 0);
	s0 = p.table_slot[0];
	s1 = p.table_slot[1];
	pkts[0] = pkt(&p, 0, 0, SLOT, true, true);
	pkts[1] = pkt(&p, 1, 0, 2000, true, true);
	pkts[2] = pkt(&p, 1, 2000, 2000, true, true);
	homa_lendpool_release(&p, pkts[0].data);
	homa_lendpool_release(&p, pkts[2].data);
	assert_int_equal(homa_lendpool_settle(&p, pkts, 3), 2);
	out[s1] = true;
	check_partition(&p, out);
	assert_int_equal(in_table(&p, s0) + in_free(&p, s0), 1);
	assert_int_equal(homa_lendpool_held(&p), 1);
	homa_lendpool_release(&p, pkts[1].data);
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	out[s1] = false;
	check_partition(&p, out);
	assert_int_equal(p.nfree, 8);
	homa_lendpool_free(&p);
}

/** Packets the churn test keeps out at once, at most. */
#define CHURN_KEPT 1024
/** Slots beyond the table's in the churn test: few, so that it runs short. */
#define CHURN_EXTRA 16

/** next_rand() - The next value of the tests' linear congruential sequence @x. */
static uint32_t next_rand(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 8;
}

/**
 * churn_batch() - One batch of the churn test: 1..3 segments per table
 * entry, the entries lendable while the pool has spare slots for them
 * (as the UDP driver marks them), each segment of a lendable one kept
 * with probability 1/3; kept packets counted in @refs and added to
 * @kept (@nkept). Return: packets.
 */
static int churn_batch(const struct homa_lendpool *p, struct homa_io_rx *pkts, uint32_t *x,
		       uint32_t *refs, uint8_t **kept, uint32_t *nkept)
{
	uint32_t credit = homa_lendpool_spare(p);
	int n = 0;

	for (uint32_t e = 0; e < p->batch; e++) {
		uint32_t segs = 1 + next_rand(x) % 3;
		bool lend = credit > 0;

		credit -= lend;
		/* nothing kept may be in the table: the slot would be read into */
		assert_int_equal(refs[p->table_slot[e]], 0);
		for (uint32_t g = 0; g < segs; g++) {
			bool keep = lend && next_rand(x) % 3 == 0;

			pkts[n] = pkt(p, e, g * 1000, 1000, lend, keep);
			if (keep) {
				refs[slot_index(p, pkts[n].data)]++;
				kept[(*nkept)++] = pkts[n].data;
			}
			n++;
		}
	}
	return n;
}

/**
 * release_some() - Give back each of the @nkept packets in @kept with
 * probability 1/4 (all if @all), uncounting them in @refs.
 */
static void release_some(struct homa_lendpool *p, uint32_t *x, uint32_t *refs,
			 uint8_t **kept, uint32_t *nkept, bool all)
{
	for (uint32_t i = 0; i < *nkept;) {
		if (!all && next_rand(x) % 4) {
			i++;
			continue;
		}
		refs[slot_index(p, kept[i])]--;
		homa_lendpool_release(p, kept[i]);
		kept[i] = kept[--*nkept];
	}
}

/**
 * homa_lendpool_settle__churn_never_reuses_held() - 2,000 batches whose
 * packets are kept at random and given back at random, some before the
 * settle that follows their batch and some batches later: after every
 * settle each slot is in exactly one place (table, free list, held),
 * held() is the number of slots with a packet still kept, and no table
 * entry reads into a slot still held; at the end every slot is back.
 */
static void homa_lendpool_settle__churn_never_reuses_held(void **state)
{
	static struct homa_io_rx pkts[8 * 3];
	static uint8_t *kept[CHURN_KEPT];
	static uint32_t refs[8 + CHURN_EXTRA];
	static bool out[8 + CHURN_EXTRA];
	struct homa_lendpool p;
	uint32_t x = 4242, nkept = 0, lent = 0, cut = 0;

	(void)state;
	memset(refs, 0, sizeof(refs));
	assert_int_equal(homa_lendpool_init(&p, 8, CHURN_EXTRA, SLOT), 0);
	for (int b = 0; b < 2000; b++) {
		uint32_t nout = 0;
		int n = churn_batch(&p, pkts, &x, refs, kept, &nkept);

		lent += pkts[0].lendable;
		cut += !pkts[n - 1].lendable;  /* spare ran out before the batch's last entry */
		release_some(&p, &x, refs, kept, &nkept, false);  /* some before the settle */
		homa_lendpool_settle(&p, pkts, n);
		for (uint32_t s = 0; s < p.nslots; s++) {
			out[s] = refs[s] > 0;
			nout += out[s];
		}
		check_partition(&p, out);
		assert_int_equal(homa_lendpool_held(&p), nout);
		release_some(&p, &x, refs, kept, &nkept, false);  /* some after */
	}
	assert_true(lent > 100);  /* the pool did lend, and ran short at times */
	assert_true(cut > 0);
	release_some(&p, &x, refs, kept, &nkept, true);
	homa_lendpool_settle(&p, NULL, 0);
	check_partition(&p, NULL);
	assert_int_equal(p.nfree, CHURN_EXTRA);
	homa_lendpool_free(&p);
}

/**
 * homa_lendpool_spare__counts_down_when_exhausted() - With batch 4 and
 * extra 10, two batches kept whole and never given back leave 2 spare
 * slots (8 held): the next batch may lend 2 entries, and then none
 * (10 held); releases bring spare slots back only at the next settle.
 */
static void homa_lendpool_spare__counts_down_when_exhausted(void **state)
{
	struct homa_lendpool p;
	struct homa_io_rx pkts[3][4], unlent;

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 4, 10, SLOT), 0);
	for (int r = 0; r < 2; r++) {
		assert_int_equal(homa_lendpool_spare(&p), 10 - 4 * r);
		for (uint32_t e = 0; e < 4; e++)
			pkts[r][e] = pkt(&p, e, 0, SLOT, true, true);
		assert_int_equal(homa_lendpool_settle(&p, pkts[r], 4), 4);
	}
	assert_int_equal(homa_lendpool_held(&p), 8);
	assert_int_equal(homa_lendpool_spare(&p), 2);
	for (uint32_t e = 0; e < 4; e++)  /* only two entries may be lent */
		pkts[2][e] = pkt(&p, e, 0, SLOT, e < 2, e < 2);
	assert_int_equal(homa_lendpool_settle(&p, pkts[2], 4), 2);
	assert_int_equal(homa_lendpool_spare(&p), 0);
	assert_int_equal(homa_lendpool_held(&p), 10);
	/* a batch read meanwhile is not lendable: nothing kept, nothing moves */
	unlent = pkt(&p, 0, 0, SLOT, false, false);
	assert_int_equal(homa_lendpool_settle(&p, &unlent, 1), 0);
	homa_lendpool_release(&p, pkts[2][0].data);
	homa_lendpool_release(&p, pkts[2][1].data);
	assert_int_equal(homa_lendpool_spare(&p), 0);  /* not taken in yet */
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	assert_int_equal(homa_lendpool_spare(&p), 2);
	homa_lendpool_release(&p, pkts[0][0].data);
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	assert_int_equal(homa_lendpool_spare(&p), 3);
	assert_int_equal(homa_lendpool_held(&p), 7);
	homa_lendpool_release(&p, pkts[0][1].data);
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	assert_int_equal(homa_lendpool_held(&p), 6);
	for (uint32_t e = 2; e < 4; e++)
		homa_lendpool_release(&p, pkts[0][e].data);
	for (uint32_t e = 0; e < 4; e++)
		homa_lendpool_release(&p, pkts[1][e].data);
	homa_lendpool_settle(&p, NULL, 0);
	check_partition(&p, NULL);
	homa_lendpool_free(&p);
}

/**
 * homa_lendpool_lendable__quarter_of_slot() - A datagram is lendable when
 * len * HOMA_LEND_MIN_FRACTION reaches the slot size, and not one byte
 * shorter; also with a slot size the fraction does not divide.
 */
static void homa_lendpool_lendable__quarter_of_slot(void **state)
{
	struct homa_lendpool p;
	size_t q = SLOT / HOMA_LEND_MIN_FRACTION;

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 1, 1, SLOT), 0);
	assert_true(homa_lendpool_lendable(&p, q));
	assert_false(homa_lendpool_lendable(&p, q - 1));
	assert_true(homa_lendpool_lendable(&p, SLOT));
	assert_false(homa_lendpool_lendable(&p, 0));
	homa_lendpool_free(&p);
	assert_int_equal(homa_lendpool_init(&p, 1, 1, SLOT + 1), 0);
	assert_true(homa_lendpool_lendable(&p, q + 1));  /* rounds up */
	assert_false(homa_lendpool_lendable(&p, q));
	homa_lendpool_free(&p);
}

/**
 * homa_lendpool_release__foreign_pointer_ignored() - release() of an
 * address outside the arena (just before, one past the end, on the
 * stack, another pool's slot) changes no count: the held slot stays held
 * until its own packet is given back.
 */
static void homa_lendpool_release__foreign_pointer_ignored(void **state)
{
	struct homa_lendpool p, other;
	struct homa_io_rx kept;
	uint32_t refs[4];
	uint8_t local[16];

	(void)state;
	assert_int_equal(homa_lendpool_init(&p, 2, 2, SLOT), 0);
	assert_int_equal(homa_lendpool_init(&other, 2, 2, SLOT), 0);
	kept = pkt(&p, 0, 0, SLOT, true, true);
	assert_int_equal(homa_lendpool_settle(&p, &kept, 1), 1);
	memcpy(refs, p.refs, sizeof(refs));
	homa_lendpool_release(&p, (uint8_t *)((uintptr_t)p.arena - 1));
	homa_lendpool_release(&p, p.arena + p.arena_len);
	homa_lendpool_release(&p, local);
	homa_lendpool_release(&p, other.table[0]);
	homa_lendpool_release(&p, NULL);
	assert_memory_equal(refs, p.refs, sizeof(refs));
	assert_int_equal(p.nret, 0);
	assert_int_equal(homa_lendpool_settle(&p, NULL, 0), 0);
	assert_int_equal(homa_lendpool_held(&p), 1);
	homa_lendpool_release(&p, kept.data);
	homa_lendpool_settle(&p, NULL, 0);
	assert_int_equal(homa_lendpool_held(&p), 0);
	check_partition(&p, NULL);
	check_partition(&other, NULL);
	homa_lendpool_free(&other);
	homa_lendpool_free(&p);
}

/** Batches the receiving thread settles in the concurrency test. */
#define RACE_BATCHES 20000
/** Packets the concurrency test's queue holds. */
#define RACE_QUEUE 512

/** The queue from the receiving thread to the releasing one. */
struct race {
	struct homa_lendpool *p;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint8_t *q[RACE_QUEUE];
	uint32_t head, n;      /**< under lock */
	bool done;             /**< under lock */
	uint64_t released;     /**< the releasing thread's */
};

/** race_push() - Queue @buf for release (waits while the queue is full). */
static void race_push(struct race *r, uint8_t *buf)
{
	pthread_mutex_lock(&r->lock);
	while (r->n == RACE_QUEUE)
		pthread_cond_wait(&r->cond, &r->lock);
	r->q[(r->head + r->n++) % RACE_QUEUE] = buf;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/** race_release_main() - Release what is queued until done and empty. */
static void *race_release_main(void *arg)
{
	struct race *r = arg;

	for (;;) {
		uint8_t *buf;

		pthread_mutex_lock(&r->lock);
		while (!r->n && !r->done)
			pthread_cond_wait(&r->cond, &r->lock);
		if (!r->n) {
			pthread_mutex_unlock(&r->lock);
			return NULL;
		}
		buf = r->q[r->head];
		r->head = (r->head + 1) % RACE_QUEUE;
		r->n--;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		homa_lendpool_release(r->p, buf);
		r->released++;
	}
}

/**
 * race_batch() - Batch @b of the concurrency test, read into @p's table
 * (two segments per entry, each written as the kernel would) and all of
 * it kept: every packet goes to @r's releasing thread before the settle
 * that follows, which may give it back before or after that settle.
 * Waits first, as receives that find nothing do, until the pool can lend.
 */
static void race_batch(struct race *r, struct homa_lendpool *p, int b)
{
	struct homa_io_rx pkts[16];
	int n = 0;

	while (homa_lendpool_spare(p) < p->batch) {
		homa_lendpool_settle(p, NULL, 0);
		sched_yield();
	}
	for (uint32_t e = 0; e < p->batch; e++)
		for (size_t off = 0; off < 256; off += 128) {
			pkts[n] = pkt(p, e, off, 128, true, true);
			p->table[e][off] = (uint8_t)b;
			race_push(r, pkts[n].data);
			n++;
		}
	assert_int_equal(homa_lendpool_settle(p, pkts, n), p->batch);
}

/**
 * homa_lendpool_release__from_another_thread() - The receiving thread
 * settles RACE_BATCHES batches of 8 entries, every packet kept, while a
 * second thread releases them (release() racing leave_table() and
 * take_returned(), the same slot's refs touched by both). Once the
 * releaser is joined and a last settle took its releases in, every
 * packet was released, nothing is held, and every slot is in the table
 * or free, once.
 */
static void homa_lendpool_release__from_another_thread(void **state)
{
	static struct race r;
	struct homa_lendpool p;
	pthread_t thread;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(homa_lendpool_init(&p, 8, 32, 256), 0);
	r.p = &p;
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	assert_int_equal(pthread_create(&thread, NULL, race_release_main, &r), 0);
	for (int b = 0; b < RACE_BATCHES; b++)
		race_batch(&r, &p, b);
	pthread_mutex_lock(&r.lock);
	r.done = true;
	pthread_cond_broadcast(&r.cond);
	pthread_mutex_unlock(&r.lock);
	pthread_join(thread, NULL);
	assert_int_equal(r.released, (uint64_t)RACE_BATCHES * 16);
	homa_lendpool_settle(&p, NULL, 0);
	assert_int_equal(homa_lendpool_held(&p), 0);
	check_partition(&p, NULL);
	assert_int_equal(p.nfree, 32);
	pthread_cond_destroy(&r.cond);
	pthread_mutex_destroy(&r.lock);
	homa_lendpool_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_lendpool_init__refuses_zero_and_too_many),
		cmocka_unit_test(homa_lendpool_init__table_of_distinct_slots),
		cmocka_unit_test(homa_lendpool_settle__no_keeps_changes_nothing),
		cmocka_unit_test(homa_lendpool_settle__replaces_kept_entries_only),
		cmocka_unit_test(homa_lendpool_release__last_segment_frees_slot),
		cmocka_unit_test(homa_lendpool_release__before_settle_frees_once),
		cmocka_unit_test(homa_lendpool_settle__churn_never_reuses_held),
		cmocka_unit_test(homa_lendpool_spare__counts_down_when_exhausted),
		cmocka_unit_test(homa_lendpool_lendable__quarter_of_slot),
		cmocka_unit_test(homa_lendpool_release__foreign_pointer_ignored),
		cmocka_unit_test(homa_lendpool_release__from_another_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
