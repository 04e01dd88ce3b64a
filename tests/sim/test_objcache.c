/* SPDX-License-Identifier: MIT */
/** @file test_objcache.c Tests of sim/objcache.c (the engines' recycling allocator). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "sim/engine_host.h"
#include "sim/net.h"
#include "sim/objcache.h"

/** A freed block comes back for the next request of its 16-byte class, last freed first. */
static void objcache_alloc__reuses_last_freed_of_class(void **state)
{
	struct homa_sim_objcache c;
	void *a, *b, *x;

	(void)state;
	homa_sim_objcache_init(&c, 1 << 20);
	a = homa_sim_objcache_alloc(&c, 40);
	b = homa_sim_objcache_alloc(&c, 48);
	assert_non_null(a);
	assert_non_null(b);
	memset(a, 1, 40);
	memset(b, 2, 48);
	homa_sim_objcache_free(&c, a, 40);
	homa_sim_objcache_free(&c, b, 48);
	assert_int_equal(c.cached_bytes, 96);
	x = homa_sim_objcache_alloc(&c, 33); /* same class (48 bytes): b, freed last */
	assert_ptr_equal(x, b);
	memset(x, 3, 48);
	assert_ptr_equal(homa_sim_objcache_alloc(&c, 48), a);
	assert_int_equal(c.reused, 2);
	assert_int_equal(c.cached_bytes, 0);
	x = homa_sim_objcache_alloc(&c, 49); /* next class: a fresh block */
	assert_true(x != a && x != b);
	homa_sim_objcache_free(&c, x, 49);
	homa_sim_objcache_free(&c, a, 48);
	homa_sim_objcache_free(&c, b, 40);
	homa_sim_objcache_free(&c, NULL, 40);
	homa_sim_objcache_release(&c);
	assert_int_equal(c.cached_bytes, 0);
}

/** Past max_bytes, and above HOMA_SIM_OBJCACHE_MAX, blocks go back to free(). */
static void objcache_free__bounded(void **state)
{
	struct homa_sim_objcache c;
	void *a, *b, *big, *zero;

	(void)state;
	homa_sim_objcache_init(&c, 64);
	a = homa_sim_objcache_alloc(&c, 48);
	b = homa_sim_objcache_alloc(&c, 48);
	big = homa_sim_objcache_alloc(&c, HOMA_SIM_OBJCACHE_MAX + 1);
	zero = homa_sim_objcache_alloc(&c, 0);
	assert_non_null(big);
	assert_non_null(zero);
	homa_sim_objcache_free(&c, a, 48);
	homa_sim_objcache_free(&c, b, 48); /* 96 > 64: freed */
	assert_int_equal(c.cached_bytes, 48);
	homa_sim_objcache_free(&c, big, HOMA_SIM_OBJCACHE_MAX + 1);
	assert_int_equal(c.cached_bytes, 48);
	homa_sim_objcache_free(&c, zero, 0); /* the 16-byte class */
	assert_int_equal(c.cached_bytes, 64);
	assert_ptr_equal(homa_sim_objcache_alloc(&c, 1), zero);
	homa_sim_objcache_free(&c, zero, 1);
	homa_sim_objcache_release(&c);
	assert_int_equal(c.cached_bytes, 0);
	assert_null(c.free[1]);
	assert_null(c.free[3]);
}

/** Completed requests at the receiving engines. */
static void count_event(void *ctx, struct homa_sim_engine_host *eh, struct homa_event *ev,
			uint64_t now)
{
	(void)eh;
	(void)now;
	if (ev->type == HOMA_EV_REQUEST)
		(*(int *)ctx)++;
}

/**
 * run_star() - 4 engines on a star, 200 requests of mixed sizes (1 B to
 * 30 KB); fills @st with host 0's counters, @reused with the cache's
 * reuses and @events with the network's event count.
 */
static void run_star(uint64_t cache_bytes, struct homa_stats *st, uint64_t *reused,
		     uint64_t *events)
{
	static uint8_t buf[30000];
	struct homa_sim_link_cfg link = {10000, 500, 0};
	struct homa_sim_engine_host *eh[4];
	struct homa_sim_net_stats ns;
	struct homa_sim_config cfg;
	struct homa_sim_net *net;
	int i, done = 0;
	uint64_t id;

	homa_sim_config_default(&cfg);
	cfg.engine_cache_bytes = cache_bytes;
	assert_int_equal(homa_sim_net_new(&net, &cfg), 0);
	for (i = 0; i < 4; i++)
		assert_true(homa_sim_engine_host_add(net, NULL, 7, true, count_event, &done,
						     &eh[i]) == i);
	assert_int_equal(homa_sim_star(net, &link), 0);
	for (i = 0; i < 200; i++) {
		int src = i % 4, dst = (src + 1 + (i / 4) % 3) % 4;

		assert_int_equal(homa_sim_engine_host_request(eh[src], dst, 7, buf,
							      (size_t)(1 + i * 149 % 30000),
							      (uint64_t)i, &id), 0);
		homa_sim_run_until(net, homa_sim_now(net) + 2000);
	}
	homa_sim_run_until(net, homa_sim_now(net) + 50000000);
	assert_int_equal(done, 200);
	homa_engine_stats(eh[0]->engine, st);
	homa_sim_net_stats(net, &ns);
	*events = ns.events;
	*reused = cache_bytes ? ((struct homa_sim_objcache *)homa_sim_engine_alloc(net)->ctx)->reused : 0;
	homa_sim_net_free(net);
}

/** Engines behave the same with the cache as with malloc, and it is used. */
static void engine_alloc__cache_same_run(void **state)
{
	struct homa_stats a, b;
	uint64_t reused_a, reused_b, ev_a, ev_b;
	struct homa_sim_net *net;

	(void)state;
	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	assert_null(homa_sim_engine_alloc(net));
	homa_sim_net_free(net);
	run_star(0, &a, &reused_a, &ev_a);
	run_star(1 << 20, &b, &reused_b, &ev_b);
	assert_true(reused_b > 0);
	assert_true(ev_a == ev_b);
	assert_memory_equal(&a, &b, sizeof(a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(objcache_alloc__reuses_last_freed_of_class),
		cmocka_unit_test(objcache_free__bounded),
		cmocka_unit_test(engine_alloc__cache_same_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
