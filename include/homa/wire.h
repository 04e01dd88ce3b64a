/* SPDX-License-Identifier: MIT */
/**
 * @file wire.h
 * Homa packets on the wire, byte-compatible with the Linux module
 * (PlatformLab/HomaModule). All integers are big-endian. Packets are never
 * read or written through packed structs: homa_wire_decode() parses bytes
 * into a host-order struct homa_pkt and homa_wire_encode() writes one back.
 *
 * Layouts (offsets in bytes):
 *   common  (28): sport 0, dport 2, seq 4, unused 8..10, type 11, doff 12,
 *                 flags 13, window 14, checksum 16, urgent 18, sender_id 20
 *                 (flags, checksum and urgent are the module's TCP-hijacking
 *                 fields: it sends flags 6 and urgent 0xb97d and reads none of
 *                 them; window is 0 from the module, and carries our
 *                 extension marker and bits, see HOMA_EXT_MARK)
 *   DATA    (56): common; message_length 28; incoming 32;
 *                 ack.client_id 36; ack.server_port 44; cutoff_version 46;
 *                 retransmit 48; pad 49..51; offset 52; then payload
 *                 (offset 0xffffffff: the offset is in seq, as the module
 *                 sends every DATA packet that is not a retransmission)
 *   GRANT   (33): common; offset 28; priority 32
 *   RESEND  (37): common; offset 28; length 32; priority 36
 *   RPC_UNKNOWN, BUSY, FREEZE, NEED_ACK (28): common only
 *   CUTOFFS (62): common; cutoffs[8] 28..59; cutoff_version 60
 *   ACK     (80): common; num_acks 28; 5 x {client_id u64, server_port u16} 30
 *   START_MSG (32, homa extension, type 0x19): common; message_length 28
 */
#ifndef HOMA_WIRE_H
#define HOMA_WIRE_H

#include "homa/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa/pkt_type.h"

