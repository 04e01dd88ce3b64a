/* SPDX-License-Identifier: MIT */
/**
 * @file helpers.h
 * Shared pieces of the runtime tests: sockets on loopback, a
 * multi-threaded "transform" server (each response byte is the request
 * byte XOR 0x5a), and deterministic message contents.
 */
#ifndef HOMA_TEST_RT_HELPERS_H
#define HOMA_TEST_RT_HELPERS_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "homa/homa.h"

/** A server socket and the threads answering its requests. */
struct test_server {
	homa_socket *s;
	int port;
	int nthreads;
	pthread_t threads[16];
	uint64_t served;   /**< requests answered (atomic) */
	uint64_t errors;   /**< reply failures (atomic) */
};

/**
 * RPC timeout used by the tests unless they say otherwise: 3 s of silence
 * (3000 ticks of 1 ms). The tests check data and accounting, not timing,
 * and a loaded CI machine can starve a process for longer than the
 * default 100 ms; test_kill checks the timeout itself.
 */
#define TEST_TIMEOUT_TICKS 3000

/**
 * test_open() - Open a socket on 127.0.0.1 with @driver and @mode.
 * @st: settings, or NULL for the defaults with TEST_TIMEOUT_TICKS.
 * @port: 0 for ephemeral. Return: homa_open()'s result.
 */
/** The transport test_open() asks for (enum homa_transport; default HOMA). */
extern int test_transport;
/** homa_open_opts.rx_lend_slots test_open() asks for (default 0: the library's). */
extern int32_t test_rx_lend_slots;

int test_open(homa_socket **s, int driver, int mode, bool server, uint16_t port,
	      const struct homa_settings *st);

/**
 * test_server_start() - Open a server and start @nthreads threads that
 * answer every request with its bytes XOR 0x5a, until the socket closes.
 * Return: homa_open()'s result.
 */
int test_server_start(struct test_server *ts, int driver, int mode, int nthreads,
		      const struct homa_settings *st);

/** test_server_stop() - Close the socket and join the threads. */
void test_server_stop(struct test_server *ts);

/**
 * test_serve_forever() - Answer requests on @s (XOR 0x5a) until the
 * socket closes; count replies in *@served and failures in *@errors
 * (updated atomically).
 */
void test_serve_forever(homa_socket *s, uint64_t *served, uint64_t *errors);

/** test_dst() - sockaddr for 127.0.0.1:@port. */
struct sockaddr_storage test_dst(int port);

/** test_fill() - Deterministic contents for message @seed of @len bytes. */
void test_fill(uint8_t *buf, size_t len, uint64_t seed);

/**
 * test_check_response() - True if @m is exactly the transformed
 * test_fill(@len, @seed) (compared segment by segment, zero copy).
 */
bool test_check_response(const struct homa_message *m, size_t len, uint64_t seed);

/** test_is_root() - True if raw sockets can be opened (euid 0). */
bool test_is_root(void);

/**
 * test_now_ms() - The monotonic clock in milliseconds. Tests bound their
 * waits with it, never with a count of wake-ups: a raw socket wakes for
 * every other test's protocol-146 packets too.
 */
int64_t test_now_ms(void);

/**
 * test_watch() - A new epoll set with @fd in it for EPOLLIN (the caller
 * closes it); fails the running cmocka test if either call fails.
 */
int test_watch(int fd);

/**
 * test_rpc() - One 100-byte RPC from @c to 127.0.0.1:@port, its response
 * awaited up to 5 s and released; fails the running cmocka test unless
 * it completes.
 */
void test_rpc(homa_socket *c, int port);

/** test_sem_wait_s() - sem_timedwait() on @s for @sec seconds. Return: true if posted. */
bool test_sem_wait_s(sem_t *s, int sec);

/** test_tid() - The calling thread's id, as gettid() gives it. */
pid_t test_tid(void);

/**
 * test_wait_asleep() - Wait until thread @tid (a gettid() of this process)
 * sleeps in futex() or ppoll(), as homa_recv() and homa_poll() do once
 * they wait: it must be seen there in two looks 10 ms apart. Sleeping a fixed
 * time instead lets a loaded machine run the test's next step before the
 * thread even called. Return: true if seen within @sec seconds.
 */
bool test_wait_asleep(pid_t tid, int sec);

/**
 * test_polled_rpc() - A 100 B request from @cli to @srv and its 100 B
 * reply, all in the calling thread (both sockets polled): the client
 * sends, the server's homa_recv() polls the request in and replies, the
 * client's homa_recv() polls the response in; each wait is bounded by
 * 30 s. The messages are released. Return: 0, the first failing call's
 * HOMA_E* code, or HOMA_EPROTO if the response is not 100 bytes.
 */
int test_polled_rpc(homa_socket *cli, homa_socket *srv, const struct sockaddr_storage *dst);

#endif /* HOMA_TEST_RT_HELPERS_H */
