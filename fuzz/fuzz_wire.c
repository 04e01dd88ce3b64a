/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_wire.c
 * libFuzzer target for the wire codec (homa_wire_decode/encode).
 *
 * The first input byte picks a mode:
 *   even: the rest is a received packet. Decoding must not read outside
 *         it; a decoded packet must satisfy every documented check; encoding
 *         it back must give a packet that decodes to the same fields, and
 *         encoding is idempotent (encode(decode(encode(p))) == encode(p)).
 *         Encoding into a buffer one byte too small must fail with
 *         HOMA_ENOSPC without writing past it.
 *   odd:  the rest describes a struct homa_pkt field by field. Encoding must
 *         succeed; decoding must succeed exactly when the documented rules
 *         say the packet is valid, and then return the same fields.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_alloc.h"
#include "fuzz_input.h"
#include "homa/errors.h"
#include "homa/wire.h"

/** same_ack() - True if two ack entries are equal. */
static int same_ack(const struct homa_ack *a, const struct homa_ack *b)
{
	return a->client_id == b->client_id && a->server_port == b->server_port;
}

/** same_body() - Compare the type-specific fields of two decoded packets. */
static int same_body(const struct homa_pkt *a, const struct homa_pkt *b)
{
	int i;

	switch (a->type) {
	case HOMA_PKT_DATA:
		return a->u.data.message_length == b->u.data.message_length &&
		       a->u.data.incoming == b->u.data.incoming &&
		       same_ack(&a->u.data.ack, &b->u.data.ack) &&
		       a->u.data.cutoff_version == b->u.data.cutoff_version &&
		       a->u.data.retransmit == b->u.data.retransmit &&
		       a->u.data.offset == b->u.data.offset &&
		       a->u.data.payload_len == b->u.data.payload_len &&
		       memcmp(a->u.data.payload, b->u.data.payload, a->u.data.payload_len) == 0;
	case HOMA_PKT_GRANT:
		return a->u.grant.offset == b->u.grant.offset &&
		       a->u.grant.priority == b->u.grant.priority;
	case HOMA_PKT_RESEND:
		return a->u.resend.offset == b->u.resend.offset &&
		       a->u.resend.length == b->u.resend.length &&
		       a->u.resend.priority == b->u.resend.priority;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
			if (a->u.cutoffs.cutoffs[i] != b->u.cutoffs.cutoffs[i])
				return 0;
		return a->u.cutoffs.version == b->u.cutoffs.version;
	case HOMA_PKT_ACK:
		if (a->u.ack.num_acks != b->u.ack.num_acks)
			return 0;
		for (i = 0; i < a->u.ack.num_acks; i++)
			if (!same_ack(&a->u.ack.acks[i], &b->u.ack.acks[i]))
				return 0;
		return 1;
	case HOMA_PKT_START_MSG:
		return a->u.start.message_length == b->u.start.message_length;
	default:
		return 1;
	}
}

/** same_pkt() - Compare two decoded packets (doff excluded: encode sets it). */
static int same_pkt(const struct homa_pkt *a, const struct homa_pkt *b)
{
	return a->sport == b->sport && a->dport == b->dport && a->seq == b->seq &&
	       a->type == b->type && a->flags == b->flags && a->ext == b->ext &&
	       a->urgent == b->urgent && a->sender_id == b->sender_id &&
	       same_body(a, b);
}

/** check_decoded() - The documented guarantees of a successful decode. */
static void check_decoded(const uint8_t *buf, size_t len, const struct homa_pkt *p)
{
	size_t hdr = homa_wire_header_len(p->type);

	if (!hdr || hdr > len)
		fz_fail("decode accepted type 0x%02x with %zu bytes", p->type, len);
	if (strcmp(homa_wire_type_name(p->type), "UNKNOWN") == 0)
		fz_fail("decoded type 0x%02x has no name", p->type);
	switch (p->type) {
	case HOMA_PKT_DATA:
		if (p->u.data.payload != buf + HOMA_DATA_HDR_LEN ||
		    p->u.data.payload_len != len - HOMA_DATA_HDR_LEN ||
		    (p->u.data.payload_len == 0 && p->u.data.message_length != 0))
			fz_fail("DATA payload not where the packet puts it");
		if ((uint64_t)p->u.data.offset + p->u.data.payload_len > p->u.data.message_length)
			fz_fail("DATA payload past message_length accepted");
		break;
	case HOMA_PKT_GRANT:
		if (p->u.grant.priority >= HOMA_MAX_PRIORITIES)
			fz_fail("GRANT priority %u accepted", p->u.grant.priority);
		break;
	case HOMA_PKT_RESEND:
		if (p->u.resend.priority >= HOMA_MAX_PRIORITIES)
			fz_fail("RESEND priority %u accepted", p->u.resend.priority);
		break;
	case HOMA_PKT_ACK:
		if (p->u.ack.num_acks > HOMA_MAX_ACKS)
			fz_fail("ACK with %u entries accepted", p->u.ack.num_acks);
		break;
	case HOMA_PKT_START_MSG:
		if (p->u.start.message_length == 0)
			fz_fail("START_MSG of length 0 accepted");
		break;
	default:
		break;
	}
}

