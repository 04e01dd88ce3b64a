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

/**
 * RPC timeout of the sockets these tests open: 3 s of silence (3000 ticks
 * of 1 ms). The tests check captures and counters, not timing, and a
 * loaded CI machine (ASan, load 15) can starve a thread for longer than
 * the default 100 ms.
 */
#define RT_TIMEOUT_TICKS 3000

/** A server socket answering every request on its own thread. */
struct rt_server {
	homa_socket *s;              /**< NULL when not running */
	pthread_t thread;
	uint16_t port;
	int served;
};

/**
 * rt_settings() - @st as homa_settings_default() with the RPC timeout of
 * RT_TIMEOUT_TICKS; for homa_open_opts.settings (copied by homa_open()).
 */
void rt_settings(struct homa_settings *st);

/**
 * rt_server_start() - Open a server on @o->bind_addr (127.0.0.1 if NULL)
 * with @o (driver, pcap, metrics already set by the caller; the server
 * flag is set here) and answer each request with a response whose length
 * is the request's first 4 bytes (big-endian). Return: 0 or a homa error.
 */
int rt_server_start(struct rt_server *srv, struct homa_open_opts *o);

/**
 * rt_server_stop() - Close the socket and join the thread; then
 * srv->served is final. Does nothing if @srv is not running (never
 * started, start failed, or already stopped), so a test's teardown can
 * call it after a failed check left the server running.
 */
void rt_server_stop(struct rt_server *srv);

/**
 * rt_rpc() - Send a request of @req_len bytes asking for @resp_len
 * bytes and wait for the response; checks its contents.
 * Return: 0, a homa error, or HOMA_EPROTO if the response is wrong.
 */
int rt_rpc(homa_socket *c, uint16_t server_port, size_t req_len, size_t resp_len);

/** rt_rpc_addr() - rt_rpc() to a server at numeric address @addr. */
int rt_rpc_addr(homa_socket *c, const char *addr, uint16_t server_port, size_t req_len,
		size_t resp_len);

/**
 * rt_quiesce() - Wait (at most @max_ms of wall time) until neither
 * socket's engine counters of packets sent change for 100 ms of wall time.
 * Return: 0 or -1 (never quiet).
 */
int rt_quiesce(homa_socket *a, homa_socket *b, int max_ms);

/** rt_free_tcp_port() - A TCP port free on 127.0.0.1 right now (asserts on failure). */
uint16_t rt_free_tcp_port(void);

/**
 * rt_scrape() - GET /metrics from 127.0.0.1:@port; asserts status 200 and
 * that the body passes the strict exposition checker.
 * Return: the whole response (caller frees; http_body() finds the text).
 */
char *rt_scrape(uint16_t port);

/**
 * rt_metric() - Value of @name{endpoint="@ep"@more} in @text (@more is
 * further labels, e.g. ",type=\"DATA\"", or ""); fails the test if absent.
 */
double rt_metric(const char *text, const char *name, uint16_t ep, const char *more);

#endif
