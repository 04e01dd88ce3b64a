/* SPDX-License-Identifier: MIT */
/**
 * @file rt_util.h
 * Helpers for the tests that run real traffic through the runtime: an
 * echo-style server thread and a client that runs RPCs of given sizes.
 */
#ifndef HOMA_TESTS_RT_UTIL_H
#define HOMA_TESTS_RT_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "homa/homa.h"

/** A server socket answering every request on its own thread. */
struct rt_server {
	homa_socket *s;
	pthread_t thread;
	uint16_t port;
	int served;
};

/**
 * rt_server_start() - Open a server on 127.0.0.1 with @o (driver, pcap,
 * metrics already set by the caller; bind address and server flag are
 * set here) and answer each request with a response whose length is the
 * request's first 4 bytes (big-endian). Return: 0 or a homa error.
 */
int rt_server_start(struct rt_server *srv, struct homa_open_opts *o);

/** rt_server_stop() - Close the socket and join the thread. */
void rt_server_stop(struct rt_server *srv);

/**
 * rt_rpc() - Send a request of @req_len bytes asking for @resp_len
 * bytes and wait for the response; checks its contents.
 * Return: 0, a homa error, or HOMA_EPROTO if the response is wrong.
 */
int rt_rpc(homa_socket *c, uint16_t server_port, size_t req_len, size_t resp_len);

/**
 * rt_quiesce() - Wait (at most @max_ms) until neither socket's engine
 * counters of packets sent change for 100 ms. Return: 0 or -1 (never quiet).
 */
int rt_quiesce(homa_socket *a, homa_socket *b, int max_ms);

#endif
