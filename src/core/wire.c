/* SPDX-License-Identifier: MIT */
/**
 * @file wire.c
 * Encoding and decoding of Homa packets (layouts in include/homa/wire.h).
 */
#include <limits.h>
#include <string.h>

#include "bytes.h"
#include "homa/errors.h"
#include "homa/wire.h"

/* Compile-time checks of the layouts documented in wire.h (GUIDE section 3). */
_Static_assert(HOMA_COMMON_LEN == 20 + 8, "common header: sender_id at 20");
_Static_assert(HOMA_CONTROL_LEN == HOMA_COMMON_LEN, "header-only packets");
_Static_assert(52 + 4 == HOMA_DATA_HDR_LEN, "DATA: offset at 52");
_Static_assert(32 + 1 == HOMA_GRANT_LEN, "GRANT: priority at 32");
_Static_assert(36 + 1 == HOMA_RESEND_LEN, "RESEND: priority at 36");
_Static_assert(28 + 4 * HOMA_MAX_PRIORITIES + 2 == HOMA_CUTOFFS_LEN, "CUTOFFS: version at 60");
_Static_assert(30 + 10 * HOMA_MAX_ACKS == HOMA_ACK_LEN, "ACK: 5 entries of 10 bytes from 30");
_Static_assert(28 + 4 == HOMA_START_MSG_LEN, "START_MSG: message_length at 28");
_Static_assert((HOMA_DOFF_DATA >> 4) * 4 == HOMA_DATA_HDR_LEN, "DATA doff counts its header");
_Static_assert(HOMA_DOFF_CONTROL == 0x50, "control doff: a 20-byte TCP header");
_Static_assert(HOMA_PKT_START_MSG - HOMA_PKT_FIRST + 1 == HOMA_PKT_TYPES, "type codes are dense");

/** homa_wire_header_len() - See wire.h. */
size_t homa_wire_header_len(uint8_t type)
{
	switch (type) {
	case HOMA_PKT_DATA: return HOMA_DATA_HDR_LEN;
	case HOMA_PKT_GRANT: return HOMA_GRANT_LEN;
	case HOMA_PKT_RESEND: return HOMA_RESEND_LEN;
	case HOMA_PKT_RPC_UNKNOWN:
	case HOMA_PKT_BUSY:
	case HOMA_PKT_FREEZE:
	case HOMA_PKT_NEED_ACK: return HOMA_CONTROL_LEN;
	case HOMA_PKT_CUTOFFS: return HOMA_CUTOFFS_LEN;
	case HOMA_PKT_ACK: return HOMA_ACK_LEN;
	case HOMA_PKT_START_MSG: return HOMA_START_MSG_LEN;
	default: return 0;
	}
}

/** homa_wire_type_name() - See wire.h. */
const char *homa_wire_type_name(uint8_t type)
{
	static const char *const names[HOMA_PKT_TYPES] = {
		"DATA", "GRANT", "RESEND", "RPC_UNKNOWN", "BUSY",
		"CUTOFFS", "FREEZE", "NEED_ACK", "ACK", "START_MSG"};

	if (type < HOMA_PKT_FIRST || type >= HOMA_PKT_FIRST + HOMA_PKT_TYPES)
		return "UNKNOWN";
	return names[type - HOMA_PKT_FIRST];
}

/** put_ack() - Write one 10-byte ack entry at @p. */
static void put_ack(uint8_t *p, const struct homa_ack *a)
{
	homa_put64(p, a->client_id);
	homa_put16(p + 8, a->server_port);
}

/** get_ack() - Read one 10-byte ack entry at @p. */
static void get_ack(const uint8_t *p, struct homa_ack *a)
{
	a->client_id = homa_get64(p);
	a->server_port = homa_get16(p + 8);
}

