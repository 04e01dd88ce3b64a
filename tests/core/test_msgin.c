/* SPDX-License-Identifier: MIT */
/**
 * @file test_msgin.c
 * Reassembly of incoming messages (src/core/msgin.c), white-box through
 * internal.h: out-of-order, duplicated, overlapping and missing packets,
 * hole tracking, chunk boundaries and the rx budget.
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

#define PKT 1416

/** Engine plus one server RPC to reassemble into. */
struct fix {
	homa_engine *e;
	struct homa_rpc *rpc;
	uint8_t *src;    /**< the message's true bytes */
	uint32_t len;
};

/** Allocator whose next allocation fails when armed. */
struct flaky {
	bool fail_next;
};

/** flaky_alloc() - malloc, unless a failure is armed. */
static void *flaky_alloc(void *ctx, size_t size)
{
	struct flaky *f = ctx;

	if (f->fail_next) {
		f->fail_next = false;
		return NULL;
	}
	return malloc(size);
}

/** flaky_free() - free. */
static void flaky_free(void *ctx, void *ptr, size_t size)
{
	free(ptr);
}

static struct flaky flaky;

/** fix_init() - Engine with @max_rx rx budget (0 = default) and an RPC receiving @len bytes. */
static void fix_init(struct fix *f, uint32_t len, uint32_t unsched, uint64_t max_rx)
{
	struct homa_alloc hooks = {flaky_alloc, flaky_free, &flaky};
	homa_addr me = homa_addr_ipv4(0x0a000001), peer = homa_addr_ipv4(0x0a000002);
	struct homa_settings s;
	struct homa_peer *p;

	homa_settings_default(&s);
	if (max_rx)
		s.max_rx_buffered = max_rx;
	flaky.fail_next = false;
	assert_int_equal(homa_engine_new(&f->e, &s, &me, 4001, &hooks, 0), 0);
	p = homa_peer_get(f->e, &peer);
	assert_non_null(p);
	f->rpc = homa_rpc_new(f->e, 3, p, 4000);
	assert_non_null(f->rpc);
	f->rpc->state = RPC_INCOMING;
	f->len = len;
	f->src = malloc(len);
	th_pattern(f->src, len, len);
	assert_int_equal(homa_msgin_init(f->e, f->rpc, len, unsched), 0);
}

/** fix_free() - Free the RPC (the rx budget must return to 0) and the engine. */
static void fix_free(struct fix *f)
{
	homa_rpc_free(f->e, f->rpc);
	assert_int_equal(f->e->rx_buffered, 0);
	homa_engine_free(f->e);
	free(f->src);
}

/** add() - Store [off, off+n) of the true bytes. Return: homa_msgin_add()'s result. */
static int add(struct fix *f, uint32_t off, uint32_t n)
{
	return homa_msgin_add(f->e, f->rpc, off, f->src + off, n);
}

/** exact() - True if the reassembled message equals the source, byte for byte. */
static bool exact(const struct fix *f)
{
	uint8_t *got = malloc(f->len);
	bool ok = homa_msg_copy(f->rpc->in.msg, 0, got, f->len) == f->len &&
		  memcmp(got, f->src, f->len) == 0;

	free(got);
	return ok;
}

/** gap_is() - homa_msgin_first_gap() reports exactly [start, end). */
static void gap_is(const struct fix *f, uint32_t start, uint32_t end)
{
	uint32_t s = 0, e = 0;

	assert_true(homa_msgin_first_gap(&f->rpc->in, &s, &e));
	assert_int_equal(s, start);
	assert_int_equal(e, end);
}

/** homa_msgin_add__in_order() - Packets in order: all bytes new, no holes, bit-exact. */
static void homa_msgin_add__in_order(void **state)
{
	struct fix f;
	uint32_t off;

	fix_init(&f, 10 * PKT + 5, 100000, 0);
	for (off = 0; off < f.len; off += PKT) {
		uint32_t n = f.len - off < PKT ? f.len - off : PKT;

		assert_int_equal(add(&f, off, n), (int)n);
		assert_int_equal(f.rpc->in.ngaps, 0);
		assert_int_equal(f.rpc->in.recv_end, off + n);
	}
	assert_int_equal(f.rpc->in.received, f.len);
	assert_false(homa_msgin_first_gap(&f.rpc->in, &off, &off));
	assert_true(exact(&f));
	fix_free(&f);
}

