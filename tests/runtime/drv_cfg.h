/* SPDX-License-Identifier: MIT */
/**
 * @file drv_cfg.h
 * The driver configuration the runtime's driver tests open their drivers
 * with. Include after <cmocka.h> and "driver.h".
 */
#ifndef HOMA_TEST_RT_DRV_CFG_H
#define HOMA_TEST_RT_DRV_CFG_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "homa/homa.h"

/**
 * test_drv_cfg() - A driver config bound to numeric @addr (IPv4 or IPv6),
 * port 0: @batch packets per system call, packets of up to 1500 bytes,
 * UDP offloads if @offload, a fast receive queue for priorities @fast and
 * up (0: none), @known known peers (0: none); every other field 0 (no
 * stranger budget). Fails the test if @addr does not parse.
 */
static inline struct homa_driver_config test_drv_cfg(const char *addr, uint32_t batch,
						     bool offload, uint8_t fast, uint32_t known)
{
	struct homa_driver_config c;

	memset(&c, 0, sizeof(c));
	assert_int_equal(homa_sockaddr_parse(addr, 0, &c.bind, &c.bind_len), 0);
	c.batch = batch;
	c.max_packet = 1500;
	c.offload = offload;
	c.rx_fast_prio = fast;
	c.known_peers = known;
	return c;
}

#endif /* HOMA_TEST_RT_DRV_CFG_H */
