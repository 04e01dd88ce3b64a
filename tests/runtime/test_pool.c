/* SPDX-License-Identifier: MIT */
/**
 * @file test_pool.c
 * The runtime's chunk cache (src/runtime/pool.c): reuse, its bound, the
 * pass-through of other sizes, the owner's list of small blocks, an
 * engine running on it, and a socket's sent messages built from it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "pool.h"
#include "rt.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
#include <sanitizer/asan_interface.h>
#endif

/**
 * pool__cached_chunk_is_poisoned() - Under AddressSanitizer a chunk in
 * the cache is poisoned past its link word (a write into a freed chunk is
 * reported, not hidden by the cache) and usable again once handed out;
 * drain frees it. Skipped without ASan.
 */
static void pool__cached_chunk_is_poisoned(void **state)
{
#ifdef UNDER_ASAN
	struct rt_pool p;
	struct homa_alloc h;
	uint8_t *a;

	(void)state;
	homa_rt_pool_init(&p, 4 * RT_POOL_BLOCK, &h);
	a = h.alloc(h.ctx, RT_POOL_BLOCK);
	assert_non_null(a);
	assert_false(__asan_address_is_poisoned(a + 100));
	h.free(h.ctx, a, RT_POOL_BLOCK);
	assert_true(__asan_address_is_poisoned(a + sizeof(void *)));
	assert_true(__asan_address_is_poisoned(a + RT_POOL_BLOCK - 1));
	assert_ptr_equal(h.alloc(h.ctx, RT_POOL_BLOCK), a);
	assert_null(__asan_region_is_poisoned(a, RT_POOL_BLOCK));
	memset(a, 0x5a, RT_POOL_BLOCK);
	h.free(h.ctx, a, RT_POOL_BLOCK);
	homa_rt_pool_drain(&p);
#else
	(void)state;
	skip();
#endif
}

/** pool__freed_chunk_is_reused() - A freed chunk comes back on the next chunk allocation. */
static void pool__freed_chunk_is_reused(void **state)
{
	struct rt_pool p;
	struct homa_alloc h;
	void *a, *b;

	(void)state;
	homa_rt_pool_init(&p, 4 * RT_POOL_BLOCK, &h);
	a = h.alloc(h.ctx, RT_POOL_BLOCK);
	assert_non_null(a);
	memset(a, 0x5a, RT_POOL_BLOCK);
	h.free(h.ctx, a, RT_POOL_BLOCK);
	assert_int_equal(p.count, 1);
	b = h.alloc(h.ctx, RT_POOL_BLOCK);
	assert_ptr_equal(a, b);
	assert_int_equal(p.count, 0);
	assert_int_equal(p.reused, 1);
	h.free(h.ctx, b, RT_POOL_BLOCK);
	homa_rt_pool_drain(&p);
	assert_int_equal(p.count, 0);
	assert_null(p.head);
}

/** pool__bound_is_kept() - Frees beyond max_bytes go back to the C library. */
static void pool__bound_is_kept(void **state)
{
	struct rt_pool p;
	struct homa_alloc h;
	void *blk[6];

	(void)state;
	homa_rt_pool_init(&p, 4 * RT_POOL_BLOCK, &h);
	for (int i = 0; i < 6; i++)
		assert_non_null(blk[i] = h.alloc(h.ctx, RT_POOL_BLOCK));
	for (int i = 0; i < 6; i++)
		h.free(h.ctx, blk[i], RT_POOL_BLOCK);
	assert_int_equal(p.count, 4);
	homa_rt_pool_drain(&p);
}

/** pool__other_sizes_pass_through() - Blocks that are not chunks are never cached. */
static void pool__other_sizes_pass_through(void **state)
{
	struct rt_pool p;
	struct homa_alloc h;
	void *a;

	(void)state;
	homa_rt_pool_init(&p, 4 * RT_POOL_BLOCK, &h);
	a = h.alloc(h.ctx, 1000);
	assert_non_null(a);
	h.free(h.ctx, a, 1000);
	assert_int_equal(p.count, 0);
	a = h.alloc(h.ctx, RT_POOL_BLOCK + 1);
	h.free(h.ctx, a, RT_POOL_BLOCK + 1);
	assert_int_equal(p.count, 0);
	assert_int_equal(p.reused, 0);
}