/** homa_msgin_add__out_of_order() - Packets in reverse then shuffled order leave and fill holes. */
static void homa_msgin_add__out_of_order(void **state)
{
	static const int order[10] = {9, 3, 0, 7, 1, 8, 2, 6, 4, 5};
	struct fix f;
	int i;

	fix_init(&f, 10 * PKT, 100000, 0);
	assert_int_equal(add(&f, 9 * PKT, PKT), PKT);
	gap_is(&f, 0, 9 * PKT);
	assert_int_equal(add(&f, 3 * PKT, PKT), PKT);
	assert_int_equal(f.rpc->in.ngaps, 2);
	gap_is(&f, 0, 3 * PKT);
	assert_int_equal(add(&f, 0, PKT), PKT);
	gap_is(&f, PKT, 3 * PKT);
	for (i = 3; i < 10; i++)
		assert_int_equal(add(&f, (uint32_t)order[i] * PKT, PKT), PKT);
	assert_int_equal(f.rpc->in.received, f.len);
	assert_int_equal(f.rpc->in.ngaps, 0);
	assert_true(exact(&f));
	fix_free(&f);
}

/** homa_msgin_add__duplicates() - A repeated packet adds nothing and changes no byte. */
static void homa_msgin_add__duplicates(void **state)
{
	struct fix f;

	fix_init(&f, 4 * PKT, 100000, 0);
	assert_int_equal(add(&f, PKT, PKT), PKT);
	assert_int_equal(add(&f, PKT, PKT), 0);
	assert_int_equal(add(&f, 0, PKT), PKT);
	assert_int_equal(add(&f, 0, PKT), 0);
	assert_int_equal(add(&f, PKT, PKT), 0);
	assert_int_equal(f.rpc->in.received, 2 * PKT);
	gap_is(&f, 2 * PKT, 4 * PKT);
	assert_int_equal(add(&f, 2 * PKT, 2 * PKT), 2 * PKT);
	assert_int_equal(add(&f, 0, 4 * PKT), 0);
	assert_true(exact(&f));
	fix_free(&f);
}

/** homa_msgin_add__overlapping() - Partly overlapping ranges count only their new bytes; a range inside a hole splits it. */
static void homa_msgin_add__overlapping(void **state)
{
	struct fix f;

	fix_init(&f, 5000, 100000, 0);
	assert_int_equal(add(&f, 0, 1000), 1000);
	assert_int_equal(add(&f, 500, 1000), 500);      /* [1000,1500) new */
	assert_int_equal(add(&f, 2000, 1000), 1000);    /* hole [1500,2000) */
	gap_is(&f, 1500, 2000);
	assert_int_equal(add(&f, 1400, 1200), 500);     /* fills the hole, rest known */
	assert_int_equal(f.rpc->in.ngaps, 0);
	assert_int_equal(add(&f, 4000, 100), 100);      /* hole [3000,4000) */
	assert_int_equal(add(&f, 3400, 100), 100);      /* splits it */
	assert_int_equal(f.rpc->in.ngaps, 2);
	gap_is(&f, 3000, 3400);
	assert_int_equal(add(&f, 3000, 400), 400);
	gap_is(&f, 3500, 4000);
	assert_int_equal(add(&f, 3450, 600), 500);      /* covers the hole and beyond */
	assert_int_equal(f.rpc->in.ngaps, 0);
	gap_is(&f, 4100, 5000);                         /* beyond recv_end, below granted */
	assert_int_equal(add(&f, 4100, 900), 900);
	assert_int_equal(f.rpc->in.received, 5000);
	assert_true(exact(&f));
	fix_free(&f);
}

