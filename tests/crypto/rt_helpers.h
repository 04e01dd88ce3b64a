/* SPDX-License-Identifier: MIT */
/**
 * @file rt_helpers.h
 * Helpers of the crypto tests on the real stack (UDP on loopback).
 */
#ifndef HOMA_TESTS_CRYPTO_RT_HELPERS_H
#define HOMA_TESTS_CRYPTO_RT_HELPERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "homa/homa.h"

/** crypto_now_ms() - CLOCK_MONOTONIC in milliseconds. */
uint64_t crypto_now_ms(void);

/** crypto_dst() - sockaddr of 127.0.0.1:@port. */
struct sockaddr_storage crypto_dst(int port);

/** crypto_dst_at() - sockaddr of @host (an IPv4 or IPv6 literal):@port. */
struct sockaddr_storage crypto_dst_at(const char *host, int port);

/**
 * crypto_rpc() - One echo RPC of @len (at most 300000) patterned bytes
 * from @c to 127.0.0.1:@port, waiting up to 30 s; the echo must match.
 * Return: 0, HOMA_EPROTO (wrong echo) or the error of the send or wait.
 * Not thread-safe (static buffers).
 */
int crypto_rpc(homa_socket *c, int port, size_t len);

/** crypto_rpc_at() - crypto_rpc() to @host (an IPv4 or IPv6 literal). */
int crypto_rpc_at(homa_socket *c, const char *host, int port, size_t len);

/**
 * crypto_await_echo() - Wait up to 30 s on @c for the response of RPC @id
 * and compare it with the @len bytes the caller sent from @out (the
 * caller owns @out; the response is released here).
 * Return: 0, HOMA_EPROTO (wrong length or bytes), or the error of the
 * wait or of the RPC.
 */
int crypto_await_echo(homa_socket *c, uint64_t id, const uint8_t *out, size_t len);

/**
 * crypto_associate() - @from learns an SPI and key of @to (whose port is
 * @to_port) through the API; fails the test on any error.
 */
void crypto_associate(homa_socket *from, homa_socket *to, int to_port);

/** crypto_associate_at() - crypto_associate() with @to on @host (IPv4 or IPv6 literal). */
void crypto_associate_at(homa_socket *from, homa_socket *to, const char *host, int to_port);

/**
 * crypto_free_udp_port() - An IPv4 UDP port nothing is bound to at the
 * moment (the kernel's pick for an ephemeral bind, released again); the
 * test fails if the probe socket cannot be bound.
 */
uint16_t crypto_free_udp_port(void);

/**
 * crypto_opts_init() - Fill @o, @eo and @st (all the caller's) with the
 * library's defaults and the tests' own: settings @st with a 3000-tick
 * timeout (loaded CI machines), bound to @host, a server socket if
 * @server, encrypted with @eo. The caller may change any of them before
 * homa_open(); @host must outlive that call.
 */
void crypto_opts_init(struct homa_open_opts *o, struct homa_encrypt_opts *eo,
		      struct homa_settings *st, const char *host, bool server);

/**
 * crypto_open() - A socket on 127.0.0.1 with the tests' settings (a long
 * timeout for loaded CI machines), encrypted with @enc (associations
 * through the API: no certificates), a server socket with @server.
 * Return: the socket, or NULL (the test fails).
 */
homa_socket *crypto_open(bool enc, bool server);

/**
 * A socket of a test and, for an echo server, the thread answering it
 * (crypto_echo_start(), crypto_ep_open()); crypto_echo_stop() ends both.
 */
struct crypto_echo {
	homa_socket *s;
	int port;          /**< homa_local_port(s) */
	pthread_t thread;
	bool open;         /**< s is open: crypto_echo_stop() closes it */
	bool serving;      /**< the echo thread runs: crypto_echo_stop() joins it */
};

/**
 * crypto_echo_loop() - Answer every request on @s with its own bytes
 * (homa_reply_buf(), any length) until the socket closes. A request too
 * large to buffer gets no reply (its RPC fails, and the test with it).
 * The caller keeps @s. Return: NULL, as a thread body.
 */
void *crypto_echo_loop(homa_socket *s);

/**
 * crypto_echo_serve() - Thread body: crypto_echo_loop() on the socket of
 * the crypto_echo @arg.
 */
void *crypto_echo_serve(void *arg);

/**
 * crypto_echo_start() - Make @e the echo server of socket @s (the test
 * fails if @s is NULL or the thread cannot start).
 */
void crypto_echo_start(struct crypto_echo *e, homa_socket *s);

/**
 * crypto_ep_open() - Open @e with @o (from crypto_opts_init(), changed by
 * the caller as it needs); with @echo, @e is an echo server
 * (crypto_echo_start()). @e is cleared first, so crypto_echo_stop() is
 * harmless after a failure. Return: 0, or homa_open()'s error (@e then
 * holds no socket).
 */
int crypto_ep_open(struct crypto_echo *e, const struct homa_open_opts *o, bool echo);

/**
 * crypto_echo_stop() - Close @e's socket if it is open and join its echo
 * thread if it runs; a second call does nothing (teardowns may call it
 * after the test did).
 */
void crypto_echo_stop(struct crypto_echo *e);

/**
 * crypto_opened_count() - @s's PSP counter of packets opened (homa_psp_stats.opened),
 * 0 if it cannot be read (not an encrypted socket, or closed).
 */
uint64_t crypto_opened_count(homa_socket *s);

/**
 * crypto_released() - homa_release_fn that counts its calls in the int at
 * @arg (the caller's, which must outlive the send's buffers).
 */
void crypto_released(void *arg);

/** Longest crypto_zc_rpc() request. */
#define CRYPTO_ZC_MAX (1u << 20)

/**
 * crypto_zc_rpc() - One echo RPC of @len (at most CRYPTO_ZC_MAX)
 * patterned bytes from @c to 127.0.0.1:@port sent with homa_request_zc()
 * (as homa-bench sends: the whole request is ready at once, so one drain
 * takes all its packets), waiting up to 30 s; the echo must match.
 * Return: 0, HOMA_EINVAL (@len too long), HOMA_EPROTO (wrong echo) or
 * the error of the send or wait. Not thread-safe (a static buffer).
 */
int crypto_zc_rpc(homa_socket *c, int port, size_t len);

/**
 * crypto_open_lo() - Open @e: an encrypted socket on 127.0.0.1 with
 * homa-bench's loopback profile (64 KB packets, a 400 Gbps link: no
 * pacing to speak of), @unsched unscheduled bytes (the profile's:
 * 600000), GRANTs of @grant_step bytes (0: the default), an echo server
 * if @server (crypto_ep_open()). The test fails if homa_open() does.
 */
void crypto_open_lo(struct crypto_echo *e, bool server, uint32_t unsched, uint32_t grant_step);

#endif /* HOMA_TESTS_CRYPTO_RT_HELPERS_H */