/**
 * pool__small_blocks_reused() - Blocks of at most RT_POOL_SMALL bytes
 * (message records, small messages' chunks) of any size are cached and
 * handed out again for any small size; the cache keeps its bound and
 * drains.
 */
static void pool__small_blocks_reused(void **state)
{
	static void *blk[RT_POOL_SMALL_MAX + 8];
	struct rt_pool p;
	struct homa_alloc h;
	void *a, *b;

	(void)state;
	homa_rt_pool_init(&p, 4 * RT_POOL_BLOCK, &h);
	a = h.alloc(h.ctx, 100);
	assert_non_null(a);
	memset(a, 1, RT_POOL_SMALL);  /* every small block has RT_POOL_SMALL bytes */
	h.free(h.ctx, a, 100);
	assert_int_equal(p.nsmall, 1);
	b = h.alloc(h.ctx, 200);
	assert_ptr_equal(a, b);
	assert_int_equal(p.nsmall, 0);
	assert_int_equal(p.small_mallocs, 1);
	h.free(h.ctx, b, 200);
	for (size_t i = 0; i < RT_POOL_SMALL_MAX + 8; i++)
		blk[i] = h.alloc(h.ctx, 1 + i % RT_POOL_SMALL);
	for (size_t i = 0; i < RT_POOL_SMALL_MAX + 8; i++)
		h.free(h.ctx, blk[i], 1 + i % RT_POOL_SMALL);
	assert_int_equal(p.nsmall, RT_POOL_SMALL_MAX);
	assert_int_equal(p.count, 0);
	homa_rt_pool_drain(&p);
	/* a smaller block from malloc() (another allocator's message) is never cached */
	a = malloc(100);
	assert_non_null(a);
	h.free(h.ctx, a, 100);
	assert_int_equal(p.nsmall, 0);
	homa_rt_pool_drain(&p);
	assert_int_equal(p.nsmall, 0);
	assert_null(p.small);
}

/**
 * pool__owner_list_without_mutex() - A thread holding the pool's owner
 * lock (homa_rt_pool_holder) allocates and frees small blocks on the
 * owner's list without the pool's mutex; an empty list is refilled from
 * the shared one and a full one spills RT_POOL_MOVE blocks to it, one
 * mutex take each; a thread not holding it uses the shared list; drain
 * frees both lists.
 */
static void pool__owner_list_without_mutex(void **state)
{
	static void *blk[RT_POOL_MINE_MAX + 1];
	pthread_mutex_t owner = PTHREAD_MUTEX_INITIALIZER;
	struct rt_pool p;
	struct homa_alloc h;
	void *a, *b;

	(void)state;
	homa_rt_pool_init(&p, 4 * RT_POOL_BLOCK, &h);
	homa_rt_pool_set_outer(&p, &owner);
	a = h.alloc(h.ctx, 100);  /* not the holder: shared list, one take */
	h.free(h.ctx, a, 100);
	assert_int_equal(p.lock_takes, 2);
	assert_int_equal(p.nsmall, 1);
	homa_rt_pool_holder = &owner;
	b = h.alloc(h.ctx, 100);  /* refill from the shared list: one take */
	assert_ptr_equal(a, b);
	assert_int_equal(p.lock_takes, 3);
	for (int i = 0; i < 100; i++) {  /* then neither alloc nor free takes it */
		h.free(h.ctx, b, 100);
		b = h.alloc(h.ctx, 100);
	}
	assert_int_equal(p.lock_takes, 3);
	assert_int_equal(p.mine_reused, 101);
	blk[0] = b;
	for (int i = 1; i <= RT_POOL_MINE_MAX; i++)
		blk[i] = h.alloc(h.ctx, 100);  /* the lists are empty: malloc() */
	assert_int_equal(p.mine_mallocs, RT_POOL_MINE_MAX);
	size_t takes = p.lock_takes;

	for (int i = 0; i <= RT_POOL_MINE_MAX; i++)
		h.free(h.ctx, blk[i], 100);  /* the 65th free spills RT_POOL_MOVE */
	assert_int_equal(p.lock_takes, takes + 1);
	assert_int_equal(p.nsmall, RT_POOL_MOVE);
	assert_int_equal(p.nmine, RT_POOL_MINE_MAX + 1 - RT_POOL_MOVE);
	homa_rt_pool_holder = NULL;
	homa_rt_pool_drain(&p);
	assert_int_equal(p.nmine, 0);
	assert_null(p.mine);
	assert_int_equal(p.nsmall, 0);
}

