/* SPDX-License-Identifier: MIT */
/**
 * @file rt_util.h
 * Shared pieces of the hardening tests that run the real stack on
 * loopback (public API only): sockets, a checking echo-style server whose
 * threads count how often each request was executed, and message
 * contents that carry their serial so every byte can be verified.
 */
#ifndef HOMA_HARDENING_RT_UTIL_H
#define HOMA_HARDENING_RT_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "homa/homa.h"

/** Requests a run can tell apart (the soak's ASan build does 2,000 a second). */
#define RT_MAX_SERIALS (1u << 23)
#define RT_MAX_MSG (512u * 1024)

/** A server socket, its threads, and per-request execution counts. */
struct rt_server {
	homa_socket *s;
	int port;
	int nthreads;
	pthread_t threads[8];
	_Atomic uint32_t *executed;   /**< per serial */
	_Atomic uint64_t bad;         /**< requests that were not bit-exact */
	_Atomic uint64_t served;
};

/** rt_settings() - Defaults with a timeout of @timeout_ticks ms of silence. */
void rt_settings(struct homa_settings *s, uint32_t timeout_ticks);

/**
 * rt_open() - A UDP socket on 127.0.0.1 (threaded, offloads off so one
 * datagram is one packet). @port 0 = ephemeral. Return: homa_open()'s result.
 */
int rt_open(homa_socket **s, bool server, uint16_t port, const struct homa_settings *st);

/** rt_server_start() - Open a server and start @nthreads answering threads. Return: 0 or an error. */
int rt_server_start(struct rt_server *sv, int nthreads, uint16_t port, const struct homa_settings *st);

/** rt_server_stop() - Close the server socket, join its threads, free the counts. */
void rt_server_stop(struct rt_server *sv);

/** rt_req_len() - Length of request @serial (cycles through 8 B .. 300 KB). */
uint32_t rt_req_len(uint64_t serial);

/** rt_resp_len() - Length of the response to request @serial. */
uint32_t rt_resp_len(uint64_t serial);

/** rt_fill() - Message @len bytes: @serial in the first 8, then a pattern of @seed. */
void rt_fill(uint8_t *buf, uint64_t serial, uint64_t seed, uint32_t len);

/** rt_check() - True if @m is exactly rt_fill(serial, seed, len) (copied via @tmp). */
bool rt_check(const struct homa_message *m, uint64_t serial, uint64_t seed, uint32_t len, uint8_t *tmp);

/** rt_addr() - 127.0.0.1:@port. */
struct sockaddr_storage rt_addr(int port);

/** rt_now() - CLOCK_MONOTONIC, ns. */
uint64_t rt_now(void);

/** rt_rss_kb() - This process's resident set size in KiB (from /proc/self/statm). */
uint64_t rt_rss_kb(void);

/** Seeds of requests and responses. */
#define RT_REQ_SEED(serial) ((serial) * 0x9e3779b1ull + 1)
#define RT_RESP_SEED(serial) (RT_REQ_SEED(serial) ^ 0xabcdef12345ull)

#endif
