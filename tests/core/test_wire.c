/* SPDX-License-Identifier: MIT */
/**
 * @file test_wire.c
 * The wire codec (src/core/wire.c) against hand-written big-endian byte
 * vectors for every packet type (offsets as in GUIDE section 3), round
 * trips, every decode error and ENOSPC.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "homa/errors.h"
#include "homa/wire.h"

/* Common header used by every vector: sport 0x1234, dport 0x5678,
 * seq 0x00010203, type T, doff D, flags 0, window HOMA_EXT_MARK and
 * extension bits F, sender_id 0x1122334455667788. */
#define COMMON(T, D, F) \
	0x12, 0x34, 0x56, 0x78, 0x00, 0x01, 0x02, 0x03, 0x00, 0x00, 0x00, T, \
	D, 0x00, 0x48, F, 0x00, 0x00, 0x00, 0x00, \
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88

/** DATA: message_length 131072 @28, incoming 10000 @32, ack {0xa1..a8, 0xb1b2}
 * @36/@44, cutoff_version 0x0c0d @46, retransmit 1 @48, offset 0x10203 @52,
 * payload "abc" @56. */
static const uint8_t data_vec[] = {
	COMMON(0x10, 0xe0, 0x01),
	0x00, 0x02, 0x00, 0x00,                         /* 28 message_length */
	0x00, 0x00, 0x27, 0x10,                         /* 32 incoming */
	0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, /* 36 ack.client_id */
	0xb1, 0xb2,                                     /* 44 ack.server_port */
	0x0c, 0x0d,                                     /* 46 cutoff_version */
	0x01, 0x00, 0x00, 0x00,                         /* 48 retransmit, pad */
	0x00, 0x01, 0x02, 0x03,                         /* 52 offset */
	0x61, 0x62, 0x63,                               /* 56 payload */
};

/** GRANT: offset 0x00abcdef @28, priority 5 @32. */
static const uint8_t grant_vec[] = {
	COMMON(0x11, 0x50, 0x00),
	0x00, 0xab, 0xcd, 0xef, 0x05,
};

/** RESEND: offset 0x01020304 @28, length all ones @32, priority 3 @36. */
static const uint8_t resend_vec[] = {
	COMMON(0x12, 0x50, 0x00),
	0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xff, 0x03,
};

/** CUTOFFS: cutoffs {0,0,0,0,max,15000,2800,200} @28..59, version 0x0102 @60. */
static const uint8_t cutoffs_vec[] = {
	COMMON(0x15, 0x50, 0x00),
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x3a, 0x98,
	0x00, 0x00, 0x0a, 0xf0, 0x00, 0x00, 0x00, 0xc8,
	0x01, 0x02,
};

