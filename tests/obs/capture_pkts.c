/* SPDX-License-Identifier: MIT */
/**
 * @file capture_pkts.c
 * Packets of every type and the tshark text expected for each field.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capture_pkts.h"

/** build_body() - Type-specific fields of packet @i. */
static void build_body(int i, struct homa_pkt *p, unsigned char *payload)
{
	int k;

	switch (p->type) {
	case HOMA_PKT_DATA:
		p->u.data.message_length = 100000;
		p->u.data.incoming = 40000;
		p->u.data.ack.client_id = 4242;
		p->u.data.ack.server_port = 4000;
		p->u.data.cutoff_version = 3;
		p->u.data.retransmit = 1;
		p->u.data.offset = 2800;
		p->u.data.payload = payload;
		p->u.data.payload_len = 1400;
		memset(payload, 0xab, 1400);
		break;
	case HOMA_PKT_GRANT:
		p->u.grant.offset = 60000;
		p->u.grant.priority = 5;
		break;
	case HOMA_PKT_RESEND:
		p->u.resend.offset = 1400;
		p->u.resend.length = 2800;
		p->u.resend.priority = 2;
		break;
	case HOMA_PKT_CUTOFFS:
		for (k = 0; k < 8; k++)
			p->u.cutoffs.cutoffs[k] = (uint32_t)(k * 1000 + i);
		p->u.cutoffs.version = 9;
		break;
	case HOMA_PKT_ACK:
		p->u.ack.num_acks = 3;
		for (k = 0; k < 3; k++) {
			p->u.ack.acks[k].client_id = 1000 + 2 * (uint64_t)k;
			p->u.ack.acks[k].server_port = (uint16_t)(5000 + k);
		}
		break;
	case HOMA_PKT_START_MSG:
		p->u.start.message_length = 5000000;
		break;
	default:
		break;
	}
}

/** cap_build() - See capture_pkts.h. */
void cap_build(int i, struct homa_pkt *p, unsigned char *payload)
{
	memset(p, 0, sizeof(*p));
	p->type = (uint8_t)(HOMA_PKT_FIRST + i);
	p->sport = (uint16_t)(40000 + i);
	p->dport = 4000;
	p->seq = p->type == HOMA_PKT_DATA ? 2800 : 0;
	p->ext = (i & 1) ? HOMA_EXT_INCAST : 0;
	if (p->type == HOMA_PKT_RPC_UNKNOWN)
		p->ext |= HOMA_EXT_FINISHED;
	/* large ids so 64-bit handling is exercised; odd ones are server ids */
	p->sender_id = 0x0123456789abcd00ull + (uint64_t)i;
	build_body(i, p, payload);
}

/** join_u32() - "a,b,c" of @n values. */
static void join_u32(const uint32_t *v, int n, char *out, size_t cap)
{
	size_t len = 0;
	int k;

	out[0] = '\0';
	for (k = 0; k < n && len < cap; k++)
		len += (size_t)snprintf(out + len, cap - len, "%s%u", k ? "," : "", v[k]);
}

/** ack_field() - homa.ack.client_id (@port 0) or server_port (@port 1) text. */
static void ack_field(const struct homa_pkt *p, int port, char *out, size_t cap)
{
	size_t len = 0;
	int k;

	out[0] = '\0';
	if (p->type == HOMA_PKT_DATA) {
		if (port)
			snprintf(out, cap, "%u", p->u.data.ack.server_port);
		else
			snprintf(out, cap, "%" PRIu64, p->u.data.ack.client_id);
		return;
	}
	if (p->type != HOMA_PKT_ACK)
		return;
	for (k = 0; k < p->u.ack.num_acks && len < cap; k++) {
		if (port)
			len += (size_t)snprintf(out + len, cap - len, "%s%u", k ? "," : "",
						p->u.ack.acks[k].server_port);
		else
			len += (size_t)snprintf(out + len, cap - len, "%s%" PRIu64, k ? "," : "",
						p->u.ack.acks[k].client_id);
	}
}

