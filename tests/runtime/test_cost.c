/* SPDX-License-Identifier: MIT */
/**
 * @file test_cost.c
 * Per-RPC work of the runtime that the profile of a 100 B RPC shows:
 * allocations of delivery records (queue.c, homa_rt_item_get(): a
 * socket reuses the records it freed) and of small messages' records and
 * chunks and zero-copy sends' release records (pool.c: the chunk cache
 * keeps small blocks too), takes of the socket lock (lock.c) and of the
 * chunk cache's own mutex (pool.c). Counted by the runtime
 * (homa_rt_item_mallocs and homa_rt_lock_takes per thread;
 * rt_pool.small_mallocs, small_reused, mine_mallocs, mine_reused and
 * lock_takes per socket), so the counts are the same on a loaded machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "rt.h"

/** RPCs the counts are taken over. */
#define RPCS 200

/**
 * RPCs before the counts: peers known, buffers grown, and the chunk
 * caches stocked (the owner's list of small blocks holds up to
 * RT_POOL_MINE_MAX of them before it passes any to the senders, whose
 * allocations meanwhile call malloc()).
 */
#define WARMUP 100

/** Longest wait for a message that must come (a loaded machine is slow). */
#define WAIT_NS 30000000000LL

/**
 * Most lock takes per 100 B RPC, client and server in one thread (each
 * side's send, receive, poll, flushes and release): 12 when a flush with
 * nothing to send takes no lock of its own (homa_rt_unlock_flush()), a
 * send drains its first batch in the hold that attached the message
 * (homa_rt_unlock_send_out()) and a poll runs its timers and reads the
 * engine's wake-up time in the hold that made it the poller, of which 2
 * are the received request's and response's payload copies being
 * reported done: they run with the lock released (io.c copy_listed());
 * 14 when the poll's timers take the lock again, 16 when also each
 * send's flush does; 24 when also every release, received batch and
 * poll's timers flush under a second take and the poll reads the
 * wake-up time under a third.
 */
#define MAX_LOCKS_PER_RPC 13

/**
 * Ticks before a RESEND, a NEED_ACK or the standby thread (polled mode:
 * resend_ticks) steps in: longer than any test here runs on a loaded
 * machine, so the counts come from the test thread's own calls alone.
 * With the defaults (resend_ticks 5, request_ack_ticks 2, 1 ms ticks) a
 * test thread descheduled for a few milliseconds let the standby thread
 * run a socket's timers (an owed ack could leave in an ACK packet the
 * server read after the next request) or let the server ask with
 * NEED_ACK for an ack that was on its way; the server then held one more
 * finished reply while building the next (two more small blocks from
 * malloc()), and the lock and record counts moved with it.
 */
#define QUIET_TICKS 2000

/** open_pair() - A polled server and client on loopback, warmed up. */
static void open_pair(homa_socket **cli, homa_socket **srv, struct sockaddr_storage *dst)
{
	struct homa_settings st;

	homa_settings_default(&st);
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	st.resend_ticks = QUIET_TICKS;
	st.request_ack_ticks = QUIET_TICKS;
	assert_int_equal(test_open(srv, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, true, 0, &st), 0);
	assert_int_equal(test_open(cli, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0, &st), 0);
	*dst = test_dst(homa_local_port(*srv));
	for (int i = 0; i < WARMUP; i++)  /* warm-up: peers known, buffers grown */
		assert_int_equal(test_polled_rpc(*cli, *srv, dst), 0);
}

/**
 * cost__items_reused() - After a warm-up, RPCs allocate no delivery
 * record: each request and response reuses one its socket freed (two
 * malloc() per RPC when every record is freed).
 */
