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
	uint64_t expires_at;   /**< CLOCK_MONOTONIC ns: the receiver's SPI is rotated out */
};

/** A socket's encryption state. */
struct rt_enc {
	pthread_mutex_t mu;                 /**< guards the fields marked "mu" */
	homa_psp *psp;                      /**< mu */
	struct homa_packet_hooks hooks;     /**< the engine's: overhead only */
	char *files[3];                     /**< cert, key, CA (copies) or NULL */
	uint16_t kx_port;
	uint16_t port;                      /**< this socket's Homa port */
	uint16_t udp_port;                  /**< PSP port sealed packets go to (0: the socket's) */
	bool host_joined;                   /**< served by the host's PSP receiver */
	bool steered;                       /**< steered by the kernel (psp_steer.c) */
	uint32_t timeout_ms;
	uint64_t rotate_ns, next_rotate;    /**< next_rotate: mu */
	struct homa_kx_server *srv;
	pthread_mutex_t kx_lock;
	struct enc_dest *dests;             /**< mu */
	uint64_t kx_done, kx_failed;        /**< mu */
	struct homa_rt *rt;
};

/** homa_rt_enc_maybe_rotate() - Under x->mu: rotate the master keys if their time has come. */
void homa_rt_enc_maybe_rotate(struct rt_enc *x, uint64_t now);

/** homa_rt_enc_lifetime() - Under x->mu: how long an SPI issued at @now stays valid. */
uint64_t homa_rt_enc_lifetime(const struct rt_enc *x, uint64_t now);

/** homa_rt_enc_files() - The key-exchange files of @x (all NULL: no exchange). */
struct homa_kx_files homa_rt_enc_files(const struct rt_enc *x);

#endif /* HOMA_RT_ENC_H */