/** type_field() - Fields present only in some types; returns 1 if handled. */
static int type_field(const struct homa_pkt *p, int field, char *out, size_t cap)
{
	uint8_t t = p->type;

	switch (field) {
	case 8: /* homa.offset */
		if (t == HOMA_PKT_DATA)
			snprintf(out, cap, "%u", p->u.data.offset);
		else if (t == HOMA_PKT_GRANT)
			snprintf(out, cap, "%u", p->u.grant.offset);
		else if (t == HOMA_PKT_RESEND)
			snprintf(out, cap, "%u", p->u.resend.offset);
		return 1;
	case 9: /* homa.message_length */
		if (t == HOMA_PKT_DATA)
			snprintf(out, cap, "%u", p->u.data.message_length);
		else if (t == HOMA_PKT_START_MSG)
			snprintf(out, cap, "%u", p->u.start.message_length);
		return 1;
	case 13: /* homa.priority */
		if (t == HOMA_PKT_GRANT)
			snprintf(out, cap, "%u", p->u.grant.priority);
		else if (t == HOMA_PKT_RESEND)
			snprintf(out, cap, "%u", p->u.resend.priority);
		return 1;
	case 16: /* homa.cutoff_version */
		if (t == HOMA_PKT_DATA)
			snprintf(out, cap, "%u", p->u.data.cutoff_version);
		else if (t == HOMA_PKT_CUTOFFS)
			snprintf(out, cap, "%u", p->u.cutoffs.version);
		return 1;
	default:
		return 0;
	}
}

/** single_type_field() - Fields of exactly one type. */
static void single_type_field(const struct homa_pkt *p, int field, char *out, size_t cap)
{
	uint8_t t = p->type;

	if (field == 10 && t == HOMA_PKT_DATA)
		snprintf(out, cap, "%u", p->u.data.incoming);
	else if (field == 11 && t == HOMA_PKT_DATA)
		snprintf(out, cap, "%u", p->u.data.payload_len);
	else if (field == 12 && t == HOMA_PKT_RESEND)
		snprintf(out, cap, "%u", p->u.resend.length);
	else if (field == 15 && t == HOMA_PKT_CUTOFFS)
		join_u32(p->u.cutoffs.cutoffs, 8, out, cap);
	else if (field == 17 && t == HOMA_PKT_DATA)
		snprintf(out, cap, "%u", p->u.data.retransmit);
	else if (field == 18 && t == HOMA_PKT_ACK)
		snprintf(out, cap, "%u", p->u.ack.num_acks);
	else if (field == 19 || field == 20)
		ack_field(p, field == 20, out, cap);
}

/** cap_expect() - See capture_pkts.h. */
void cap_expect(const struct homa_pkt *p, int prio, int field, char *out, size_t cap)
{
	out[0] = '\0';
	switch (field) {
	case 0: snprintf(out, cap, "0x%02x", p->type); return;
	case 1: snprintf(out, cap, "%" PRIu64, p->sender_id); return;
	case 2: snprintf(out, cap, "%" PRIu64, (uint64_t)(p->sender_id & ~(uint64_t)1)); return;
	case 3: snprintf(out, cap, "%u", p->sport); return;
	case 4: snprintf(out, cap, "%u", p->dport); return;
	case 5: snprintf(out, cap, "%u", p->seq); return;
	case 6: snprintf(out, cap, "%s", (p->ext & HOMA_EXT_INCAST) ? "1" : "0"); return;
	case 7: snprintf(out, cap, "%d", p->type == HOMA_PKT_DATA ? 14 : 5); return;
	case 14: snprintf(out, cap, "%d", prio); return;
	case 21: snprintf(out, cap, "%s", (p->ext & HOMA_EXT_FINISHED) ? "1" : "0"); return;
	default: break;
	}
	if (!type_field(p, field, out, cap))
		single_type_field(p, field, out, cap);
}
