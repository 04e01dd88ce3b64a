/* SPDX-License-Identifier: MIT */
/**
 * @file test_rx_unlocked.c
 * The receive payload copies run with the socket lock released
 * (src/runtime/io.c copy_listed()). The binary links with
 * -Wl,--wrap=homa_rt_copy_payload (the copies' own function, rxmem.c:
 * a wrapped memcpy() misses them where a sanitizer or the compiler
 * replaces the call): while a probe is armed, the first list of copies
 * on the client's I/O thread holding one of at least PROBE_LEN bytes (a
 * received payload copy) stops until the test thread has made public calls that take the
 * client's socket lock (homa_recv_partial() of the arriving response,
 * homa_socket_stats()) and says so, or PROBE_WAIT_S seconds passed. With
 * the lock held during the copy the calls block until the wait ends and
 * the probe fails; with it released they return at once, whatever the
 * machine's load.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "helpers.h"
#include "rt.h"

void __real_homa_rt_copy_payload(const struct homa_rx_copy *c, uint32_t n);

/** Copies at least this long are payload (headers and records are shorter). */
#define PROBE_LEN ((size_t)1000)

/** Seconds the stopped copy waits for the test thread's calls. */
#define PROBE_WAIT_S 10

/** Length of the response whose arrival is probed. */
#define RESP_LEN ((size_t)1 << 20)

/** The probe: armed by the test thread, fired once by the client's I/O thread. */
static struct {
	atomic_bool armed;
	pthread_t thread;   /**< the client's I/O thread */
	sem_t inside;       /**< posted by the stopped copy */
	sem_t called;       /**< posted by the test thread after its calls returned */
	atomic_bool answered; /**< the calls returned while the copy was stopped */
	sem_t done;         /**< posted by the copy once `answered` is set */
} probe;

/** longest() - The longest of the @n copies at @c, in bytes. */
static size_t longest(const struct homa_rx_copy *c, uint32_t n)
{
	size_t most = 0;

	for (uint32_t i = 0; i < n; i++)
		if (c[i].len > most)
			most = c[i].len;
	return most;
}

/**
 * __wrap_homa_rt_copy_payload() - homa_rt_copy_payload(); the armed
 * probe's list (see the file comment) first waits for the test thread's
 * calls.
 */
void __wrap_homa_rt_copy_payload(const struct homa_rx_copy *c, uint32_t n)
{
	if (longest(c, n) >= PROBE_LEN && atomic_load(&probe.armed) &&
	    pthread_equal(pthread_self(), probe.thread) &&
	    atomic_exchange(&probe.armed, false)) {
		sem_post(&probe.inside);
		atomic_store(&probe.answered, test_sem_wait_s(&probe.called, PROBE_WAIT_S));
		sem_post(&probe.done);
	}
	__real_homa_rt_copy_payload(c, n);
}

/**
 * io_thread_of() - The I/O thread of threaded socket @s.
 */
static pthread_t io_thread_of(homa_socket *s)
{
	struct homa_rt *rt = homa_rt_get(s);
	pthread_t t;

	assert_non_null(rt);
	t = rt->thread;
	homa_rt_put(rt);
	return t;
}

/**
 * homa_recv_partial__runs_while_payload_is_copied() - While the client's
 * I/O thread is inside the copy of a response's payload, the test thread's
 * homa_recv_partial() of that response and homa_socket_stats() return
 * (the lock is free); the bytes being copied are not reported as present
 * yet, and the response then arrives intact.
 */
static void homa_recv_partial__runs_while_payload_is_copied(void **state)
{
	uint8_t *data = malloc(RESP_LEN), *part = malloc(RESP_LEN);
	struct sockaddr_storage dst;
	struct homa_message m;
	struct homa_stats st;
	homa_socket *cli, *srv;
	size_t avail = 0;
	uint64_t cid;
	int64_t n;

	(void)state;
	assert_non_null(data);
	assert_non_null(part);
	sem_init(&probe.inside, 0, 0);
	sem_init(&probe.called, 0, 0);
	sem_init(&probe.done, 0, 0);
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "big", 3, 0, &cid), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
	test_fill(data, RESP_LEN, 7);
	for (size_t i = 0; i < RESP_LEN; i++)
		data[i] ^= 0x5a;  /* test_check_response() expects an echo server's bytes */
	probe.thread = io_thread_of(cli);
	atomic_store(&probe.armed, true);
	assert_int_equal(homa_reply_buf(srv, m.id, data, RESP_LEN), 0);
	homa_message_release(&m);

	assert_true(test_sem_wait_s(&probe.inside, 30));
	n = homa_recv_partial(cli, cid, 0, part, RESP_LEN, &avail);
	assert_int_equal(homa_socket_stats(cli, &st), 0);
	sem_post(&probe.called);
	assert_true(test_sem_wait_s(&probe.done, 30));
	if (n >= 0) {
		assert_true((size_t)n <= avail && avail < RESP_LEN);
		assert_memory_equal(part, data, (size_t)n);
	} else {
		assert_int_equal(n, HOMA_ENOTFOUND);  /* no byte of it present yet */
	}
	print_message("while copying: homa_recv_partial() %lld, %zu bytes present\n",
		      (long long)n, avail);
	assert_true(atomic_load(&probe.answered));

	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, cid, 30000000000LL, &m), 0);
	assert_true(test_check_response(&m, RESP_LEN, 7));
	homa_message_release(&m);
	homa_close(cli);
	homa_close(srv);
	sem_destroy(&probe.inside);
	sem_destroy(&probe.called);
	sem_destroy(&probe.done);
	free(data);
	free(part);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_recv_partial__runs_while_payload_is_copied),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