/** homa_msgin_first_gap__missing_and_granted() - Missing packets and the ungranted tail. */
static void homa_msgin_first_gap__missing_and_granted(void **state)
{
	uint32_t s, e;
	struct fix f;

	fix_init(&f, 20000, 3000, 0);
	assert_true(f.rpc->in.scheduled);
	assert_int_equal(f.rpc->in.granted, 3000);
	gap_is(&f, 0, 3000);
	assert_int_equal(add(&f, 0, PKT), PKT);
	gap_is(&f, PKT, 3000); /* only up to what was granted */
	assert_int_equal(add(&f, PKT, 3000 - PKT), 3000 - PKT);
	assert_false(homa_msgin_first_gap(&f.rpc->in, &s, &e));
	f.rpc->in.granted = 8000;
	gap_is(&f, 3000, 8000);
	assert_int_equal(add(&f, 6000, 1000), 1000);
	gap_is(&f, 3000, 6000);
	fix_free(&f);
}

/** Deterministic PRNG for the random test. */
static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/**
 * homa_msgin_add__random_ranges() - Thousands of random, overlapping
 * ranges: every call returns exactly the bytes a reference bitmap says
 * are new, the first hole matches the bitmap, and the result is bit-exact.
 */
static void homa_msgin_add__random_ranges(void **state)
{
	uint32_t x = 777, round;

	for (round = 0; round < 20; round++) {
		uint32_t len = 1 + rnd(&x) % 300000, have = 0, lo = 0, i;
		uint8_t *seen = calloc(len, 1);
		struct fix f;

		fix_init(&f, len, len, 0);
		while (have < len) {
			int64_t start = (int64_t)(rnd(&x) % (len + 3000)) - 3000;
			uint32_t n = 1 + rnd(&x) % 3000, fresh = 0, off, s, e;

			if (start + n <= 0)
				continue;
			if (start < 0) {
				n = (uint32_t)(start + n);
				start = 0;
			}
			off = (uint32_t)start;
			if (off >= len)
				continue;
			if (n > len - off)
				n = len - off;
			for (i = off; i < off + n; i++)
				if (!seen[i]) {
					seen[i] = 1;
					fresh++;
				}
			assert_int_equal(add(&f, off, n), (int)fresh);
			have += fresh;
			assert_int_equal(f.rpc->in.received, have);
			if (have == len)
				break;
			while (seen[lo])
				lo++;
			assert_true(homa_msgin_first_gap(&f.rpc->in, &s, &e));
			assert_int_equal(s, lo);
			i = lo;
			for (; i < len && !seen[i]; i++)
				;
			assert_int_equal(e, i);
		}
		assert_true(exact(&f));
		free(seen);
		fix_free(&f);
	}
}

/**
 * homa_msgin_add__chunk_boundaries() - Packets straddling 64 KiB chunks
 * land bit-exact; chunks are allocated on first use and charged to the
 * message (and so to the engine's rx budget) at their real size.
 */
static void homa_msgin_add__chunk_boundaries(void **state)
{
	const uint8_t *ptr;
	uint64_t base;
	struct fix f;

	fix_init(&f, 3 * HOMA_CHUNK + 100, 1u << 20, 0);
	assert_int_equal(f.rpc->in.msg->nchunks, 4);
	base = f.rpc->in.msg->charged;
	assert_int_equal(add(&f, HOMA_CHUNK - 700, PKT), PKT); /* chunks 0 and 1 */
	assert_int_equal(f.rpc->in.msg->charged, base + 2 * HOMA_CHUNK);
	assert_true(f.e->rx_buffered >= f.rpc->in.msg->charged);
	assert_int_equal(homa_msg_segment(f.rpc->in.msg, HOMA_CHUNK - 700, &ptr), 700);
	assert_memory_equal(ptr, f.src + HOMA_CHUNK - 700, 700);
	assert_int_equal(homa_msg_segment(f.rpc->in.msg, HOMA_CHUNK, &ptr), HOMA_CHUNK);
	assert_memory_equal(ptr, f.src + HOMA_CHUNK, PKT - 700);
	assert_int_equal(homa_msg_segment(f.rpc->in.msg, 2 * HOMA_CHUNK, &ptr), 0); /* not yet */
	assert_int_equal(add(&f, 3 * HOMA_CHUNK + 50, 50), 50); /* last chunk is 100 bytes */
	assert_int_equal(f.rpc->in.msg->charged, base + 2 * HOMA_CHUNK + 100);
	assert_int_equal(add(&f, 0, 3 * HOMA_CHUNK + 100), 3 * HOMA_CHUNK + 100 - PKT - 50);
	assert_int_equal(f.rpc->in.msg->charged, base + 3 * HOMA_CHUNK + 100);
	assert_true(f.e->rx_buffered >= f.rpc->in.msg->charged);
	assert_int_equal(homa_msg_segment(f.rpc->in.msg, 3 * HOMA_CHUNK + 100, &ptr), 0);
	assert_true(exact(&f));
	fix_free(&f);
}

