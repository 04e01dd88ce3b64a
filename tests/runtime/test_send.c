/* SPDX-License-Identifier: MIT */
/**
 * @file test_send.c
 * Sending (src/runtime/send.c): gather lists whose lengths wrap are
 * refused, empty messages go both ways, and a message's bytes are copied without the socket lock, so
 * the I/O thread and other callers keep going while a large message is
 * copied.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "homa/engine.h"

/** Seconds a step may take before the test gives up on it. */
#define STEP_S 10

/** request() - Send @len bytes from @cli to @srv; return the server's request id. */
static uint64_t request(homa_socket *cli, homa_socket *srv, const void *buf, size_t len,
			uint64_t *cid)
{
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_message m;
	uint64_t id;

	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, buf, len, 0, cid), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
	id = m.id;
	assert_int_equal(homa_message_release(&m), 0);
	return id;
}

/**
 * homa_send__iov_lengths_that_wrap() - {SIZE_MAX, 2} sums to 1 in size_t:
 * every call that takes a gather list returns HOMA_EINVAL at once (it
 * used to copy SIZE_MAX bytes under the socket lock, spinning forever).
 */
static void homa_send__iov_lengths_that_wrap(void **state)
{
	homa_socket *cli, *srv;
	char buf[4] = "abc";
	struct homa_iov iov[2] = {{buf, SIZE_MAX}, {buf, 2}};
	struct sockaddr_storage dst;
	uint64_t id, cid;
	homa_engine *e;
	homa_addr a = homa_addr_ipv4(0x7f000001);

	(void)state;
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	assert_int_equal(homa_send_request(cli, (struct sockaddr *)&dst, iov, 2, 0, &id),
			 HOMA_EINVAL);
	id = request(cli, srv, buf, 3, &cid);
	assert_int_equal(homa_reply(srv, id, iov, 2), HOMA_EINVAL);
	assert_int_equal(homa_reply(srv, id, &iov[1], 1), 0);  /* the RPC is still usable */
	/* the engine checks as well */
	assert_int_equal(homa_engine_new(&e, NULL, &a, 5000, NULL, 0), 0);
	assert_int_equal(homa_engine_send_request(e, &a, 5001, iov, 2, 0, 0, &id), HOMA_EINVAL);
	homa_engine_free(e);
	homa_close(cli);
	homa_close(srv);
}

/* State shared with the SIGSEGV handler of the next test. */
static uint8_t *guarded;        /**< the message's bytes, unreadable at first */
static size_t guarded_len;
static sem_t in_copy, go;

/**
 * on_segv() - The sender touched @guarded: tell the test the copy is under
 * way, wait until it has probed the socket, then make the bytes readable
 * (the faulting access is retried on return).
 */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
	uint8_t *a = si->si_addr;

	(void)sig;
	(void)uc;
	if (a < guarded || a >= guarded + guarded_len)
		abort();
	sem_post(&in_copy);
	while (sem_wait(&go) != 0 && errno == EINTR)
		;
	mprotect(guarded, guarded_len, PROT_READ | PROT_WRITE);
}

/** Arguments of reply_thread() and probe_thread(). */
struct copy_args {
	homa_socket *s;
	uint64_t id;
	int err;
	sem_t done;
};

/** reply_thread() - Reply with the guarded bytes. */
static void *reply_thread(void *arg)
{
	struct copy_args *a = arg;

	a->err = homa_reply_buf(a->s, a->id, guarded, guarded_len);
	return NULL;
}

/** probe_thread() - Call something that needs the socket lock. */
static void *probe_thread(void *arg)
{
	struct copy_args *a = arg;
	struct homa_stats st;

	a->err = homa_socket_stats(a->s, &st);
	sem_post(&a->done);
	return NULL;
}

/**
 * homa_reply__copies_without_the_socket_lock() - While homa_reply() is
 * stopped in the middle of copying the response (the source pages fault
 * and the handler holds them), another call that needs the socket lock
 * completes: the copy runs outside the lock.
 */
static void homa_reply__copies_without_the_socket_lock(void **state)
{
	struct sigaction sa = {0}, old;
	struct copy_args rep = {0}, probe = {0};
	pthread_t rt, pt;
	homa_socket *cli, *srv;
	struct homa_message m;
	uint64_t cid;
	bool copying, probed;

	(void)state;
	guarded_len = 4 * (size_t)sysconf(_SC_PAGESIZE);
	guarded = mmap(NULL, guarded_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(guarded != MAP_FAILED);
	test_fill(guarded, guarded_len, 7);
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	rep.s = probe.s = srv;
	rep.id = request(cli, srv, "q", 1, &cid);
	sem_init(&in_copy, 0, 0);
	sem_init(&go, 0, 0);
	sem_init(&probe.done, 0, 0);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, &old);
	mprotect(guarded, guarded_len, PROT_NONE);
	pthread_create(&rt, NULL, reply_thread, &rep);
	copying = test_sem_wait_s(&in_copy, STEP_S);
	pthread_create(&pt, NULL, probe_thread, &probe);
	probed = copying && test_sem_wait_s(&probe.done, STEP_S);
	sem_post(&go);
	pthread_join(rt, NULL);
	pthread_join(pt, NULL);
	sigaction(SIGSEGV, &old, NULL);
	assert_true(copying);
	assert_true(probed);  /* fails if the copy held the socket lock */
	assert_int_equal(probe.err, 0);
	assert_int_equal(rep.err, 0);
	mprotect(guarded, guarded_len, PROT_READ | PROT_WRITE);
	test_fill(guarded, guarded_len, 7);  /* what the client expects, untransformed */
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, cid, 30000000000LL, &m), 0);
	assert_int_equal(m.length, guarded_len);
	for (size_t off = 0; off < guarded_len; off += 997) {
		uint8_t b;

		assert_int_equal(homa_message_copy(&m, off, &b, 1), 1);
		assert_int_equal(b, guarded[off]);
	}
	homa_message_release(&m);
	homa_close(cli);
	homa_close(srv);
	munmap(guarded, guarded_len);
}

