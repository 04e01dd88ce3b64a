/* SPDX-License-Identifier: MIT */
/**
 * @file capture_pkts.h
 * One packet of every Homa type with distinctive field values, and the
 * text tshark + homa.lua should show for each field, for the capture
 * tests.
 */
#ifndef HOMA_TESTS_CAPTURE_PKTS_H
#define HOMA_TESTS_CAPTURE_PKTS_H

#include <stddef.h>

#include "homa/wire.h"

/** Fields compared, in the order of the tshark -e options. */
#define CAP_FIELDS                                                            \
	"homa.type", "homa.sender_id", "homa.rpc_id", "homa.sport",           \
	"homa.dport", "homa.seq", "homa.ext.incast", "homa.doff",           \
	"homa.offset", "homa.message_length", "homa.incoming",                \
	"homa.payload_len", "homa.length", "homa.priority",                   \
	"homa.ip_priority", "homa.cutoff", "homa.cutoff_version",             \
	"homa.retransmit", "homa.num_acks", "homa.ack.client_id",             \
	"homa.ack.server_port", "homa.ext.finished"

/** Number of names in CAP_FIELDS. */
#define CAP_NFIELDS 22

/**
 * cap_build() - Fill @p with packet @i (0..9: type HOMA_PKT_FIRST + i);
 * a DATA payload points into @payload (at least 1400 bytes, caller owns).
 */
void cap_build(int i, struct homa_pkt *p, unsigned char *payload);

/**
 * cap_expect() - Text of field @field (index into CAP_FIELDS) that
 * tshark -T fields -E occurrence=a -E aggregator=, prints for @p sent at
 * IP priority @prio; "" when the field is absent.
 */
void cap_expect(const struct homa_pkt *p, int prio, int field, char *out, size_t cap);

#endif