/** encode_exact() - Encode @p into a heap buffer of exactly @cap bytes. */
static int encode_exact(const struct homa_pkt *p, uint8_t **out, size_t cap)
{
	*out = malloc(cap ? cap : 1);
	if (!*out)
		abort();
	return homa_wire_encode(p, *out, cap);
}

/** round_trip() - Encode a decoded packet back and check it survives. */
static void round_trip(const struct homa_pkt *p, size_t want_len)
{
	struct homa_pkt q, r;
	uint8_t *b1, *b2, *small;
	int n1, n2, ns;

	n1 = encode_exact(p, &b1, want_len);
	if (n1 != (int)want_len)
		fz_fail("encode of a decoded %s gave %d, want %zu",
			homa_wire_type_name(p->type), n1, want_len);
	if (homa_wire_decode(b1, (size_t)n1, &q) != 0 || !same_pkt(p, &q))
		fz_fail("%s did not survive encode/decode", homa_wire_type_name(p->type));
	n2 = encode_exact(&q, &b2, want_len);
	if (n2 != n1 || memcmp(b1, b2, (size_t)n1) != 0)
		fz_fail("encoding of %s is not idempotent", homa_wire_type_name(p->type));
	if (homa_wire_decode(b2, (size_t)n2, &r) != 0 || !same_pkt(&q, &r))
		fz_fail("second round trip of %s changed it", homa_wire_type_name(p->type));
	ns = encode_exact(p, &small, want_len - 1);
	if (ns != HOMA_ENOSPC)
		fz_fail("encode into %zu bytes returned %d, want HOMA_ENOSPC", want_len - 1, ns);
	free(small);
	free(b1);
	free(b2);
}

/** fuzz_received() - Mode 0: @buf is a packet off the wire. */
static void fuzz_received(const uint8_t *data, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	struct homa_pkt p;
	size_t want;
	int r;

	if (!buf)
		abort();
	memcpy(buf, data, len);
	r = homa_wire_decode(buf, len, &p);
	if (r != 0 && r != HOMA_EPROTO)
		fz_fail("decode returned %d", r);
	if (r == 0) {
		check_decoded(buf, len, &p);
		want = homa_wire_header_len(p.type);
		if (p.type == HOMA_PKT_DATA)
			want += p.u.data.payload_len;
		round_trip(&p, want);
	}
	free(buf);
}