/** ACK: num_acks 2 @28; {0x10, 4000} @30, {0x0102030405060708, 4001} @40, 3 empty. */
static const uint8_t ack_vec[] = {
	COMMON(0x18, 0x50, 0x00),
	0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x0f, 0xa0,
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0f, 0xa1,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/** START_MSG: message_length 0x00100001 @28. */
static const uint8_t start_vec[] = {
	COMMON(0x19, 0x50, 0x00),
	0x00, 0x10, 0x00, 0x01,
};

/** Header-only packets. */
static const uint8_t unknown_vec[] = {COMMON(0x13, 0x50, 0x00)};
static const uint8_t busy_vec[] = {COMMON(0x14, 0x50, 0x00)};
static const uint8_t freeze_vec[] = {COMMON(0x16, 0x50, 0x00)};
static const uint8_t need_ack_vec[] = {COMMON(0x17, 0x50, 0x00)};

/** common() - A packet of @type with the common fields of the vectors. */
static struct homa_pkt common(uint8_t type)
{
	struct homa_pkt k;

	memset(&k, 0, sizeof(k));
	k.type = type;
	k.sport = 0x1234;
	k.dport = 0x5678;
	k.seq = 0x00010203;
	k.sender_id = 0x1122334455667788ull;
	k.doff = 0x77; /* the encoder must ignore this and write its own */
	return k;
}

/** check_encode() - @k encodes to exactly @vec (unused bytes zero over a dirty buffer). */
static void check_encode(const struct homa_pkt *k, const uint8_t *vec, size_t len)
{
	uint8_t buf[200];

	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(homa_wire_encode(k, buf, sizeof(buf)), (int)len);
	assert_memory_equal(buf, vec, len);
	assert_int_equal(buf[len], 0xaa);
}

/** check_common() - Decoded common fields match the vectors' (@ext: extension bits). */
static void check_common(const struct homa_pkt *k, uint8_t type, uint8_t doff, uint8_t ext)
{
	assert_int_equal(k->type, type);
	assert_int_equal(k->sport, 0x1234);
	assert_int_equal(k->dport, 0x5678);
	assert_int_equal(k->seq, 0x00010203);
	assert_int_equal(k->doff, doff);
	assert_int_equal(k->flags, 0);
	assert_int_equal(k->ext, ext);
	assert_true(k->ours);
	assert_true(k->sender_id == 0x1122334455667788ull);
}

/** homa_wire__data_bytes() - DATA encodes to and decodes from its byte vector. */
static void homa_wire__data_bytes(void **state)
{
	struct homa_pkt k = common(HOMA_PKT_DATA), d;

	k.ext = HOMA_EXT_INCAST;
	k.u.data.message_length = 131072;
	k.u.data.incoming = 10000;
	k.u.data.ack.client_id = 0xa1a2a3a4a5a6a7a8ull;
	k.u.data.ack.server_port = 0xb1b2;
	k.u.data.cutoff_version = 0x0c0d;
	k.u.data.retransmit = 1;
	k.u.data.offset = 0x10203;
	k.u.data.payload = (const uint8_t *)"abc";
	k.u.data.payload_len = 3;
	check_encode(&k, data_vec, sizeof(data_vec));
	assert_int_equal(sizeof(data_vec), HOMA_DATA_HDR_LEN + 3);
	assert_int_equal(homa_wire_decode(data_vec, sizeof(data_vec), &d), 0);
	check_common(&d, HOMA_PKT_DATA, HOMA_DOFF_DATA, HOMA_EXT_INCAST);
	assert_int_equal(d.u.data.message_length, 131072);
	assert_int_equal(d.u.data.incoming, 10000);
	assert_true(d.u.data.ack.client_id == 0xa1a2a3a4a5a6a7a8ull);
	assert_int_equal(d.u.data.ack.server_port, 0xb1b2);
	assert_int_equal(d.u.data.cutoff_version, 0x0c0d);
	assert_int_equal(d.u.data.retransmit, 1);
	assert_int_equal(d.u.data.offset, 0x10203);
	assert_int_equal(d.u.data.payload_len, 3);
	assert_ptr_equal(d.u.data.payload, data_vec + 56);
}

/** homa_wire__grant_bytes() - GRANT: offset @28, priority @32, 33 bytes. */
static void homa_wire__grant_bytes(void **state)
{
	struct homa_pkt k = common(HOMA_PKT_GRANT), d;

	k.u.grant.offset = 0x00abcdef;
	k.u.grant.priority = 5;
	check_encode(&k, grant_vec, sizeof(grant_vec));
	assert_int_equal(sizeof(grant_vec), HOMA_GRANT_LEN);
	assert_int_equal(homa_wire_decode(grant_vec, sizeof(grant_vec), &d), 0);
	check_common(&d, HOMA_PKT_GRANT, HOMA_DOFF_CONTROL, 0);
	assert_int_equal(d.u.grant.offset, 0x00abcdef);
	assert_int_equal(d.u.grant.priority, 5);
}

/** homa_wire__resend_bytes() - RESEND: offset @28, length @32, priority @36. */
static void homa_wire__resend_bytes(void **state)
{
	struct homa_pkt k = common(HOMA_PKT_RESEND), d;

	k.u.resend.offset = 0x01020304;
	k.u.resend.length = HOMA_RESEND_ALL;
	k.u.resend.priority = 3;
	check_encode(&k, resend_vec, sizeof(resend_vec));
	assert_int_equal(sizeof(resend_vec), HOMA_RESEND_LEN);
	assert_int_equal(homa_wire_decode(resend_vec, sizeof(resend_vec), &d), 0);
	check_common(&d, HOMA_PKT_RESEND, HOMA_DOFF_CONTROL, 0);
	assert_int_equal(d.u.resend.offset, 0x01020304);
	assert_int_equal(d.u.resend.length, 0xffffffffu);
	assert_int_equal(d.u.resend.priority, 3);
}

/** homa_wire__cutoffs_bytes() - CUTOFFS: 8 cutoffs @28..59, version @60. */
static void homa_wire__cutoffs_bytes(void **state)
{
	static const uint32_t cut[8] = {0, 0, 0, 0, 0xffffffffu, 15000, 2800, 200};
	struct homa_pkt k = common(HOMA_PKT_CUTOFFS), d;

	memcpy(k.u.cutoffs.cutoffs, cut, sizeof(cut));
	k.u.cutoffs.version = 0x0102;
	check_encode(&k, cutoffs_vec, sizeof(cutoffs_vec));
	assert_int_equal(sizeof(cutoffs_vec), HOMA_CUTOFFS_LEN);
	assert_int_equal(homa_wire_decode(cutoffs_vec, sizeof(cutoffs_vec), &d), 0);
	check_common(&d, HOMA_PKT_CUTOFFS, HOMA_DOFF_CONTROL, 0);
	assert_memory_equal(d.u.cutoffs.cutoffs, cut, sizeof(cut));
	assert_int_equal(d.u.cutoffs.version, 0x0102);
}

/** homa_wire__ack_bytes() - ACK: num_acks @28, entries of 10 bytes from @30. */
static void homa_wire__ack_bytes(void **state)
{
	struct homa_pkt k = common(HOMA_PKT_ACK), d;

	k.u.ack.num_acks = 2;
	k.u.ack.acks[0].client_id = 0x10;
	k.u.ack.acks[0].server_port = 4000;
	k.u.ack.acks[1].client_id = 0x0102030405060708ull;
	k.u.ack.acks[1].server_port = 4001;
	check_encode(&k, ack_vec, sizeof(ack_vec));
	assert_int_equal(sizeof(ack_vec), HOMA_ACK_LEN);
	assert_int_equal(homa_wire_decode(ack_vec, sizeof(ack_vec), &d), 0);
	check_common(&d, HOMA_PKT_ACK, HOMA_DOFF_CONTROL, 0);
	assert_int_equal(d.u.ack.num_acks, 2);
	assert_int_equal(d.u.ack.acks[0].client_id, 0x10);
	assert_int_equal(d.u.ack.acks[0].server_port, 4000);
	assert_true(d.u.ack.acks[1].client_id == 0x0102030405060708ull);
	assert_int_equal(d.u.ack.acks[1].server_port, 4001);
	assert_int_equal(d.u.ack.acks[2].client_id, 0);
}

/** homa_wire__start_msg_bytes() - START_MSG (0x19): message_length @28, 32 bytes. */
static void homa_wire__start_msg_bytes(void **state)
{
	struct homa_pkt k = common(HOMA_PKT_START_MSG), d;

	k.u.start.message_length = 0x00100001;
	check_encode(&k, start_vec, sizeof(start_vec));
	assert_int_equal(sizeof(start_vec), HOMA_START_MSG_LEN);
	assert_int_equal(homa_wire_decode(start_vec, sizeof(start_vec), &d), 0);
	check_common(&d, HOMA_PKT_START_MSG, HOMA_DOFF_CONTROL, 0);
	assert_int_equal(d.u.start.message_length, 0x00100001);
}

/** homa_wire__header_only_bytes() - RPC_UNKNOWN, BUSY, FREEZE, NEED_ACK: 28 bytes. */
static void homa_wire__header_only_bytes(void **state)
{
	static const struct {
		uint8_t type;
		const uint8_t *vec;
	} t[] = {{HOMA_PKT_RPC_UNKNOWN, unknown_vec}, {HOMA_PKT_BUSY, busy_vec},
		 {HOMA_PKT_FREEZE, freeze_vec}, {HOMA_PKT_NEED_ACK, need_ack_vec}};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct homa_pkt k = common(t[i].type), d;

		check_encode(&k, t[i].vec, HOMA_CONTROL_LEN);
		assert_int_equal(homa_wire_decode(t[i].vec, HOMA_CONTROL_LEN, &d), 0);
		check_common(&d, t[i].type, HOMA_DOFF_CONTROL, 0);
	}
}

