/* SPDX-License-Identifier: MIT */
/**
 * @file test_cache.c
 * The engine's free lists of small per-RPC records (src/core/cache.c):
 * a steady stream of small RPCs allocates through the hooks only for its
 * messages, the lists stay bounded, and everything they keep goes back to
 * the hooks when the engine is freed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "internal.h"

/** Allocation hooks that count calls and bytes outstanding. */
struct counter {
	uint64_t allocs, frees;
	int64_t bytes;
};

/** count_alloc() - malloc, counted. */
static void *count_alloc(void *ctx, size_t size)
{
	struct counter *c = ctx;

	c->allocs++;
	c->bytes += (int64_t)size;
	return malloc(size);
}

/** count_free() - free, counted. */
static void count_free(void *ctx, void *p, size_t size)
{
	struct counter *c = ctx;

	c->frees++;
	c->bytes -= (int64_t)size;
	free(p);
}

/** pair_with_hooks() - A th_pair whose engines allocate through counting hooks @c. */
static void pair_with_hooks(struct th_pair *p, struct counter *c, struct homa_alloc *a)
{
	a->alloc = count_alloc;
	a->free = count_free;
	a->ctx = c;
	th_pair_init(p, NULL);
	for (int i = 0; i < 2; i++) {
		homa_engine_free(p->e[i]);
		assert_int_equal(homa_engine_new(&p->e[i], NULL, &p->addr[i], p->port[i], a, 0), 0);
	}
	homa_engine_set_server(p->e[1], true);
	p->echo = true;
}

/**
 * cache__allocs_per_small_rpc() - After the first RPC, a 100-byte echo RPC
 * allocates through the hooks only its four messages (request and reply,
 * each once on each side: a record and its chunk, or a borrowed record),
 * at most 8 allocations for both engines: its RPCs, event nodes and RPC
 * groups come from the free lists.
 */
static void cache__allocs_per_small_rpc(void **state)
{
	struct counter c = {0};
	struct homa_alloc a;
	struct th_pair p;
	uint64_t before;
	const int n = 50;

	(void)state;
	pair_with_hooks(&p, &c, &a);
	assert_true(th_echo_rpc(&p, 1));
	before = c.allocs;
	for (int i = 0; i < n; i++)
		assert_true(th_echo_rpc(&p, 2 + (uint32_t)i));
	print_message("hook allocations per RPC: %.2f\n", (double)(c.allocs - before) / n);
	assert_true(c.allocs - before <= 8 * (uint64_t)n);
	assert_true(p.e[0]->cache_reused >= 2 * (uint64_t)n);
	assert_true(p.e[1]->cache_reused >= 2 * (uint64_t)n);
	th_pair_free(&p);
	assert_int_equal(c.allocs, c.frees);
	assert_int_equal(c.bytes, 0);
}

/**
 * cache__bounded_and_drained() - Many RPCs freed at once leave at most
 * HOMA_CACHE_MAX records of each kind kept; the rest go back to the hooks,
 * and homa_engine_free() returns the kept ones (nothing leaks).
 */
static void cache__bounded_and_drained(void **state)
{
	homa_addr local = homa_addr_ipv4(0x0a000001), far = homa_addr_ipv4(0x0a000002);
	struct homa_rpc *r[3 * HOMA_CACHE_MAX];
	struct counter c = {0};
	struct homa_alloc a = {count_alloc, count_free, &c};
	homa_engine *e;
	uint64_t frees;

	(void)state;
	assert_int_equal(homa_engine_new(&e, NULL, &local, 4000, &a, 0), 0);
	for (int i = 0; i < 3 * HOMA_CACHE_MAX; i++) {
		r[i] = homa_rpc_new(e, 2 * (uint64_t)i + 2, homa_peer_get(e, &far),
				    (uint16_t)(5000 + i));
		assert_non_null(r[i]);
	}
	frees = c.frees;
	for (int i = 0; i < 3 * HOMA_CACHE_MAX; i++)
		homa_rpc_free(e, r[i]);
	assert_int_equal(e->rpc_cache.count, HOMA_CACHE_MAX);
	assert_int_equal(e->ev_cache.count, HOMA_CACHE_MAX);
	assert_int_equal(e->pport_cache.count, HOMA_CACHE_MAX);
	/* three kinds, each 3 x HOMA_CACHE_MAX freed, HOMA_CACHE_MAX kept */
	assert_true(c.frees - frees >= 3 * 2 * HOMA_CACHE_MAX);
	/* reused records come back zeroed where the engine needs it */
	r[0] = homa_rpc_new(e, 2, homa_peer_get(e, &far), 5000);
	assert_non_null(r[0]);
	assert_int_equal(r[0]->state, 0);
	assert_int_equal(r[0]->in.length, 0);
	assert_int_equal(r[0]->done_f, 0);
	assert_int_equal(e->rpc_cache.count, HOMA_CACHE_MAX - 1);
	homa_engine_free(e);
	assert_int_equal(c.allocs, c.frees);
	assert_int_equal(c.bytes, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cache__allocs_per_small_rpc),
		cmocka_unit_test(cache__bounded_and_drained),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
