/* SPDX-License-Identifier: MIT */
/**
 * @file modpeer.c
 * The module-shaped peer's packet translation (see modpeer.h).
 */
#include <string.h>

#include "homa/wire.h"
#include "sim/modpeer.h"

/** The module's TCP-hijacking flags and urgent values (homa_hijack.h). */
#define MODULE_FLAGS 6
#define MODULE_URGENT_HI 0xb9
#define MODULE_URGENT_LO 0x7d

/** Highest packet type the module knows (ACK). */
#define MODULE_LAST_TYPE HOMA_PKT_ACK

/** homa_sim_module_tx() - See modpeer.h. */
void homa_sim_module_tx(uint8_t *buf, size_t len, uint32_t unsched)
{
	if (len < HOMA_COMMON_LEN)
		return;
	buf[13] = MODULE_FLAGS;
	buf[14] = buf[15] = 0;
	buf[18] = MODULE_URGENT_HI;
	buf[19] = MODULE_URGENT_LO;
	if (buf[11] == HOMA_PKT_DATA && len >= HOMA_DATA_HDR_LEN && buf[48] == 0) {
		memcpy(buf + 4, buf + 52, 4);
		memset(buf + 52, 0xff, 4);
	} else if (buf[11] == HOMA_PKT_RESEND && len >= HOMA_RESEND_LEN) {
		uint32_t off = (uint32_t)buf[28] << 24 | (uint32_t)buf[29] << 16 |
			       (uint32_t)buf[30] << 8 | buf[31];
		uint32_t n = (uint32_t)buf[32] << 24 | (uint32_t)buf[33] << 16 |
			     (uint32_t)buf[34] << 8 | buf[35];

		if (off == 0 && n == unsched)
			memset(buf + 32, 0xff, 4);
	}
}

/** homa_sim_module_rx() - See modpeer.h. */
bool homa_sim_module_rx(uint8_t *buf, size_t len)
{
	if (len < HOMA_COMMON_LEN || buf[11] < HOMA_PKT_DATA || buf[11] > MODULE_LAST_TYPE)
		return false;
	buf[13] = 0;
	buf[14] = buf[15] = 0;
	return true;
}