/*
 * A DATA packet as the Linux module builds an original (not retransmitted)
 * single-segment packet (homa_outgoing.c): flags 6 and urgent 0xb97d (its
 * TCP-hijacking marker, set even with hijacking off), window 0, the
 * segment offset -1 and the real offset (2832) in the common seq field.
 */
static const uint8_t module_data_vec[] = {
	0x9c, 0x40, 0x0f, 0xa0, 0x00, 0x00, 0x0b, 0x10, 0x00, 0x00, 0x00, 0x10,
	0xe0, 0x06, 0x00, 0x00, 0x00, 0x00, 0xb9, 0x7d,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64,  /* sender_id 100 */
	0x00, 0x00, 0x27, 0x10,                         /* 28 message_length 10000 */
	0x00, 0x00, 0x27, 0x10,                         /* 32 incoming */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0,                   /* 36 no ack */
	0x00, 0x01,                                     /* 46 cutoff_version */
	0x00, 0x00, 0x00, 0x00,                         /* 48 retransmit 0, pad */
	0xff, 0xff, 0xff, 0xff,                         /* 52 offset -1: see seq */
	0x61, 0x62, 0x63,                               /* 56 payload */
};

/**
 * homa_wire_decode__module_data_offset_in_seq() - A module DATA packet
 * with segment offset -1 decodes with the offset from seq (it was dropped
 * as a bad offset), its flags byte 6 sets no extension bit, and it is not
 * taken for one of ours.
 */
