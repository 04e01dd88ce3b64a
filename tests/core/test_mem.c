/* SPDX-License-Identifier: MIT */
/**
 * @file test_mem.c
 * Message buffers (src/core/mem.c): messages that borrow the caller's
 * bytes (homa_msg_build_ref()) read through segments and copies like
 * chunked ones, go out as DATA packets carrying the caller's bytes, and
 * call their done function exactly once, when freed; the engine's own
 * chunks are lent to a caller that seals (hooks with overhead only) and
 * outlive the packets that borrow them (homa_engine_output_sent()).
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

/** done() - Count a call in the int @ctx points to. */
static void done(void *ctx)
{
	(*(int *)ctx)++;
}

/** Segments follow the gather list, skipping empty pieces; copies cross pieces. */
static void homa_msg_build_ref__segments_and_copy(void **state)
{
	static const char a[] = "hello ", c[] = "world";
	struct homa_iov iov[3] = {{a, 6}, {NULL, 0}, {c, 5}};
	const uint8_t *p;
	homa_msg *m;
	char out[16] = {0};
	int calls = 0;

	(void)state;
	assert_int_equal(homa_msg_build_ref(NULL, iov, 3, done, &calls, &m), 0);
	assert_int_equal(homa_msg_length(m), 11);
	assert_int_equal(homa_msg_segment(m, 0, &p), 6);
	assert_ptr_equal(p, a);
	assert_int_equal(homa_msg_segment(m, 7, &p), 4);
	assert_ptr_equal(p, c + 1);
	assert_int_equal(homa_msg_segment(m, 11, &p), 0);
	assert_int_equal(homa_msg_copy(m, 3, out, 16), 8);
	assert_string_equal(out, "lo world");
	assert_int_equal(calls, 0);
	homa_msg_discard(NULL, m);
	assert_int_equal(calls, 1);
}

/** Bad arguments fail without a done call. */
static void homa_msg_build_ref__errors(void **state)
{
	struct homa_iov iov = {NULL, 5};
	homa_msg *m;
	int calls = 0;

	(void)state;
	assert_int_equal(homa_msg_build_ref(NULL, &iov, 1, done, &calls, &m), HOMA_EINVAL);
	iov.base = "x";
	assert_int_equal(homa_msg_build_ref(NULL, &iov, 1, done, &calls, NULL), HOMA_EINVAL);
	assert_int_equal(homa_msg_build_ref(NULL, &iov, -1, done, &calls, &m), HOMA_EINVAL);
	assert_int_equal(calls, 0);
}

/**
 * An attached borrowed request goes out as DATA with the caller's bytes
 * (no copy into the engine), and done runs once, when the engine frees
 * the RPC (here: abort).
 */
static void homa_msg_build_ref__sent_then_done_on_abort(void **state)
{
	static uint8_t bytes[3000];
	homa_addr a = homa_addr_ipv4(0x0a000001), srv = homa_addr_ipv4(0x0a000002);
	struct homa_iov iov = {bytes, sizeof(bytes)};
	struct homa_stats st;
	struct homa_tx tx;
	uint8_t pkt[2000];
	homa_engine *e;
	homa_msg *m;
	uint64_t id;
	int calls = 0, len;

	(void)state;
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7);
	assert_int_equal(homa_engine_new(&e, NULL, &a, 4000, NULL, 0), 0);
	assert_int_equal(homa_msg_build_ref(NULL, &iov, 1, done, &calls, &m), 0);
	assert_int_equal(homa_engine_send_request_msg(e, &srv, 4001, m, 0, 0, &id), 0);
	len = homa_engine_output(e, 0, pkt, sizeof(pkt), &tx);
	assert_true(len > HOMA_DATA_HDR_LEN);
	assert_memory_equal(pkt + HOMA_DATA_HDR_LEN, bytes, (size_t)len - HOMA_DATA_HDR_LEN);
	homa_engine_stats(e, &st);
	assert_int_equal(st.payload_copied_out, (uint64_t)len - HOMA_DATA_HDR_LEN);
	assert_int_equal(calls, 0);
	assert_int_equal(homa_engine_abort(e, id, 1), 0);
	assert_int_equal(calls, 1);
	homa_engine_free(e);
	assert_int_equal(calls, 1);
}