#ifdef __cplusplus
extern "C" {
#endif

/** IANA IP protocol number of Homa. */
#define HOMA_IPPROTO 146

#define HOMA_COMMON_LEN 28
#define HOMA_DATA_HDR_LEN 56
#define HOMA_GRANT_LEN 33
#define HOMA_RESEND_LEN 37
#define HOMA_CONTROL_LEN 28
#define HOMA_CUTOFFS_LEN 62
#define HOMA_ACK_LEN 80
#define HOMA_START_MSG_LEN 32

/** doff byte values: header length in 32-bit words, in the high nibble. */
#define HOMA_DOFF_DATA (14 << 4)
#define HOMA_DOFF_CONTROL (5 << 4)

/** Number of priority levels a packet can carry. */
#define HOMA_MAX_PRIORITIES 8
/** Acks carried by one ACK packet. */
#define HOMA_MAX_ACKS 5
/** RESEND length meaning "everything from offset on". */
#define HOMA_RESEND_ALL 0xffffffffu

/**
 * Extension marker: the high byte of the common header's window field
 * (bytes 14..15) on every packet this implementation sends. The Linux
 * module always sends window 0 and never reads it, so a packet carrying the
 * marker comes from a peer that understands our extensions (START_MSG,
 * messages above HOMA_MODULE_MAX_MESSAGE, the HOMA_EXT_* bits), and a
 * module host can neither send it nor be confused by it. The low byte holds
 * the HOMA_EXT_* bits. The flags byte (13) is never used: the module sends
 * 6 there (its TCP-hijacking marker) whether or not it hijacks TCP.
 */
#define HOMA_EXT_MARK 0x48

/**
 * Extension bit (struct homa_pkt.ext): set on a request's DATA packets by
 * a client under incast, it asks the server to limit the response's
 * unscheduled bytes (settings.incast_unsched_bytes).
 */
#define HOMA_EXT_INCAST 0x01

/**
 * Extension bit on RPC_UNKNOWN: the server executed or abandoned this RPC
 * (its application aborted it, or it timed out) and remembers it as
 * finished, so a restarted request would be refused; the client fails the
 * RPC (HOMA_EABANDONED) instead of restarting it.
 */
#define HOMA_EXT_FINISHED 0x02

/**
 * Extension bit on RPC_UNKNOWN: this endpoint does not serve (it is a
 * client only), so the request will never be taken; the client fails the
 * RPC with HOMA_ENOSERVER at once instead of restarting it.
 */
#define HOMA_EXT_NOSERVER 0x04

/** Longest message the Linux module sends or accepts (its HOMA_MAX_MESSAGE_LENGTH). */
#define HOMA_MODULE_MAX_MESSAGE 1000000u

/** DATA offset value meaning "the offset is in the common header's seq". */
#define HOMA_OFFSET_IN_SEQ 0xffffffffu

/** Largest cutoff value sent in CUTOFFS (the module keeps cutoffs as int). */
#define HOMA_CUTOFF_WIRE_MAX 0x7fffffffu

/** One acknowledged client RPC: the server may free it. */
struct homa_ack {
	uint64_t client_id;
	uint16_t server_port;
};

/** A decoded packet in host byte order. */
struct homa_pkt {
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint8_t type;
	uint8_t doff;
	uint8_t flags;            /**< TCP flags byte: written as given, never interpreted */
	uint8_t ext;              /**< HOMA_EXT_* bits (window low byte; 0 unless @ours) */
	bool ours;                /**< decode: the window field carries HOMA_EXT_MARK */
	uint16_t urgent;          /**< TCP urgent field (the module: 0xb97d); written as given */
	uint64_t sender_id;
	union {
		struct {
			uint32_t message_length;
			uint32_t incoming;
			struct homa_ack ack;
			uint16_t cutoff_version;
			uint8_t retransmit;
			uint32_t offset;
			/** Payload bytes; on decode, a pointer into the input buffer. */
			const uint8_t *payload;
			uint32_t payload_len;
		} data;
		struct {
			uint32_t offset;
			uint8_t priority;
		} grant;
		struct {
			uint32_t offset;
			uint32_t length;
			uint8_t priority;
		} resend;
		struct {
			uint32_t cutoffs[HOMA_MAX_PRIORITIES];
			uint16_t version;
		} cutoffs;
		struct {
			uint16_t num_acks;
			struct homa_ack acks[HOMA_MAX_ACKS];
		} ack;
		struct {
			uint32_t message_length;
		} start;
	} u;
};

/** Why homa_wire_decode_why() refused a packet (a reason, not an error code). */
enum homa_wire_error {
	HOMA_WIRE_OK = 0,         /**< accepted */
	HOMA_WIRE_TRUNCATED = 1,  /**< shorter than its type's header */
	HOMA_WIRE_BAD_TYPE = 2,   /**< unknown type code */
	HOMA_WIRE_BAD_FIELD = 3,  /**< inconsistent lengths or values inside the header */
};

/**
 * homa_wire_decode() - Parse one packet.
 * @buf: the bytes (caller owns; DATA payload in @pkt points into it).
 * @len: number of bytes in @buf.
 * @pkt: filled on success.
 * A DATA offset of HOMA_OFFSET_IN_SEQ is replaced by the seq field (the
 * module's convention). @pkt->ext is set only from a window carrying
 * HOMA_EXT_MARK (then @pkt->ours is true).
 * Return: 0, or HOMA_EPROTO (malformed: truncated, unknown type, DATA
 * whose payload runs past message_length or is empty in a non-empty
 * message, an ACK claiming more than
 * HOMA_MAX_ACKS entries, or a priority >= 8); homa_wire_decode_why()
 * also says which. HOMA_EINVAL for a NULL @pkt, or a NULL @buf with
 * @len > 0 (nothing is read or written).
 */
HOMA_API int homa_wire_decode(const uint8_t *buf, size_t len, struct homa_pkt *pkt);

/**
 * homa_wire_decode_why() - homa_wire_decode() that also reports why a
 * packet was refused.
 * @why: if not NULL, receives HOMA_WIRE_OK or the reason (not written
 *	when the call returns HOMA_EINVAL).
 * Return: as homa_wire_decode().
 */
HOMA_API int homa_wire_decode_why(const uint8_t *buf, size_t len, struct homa_pkt *pkt,
			 enum homa_wire_error *why);

/**
 * homa_wire_encode() - Serialize @pkt (including a DATA payload) into @buf.
 * @pkt: the packet; type selects the layout; doff is set by this function,
 *       and the window field to HOMA_EXT_MARK and @pkt->ext (@pkt->ours is
 *       not read: every packet we send carries the marker).
 * @buf: output; caller owns.
 * @cap: bytes available in @buf.
 * Return: bytes written, or HOMA_ENOSPC if @cap is too small (nothing
 * written), or HOMA_EINVAL for an unknown type, a NULL @pkt or @buf, a
 * DATA packet with payload_len > 0 and no payload, or one whose length
 * does not fit in an int (nothing written).
 */
HOMA_API int homa_wire_encode(const struct homa_pkt *pkt, uint8_t *buf, size_t cap);

/**
 * homa_wire_header_len() - Header length of a packet type.
 * Return: bytes of header (DATA: 56, without payload), or 0 if unknown.
 */
HOMA_API size_t homa_wire_header_len(uint8_t type);

/**
 * homa_wire_acks_port() - True if the packet in @buf/@len (any
 * destination port) carries an ack for server port @port: a DATA packet's
 * piggybacked ack or an entry of an ACK packet. The Linux module keeps one
 * list of owed acks per host and sends them on packets to any port of it;
 * a driver that sees every packet to the host hands such packets to the
 * engine of @port too (homa_engine_input() then acts on those acks only).
 * Return: false also for a NULL @buf or a packet too short for its type.
 */
HOMA_API bool homa_wire_acks_port(const uint8_t *buf, size_t len, uint16_t port);

/**
 * homa_wire_type_name() - Short name of a packet type ("DATA", "GRANT", ...).
 * Return: a static string; "UNKNOWN" for other codes.
 */
HOMA_API const char *homa_wire_type_name(uint8_t type);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_WIRE_H */