static void homa_wire_decode__module_data_offset_in_seq(void **state)
{
	struct homa_pkt d;

	assert_int_equal(homa_wire_decode(module_data_vec, sizeof(module_data_vec), &d), 0);
	assert_int_equal(d.u.data.offset, 2832);
	assert_int_equal(d.u.data.payload_len, 3);
	assert_int_equal(d.flags, 6);
	assert_int_equal(d.urgent, 0xb97d);
	assert_int_equal(d.ext, 0);
	assert_false(d.ours);
}

/**
 * homa_wire_decode__module_flags_are_not_extensions() - Every header-only
 * packet with the module's flags 6 and window 0 (e.g. its RPC_UNKNOWN)
 * carries no extension bit; the same bits in our window field do.
 */
static void homa_wire_decode__module_flags_are_not_extensions(void **state)
{
	uint8_t b[HOMA_CONTROL_LEN];
	struct homa_pkt d;

	memcpy(b, unknown_vec, sizeof(b));
	b[13] = 6;
	b[14] = 0;
	b[15] = HOMA_EXT_FINISHED | HOMA_EXT_INCAST;
	assert_int_equal(homa_wire_decode(b, sizeof(b), &d), 0);
	assert_int_equal(d.ext, 0);
	assert_false(d.ours);
	b[14] = HOMA_EXT_MARK;
	assert_int_equal(homa_wire_decode(b, sizeof(b), &d), 0);
	assert_int_equal(d.ext, HOMA_EXT_FINISHED | HOMA_EXT_INCAST);
	assert_true(d.ours);
}

/** sample() - A packet of @type with every field set from @seed. */
static struct homa_pkt sample(uint8_t type, uint32_t seed, const uint8_t *payload)
{
	struct homa_pkt k;
	int i;