/** homa_engine_free() frees a borrowed message still attached: done runs then. */
static void homa_msg_build_ref__done_on_engine_free(void **state)
{
	static uint8_t bytes[500];
	homa_addr a = homa_addr_ipv4(0x0a000001), srv = homa_addr_ipv4(0x0a000002);
	struct homa_iov iov = {bytes, sizeof(bytes)};
	homa_engine *e;
	homa_msg *m;
	uint64_t id;
	int calls = 0;

	(void)state;
	assert_int_equal(homa_engine_new(&e, NULL, &a, 4000, NULL, 0), 0);
	assert_int_equal(homa_msg_build_ref(NULL, &iov, 1, done, &calls, &m), 0);
	assert_int_equal(homa_engine_send_request_msg(e, &srv, 4001, m, 0, 0, &id), 0);
	homa_engine_free(e);
	assert_int_equal(calls, 1);
}

/** Allocation hooks that count the frees of blocks of one size. */
struct counted {
	size_t size;  /**< the size counted */
	int allocs, frees;
};

/** counted_alloc() - malloc, counting blocks of the counted size. */
static void *counted_alloc(void *ctx, size_t size)
{
	struct counted *c = ctx;

	c->allocs += size == c->size;
	return malloc(size);
}

/** counted_free() - free, counting blocks of the counted size. */
static void counted_free(void *ctx, void *p, size_t size)
{
	struct counted *c = ctx;

	c->frees += size == c->size;
	free(p);
}

/**
 * lend_engine() - A client engine allocating through @c; with @seal_hooks
 * packet hooks that only reserve overhead (the caller seals).
 */
static homa_engine *lend_engine(struct counted *c, bool seal_hooks)
{
	static const struct homa_packet_hooks reserve = {.overhead = 32};
	homa_addr a = homa_addr_ipv4(0x0a000001);
	struct homa_alloc al = {counted_alloc, counted_free, c};
	homa_engine *e;

	assert_int_equal(homa_engine_new(&e, NULL, &a, 4000, &al, 0), 0);
	if (seal_hooks)
		homa_engine_set_hooks(e, &reserve);
	return e;
}

/**
 * homa_engine_output_ref__chunks_outlive_the_packet() - With hooks that
 * only reserve overhead, a copied request's DATA payload is lent from
 * the engine's chunk (no copy, payload_copied_out stays at the message
 * copy); aborting the RPC then frees nothing until
 * homa_engine_output_sent(), and the lent bytes are intact meanwhile.
 * The old engine copied the payload (ref.len 0).
 */
static void homa_engine_output_ref__chunks_outlive_the_packet(void **state)
{
	enum { N = 3000 };
	homa_addr srv = homa_addr_ipv4(0x0a000002);
	struct counted c = {.size = N};
	static uint8_t bytes[N];
	struct homa_iov iov = {bytes, N}, ref;
	struct homa_stats st;
	struct homa_tx tx;
	uint8_t pkt[2000];
	homa_engine *e = lend_engine(&c, true);
	uint64_t id;
	int len;

	(void)state;
	for (size_t i = 0; i < N; i++)
		bytes[i] = (uint8_t)(i * 13);
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, N, 0, &id), 0);
	assert_int_equal(c.allocs, 1);
	len = homa_engine_output_ref(e, 0, pkt, sizeof(pkt), &tx, &ref);
	assert_int_equal(len, HOMA_DATA_HDR_LEN);
	assert_true(ref.len > 1000);
	assert_memory_equal(ref.base, bytes, ref.len);
	homa_engine_stats(e, &st);
	assert_int_equal(st.payload_copied_out, N);  /* the message's copy only */
	assert_int_equal(homa_engine_abort(e, id, 1), 0);
	assert_int_equal(c.frees, 0);
	assert_memory_equal(ref.base, bytes, ref.len);
	homa_engine_output_sent(e);
	assert_int_equal(c.frees, 1);
	homa_engine_free(e);
}

/**
 * homa_engine_output_sent__later_frees_direct() - A message freed after
 * homa_engine_output_sent() (its packets sent) goes at once; one retired
 * when the engine is freed is freed with it; without hooks and for
 * payloads under HOMA_REF_MIN_CHUNK the engine copies as before.
 */