/**
 * homa_msgin_add__rx_budget() - When a new chunk would pass
 * max_rx_buffered the packet is refused with HOMA_EAGAIN and nothing
 * changes; bytes in chunks already held are still taken; a new message
 * with more bytes left than every buffered request is refused at init (a
 * shorter one would evict, see test_evict.c).
 */
static void homa_msgin_add__rx_budget(void **state)
{
	homa_addr peer = homa_addr_ipv4(0x0a000002);
	struct homa_rpc *other;
	struct fix f;
	uint32_t s, e;

	fix_init(&f, 4 * HOMA_CHUNK, 4 * HOMA_CHUNK, 100000);
	assert_int_equal(add(&f, 0, PKT), PKT);
	assert_int_equal(add(&f, HOMA_CHUNK + 10, PKT), HOMA_EAGAIN);
	assert_int_equal(f.rpc->in.received, PKT);
	assert_int_equal(f.rpc->in.recv_end, PKT);
	assert_int_equal(f.rpc->in.ngaps, 0);
	assert_null(f.rpc->in.msg->chunks[1]);
	assert_int_equal(add(&f, 2 * PKT, PKT), PKT); /* same chunk: fine */
	gap_is(&f, PKT, 2 * PKT);
	other = homa_rpc_new(f.e, 5, homa_peer_get(f.e, &peer), 4000);
	assert_non_null(other);
	other->state = RPC_INCOMING;
	assert_int_equal(homa_msgin_init(f.e, other, 8 * HOMA_CHUNK, 1000), HOMA_EAGAIN);
	assert_null(other->in.msg);
	homa_rpc_free(f.e, other);
	assert_true(homa_msgin_first_gap(&f.rpc->in, &s, &e));
	fix_free(&f);
}

/**
 * homa_msgin_add__enomem_keeps_holes_exact() - An allocation failure
 * (a new chunk, or growing the hole list to split a hole) leaves the holes
 * and counts describing exactly what is stored; the same packet later
 * succeeds and the message completes bit-exact.
 */
static void homa_msgin_add__enomem_keeps_holes_exact(void **state)
{
	struct fix f;
	uint32_t k;

	fix_init(&f, 2 * HOMA_CHUNK, 2 * HOMA_CHUNK, 0);
	flaky.fail_next = true; /* chunk 1 */
	assert_int_equal(add(&f, HOMA_CHUNK + 10, 100), HOMA_ENOMEM);
	assert_int_equal(f.rpc->in.received, 0);
	assert_int_equal(f.rpc->in.recv_end, 0);
	assert_int_equal(f.rpc->in.ngaps, 0);
	assert_int_equal(add(&f, HOMA_CHUNK + 10, 100), 100);
	gap_is(&f, 0, HOMA_CHUNK + 10);
	for (k = 1; k <= 3; k++) /* holes: [0,1000) [1100,2000) [2100,3000) [3100,HOMA_CHUNK+10) */
		assert_int_equal(add(&f, k * 1000, 100), 100);
	assert_int_equal(f.rpc->in.ngaps, 4);
	assert_int_equal(f.rpc->in.gaps_cap, 4);
	flaky.fail_next = true; /* the hole list must grow to split [0,1000) */
	assert_int_equal(add(&f, 200, 100), HOMA_ENOMEM);
	assert_int_equal(f.rpc->in.ngaps, 4);
	gap_is(&f, 0, 1000);
	assert_int_equal(f.rpc->in.received, 400);
	assert_int_equal(add(&f, 200, 100), 100);
	assert_int_equal(f.rpc->in.ngaps, 5);
	gap_is(&f, 0, 200);
	assert_int_equal(add(&f, 0, 2 * HOMA_CHUNK), 2 * HOMA_CHUNK - 500);
	assert_int_equal(f.rpc->in.received, 2 * HOMA_CHUNK);
	assert_true(exact(&f));
	fix_free(&f);
}