/** encode_body() - Write the type-specific part of @pkt after the common header. */
static void encode_body(const struct homa_pkt *pkt, uint8_t *b)
{
	int i;

	switch (pkt->type) {
	case HOMA_PKT_DATA:
		homa_put32(b + 28, pkt->u.data.message_length);
		homa_put32(b + 32, pkt->u.data.incoming);
		put_ack(b + 36, &pkt->u.data.ack);
		homa_put16(b + 46, pkt->u.data.cutoff_version);
		b[48] = pkt->u.data.retransmit;
		homa_put32(b + 52, pkt->u.data.offset);
		if (pkt->u.data.payload_len)
			memcpy(b + HOMA_DATA_HDR_LEN, pkt->u.data.payload,
			       pkt->u.data.payload_len);
		break;
	case HOMA_PKT_GRANT:
		homa_put32(b + 28, pkt->u.grant.offset);
		b[32] = pkt->u.grant.priority;
		break;
	case HOMA_PKT_RESEND:
		homa_put32(b + 28, pkt->u.resend.offset);
		homa_put32(b + 32, pkt->u.resend.length);
		b[36] = pkt->u.resend.priority;
		break;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
			homa_put32(b + 28 + 4 * i, pkt->u.cutoffs.cutoffs[i]);
		homa_put16(b + 60, pkt->u.cutoffs.version);
		break;
	case HOMA_PKT_ACK:
		homa_put16(b + 28, pkt->u.ack.num_acks);
		for (i = 0; i < HOMA_MAX_ACKS; i++)
			put_ack(b + 30 + 10 * i, &pkt->u.ack.acks[i]);
		break;
	case HOMA_PKT_START_MSG:
		homa_put32(b + 28, pkt->u.start.message_length);
		break;
	default:
		break;
	}
}

/** homa_wire_encode() - See wire.h. Unused bytes are written as zero. */
int homa_wire_encode(const struct homa_pkt *pkt, uint8_t *buf, size_t cap)
{
	size_t hdr = pkt ? homa_wire_header_len(pkt->type) : 0;
	size_t len = hdr;

	if (!hdr || !buf)
		return HOMA_EINVAL;
	if (pkt->type == HOMA_PKT_DATA) {
		if (!pkt->u.data.payload && pkt->u.data.payload_len)
			return HOMA_EINVAL;
		len += pkt->u.data.payload_len;
	}
	if (len > INT_MAX)  /* the result is an int */
		return HOMA_EINVAL;
	if (len > cap)
		return HOMA_ENOSPC;
	memset(buf, 0, hdr);
	homa_put16(buf, pkt->sport);
	homa_put16(buf + 2, pkt->dport);
	homa_put32(buf + 4, pkt->seq);
	buf[11] = pkt->type;
	buf[12] = pkt->type == HOMA_PKT_DATA ? HOMA_DOFF_DATA : HOMA_DOFF_CONTROL;
	buf[13] = pkt->flags;
	buf[14] = HOMA_EXT_MARK;
	buf[15] = pkt->ext;
	homa_put16(buf + 18, pkt->urgent);
	homa_put64(buf + 20, pkt->sender_id);
	encode_body(pkt, buf);
	return (int)len;
}

/** decode_data() - Parse the DATA-specific fields; checks lengths. */
static int decode_data(const uint8_t *b, size_t len, struct homa_pkt *pkt)
{
	uint64_t end;

	pkt->u.data.message_length = homa_get32(b + 28);
	pkt->u.data.incoming = homa_get32(b + 32);
	get_ack(b + 36, &pkt->u.data.ack);
	pkt->u.data.cutoff_version = homa_get16(b + 46);
	pkt->u.data.retransmit = b[48];
	pkt->u.data.offset = homa_get32(b + 52);
	if (pkt->u.data.offset == HOMA_OFFSET_IN_SEQ)
		pkt->u.data.offset = pkt->seq; /* the module's original transmissions */
	pkt->u.data.payload = b + HOMA_DATA_HDR_LEN;
	pkt->u.data.payload_len = (uint32_t)(len - HOMA_DATA_HDR_LEN);
	end = (uint64_t)pkt->u.data.offset + pkt->u.data.payload_len;
	/* no payload: only the one packet of an empty message */
	if ((pkt->u.data.payload_len == 0 && pkt->u.data.message_length != 0) ||
	    end > pkt->u.data.message_length)
		return -HOMA_WIRE_BAD_FIELD;
	return 0;
}