static void cost__items_reused(void **state)
{
	homa_socket *cli, *srv;
	struct sockaddr_storage dst;
	uint64_t before;

	(void)state;
	open_pair(&cli, &srv, &dst);
	before = homa_rt_item_mallocs;
	for (int i = 0; i < RPCS; i++)
		assert_int_equal(test_polled_rpc(cli, srv, &dst), 0);
	print_message("item mallocs in %d RPCs: %llu\n", RPCS,
		      (unsigned long long)(homa_rt_item_mallocs - before));
	assert_int_equal(homa_rt_item_mallocs - before, 0);
	homa_close(cli);
	homa_close(srv);
}

/**
 * pool_small() - Small blocks socket @s's chunk cache took from malloc()
 * so far (@reused false), or served from its cache (@reused true), over
 * its shared list and its owner's list (read under both their locks).
 */
static size_t pool_small(homa_socket *s, bool reused)
{
	struct homa_rt *rt = homa_rt_get(s);
	size_t n;

	assert_non_null(rt);
	homa_rt_lock(rt);
	pthread_mutex_lock(&rt->pool.lock);
	n = reused ? rt->pool.small_reused + rt->pool.mine_reused
		   : rt->pool.small_mallocs + rt->pool.mine_mallocs;
	pthread_mutex_unlock(&rt->pool.lock);
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return n;
}

/** pool_takes() - Takes of socket @s's chunk cache mutex by its small-block hooks so far. */
static size_t pool_takes(homa_socket *s)
{
	struct homa_rt *rt = homa_rt_get(s);
	size_t n;

	assert_non_null(rt);
	pthread_mutex_lock(&rt->pool.lock);
	n = rt->pool.lock_takes;
	pthread_mutex_unlock(&rt->pool.lock);
	homa_rt_put(rt);
	return n;
}

/**
 * Most takes of a socket's chunk cache mutex per 100 B RPC, on each
 * side: 1 where only a sent message's blocks (built by the sender
 * without the socket lock) take it and the engine's allocations and
 * frees under the socket lock use the owner's list, with a batch moved
 * between the lists now and then; 4 or more when each allocation and
 * free of a record or chunk takes it (the message built, the message
 * received, both freed: 8).
 */
#define MAX_POOL_TAKES_PER_RPC 3

/**
 * cost__pool_mutex_per_rpc() - After a warm-up, a 100 B RPC's records
 * and chunks that the engine allocates and frees under the socket lock
 * take no mutex of the chunk cache's own: each side takes it at most
 * MAX_POOL_TAKES_PER_RPC times per RPC (8 when every small block takes
 * it), and still calls malloc() for none.
 */
static void cost__pool_mutex_per_rpc(void **state)
{
	homa_socket *cli, *srv;
	struct sockaddr_storage dst;
	size_t c0, s0, cm0, sm0;

	(void)state;
	open_pair(&cli, &srv, &dst);
	c0 = pool_takes(cli);
	s0 = pool_takes(srv);
	cm0 = pool_small(cli, false);
	sm0 = pool_small(srv, false);
	for (int i = 0; i < RPCS; i++)
		assert_int_equal(test_polled_rpc(cli, srv, &dst), 0);
	double cper = (double)(pool_takes(cli) - c0) / RPCS;
	double sper = (double)(pool_takes(srv) - s0) / RPCS;

	print_message("chunk cache mutex takes per RPC: client %.2f, server %.2f\n", cper, sper);
	assert_true(cper <= MAX_POOL_TAKES_PER_RPC);
	assert_true(sper <= MAX_POOL_TAKES_PER_RPC);
	assert_int_equal(pool_small(cli, false) - cm0, 0);
	assert_int_equal(pool_small(srv, false) - sm0, 0);
	homa_close(cli);
	homa_close(srv);
}

/**
 * cost__message_records_reused() - After a warm-up, 100 B RPCs take no
 * small block from malloc(): each message's record and chunk (sent and
 * received, on both sides) reuse blocks their socket freed (about eight
 * malloc() per RPC when every block is freed).
 */
