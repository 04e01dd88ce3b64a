/* SPDX-License-Identifier: MIT */
/**
 * @file wire_acks.c
 * Which server port the acks in a packet are for, read straight from the
 * bytes (for drivers that filter packets by port before decoding).
 */
#include "bytes.h"
#include "homa/wire.h"

/** Offsets of the ack fields (wire.h layouts). */
#define DATA_ACK_ID 36
#define DATA_ACK_PORT 44
#define ACK_NUM 28
#define ACK_ENTRIES 30
#define ACK_ENTRY_LEN 10

/** homa_wire_acks_port() - See wire.h. */
bool homa_wire_acks_port(const uint8_t *buf, size_t len, uint16_t port)
{
	if (!buf || len < HOMA_COMMON_LEN)
		return false;
	if (buf[11] == HOMA_PKT_DATA)
		return len >= HOMA_DATA_HDR_LEN && homa_get64(buf + DATA_ACK_ID) != 0 &&
		       homa_get16(buf + DATA_ACK_PORT) == port;
	if (buf[11] == HOMA_PKT_ACK && len >= HOMA_ACK_LEN) {
		uint16_t n = homa_get16(buf + ACK_NUM);

		for (uint16_t i = 0; i < n && i < HOMA_MAX_ACKS; i++)
			if (homa_get16(buf + ACK_ENTRIES + i * ACK_ENTRY_LEN + 8) == port)
				return true;
	}
	return false;
}