static void homa_engine_output_sent__later_frees_direct(void **state)
{
	homa_addr srv = homa_addr_ipv4(0x0a000002);
	static uint8_t bytes[3000];
	struct homa_iov iov = {bytes, 3000}, ref;
	struct counted c = {.size = 3000};
	struct homa_tx tx;
	uint8_t pkt[2000];
	homa_engine *e = lend_engine(&c, true);
	uint64_t id;

	(void)state;
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, 3000, 0, &id), 0);
	assert_true(homa_engine_output_ref(e, 0, pkt, sizeof(pkt), &tx, &ref) > 0);
	assert_true(ref.len > 0);
	homa_engine_output_sent(e);
	assert_int_equal(homa_engine_abort(e, id, 1), 0);
	assert_int_equal(c.frees, 1);  /* freed at once */
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, 3000, 0, &id), 0);
	assert_true(homa_engine_output_ref(e, 0, pkt, sizeof(pkt), &tx, &ref) > 0);
	assert_int_equal(homa_engine_abort(e, id, 1), 0);
	assert_int_equal(c.frees, 1);  /* retired */
	homa_engine_free(e);
	assert_int_equal(c.frees, 2);

	c = (struct counted){.size = 3000};
	e = lend_engine(&c, false);
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, 3000, 0, &id), 0);
	assert_true(homa_engine_output_ref(e, 0, pkt, sizeof(pkt), &tx, &ref) > HOMA_DATA_HDR_LEN);
	assert_int_equal(ref.len, 0);  /* no hooks: copied */
	homa_engine_free(e);

	e = lend_engine(&c, true);
	iov.len = HOMA_REF_MIN_CHUNK - 1;
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, iov.len, 0, &id), 0);
	assert_int_equal(homa_engine_output_ref(e, 0, pkt, sizeof(pkt), &tx, &ref),
			 HOMA_DATA_HDR_LEN + HOMA_REF_MIN_CHUNK - 1);
	assert_int_equal(ref.len, 0);  /* too small to lend */
	homa_engine_free(e);
}

/**
 * homa_engine_output_refs__payload_across_chunks() - A 70000-byte
 * request (all unscheduled) whose packet spans the first 64 KiB chunk's
 * end: with two entries it is lent in two pieces (the end of chunk 0, the
 * start of chunk 1), with one it is copied whole; every packet's payload
 * equals the message.
 */
static void homa_engine_output_refs__payload_across_chunks(void **state)
{
	enum { N = 70000 };
	homa_addr a = homa_addr_ipv4(0x0a000001), srv = homa_addr_ipv4(0x0a000002);
	static const struct homa_packet_hooks reserve = {.overhead = 32};
	static uint8_t bytes[N];
	struct homa_iov iov = {bytes, N};
	struct homa_settings s;
	int split = 0, copied = 0;

	(void)state;
	for (size_t i = 0; i < N; i++)
		bytes[i] = (uint8_t)(i * 7 + (i >> 8));
	homa_settings_default(&s);
	s.unsched_bytes = 100000;
	for (int nref = 1; nref <= 2; nref++) {
		struct homa_iov ref[2];
		struct homa_tx tx;
		uint8_t pkt[2000];
		homa_engine *e;
		uint32_t off;
		uint64_t id;
		int len;

		assert_int_equal(homa_engine_new(&e, &s, &a, 4000, NULL, 0), 0);
		homa_engine_set_hooks(e, &reserve);
		assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, N, 0, &id), 0);
		off = 0;  /* one message, all unscheduled: DATA packets in order, paced */
		for (uint64_t now = 0; off < N && now < 1000000000ull; now += 10000) {
			while ((len = homa_engine_output_refs(e, now, pkt, sizeof(pkt), &tx, ref, nref)) > 0) {
				size_t pay = ref[0].len + (nref == 2 ? ref[1].len : 0);

				assert_int_equal(tx.type, HOMA_PKT_DATA);
				if (!pay) {  /* copied */
					pay = (size_t)len - HOMA_DATA_HDR_LEN;
					copied += off < 65536 && off + pay > 65536;
					assert_memory_equal(pkt + HOMA_DATA_HDR_LEN, bytes + off, pay);
				} else {
					assert_int_equal(len, HOMA_DATA_HDR_LEN);
					assert_memory_equal(ref[0].base, bytes + off, ref[0].len);
					if (nref == 2 && ref[1].len) {
						split++;
						assert_int_equal(off + ref[0].len, 65536);
						assert_memory_equal(ref[1].base, bytes + 65536, ref[1].len);
					}
				}
				off += (uint32_t)pay;
			}
		}
		assert_int_equal(off, N);
		homa_engine_output_sent(e);
		homa_engine_free(e);
	}
	assert_int_equal(copied, 1);  /* one entry: the spanning packet is copied */
	assert_int_equal(split, 1);   /* two: it is lent in two pieces */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_msg_build_ref__segments_and_copy),
		cmocka_unit_test(homa_msg_build_ref__errors),
		cmocka_unit_test(homa_msg_build_ref__sent_then_done_on_abort),
		cmocka_unit_test(homa_msg_build_ref__done_on_engine_free),
		cmocka_unit_test(homa_engine_output_ref__chunks_outlive_the_packet),
		cmocka_unit_test(homa_engine_output_sent__later_frees_direct),
		cmocka_unit_test(homa_engine_output_refs__payload_across_chunks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