	memset(&k, 0, sizeof(k));
	k.type = type;
	k.sport = (uint16_t)(seed * 7 + 1);
	k.dport = (uint16_t)(seed * 13 + 2);
	k.seq = seed * 0x01010101u;
	k.flags = (uint8_t)seed;
	k.ext = (uint8_t)(seed * 3);
	k.ours = true; /* every encoded packet carries the marker */
	k.urgent = (uint16_t)(seed * 101);
	k.sender_id = 0x8000000000000000ull | ((uint64_t)seed << 20) | seed;
	k.doff = type == HOMA_PKT_DATA ? HOMA_DOFF_DATA : HOMA_DOFF_CONTROL;
	switch (type) {
	case HOMA_PKT_DATA:
		k.u.data.message_length = 100000 + seed;
		k.u.data.incoming = 40000 + seed;
		k.u.data.ack.client_id = seed * 2ull;
		k.u.data.ack.server_port = (uint16_t)(seed + 3);
		k.u.data.cutoff_version = (uint16_t)(seed + 4);
		k.u.data.retransmit = (uint8_t)(seed & 1);
		k.u.data.offset = seed * 1416;
		k.u.data.payload = payload;
		k.u.data.payload_len = 1 + seed % 1000;
		break;
	case HOMA_PKT_GRANT:
		k.u.grant.offset = seed * 999;
		k.u.grant.priority = (uint8_t)(seed % 8);
		break;
	case HOMA_PKT_RESEND:
		k.u.resend.offset = seed * 77;
		k.u.resend.length = seed * 1001;
		k.u.resend.priority = (uint8_t)((seed + 1) % 8);
		break;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < 8; i++)
			k.u.cutoffs.cutoffs[i] = seed * (uint32_t)(i + 1) * 100003u;
		k.u.cutoffs.version = (uint16_t)(seed * 3);
		break;
	case HOMA_PKT_ACK:
		k.u.ack.num_acks = (uint16_t)(seed % 6);
		for (i = 0; i < HOMA_MAX_ACKS; i++) {
			k.u.ack.acks[i].client_id = (seed + (uint32_t)i) * 0x100000002ull;
			k.u.ack.acks[i].server_port = (uint16_t)(seed + (uint32_t)i);
		}
		break;
	case HOMA_PKT_START_MSG:
		k.u.start.message_length = seed + 1;
		break;
	default:
		break;
	}
	return k;
}

/** homa_wire__round_trip_all_types() - decode(encode(p)) == p and re-encoding is identical. */
static void homa_wire__round_trip_all_types(void **state)
{
	static uint8_t payload[1000], buf[2000], buf2[2000];
	uint8_t type;
	uint32_t seed;

	for (seed = 0; seed < sizeof(payload); seed++)
		payload[seed] = (uint8_t)(seed * 31 + 7);
	for (type = HOMA_PKT_FIRST; type < HOMA_PKT_FIRST + HOMA_PKT_TYPES; type++) {
		for (seed = 0; seed < 50; seed++) {
			struct homa_pkt k = sample(type, seed, payload), d;
			int len = homa_wire_encode(&k, buf, sizeof(buf));

			assert_true(len >= (int)homa_wire_header_len(type));
			assert_int_equal(homa_wire_decode(buf, (size_t)len, &d), 0);
			if (type == HOMA_PKT_DATA) {
				assert_int_equal(d.u.data.payload_len, k.u.data.payload_len);
				assert_memory_equal(d.u.data.payload, payload, k.u.data.payload_len);
				d.u.data.payload = k.u.data.payload;
			}
			if (type == HOMA_PKT_ACK) /* entries past num_acks still round-trip */
				assert_memory_equal(d.u.ack.acks, k.u.ack.acks, sizeof(k.u.ack.acks));
			assert_memory_equal(&d, &k, sizeof(k));
			assert_int_equal(homa_wire_encode(&d, buf2, sizeof(buf2)), len);
			assert_memory_equal(buf, buf2, (size_t)len);
		}
	}
}

/**
 * decode_why() - homa_wire_decode_why() for a packet that must be refused:
 * checks that both entry points return HOMA_EPROTO. Return: the reason.
 */
