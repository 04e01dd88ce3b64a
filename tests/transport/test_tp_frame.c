/* SPDX-License-Identifier: MIT */
/**
 * @file test_tp_frame.c
 * The TCP transport's wire format (tp_frame.c): round trips, and every
 * malformed field refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tp.h"

static void frame__header_round_trip(void **state)
{
	struct tp_hdr h = {.len = 0x01020304, .type = TP_RESPONSE, .id = 0x1122334455667788ull};
	struct tp_hdr out;
	uint8_t b[TP_HDR_LEN];

	(void)state;
	tp_hdr_encode(&h, b);
	assert_int_equal(b[0], 0x01); /* big-endian length first */
	assert_int_equal(b[15], 0x88);
	assert_int_equal(tp_hdr_decode(b, UINT32_MAX, TP_RESPONSE, &out), 0);
	assert_int_equal(out.len, h.len);
	assert_int_equal(out.type, TP_RESPONSE);
	assert_true(out.id == h.id);
}

static void frame__bad_headers_refused(void **state)
{
	struct tp_hdr h = {.len = 100, .type = TP_REQUEST, .id = 2};
	struct tp_hdr out = {0};
	uint8_t b[TP_HDR_LEN], bad[TP_HDR_LEN];

	(void)state;
	tp_hdr_encode(&h, b);
	assert_int_equal(tp_hdr_decode(b, 99, TP_REQUEST, &out), HOMA_EINVAL);   /* too long */
	assert_int_equal(tp_hdr_decode(b, 100, TP_RESPONSE, &out), HOMA_EINVAL); /* wrong type */
	memcpy(bad, b, sizeof(b));
	bad[5] = TP_VERSION + 1;
	assert_int_equal(tp_hdr_decode(bad, 100, TP_REQUEST, &out), HOMA_EINVAL);
	memcpy(bad, b, sizeof(b));
	bad[7] = 1;
	assert_int_equal(tp_hdr_decode(bad, 100, TP_REQUEST, &out), HOMA_EINVAL);
	assert_int_equal(out.len, 0); /* not written on error */
	assert_int_equal(tp_hdr_decode(b, 100, TP_REQUEST, &out), 0);
}

static void frame__preface(void **state)
{
	uint8_t b[TP_PREFACE_LEN], bad[TP_PREFACE_LEN];
	uint16_t port = 0;

	(void)state;
	tp_preface_encode(4000, b);
	assert_int_equal(tp_preface_decode(b, &port), 0);
	assert_int_equal(port, 4000);
	memcpy(bad, b, sizeof(b));
	bad[0] = 'G'; /* "GET / HTTP..." and the like */
	assert_int_equal(tp_preface_decode(bad, &port), HOMA_EINVAL);
	tp_preface_encode(0, bad);
	assert_int_equal(tp_preface_decode(bad, &port), HOMA_EINVAL);
	memcpy(bad, b, sizeof(b));
	bad[11] = 1;
	assert_int_equal(tp_preface_decode(bad, &port), HOMA_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frame__header_round_trip),
		cmocka_unit_test(frame__bad_headers_refused),
		cmocka_unit_test(frame__preface),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