/**
 * data_in() - Hand @e a DATA packet of a @len-byte request (client id 2,
 * 10.0.0.2:4000 to port 4001, @unsched bytes unscheduled) holding bytes
 * [@off, @off+@n) of @src. Return: homa_engine_input()'s result.
 */
static int data_in(homa_engine *e, const uint8_t *src, uint32_t len, uint32_t unsched,
		   uint32_t off, uint32_t n)
{
	homa_addr from = homa_addr_ipv4(0x0a000002);
	struct th_data d = {.sport = 4000, .dport = 4001, .sender_id = 2, .length = len,
			    .incoming = unsched, .offset = off, .payload = src + off,
			    .payload_len = n};

	return th_data_in(e, &from, &d, 0);
}

/**
 * handle_data__enomem_keeps_grant_share() - A DATA packet fills 400 bytes
 * of a hole and then needs a new chunk, which cannot be had: the 400
 * bytes count as received and leave the message's grant share too
 * (counted == granted - received), checked here and by the engine's
 * invariant checker after the input.
 */
static void handle_data__enomem_keeps_grant_share(void **state)
{
	struct homa_alloc hooks = {flaky_alloc, flaky_free, &flaky};
	homa_addr me = homa_addr_ipv4(0x0a000001), peer = homa_addr_ipv4(0x0a000002);
	uint32_t len = 2 * HOMA_CHUNK + 1000, unsched = HOMA_CHUNK + 2000;
	uint8_t *src = malloc(len);
	struct homa_msgin *in;
	struct homa_rpc *rpc;
	homa_engine *e;

	(void)state;
	th_pattern(src, len, 7);
	flaky.fail_next = false;
	assert_int_equal(homa_engine_new(&e, NULL, &me, 4001, &hooks, 0), 0);
	homa_engine_set_server(e, true);
	assert_int_equal(data_in(e, src, len, unsched, 0, 100), 0);
	assert_int_equal(data_in(e, src, len, unsched, HOMA_CHUNK - 600, 100), 0);
	rpc = homa_rpc_find(e, 3, &peer, 4000);
	assert_non_null(rpc);
	in = &rpc->in;
	assert_true(homa_list_linked(&in->grant_link));
	assert_int_equal(in->received, 200);
	flaky.fail_next = true; /* chunk 1, after [HOMA_CHUNK-1000, HOMA_CHUNK-600) filled */
	assert_true(data_in(e, src, len, unsched, HOMA_CHUNK - 1000, 1300) > 0);
	assert_int_equal(in->received, 600);
	assert_int_equal(in->counted, in->granted - in->received);
	homa_engine_free(e);
	free(src);
}

/**
 * handle_data__duplicate_bytes_counted() - Through the engine: duplicated
 * DATA of a request is counted in stats.duplicate_bytes, before and after
 * the request completes, and the request is delivered once, bit-exact.
 */
static void handle_data__duplicate_bytes_counted(void **state)
{
	static uint8_t buf[3 * PKT];
	struct homa_iov iov = {buf, sizeof(buf)};
	struct th_pkt pk[3];
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	uint64_t id;
	int i;

	th_pair_init(&p, NULL);
	th_pattern(buf, sizeof(buf), 42);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 0, 0, &id), 0);
	for (i = 0; i < 3; i++)
		assert_true(th_take(p.e[0], 0, &pk[i]) > 0);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], pk[1].buf, (size_t)pk[1].len, 0), 0);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], pk[1].buf, (size_t)pk[1].len, 0), 0);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.duplicate_bytes, PKT);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], pk[0].buf, (size_t)pk[0].len, 0), 0);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], pk[2].buf, (size_t)pk[2].len, 0), 0);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], pk[2].buf, (size_t)pk[2].len, 0), 0);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.duplicate_bytes, 2 * PKT);
	assert_int_equal(st.server_requests_received, 1);
	assert_true(th_take_msg(p.e[1], HOMA_EV_REQUEST, 42, 0, TH_ANY_LEN));
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 0);
	th_pair_free(&p);
}

