/* SPDX-License-Identifier: MIT */
/**
 * @file enc.h
 * Internals of encrypted sockets (encrypt.c, encrypt_kx.c, encrypt_api.c).
 */
#ifndef HOMA_RT_ENC_H
#define HOMA_RT_ENC_H

#include "kx.h"
#include "rt.h"
#include "homa/encrypt.h"

/** When a destination's association is to be renewed. */
struct enc_dest {
	struct enc_dest *next;
	homa_addr addr;
	uint16_t port;
	uint64_t refresh_at;   /**< CLOCK_MONOTONIC ns */
};

/** A socket's encryption state. */
struct rt_enc {
	homa_psp *psp;
	struct homa_packet_hooks hooks;     /**< wraps psp's, to rotate by time */
	struct homa_packet_hooks inner;
	char *files[3];                     /**< cert, key, CA (copies) or NULL */
	uint16_t kx_port;
	uint16_t port;                      /**< this socket's Homa port */
	uint32_t timeout_ms;
	uint64_t rotate_ns, next_rotate;
	uint32_t ticks;
	struct homa_kx_server *srv;
	pthread_mutex_t kx_lock;
	struct enc_dest *dests;             /**< under rt->lock */
	uint64_t kx_done, kx_failed;        /**< under rt->lock */
	struct homa_rt *rt;
	uint8_t *cap_buf;                   /**< capture on: the last packet sealed, in clear */
	size_t cap_len;                     /**< its length; 0: none to capture */
	uint8_t rx_priority;                /**< priority of the packet being opened */
};

/** homa_rt_enc_maybe_rotate() - Under rt->lock: rotate the master keys if their time has come. */
void homa_rt_enc_maybe_rotate(struct rt_enc *x, uint64_t now);

/** homa_rt_enc_lifetime() - Under rt->lock: how long an SPI issued at @now stays valid. */
uint64_t homa_rt_enc_lifetime(const struct rt_enc *x, uint64_t now);

/** homa_rt_enc_files() - The key-exchange files of @x (all NULL: no exchange). */
struct homa_kx_files homa_rt_enc_files(const struct rt_enc *x);

#endif /* HOMA_RT_ENC_H */
