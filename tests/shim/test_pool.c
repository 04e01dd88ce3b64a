/* SPDX-License-Identifier: MIT */
/**
 * @file test_pool.c
 * The receive region's bpage bookkeeping (src/shim/pool.c): whole bpages
 * lowest first, tails sharing a bpage, the checks on offsets given back,
 * and that every byte comes back; the receive hooks that place arriving
 * messages in the region, and adopting them for the application.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "homa/engine.h"
#include "shim.h"

#define NPAGES 40

static char *region;

/** fresh() - A pool over the NPAGES-bpage test region. */
static struct shim_pool fresh(void)
{
	struct shim_pool p;

	memset(&p, 0, sizeof(p));
	assert_int_equal(shim_pool_set(&p, region, (uint64_t)NPAGES * HOMA_BPAGE_SIZE, 0), 0);
	return p;
}

static void test_set_checks(void **state)
{
	struct shim_pool p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(shim_pool_set(&p, region + 1, 10 * HOMA_BPAGE_SIZE, 0), EINVAL);
	assert_int_equal(shim_pool_set(&p, region, 10 * HOMA_BPAGE_SIZE,
				       11 * HOMA_BPAGE_SIZE), EINVAL);
	assert_int_equal(shim_pool_set(&p, region, 0x100000001ULL, 0), EINVAL);
	assert_int_equal(shim_pool_set(&p, region, 10 * HOMA_BPAGE_SIZE, 0), 0);
	assert_int_equal(shim_pool_set(&p, region, 10 * HOMA_BPAGE_SIZE, 0), EINVAL);
	shim_pool_destroy(&p);
}