/** decode_body() - Parse the type-specific part; validates field ranges. */
static int decode_body(const uint8_t *b, size_t len, struct homa_pkt *pkt)
{
	int i;

	switch (pkt->type) {
	case HOMA_PKT_DATA:
		return decode_data(b, len, pkt);
	case HOMA_PKT_GRANT:
		pkt->u.grant.offset = homa_get32(b + 28);
		pkt->u.grant.priority = b[32];
		return pkt->u.grant.priority < HOMA_MAX_PRIORITIES ? 0 : -HOMA_WIRE_BAD_FIELD;
	case HOMA_PKT_RESEND:
		pkt->u.resend.offset = homa_get32(b + 28);
		pkt->u.resend.length = homa_get32(b + 32);
		pkt->u.resend.priority = b[36];
		return pkt->u.resend.priority < HOMA_MAX_PRIORITIES ? 0 : -HOMA_WIRE_BAD_FIELD;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
			pkt->u.cutoffs.cutoffs[i] = homa_get32(b + 28 + 4 * i);
		pkt->u.cutoffs.version = homa_get16(b + 60);
		return 0;
	case HOMA_PKT_ACK:
		pkt->u.ack.num_acks = homa_get16(b + 28);
		if (pkt->u.ack.num_acks > HOMA_MAX_ACKS)
			return -HOMA_WIRE_BAD_FIELD;
		for (i = 0; i < HOMA_MAX_ACKS; i++)
			get_ack(b + 30 + 10 * i, &pkt->u.ack.acks[i]);
		return 0;
	case HOMA_PKT_START_MSG:
		pkt->u.start.message_length = homa_get32(b + 28);
		return pkt->u.start.message_length ? 0 : -HOMA_WIRE_BAD_FIELD;
	default:
		return 0;
	}
}

/** decode() - Parse one packet. Return: 0 or a negated enum homa_wire_error. */
static int decode(const uint8_t *buf, size_t len, struct homa_pkt *pkt)
{
	size_t hdr;

	if (len < HOMA_COMMON_LEN)
		return -HOMA_WIRE_TRUNCATED;
	memset(pkt, 0, sizeof(*pkt));
	pkt->type = buf[11];
	hdr = homa_wire_header_len(pkt->type);
	if (!hdr)
		return -HOMA_WIRE_BAD_TYPE;
	if (len < hdr)
		return -HOMA_WIRE_TRUNCATED;
	pkt->sport = homa_get16(buf);
	pkt->dport = homa_get16(buf + 2);
	pkt->seq = homa_get32(buf + 4);
	pkt->doff = buf[12];
	pkt->flags = buf[13];
	pkt->ours = buf[14] == HOMA_EXT_MARK;
	pkt->ext = pkt->ours ? buf[15] : 0;
	pkt->urgent = homa_get16(buf + 18);
	pkt->sender_id = homa_get64(buf + 20);
	return decode_body(buf, len, pkt);
}

/** homa_wire_decode_why() - See wire.h. */
int homa_wire_decode_why(const uint8_t *buf, size_t len, struct homa_pkt *pkt,
			 enum homa_wire_error *why)
{
	int r;

	if (!pkt || (!buf && len))
		return HOMA_EINVAL;  /* @why is not written */
	r = decode(buf, len, pkt);
	if (why)
		*why = (enum homa_wire_error)-r;
	return r ? HOMA_EPROTO : 0;
}

/** homa_wire_decode() - See wire.h. */
int homa_wire_decode(const uint8_t *buf, size_t len, struct homa_pkt *pkt)
{
	return homa_wire_decode_why(buf, len, pkt, NULL);
}