/**
 * payload_copies() - The copy counters are exact: a request of N bytes
 * is copied once into the message and once into packets at the sender
 * (plus any retransmitted bytes); at the receiver each byte is either
 * copied from its packet into the message or left in place in a lent
 * receive buffer (@lend: homa_open_opts.rx_lend_slots; -1: none lent).
 */
static void payload_copies(int32_t lend)
{
	enum { N = 300000 };
	homa_socket *cli, *srv;
	struct homa_io_stats ci, si;
	struct homa_stats cs;
	uint8_t *buf = malloc(N);
	uint64_t cid;

	test_rx_lend_slots = lend;
	assert_non_null(buf);
	test_fill(buf, N, 7);
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	assert_int_equal(homa_io_stats(cli, &ci), 0);
	assert_int_equal(ci.tx_copied_bytes + ci.rx_copied_bytes, 0);
	request(cli, srv, buf, N, &cid);
	assert_int_equal(homa_io_stats(cli, &ci), 0);
	assert_int_equal(homa_socket_stats(cli, &cs), 0);
	assert_int_equal(homa_io_stats(srv, &si), 0);
	assert_int_equal(ci.tx_copied_bytes, 2 * (uint64_t)N + cs.retransmitted_bytes);
	assert_int_equal(si.rx_copied_bytes + si.rx_lent_bytes, N);
	if (lend < 0)
		assert_int_equal(si.rx_lent_bytes, 0);
	else  /* in-order 64 KB datagrams on loopback: most are lent */
		assert_true(si.rx_lent_bytes >= N / 2);
	assert_int_equal(si.tx_copied_bytes, 0);
	homa_close(cli);
	homa_close(srv);
	free(buf);
	test_rx_lend_slots = 0;
}

/** homa_io_stats__payload_copies() - payload_copies() with the default zero-copy receive. */
static void homa_io_stats__payload_copies(void **state)
{
	(void)state;
	payload_copies(0);
}

/** homa_io_stats__payload_copies_lend_off() - payload_copies() with rx_lend_slots -1. */
static void homa_io_stats__payload_copies_lend_off(void **state)
{
	(void)state;
	payload_copies(-1);
}

/**
 * empty_rpcs() - Empty requests (homa_send() with no buffer, and a gather
 * list of empty pieces) answered by the XOR server with empty responses,
 * over the real stack with sockets of @mode: each arrives with length 0
 * and nothing to read, and is released like any other message.
 */
static void empty_rpcs(int mode)
{
	struct homa_iov none[2] = {{NULL, 0}, {"", 0}};
	struct test_server ts;
	struct sockaddr_storage dst;
	struct homa_message m;
	const void *p;
	homa_socket *cli;
	uint64_t id;

	assert_int_equal(test_server_start(&ts, HOMA_DRIVER_UDP, mode, 1, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, mode, false, 0, NULL), 0);
	dst = test_dst(ts.port);
	for (int i = 0; i < 4; i++) {
		if (i % 2)
			assert_int_equal(homa_send_request(cli, (struct sockaddr *)&dst, none, 2,
							   (uint64_t)i, &id), 0);
		else
			assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, NULL, 0,
						   (uint64_t)i, &id), 0);
		assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, STEP_S * 1000000000LL, &m), 0);
		assert_int_equal(m.error, 0);
		assert_int_equal(m.cookie, (uint64_t)i);
		assert_int_equal(m.length, 0);
		assert_int_equal(homa_message_segment(&m, 0, &p), 0);
		assert_int_equal(homa_message_release(&m), 0);
		assert_int_equal(homa_message_release(&m), HOMA_EALREADY);
	}
	test_server_stop(&ts);
	assert_int_equal(ts.served, 4);
	assert_int_equal(ts.errors, 0);
	homa_close(cli);
}

/** homa_send__empty_messages_threaded() - Empty RPCs on threaded sockets. */
static void homa_send__empty_messages_threaded(void **state)
{
	(void)state;
	empty_rpcs(HOMA_MODE_THREADED);
}

/** homa_send__empty_messages_polled() - Empty RPCs on polled sockets. */
static void homa_send__empty_messages_polled(void **state)
{
	(void)state;
	empty_rpcs(HOMA_MODE_POLLED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_send__iov_lengths_that_wrap),
		cmocka_unit_test(homa_reply__copies_without_the_socket_lock),
		cmocka_unit_test(homa_io_stats__payload_copies),
		cmocka_unit_test(homa_io_stats__payload_copies_lend_off),
		cmocka_unit_test(homa_send__empty_messages_threaded),
		cmocka_unit_test(homa_send__empty_messages_polled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