static void test_whole_and_tail(void **state)
{
	struct shim_pool p = fresh();
	uint32_t offs[HOMA_MAX_BPAGES], n, o2[HOMA_MAX_BPAGES], n2;

	(void)state;
	assert_int_equal(shim_pool_alloc(&p, 2 * HOMA_BPAGE_SIZE + 100, offs, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(offs[0], 0);
	assert_int_equal(offs[1], HOMA_BPAGE_SIZE);
	assert_int_equal(offs[2] >> HOMA_BPAGE_SHIFT, 2);  /* tail in the next bpage */
	/* A second tail shares that bpage, after the first. */
	assert_int_equal(shim_pool_alloc(&p, 50, o2, &n2), 0);
	assert_int_equal(n2, 1);
	assert_int_equal(o2[0], offs[2] + 100);
	assert_int_equal(shim_pool_avail(&p),
			 (uint64_t)(NPAGES - 3) * HOMA_BPAGE_SIZE + HOMA_BPAGE_SIZE - 150);
	/* Whole bpages come back at once; the shared one only with both tails. */
	assert_int_equal(shim_pool_free(&p, offs, 3), 0);
	assert_int_equal(shim_pool_alloc(&p, HOMA_BPAGE_SIZE, offs, &n), 0);
	assert_int_equal(offs[0], 0);                      /* lowest first */
	assert_int_equal(shim_pool_free(&p, offs, 1), 0);
	assert_int_equal(shim_pool_free(&p, o2, 1), 0);
	assert_int_equal(shim_pool_avail(&p),
			 (uint64_t)(NPAGES - 1) * HOMA_BPAGE_SIZE + HOMA_BPAGE_SIZE - 150);
	shim_pool_destroy(&p);
}

static void test_free_checks(void **state)
{
	struct shim_pool p = fresh();
	uint32_t offs[HOMA_MAX_BPAGES], n, bad[2];

	(void)state;
	assert_int_equal(shim_pool_alloc(&p, HOMA_BPAGE_SIZE, offs, &n), 0);
	bad[0] = NPAGES * HOMA_BPAGE_SIZE;                 /* outside the region */
	assert_int_equal(shim_pool_free(&p, bad, 1), EINVAL);
	bad[0] = 5 * HOMA_BPAGE_SIZE;                      /* not handed out */
	assert_int_equal(shim_pool_free(&p, bad, 1), EINVAL);
	bad[0] = offs[0];
	bad[1] = offs[0];                                  /* twice in one call */
	assert_int_equal(shim_pool_free(&p, bad, 2), EINVAL);
	/* A rejected call frees nothing: the good offset is still held. */
	assert_int_equal(shim_pool_free(&p, offs, 1), 0);
	assert_int_equal(shim_pool_free(&p, offs, 1), EINVAL);  /* already back */
	shim_pool_destroy(&p);
}

static void test_exhaustion(void **state)
{
	struct shim_pool p = fresh();
	uint32_t offs[NPAGES][HOMA_MAX_BPAGES], n[NPAGES], x[HOMA_MAX_BPAGES], nx;
	int got = 0;

	(void)state;
	while (got < NPAGES && shim_pool_alloc(&p, 4 * HOMA_BPAGE_SIZE, offs[got], &n[got]) == 0)
		got++;
	assert_int_equal(got, NPAGES / 4);
	assert_int_equal(shim_pool_alloc(&p, 1, x, &nx), ENOMEM);
	assert_int_equal(shim_pool_avail(&p), 0);
	for (int i = 0; i < got; i++)
		assert_int_equal(shim_pool_free(&p, offs[i], n[i]), 0);
	assert_int_equal(shim_pool_avail(&p), (uint64_t)NPAGES * HOMA_BPAGE_SIZE);
	/* Longer than HOMA_MAX_BPAGES bpages never fits. */
	assert_int_equal(shim_pool_alloc(&p, HOMA_MAX_BPAGES * HOMA_BPAGE_SIZE + 1, x, &nx),
			 ENOMEM);
	shim_pool_destroy(&p);
}

/**
 * test_rx_hooks_in_place() - A message received through the hooks lies in
 * the region (a whole bpage per 64 KiB piece, its tail in a shared one);
 * the application cannot give back what the runtime holds; once adopted
 * and released by the runtime, the bpages are the application's until
 * recvmsg() gives them back, and then every byte is free again.
 */
static void test_rx_hooks_in_place(void **state)
{
	struct shim_pool p;
	struct homa_alloc a;
	const void *ptrs[3];
	uint32_t lens[3] = {HOMA_BPAGE_SIZE, HOMA_BPAGE_SIZE, 100}, offs[3];
	bool copy[3];
	uint64_t all = (uint64_t)NPAGES * HOMA_BPAGE_SIZE;

	(void)state;
	shim_pool_init(&p);
	assert_int_equal(shim_pool_set(&p, region, all, 0), 0);
	shim_pool_hooks(&p, &a);
	for (int i = 0; i < 3; i++)
		ptrs[i] = a.alloc(a.ctx, lens[i]);
	assert_ptr_equal(ptrs[0], region);
	assert_ptr_equal(ptrs[1], region + HOMA_BPAGE_SIZE);
	assert_ptr_equal(ptrs[2], region + 2 * HOMA_BPAGE_SIZE);
	offs[0] = 0;
	assert_int_equal(shim_pool_free(&p, offs, 1), EINVAL); /* the runtime's, not the app's */
	assert_int_equal(shim_pool_place(&p, ptrs, lens, 3, offs, copy), 0);
	assert_false(copy[0] || copy[1] || copy[2]);
	assert_int_equal(offs[0], 0);
	assert_int_equal(offs[1], HOMA_BPAGE_SIZE);
	assert_int_equal(offs[2], 2 * HOMA_BPAGE_SIZE);
	for (int i = 0; i < 3; i++)
		a.free(a.ctx, (void *)ptrs[i], lens[i]);
	assert_int_equal(shim_pool_avail(&p), all - 2 * HOMA_BPAGE_SIZE - 100);
	assert_int_equal(shim_pool_free(&p, offs, 3), 0);
	assert_int_equal(shim_pool_free(&p, offs, 1), EINVAL);   /* already back */
	assert_int_equal(shim_pool_avail(&p), all - 100);        /* the shared bpage's used part */
	shim_pool_destroy(&p);
}

/**
 * test_rx_hooks_outside() - Before a region is registered, and when it is
 * full, pieces come from malloc: they get new room to be copied into (none
 * while the region is full) and the free hook gives them back to the C
 * library (ASan checks).
 */
static void test_rx_hooks_outside(void **state)
{
	struct shim_pool p;
	struct homa_alloc a;
	const void *ptrs[NPAGES + 1];
	uint32_t len = HOMA_BPAGE_SIZE, offs[1];
	bool copy[1];
	void *early;

	(void)state;
	shim_pool_init(&p);
	shim_pool_hooks(&p, &a);
	early = a.alloc(a.ctx, HOMA_BPAGE_SIZE);
	assert_non_null(early);
	assert_int_equal(shim_pool_set(&p, region, (uint64_t)NPAGES * HOMA_BPAGE_SIZE, 0), 0);
	assert_int_equal(shim_pool_place(&p, (const void *const *)&early, &len, 1, offs, copy), 0);
	assert_true(copy[0]);
	assert_int_equal(shim_pool_free(&p, offs, 1), 0);
	a.free(a.ctx, early, HOMA_BPAGE_SIZE);
	for (int i = 0; i <= NPAGES; i++)
		ptrs[i] = a.alloc(a.ctx, len);
	assert_true((char *)ptrs[NPAGES] < region ||
		    (char *)ptrs[NPAGES] >= region + (uint64_t)NPAGES * HOMA_BPAGE_SIZE);
	assert_int_equal(shim_pool_place(&p, &ptrs[NPAGES], &len, 1, offs, copy), ENOMEM);
	assert_int_equal(shim_pool_avail(&p), 0);
	for (int i = 0; i <= NPAGES; i++)
		a.free(a.ctx, (void *)ptrs[i], len);
	assert_int_equal(shim_pool_avail(&p), (uint64_t)NPAGES * HOMA_BPAGE_SIZE);
	shim_pool_destroy(&p);
}

/**
 * test_place_partly_outside() - A message whose first pieces arrived in
 * the region and whose last arrived outside it (another message filled the
 * region meanwhile) needs room only for that last piece: it fits when one
 * bpage is free, where a copy of the whole message would not.
 */
static void test_place_partly_outside(void **state)
{
	struct shim_pool p;
	struct homa_alloc a;
	const void *mine[3], *other[NPAGES];
	uint32_t lens[3] = {HOMA_BPAGE_SIZE, HOMA_BPAGE_SIZE, HOMA_BPAGE_SIZE}, offs[3];
	bool copy[3];

	(void)state;
	p = fresh();
	shim_pool_hooks(&p, &a);
	mine[0] = a.alloc(a.ctx, HOMA_BPAGE_SIZE);
	mine[1] = a.alloc(a.ctx, HOMA_BPAGE_SIZE);
	for (int i = 0; i < NPAGES - 2; i++)
		other[i] = a.alloc(a.ctx, HOMA_BPAGE_SIZE);
	mine[2] = a.alloc(a.ctx, HOMA_BPAGE_SIZE);          /* the region is full: malloc */
	assert_int_equal(shim_pool_place(&p, mine, lens, 3, offs, copy), ENOMEM);
	a.free(a.ctx, (void *)other[0], HOMA_BPAGE_SIZE);   /* that message was dropped */
	assert_int_equal(shim_pool_avail(&p), HOMA_BPAGE_SIZE);
	assert_int_equal(shim_pool_place(&p, mine, lens, 3, offs, copy), 0);
	assert_false(copy[0] || copy[1]);
	assert_true(copy[2]);
	assert_int_equal(offs[0], 0);
	assert_int_equal(offs[1], HOMA_BPAGE_SIZE);
	assert_int_equal(offs[2], 2 * HOMA_BPAGE_SIZE);    /* the bpage just freed */
	assert_int_equal(shim_pool_avail(&p), 0);
	for (int i = 0; i < 3; i++)
		a.free(a.ctx, (void *)mine[i], HOMA_BPAGE_SIZE);
	for (int i = 1; i < NPAGES - 2; i++)
		a.free(a.ctx, (void *)other[i], HOMA_BPAGE_SIZE);
	assert_int_equal(shim_pool_free(&p, offs, 3), 0);
	assert_int_equal(shim_pool_avail(&p), (uint64_t)NPAGES * HOMA_BPAGE_SIZE);
	shim_pool_destroy(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_checks),
		cmocka_unit_test(test_whole_and_tail),
		cmocka_unit_test(test_free_checks),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_rx_hooks_in_place),
		cmocka_unit_test(test_rx_hooks_outside),
		cmocka_unit_test(test_place_partly_outside),
	};
	int ret;

	region = aligned_alloc(65536, (size_t)NPAGES * HOMA_BPAGE_SIZE);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	free(region);
	return ret;
}