/** build_pkt() - Mode 1: fill a packet struct from the input. */
static void build_pkt(struct fz_in *in, struct homa_pkt *p, const uint8_t **payload)
{
	static const uint8_t types[] = {
		HOMA_PKT_DATA, HOMA_PKT_GRANT, HOMA_PKT_RESEND, HOMA_PKT_RPC_UNKNOWN,
		HOMA_PKT_BUSY, HOMA_PKT_CUTOFFS, HOMA_PKT_FREEZE, HOMA_PKT_NEED_ACK,
		HOMA_PKT_ACK, HOMA_PKT_START_MSG};
	size_t got;
	int i;

	memset(p, 0, sizeof(*p));
	p->type = types[fz_u8(in) % sizeof(types)];
	p->sport = fz_u16(in);
	p->dport = fz_u16(in);
	p->seq = fz_u32(in);
	p->flags = fz_u8(in);
	p->ext = fz_u8(in);
	p->urgent = fz_u16(in);
	p->sender_id = (uint64_t)fz_u32(in) << 32 | fz_u32(in);
	switch (p->type) {
	case HOMA_PKT_DATA:
		p->u.data.message_length = fz_u32(in);
		p->u.data.incoming = fz_u32(in);
		p->u.data.ack.client_id = fz_u32(in);
		p->u.data.ack.server_port = fz_u16(in);
		p->u.data.cutoff_version = fz_u16(in);
		p->u.data.retransmit = fz_u8(in);
		p->u.data.offset = fz_u32(in);
		if (p->u.data.offset == HOMA_OFFSET_IN_SEQ)
			p->seq = HOMA_OFFSET_IN_SEQ; /* decodes to the same offset */
		*payload = fz_bytes(in, fz_u16(in) % 2048, &got);
		p->u.data.payload = *payload;
		p->u.data.payload_len = (uint32_t)got;
		break;
	case HOMA_PKT_GRANT:
		p->u.grant.offset = fz_u32(in);
		p->u.grant.priority = fz_u8(in);
		break;
	case HOMA_PKT_RESEND:
		p->u.resend.offset = fz_u32(in);
		p->u.resend.length = fz_u32(in);
		p->u.resend.priority = fz_u8(in);
		break;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
			p->u.cutoffs.cutoffs[i] = fz_u32(in);
		p->u.cutoffs.version = fz_u16(in);
		break;
	case HOMA_PKT_ACK:
		p->u.ack.num_acks = fz_u8(in) % 8;
		for (i = 0; i < HOMA_MAX_ACKS; i++) {
			p->u.ack.acks[i].client_id = (uint64_t)fz_u32(in) << 8 | fz_u8(in);
			p->u.ack.acks[i].server_port = fz_u16(in);
		}
		break;
	case HOMA_PKT_START_MSG:
		p->u.start.message_length = fz_u32(in);
		break;
	default:
		break;
	}
}

/** valid_per_doc() - Should homa_wire_decode() accept @p (wire.h rules)? */
static int valid_per_doc(const struct homa_pkt *p)
{
	switch (p->type) {
	case HOMA_PKT_DATA:
		/* no payload only in an empty message (its one packet) */
		return (p->u.data.payload_len > 0 || p->u.data.message_length == 0) &&
		       (uint64_t)p->u.data.offset + p->u.data.payload_len <= p->u.data.message_length;
	case HOMA_PKT_GRANT: return p->u.grant.priority < HOMA_MAX_PRIORITIES;
	case HOMA_PKT_RESEND: return p->u.resend.priority < HOMA_MAX_PRIORITIES;
	case HOMA_PKT_ACK: return p->u.ack.num_acks <= HOMA_MAX_ACKS;
	case HOMA_PKT_START_MSG: return p->u.start.message_length > 0;
	default: return 1;
	}
}

/** fuzz_built() - Mode 1: encode a described packet, decode, compare. */
static void fuzz_built(const uint8_t *data, size_t len)
{
	struct fz_in in;
	struct homa_pkt p, q;
	const uint8_t *payload = NULL;
	uint8_t *buf;
	size_t want;
	int n, r;

	fz_in_init(&in, data, len);
	build_pkt(&in, &p, &payload);
	want = homa_wire_header_len(p.type) + (p.type == HOMA_PKT_DATA ? p.u.data.payload_len : 0);
	n = encode_exact(&p, &buf, want);
	if (n != (int)want)
		fz_fail("encode of %s gave %d, want %zu", homa_wire_type_name(p.type), n, want);
	if ((buf[12] >> 4) * 4 != (p.type == HOMA_PKT_DATA ? HOMA_DATA_HDR_LEN : 20))
		fz_fail("%s encoded with doff 0x%02x", homa_wire_type_name(p.type), buf[12]);
	enum homa_wire_error why;

	r = homa_wire_decode_why(buf, (size_t)n, &q, &why);
	if (valid_per_doc(&p)) {
		if (r != 0 || !same_pkt(&p, &q))
			fz_fail("valid %s did not decode to itself (%d)", homa_wire_type_name(p.type), r);
	} else if (r != HOMA_EPROTO || why != HOMA_WIRE_BAD_FIELD) {
		fz_fail("invalid %s decoded with %d, want BAD_FIELD", homa_wire_type_name(p.type), r);
	}
	free(buf);
}

/** LLVMFuzzerTestOneInput() - libFuzzer entry point. Return: 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		fuzz_built(data + 1, size - 1);
	else
		fuzz_received(data + 1, size - 1);
	return 0;
}