static int decode_why(const uint8_t *buf, size_t len, struct homa_pkt *d)
{
	enum homa_wire_error why = HOMA_WIRE_OK;

	assert_int_equal(homa_wire_decode(buf, len, d), HOMA_EPROTO);
	assert_int_equal(homa_wire_decode_why(buf, len, d, &why), HOMA_EPROTO);
	return (int)why;
}

/**
 * homa_wire_decode__errors_are_homa_codes() - A refused packet gives
 * HOMA_EPROTO, whose text says so (the reason is separate), and an
 * accepted one reports HOMA_WIRE_OK.
 */
static void homa_wire_decode__errors_are_homa_codes(void **state)
{
	uint8_t buf[sizeof(grant_vec)];
	enum homa_wire_error why = HOMA_WIRE_BAD_FIELD;
	struct homa_pkt d;

	(void)state;
	memcpy(buf, grant_vec, sizeof(buf));
	buf[11] = 0x7f;  /* unknown type */
	assert_string_equal(homa_strerror(homa_wire_decode(buf, sizeof(buf), &d)),
			    homa_strerror(HOMA_EPROTO));
	assert_int_equal(homa_wire_decode_why(grant_vec, sizeof(grant_vec), &d, &why), 0);
	assert_int_equal(why, HOMA_WIRE_OK);
}

/** homa_wire_decode__truncated_every_type() - Any length below the type's header is refused. */
static void homa_wire_decode__truncated_every_type(void **state)
{
	uint8_t buf[200], payload[4] = {9, 8, 7, 6};
	struct homa_pkt d;
	uint8_t type;
	size_t len;

	for (type = HOMA_PKT_FIRST; type < HOMA_PKT_FIRST + HOMA_PKT_TYPES; type++) {
		struct homa_pkt k = sample(type, 1, payload);
		size_t hdr = homa_wire_header_len(type);

		assert_true(homa_wire_encode(&k, buf, sizeof(buf)) > 0);
		for (len = 0; len < hdr; len++)
			assert_int_equal(decode_why(buf, len, &d), HOMA_WIRE_TRUNCATED);
	}
}

/** homa_wire_decode__unknown_type() - Type codes outside 0x10..0x19 are refused. */
static void homa_wire_decode__unknown_type(void **state)
{
	static const uint8_t types[] = {0x00, 0x0f, 0x1a, 0x20, 0xff};
	uint8_t buf[100];
	struct homa_pkt d;
	size_t i;

	for (i = 0; i < sizeof(types); i++) {
		memcpy(buf, busy_vec, sizeof(busy_vec));
		buf[11] = types[i];
		assert_int_equal(decode_why(buf, sizeof(busy_vec), &d), HOMA_WIRE_BAD_TYPE);
		assert_int_equal(decode_why(buf, sizeof(buf), &d), HOMA_WIRE_BAD_TYPE);
	}
}

/** homa_wire_decode__data_past_message_length() - offset + payload must fit the message. */
static void homa_wire_decode__data_past_message_length(void **state)
{
	uint8_t buf[sizeof(data_vec)];
	struct homa_pkt d;

	memcpy(buf, data_vec, sizeof(buf));
	/* message_length = offset + 3: exactly fits */
	buf[28] = 0x00; buf[29] = 0x01; buf[30] = 0x02; buf[31] = 0x06;
	assert_int_equal(homa_wire_decode(buf, sizeof(buf), &d), 0);
	buf[31] = 0x05; /* one byte short */
	assert_int_equal(decode_why(buf, sizeof(buf), &d), HOMA_WIRE_BAD_FIELD);
	/* offset near 2^32: no wrap-around (0xffffffff would mean "see seq") */
	buf[28] = buf[29] = buf[30] = buf[31] = 0xff;
	buf[52] = buf[53] = buf[54] = 0xff;
	buf[55] = 0xfe;
	assert_int_equal(decode_why(buf, sizeof(buf), &d), HOMA_WIRE_BAD_FIELD);
}

/**
 * homa_wire_decode__empty_data() - A DATA packet without payload is
 * refused in a non-empty message; it is the one packet of an empty
 * message (length 0, offset 0), which is accepted.
 */