static void cost__message_records_reused(void **state)
{
	homa_socket *cli, *srv;
	struct sockaddr_storage dst;
	size_t c0, s0;

	(void)state;
	open_pair(&cli, &srv, &dst);
	c0 = pool_small(cli, false);
	s0 = pool_small(srv, false);
	for (int i = 0; i < RPCS; i++)
		assert_int_equal(test_polled_rpc(cli, srv, &dst), 0);
	print_message("small mallocs in %d RPCs: client %zu, server %zu\n", RPCS,
		      pool_small(cli, false) - c0, pool_small(srv, false) - s0);
	assert_int_equal(pool_small(cli, false) - c0, 0);
	assert_int_equal(pool_small(srv, false) - s0, 0);
	homa_close(cli);
	homa_close(srv);
}

/** count_release() - homa_release_fn: count a release in *@arg. */
static void count_release(void *arg)
{
	__atomic_fetch_add((int *)arg, 1, __ATOMIC_RELAXED);
}

/**
 * zc_rpc() - One 100 B RPC with a zero-copy request and a zero-copy
 * response (as homa-bench sends them), both counted in *@released.
 */
static void zc_rpc(homa_socket *cli, homa_socket *srv, const struct sockaddr_storage *dst,
		   int *released)
{
	static uint8_t buf[100];
	struct homa_iov iov = {buf, sizeof(buf)};
	struct homa_message m;
	uint64_t cid;

	assert_int_equal(homa_request_zc(cli, (const struct sockaddr *)dst, &iov, 1, 0,
					 count_release, released, &cid), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, WAIT_NS, &m), 0);
	assert_int_equal(homa_reply_zc(srv, m.id, &iov, 1, count_release, released), 0);
	assert_int_equal(homa_message_release(&m), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, cid, WAIT_NS, &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(homa_message_release(&m), 0);
}

/**
 * cost__zero_copy_records_reused() - A zero-copy message's release record
 * comes from its socket's cache: after a warm-up, zero-copy RPCs take no
 * small block from malloc(), and each side's cache serves four blocks per
 * RPC (the sent message's record and release record, the received
 * message's record and chunk; three when the release record came from
 * calloc()). Every release is reported.
 */
static void cost__zero_copy_records_reused(void **state)
{
	homa_socket *cli, *srv;
	struct sockaddr_storage dst;
	size_t c0, s0, cr0, sr0;
	int released = 0;

	(void)state;
	open_pair(&cli, &srv, &dst);
	for (int i = 0; i < WARMUP; i++)
		zc_rpc(cli, srv, &dst, &released);
	c0 = pool_small(cli, false);
	s0 = pool_small(srv, false);
	cr0 = pool_small(cli, true);
	sr0 = pool_small(srv, true);
	for (int i = 0; i < RPCS; i++)
		zc_rpc(cli, srv, &dst, &released);
	print_message("zero-copy RPCs: small mallocs client %zu server %zu, reuses per RPC "
		      "client %.2f server %.2f\n",
		      pool_small(cli, false) - c0, pool_small(srv, false) - s0,
		      (double)(pool_small(cli, true) - cr0) / RPCS, (double)(pool_small(srv, true) - sr0) / RPCS);
	assert_int_equal(pool_small(cli, false) - c0, 0);
	assert_int_equal(pool_small(srv, false) - s0, 0);
	assert_true(pool_small(cli, true) - cr0 >= 4 * RPCS);
	assert_true(pool_small(srv, true) - sr0 >= 4 * RPCS);
	homa_close(cli);
	homa_close(srv);
	assert_int_equal(released, 2 * (WARMUP + RPCS));
}

/** Messages of one burst (cost__burst_items_bounded()): the item cache's bound. */
#define BURST 64

/**
 * wait_ready() - Poll @s until @n messages are ready for homa_recv() or
 * WAIT_NS passed, so that a whole burst is queued at once whichever
 * thread read it (this one, or the standby thread while this one was
 * descheduled) and however the kernel split it into receive batches.
 * Return: the messages ready.
 */
