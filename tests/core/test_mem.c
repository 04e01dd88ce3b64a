/* SPDX-License-Identifier: MIT */
/**
 * @file test_mem.c
 * Message buffers (src/core/mem.c): messages that borrow the caller's
 * bytes (homa_msg_build_ref()) read through segments and copies like
 * chunked ones, go out as DATA packets carrying the caller's bytes, and
 * call their done function exactly once, when freed.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_msg_build_ref__segments_and_copy),
		cmocka_unit_test(homa_msg_build_ref__errors),
		cmocka_unit_test(homa_msg_build_ref__sent_then_done_on_abort),
		cmocka_unit_test(homa_msg_build_ref__done_on_engine_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