static void homa_wire_decode__empty_data(void **state)
{
	uint8_t buf[HOMA_DATA_HDR_LEN];
	struct homa_pkt d;

	assert_int_equal(decode_why(data_vec, HOMA_DATA_HDR_LEN, &d), HOMA_WIRE_BAD_FIELD);
	assert_int_equal(homa_wire_decode(data_vec, HOMA_DATA_HDR_LEN + 1, &d), 0);
	assert_int_equal(d.u.data.payload_len, 1);
	memcpy(buf, data_vec, sizeof(buf));
	memset(buf + 28, 0, 4); /* message_length 0 */
	assert_int_equal(decode_why(buf, sizeof(buf), &d), HOMA_WIRE_BAD_FIELD); /* offset != 0 */
	memset(buf + 52, 0, 4); /* offset 0 */
	assert_int_equal(homa_wire_decode(buf, sizeof(buf), &d), 0);
	assert_int_equal(d.u.data.message_length, 0);
	assert_int_equal(d.u.data.payload_len, 0);
}

/** homa_wire_decode__too_many_acks() - num_acks above 5 is refused; 5 is fine. */
static void homa_wire_decode__too_many_acks(void **state)
{
	uint8_t buf[sizeof(ack_vec)];
	struct homa_pkt d;

	memcpy(buf, ack_vec, sizeof(buf));
	buf[29] = 5;
	assert_int_equal(homa_wire_decode(buf, sizeof(buf), &d), 0);
	buf[29] = 6;
	assert_int_equal(decode_why(buf, sizeof(buf), &d), HOMA_WIRE_BAD_FIELD);
	buf[28] = 1;
	buf[29] = 0;
	assert_int_equal(decode_why(buf, sizeof(buf), &d), HOMA_WIRE_BAD_FIELD);
}

/** homa_wire_decode__bad_priority() - GRANT and RESEND priorities must be below 8. */
static void homa_wire_decode__bad_priority(void **state)
{
	uint8_t g[sizeof(grant_vec)], r[sizeof(resend_vec)];
	struct homa_pkt d;

	memcpy(g, grant_vec, sizeof(g));
	memcpy(r, resend_vec, sizeof(r));
	g[32] = 7;
	r[36] = 7;
	assert_int_equal(homa_wire_decode(g, sizeof(g), &d), 0);
	assert_int_equal(homa_wire_decode(r, sizeof(r), &d), 0);
	g[32] = 8;
	r[36] = 8;
	assert_int_equal(decode_why(g, sizeof(g), &d), HOMA_WIRE_BAD_FIELD);
	assert_int_equal(decode_why(r, sizeof(r), &d), HOMA_WIRE_BAD_FIELD);
	g[32] = 0xff;
	assert_int_equal(decode_why(g, sizeof(g), &d), HOMA_WIRE_BAD_FIELD);
}

/** homa_wire_decode__start_msg_zero_length() - START_MSG announcing 0 bytes is refused. */
static void homa_wire_decode__start_msg_zero_length(void **state)
{
	uint8_t buf[sizeof(start_vec)];
	struct homa_pkt d;

	memcpy(buf, start_vec, sizeof(buf));
	memset(buf + 28, 0, 4);
	assert_int_equal(decode_why(buf, sizeof(buf), &d), HOMA_WIRE_BAD_FIELD);
}

/** homa_wire_decode__trailing_bytes() - Control packets may carry trailing bytes (ignored). */
static void homa_wire_decode__trailing_bytes(void **state)
{
	uint8_t buf[64];
	struct homa_pkt d;

	memset(buf, 0xee, sizeof(buf));
	memcpy(buf, grant_vec, sizeof(grant_vec));
	assert_int_equal(homa_wire_decode(buf, sizeof(buf), &d), 0);
	assert_int_equal(d.u.grant.offset, 0x00abcdef);
}

