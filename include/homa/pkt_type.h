/* SPDX-License-Identifier: MIT */
/**
 * @file pkt_type.h
 * Homa packet type codes (byte 11 of the common header). The counters of
 * struct homa_stats (stats.h) are indexed by them; the wire format itself
 * is in wire.h.
 */
#ifndef HOMA_PKT_TYPE_H
#define HOMA_PKT_TYPE_H

#ifdef __cplusplus
extern "C" {
#endif

/** Packet type codes (byte 11 of the common header). */
enum homa_pkt_type {
	HOMA_PKT_DATA = 0x10,
	HOMA_PKT_GRANT = 0x11,
	HOMA_PKT_RESEND = 0x12,
	HOMA_PKT_RPC_UNKNOWN = 0x13,
	HOMA_PKT_BUSY = 0x14,
	HOMA_PKT_CUTOFFS = 0x15,
	HOMA_PKT_FREEZE = 0x16,
	HOMA_PKT_NEED_ACK = 0x17,
	HOMA_PKT_ACK = 0x18,
	HOMA_PKT_START_MSG = 0x19, /**< homa extension: announce a fully scheduled message */
};

/** First and one-past-last type code, for per-type counter arrays. */
#define HOMA_PKT_FIRST 0x10
#define HOMA_PKT_TYPES 10

#ifdef __cplusplus
}
#endif
#endif /* HOMA_PKT_TYPE_H */