/**
 * homa_engine_rx_progress__contiguous_prefix() - The incremental receive
 * API reports the bytes present from offset 0 on, not the bytes received.
 */
static void homa_engine_rx_progress__contiguous_prefix(void **state)
{
	static uint8_t buf[5 * PKT];
	static const int order[5] = {0, 1, 3, 4, 2};
	struct homa_iov iov = {buf, sizeof(buf)};
	static const int64_t want[4] = {PKT, 2 * PKT, 2 * PKT, 2 * PKT};
	const homa_msg *m = NULL;
	struct th_pkt pk[5];
	struct th_pair p;
	uint64_t id, handle;
	int i;

	th_pair_init(&p, NULL);
	th_pattern(buf, sizeof(buf), 3);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 0, 0, &id), 0);
	for (i = 0; i < 5; i++)
		assert_true(th_take(p.e[0], 0, &pk[i]) > 0);
	handle = 0;
	for (i = 0; i < 4; i++) {
		struct th_pkt *k = &pk[order[i]];

		assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], k->buf, (size_t)k->len, 0), 0);
		if (!handle) {
			struct homa_link *l = p.e[1]->all_rpcs.next;

			handle = homa_container_of(l, struct homa_rpc, all_link)->handle;
		}
		assert_int_equal(homa_engine_rx_progress(p.e[1], handle, &m), want[i]);
		assert_non_null(m);
		assert_int_equal(homa_msg_length(m), sizeof(buf));
	}
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], pk[2].buf, (size_t)pk[2].len, 0), 0);
	assert_true(th_take_msg(p.e[1], HOMA_EV_REQUEST, 3, handle, TH_ANY_LEN));
	th_pair_free(&p);
}

/**
 * homa_msgin_init__whole_packet_window() - With the default unsched_bytes
 * (40000; 41064 in whole 1416-byte packets) a message no longer than 41064
 * whose sender claims all of it is unscheduled (our senders send it so: no
 * GRANT round trip for a short tail), while a longer message's claim, and
 * a claim of less (the Linux module sends exactly its unsched_bytes), are
 * held to unsched_bytes as before: a lying sender raises nothing beyond
 * one packet. The old receiver held every claim to 40000.
 */
static void homa_msgin_init__whole_packet_window(void **state)
{
	static const struct {
		uint32_t len, claim, granted;
		bool scheduled;
	} c[] = {
		{40500, 40500, 40500, false},    {41064, 41064, 41064, false},
		{40500, 1000000, 40500, false},  {41065, 41065, 40000, true},
		{10000000, 10000000, 40000, true}, {40500, 40000, 40000, true},
		{30000, 30000, 30000, false},
	};
	struct fix f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		fix_init(&f, c[i].len, c[i].claim, 0);
		assert_int_equal(homa_unsched_window(f.e), 29 * PKT);
		assert_int_equal(f.rpc->in.granted, c[i].granted);
		assert_int_equal(f.rpc->in.scheduled, c[i].scheduled);
		fix_free(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_msgin_add__in_order),
		cmocka_unit_test(homa_msgin_add__out_of_order),
		cmocka_unit_test(homa_msgin_add__duplicates),
		cmocka_unit_test(homa_msgin_add__overlapping),
		cmocka_unit_test(homa_msgin_first_gap__missing_and_granted),
		cmocka_unit_test(homa_msgin_add__random_ranges),
		cmocka_unit_test(homa_msgin_add__chunk_boundaries),
		cmocka_unit_test(homa_msgin_add__rx_budget),
		cmocka_unit_test(homa_msgin_add__enomem_keeps_holes_exact),
		cmocka_unit_test(handle_data__duplicate_bytes_counted),
		cmocka_unit_test(handle_data__enomem_keeps_grant_share),
		cmocka_unit_test(homa_engine_rx_progress__contiguous_prefix),
		cmocka_unit_test(homa_msgin_init__whole_packet_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