/** homa_wire_encode__enospc() - A buffer one byte short gives HOMA_ENOSPC, nothing written past it. */
static void homa_wire_encode__enospc(void **state)
{
	uint8_t payload[100], buf[300];
	uint8_t type;

	memset(payload, 1, sizeof(payload));
	for (type = HOMA_PKT_FIRST; type < HOMA_PKT_FIRST + HOMA_PKT_TYPES; type++) {
		struct homa_pkt k = sample(type, 3, payload);
		size_t need = homa_wire_header_len(type) +
			      (type == HOMA_PKT_DATA ? k.u.data.payload_len : 0);

		memset(buf, 0x5a, sizeof(buf));
		assert_int_equal(homa_wire_encode(&k, buf, need - 1), HOMA_ENOSPC);
		assert_int_equal(buf[0], 0x5a);
		assert_int_equal(homa_wire_encode(&k, buf, 0), HOMA_ENOSPC);
		assert_int_equal(homa_wire_encode(&k, buf, need), (int)need);
	}
}

/** homa_wire_encode__unknown_type() - Encoding an unknown type gives HOMA_EINVAL. */
static void homa_wire_encode__unknown_type(void **state)
{
	struct homa_pkt k = common(0x1a);
	uint8_t buf[100];

	assert_int_equal(homa_wire_encode(&k, buf, sizeof(buf)), HOMA_EINVAL);
	k.type = 0;
	assert_int_equal(homa_wire_encode(&k, buf, sizeof(buf)), HOMA_EINVAL);
}

/** homa_wire_header_len__every_type() - Header lengths and names of every type code. */
static void homa_wire_header_len__every_type(void **state)
{
	static const size_t lens[HOMA_PKT_TYPES] = {56, 33, 37, 28, 28, 62, 28, 28, 80, 32};
	static const char *const names[HOMA_PKT_TYPES] = {
		"DATA", "GRANT", "RESEND", "RPC_UNKNOWN", "BUSY",
		"CUTOFFS", "FREEZE", "NEED_ACK", "ACK", "START_MSG"};
	int i;

	for (i = 0; i < HOMA_PKT_TYPES; i++) {
		assert_int_equal(homa_wire_header_len((uint8_t)(0x10 + i)), lens[i]);
		assert_string_equal(homa_wire_type_name((uint8_t)(0x10 + i)), names[i]);
	}
	assert_int_equal(homa_wire_header_len(0x0f), 0);
	assert_int_equal(homa_wire_header_len(0x1a), 0);
	assert_string_equal(homa_wire_type_name(0x1a), "UNKNOWN");
	assert_string_equal(homa_wire_type_name(0), "UNKNOWN");
	assert_int_equal(HOMA_DOFF_DATA, 0xe0);
	assert_int_equal(HOMA_DOFF_CONTROL, 0x50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_wire__data_bytes),
		cmocka_unit_test(homa_wire__grant_bytes),
		cmocka_unit_test(homa_wire__resend_bytes),
		cmocka_unit_test(homa_wire__cutoffs_bytes),
		cmocka_unit_test(homa_wire__ack_bytes),
		cmocka_unit_test(homa_wire__start_msg_bytes),
		cmocka_unit_test(homa_wire__header_only_bytes),
		cmocka_unit_test(homa_wire__round_trip_all_types),
		cmocka_unit_test(homa_wire_decode__module_data_offset_in_seq),
		cmocka_unit_test(homa_wire_decode__module_flags_are_not_extensions),
		cmocka_unit_test(homa_wire_decode__errors_are_homa_codes),
		cmocka_unit_test(homa_wire_decode__truncated_every_type),
		cmocka_unit_test(homa_wire_decode__unknown_type),
		cmocka_unit_test(homa_wire_decode__data_past_message_length),
		cmocka_unit_test(homa_wire_decode__empty_data),
		cmocka_unit_test(homa_wire_decode__too_many_acks),
		cmocka_unit_test(homa_wire_decode__bad_priority),
		cmocka_unit_test(homa_wire_decode__start_msg_zero_length),
		cmocka_unit_test(homa_wire_decode__trailing_bytes),
		cmocka_unit_test(homa_wire_encode__enospc),
		cmocka_unit_test(homa_wire_encode__unknown_type),
		cmocka_unit_test(homa_wire_header_len__every_type),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