/**
 * pool__engine_messages_reuse_chunks() - An engine built on the pool
 * stores a second message in the chunks the first one freed.
 */
static void pool__engine_messages_reuse_chunks(void **state)
{
	static uint8_t data[3 << 16];
	struct rt_pool p;
	struct homa_alloc h;
	homa_engine *e;
	homa_addr local = homa_addr_ipv4(0x0a000001), peer = homa_addr_ipv4(0x0a000002);
	struct homa_iov iov = {data, sizeof(data)};
	uint64_t id;

	(void)state;
	homa_rt_pool_init(&p, RT_POOL_MAX_BYTES, &h);
	assert_int_equal(homa_engine_new(&e, NULL, &local, 4000, &h, 0), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(homa_engine_send_request(e, &peer, 4001, &iov, 1, 0, 0, &id), 0);
		assert_int_equal(homa_engine_abort(e, id, 0), 0);
	}
	assert_true(p.reused >= 3);
	homa_engine_free(e);
	homa_rt_pool_drain(&p);
}

/** plain_alloc() - Receive hook of the test below: malloc, outside the socket's cache. */
static void *plain_alloc(void *ctx, size_t size)
{
	(void)ctx;
	return malloc(size);
}

/** plain_free() - Receive hook of the test below: free. */
static void plain_free(void *ctx, void *ptr, size_t size)
{
	(void)ctx;
	(void)size;
	free(ptr);
}

/**
 * pool__sent_messages_reuse_chunks() - A client whose responses land
 * through rx_alloc hooks (as libhoma-linux.so's do, in the application's
 * region) sends four 3-chunk requests, one after the other's response:
 * the later requests are built in the chunks the earlier ones freed, and
 * the cache holds no more than two requests' chunks (whenever the engine
 * frees a request). (Built with malloc,
 * the chunks were never reused: every request faulted in fresh memory
 * once the C library had trimmed the freed ones, and the cache filled up
 * to its bound with chunks nothing took.)
 */
static void pool__sent_messages_reuse_chunks(void **state)
{
	static uint8_t buf[3 << 16];
	struct homa_alloc hooks = {plain_alloc, plain_free, NULL};
	struct homa_open_opts o;
	struct test_server srv;
	struct sockaddr_storage dst;
	struct homa_message m;
	struct homa_rt *rt;
	homa_socket *cli;
	size_t count, reused;
	uint64_t id;

	(void)state;
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.rx_alloc = &hooks;
	assert_int_equal(homa_open(&cli, &o), 0);
	assert_int_equal(test_server_start(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	dst = test_dst(srv.port);
	for (uint64_t i = 0; i < 4; i++) {
		test_fill(buf, sizeof(buf), i);
		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, buf, sizeof(buf), 0, &id), 0);
		assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
		assert_true(test_check_response(&m, sizeof(buf), i));
		assert_int_equal(homa_message_release(&m), 0);
	}
	rt = homa_rt_get(cli);
	assert_non_null(rt);
	homa_rt_pool_stats(&rt->pool, &count, &reused);
	homa_rt_put(rt);
	assert_true(reused >= 3);
	assert_true(count <= 6);
	homa_close(cli);
	test_server_stop(&srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pool__freed_chunk_is_reused),
		cmocka_unit_test(pool__cached_chunk_is_poisoned),
		cmocka_unit_test(pool__bound_is_kept),
		cmocka_unit_test(pool__other_sizes_pass_through),
		cmocka_unit_test(pool__small_blocks_reused),
		cmocka_unit_test(pool__owner_list_without_mutex),
		cmocka_unit_test(pool__engine_messages_reuse_chunks),
		cmocka_unit_test(pool__sent_messages_reuse_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