static int wait_ready(homa_socket *s, int n)
{
	int ready = 0;

	for (int64_t waited = 0; ready < n && waited < WAIT_NS; waited += 1000000)
		ready = homa_poll(s, 1000000);
	return ready;
}

/** item_cache() - How many freed items @s keeps for reuse. */
static uint32_t item_cache(homa_socket *s)
{
	struct homa_rt *rt = homa_rt_get(s);
	uint32_t n;

	assert_non_null(rt);
	homa_rt_lock(rt);
	n = rt->nitem_cache;
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return n;
}

/**
 * cost__burst_items_bounded() - A burst of BURST requests queued at once
 * (and their BURST responses) needs BURST records on each side; they go
 * back to the caches, which hold at most their bound, and a second burst
 * allocates none. Each burst is wholly queued before it is read
 * (wait_ready()): the count does not depend on how many records the
 * first burst happened to hold at once.
 */
static void cost__burst_items_bounded(void **state)
{
	homa_socket *cli, *srv;
	struct sockaddr_storage dst;
	struct homa_message m[BURST];
	uint8_t buf[100] = {0};
	uint64_t id, before = 0;

	(void)state;
	open_pair(&cli, &srv, &dst);
	for (int round = 0; round < 2; round++) {
		if (round == 1) {
			/* the first burst filled both caches: the second needs no malloc() */
			assert_int_equal(item_cache(srv), BURST);
			assert_int_equal(item_cache(cli), BURST);
			before = homa_rt_item_mallocs;
		}
		for (int i = 0; i < BURST; i++)
			assert_int_equal(homa_send(cli, (const struct sockaddr *)&dst, buf,
						   sizeof(buf), 0, &id), 0);
		assert_int_equal(wait_ready(srv, BURST), BURST);
		for (int i = 0; i < BURST; i++)
			assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, WAIT_NS, &m[i]), 0);
		for (int i = 0; i < BURST; i++) {
			assert_int_equal(homa_reply_buf(srv, m[i].id, buf, sizeof(buf)), 0);
			assert_int_equal(homa_message_release(&m[i]), 0);
		}
		assert_int_equal(wait_ready(cli, BURST), BURST);
		for (int i = 0; i < BURST; i++) {
			assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, 0, WAIT_NS, &m[i]), 0);
			assert_int_equal(homa_message_release(&m[i]), 0);
		}
	}
	assert_int_equal(homa_rt_item_mallocs - before, 0);
	assert_int_equal(item_cache(srv), BURST);
	assert_int_equal(item_cache(cli), BURST);
	homa_close(cli);
	homa_close(srv);
}

/**
 * cost__lock_takes_per_rpc() - A polled client and server in one thread
 * take the socket lock at most MAX_LOCKS_PER_RPC times per 100 B RPC.
 */
static void cost__lock_takes_per_rpc(void **state)
{
	homa_socket *cli, *srv;
	struct sockaddr_storage dst;
	uint64_t before;
	double per_rpc;

	(void)state;
	open_pair(&cli, &srv, &dst);
	before = homa_rt_lock_takes;
	for (int i = 0; i < RPCS; i++)
		assert_int_equal(test_polled_rpc(cli, srv, &dst), 0);
	per_rpc = (double)(homa_rt_lock_takes - before) / RPCS;
	print_message("lock takes per RPC (client and server): %.2f\n", per_rpc);
	assert_true(per_rpc <= MAX_LOCKS_PER_RPC);
	homa_close(cli);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cost__items_reused),
		cmocka_unit_test(cost__burst_items_bounded),
		cmocka_unit_test(cost__message_records_reused),
		cmocka_unit_test(cost__zero_copy_records_reused),
		cmocka_unit_test(cost__lock_takes_per_rpc),
		cmocka_unit_test(cost__pool_mutex_per_rpc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
