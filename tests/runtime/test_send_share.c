/* SPDX-License-Identifier: MIT */
/**
 * @file test_send_share.c
 * A large reply does not keep its caller sending (src/runtime/tx.c,
 * homa_rt_flush_share()): the caller sends one batch and the I/O thread
 * sends the rest. The server's settings let the whole reply out at once
 * (all of it unscheduled, no pacing), so however fast grants would come,
 * the engine has more to send than a batch for as long as the caller
 * keeps sending. The binary links with -Wl,--wrap=sendmmsg: the wrapper
 * counts the server's bytes (and those its replying thread sent itself)
 * and holds the server's other threads' DATA until the reply call has
 * returned, so "returned before the reply was transmitted" does not
 * depend on timing.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <cmocka.h>

#include "helpers.h"
#include "rt.h"

/** Bytes of the reply: about 1400 packets, 45 batches of 32. */
#define REPLY_LEN (2u << 20)
/** Longest another thread's send waits for the reply call to return. */
#define CALL_WAIT_MS 10000

/** Control packets are shorter than this; DATA of the reply is longer. */
#define CTRL_MAX 200u

/** The server's UDP socket (-1: none watched). */
static _Atomic int srv_fd = -1;
/** The reply call is running. */
static _Atomic bool calling;
/** This thread is the one replying. */
static _Thread_local bool replier;
/** Bytes the server sent, and those of them its replying thread sent. */
static _Atomic uint64_t srv_bytes, caller_bytes;

int __real_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags);

/** sent_bytes() - Bytes of the first @n messages of @v. */
static uint64_t sent_bytes(const struct mmsghdr *v, int n)
{
	uint64_t b = 0;

	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < v[i].msg_hdr.msg_iovlen; k++)
			b += v[i].msg_hdr.msg_iov[k].iov_len;
	return b;
}

/** wait_until() - Sleep in 50 µs steps until @cond() holds or @ms pass. */
static void wait_until(bool (*cond)(void), int64_t ms)
{
	int64_t end = test_now_ms() + ms;
	struct timespec step = {0, 50000};

	while (!cond() && test_now_ms() < end)
		nanosleep(&step, NULL);
}

/** call_over() - The reply call has returned. */
static bool call_over(void)
{
	return !atomic_load(&calling);
}

/** __wrap_sendmmsg() - sendmmsg(), counted and held as the file says. */
int __wrap_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	bool srv = fd == atomic_load(&srv_fd);
	int r;

	if (srv && !replier && sent_bytes(v, (int)n) > CTRL_MAX * n)
		wait_until(call_over, CALL_WAIT_MS);
	r = __real_sendmmsg(fd, v, n, flags);
	if (!srv || r <= 0)
		return r;
	atomic_fetch_add(&srv_bytes, sent_bytes(v, r));
	if (replier)
		atomic_fetch_add(&caller_bytes, sent_bytes(v, r));
	return r;
}

/**
 * reply_returns_early() - A 2 MiB reply from a server in @mode the
 * engine may send at once: the caller returns after sending a batch
 * itself (under a quarter of the reply), before the reply has left (the
 * server's other DATA waits for the return); the driver then sends
 * the rest (in polled mode the standby thread, nobody polling) and the
 * client receives every byte intact. The old code kept
 * the caller sending while the engine had output: it sent the whole
 * reply itself.
 */
static void reply_returns_early(int mode)
{
	struct sockaddr_storage dst;
	struct homa_settings st;
	struct homa_rt *srv_rt;
	homa_socket *cli, *srv;
	struct homa_message m;
	uint8_t *buf = malloc(REPLY_LEN), *got = malloc(REPLY_LEN);
	uint64_t cid, id, at_return;
	int64_t t0, took;

	atomic_store(&srv_bytes, 0);
	atomic_store(&caller_bytes, 0);
	assert_non_null(buf);
	assert_non_null(got);
	test_fill(buf, REPLY_LEN, 11);
	homa_settings_default(&st);
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	st.unsched_bytes = 2 * REPLY_LEN;    /* the whole reply may go at once */
	st.max_nic_queue_ns = 1000000000;   /* and the pacer does not hold it */
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, mode, true, 0, &st), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &cid), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
	id = m.id;
	assert_int_equal(homa_message_release(&m), 0);

	srv_rt = homa_rt_get(srv);
	assert_non_null(srv_rt);
	atomic_store(&calling, true);
	atomic_store(&srv_fd, srv_rt->drv->fd);
	replier = true;
	t0 = test_now_ms();
	assert_int_equal(homa_reply_buf(srv, id, buf, REPLY_LEN), 0);
	took = test_now_ms() - t0;
	at_return = atomic_load(&srv_bytes);
	replier = false;
	atomic_store(&calling, false);

	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, cid, 30000000000LL, &m), 0);
	assert_int_equal(m.length, REPLY_LEN);
	assert_int_equal(homa_message_copy(&m, 0, got, REPLY_LEN), REPLY_LEN);
	assert_memory_equal(got, buf, REPLY_LEN);
	homa_message_release(&m);
	atomic_store(&srv_fd, -1);
	homa_rt_put(srv_rt);
	print_message("reply call %lld ms; server sent %llu B by its return, %llu B from the caller\n",
		      (long long)took, (unsigned long long)at_return,
		      (unsigned long long)atomic_load(&caller_bytes));
	assert_true(atomic_load(&caller_bytes) < REPLY_LEN / 4);
	assert_true(at_return < REPLY_LEN);
	assert_true(took < CALL_WAIT_MS);  /* a generous bound: it returned on its own */
	homa_close(cli);
	homa_close(srv);
	free(buf);
	free(got);
}

/**
 * homa_reply__returns_before_the_reply_is_sent() - reply_returns_early()
 * with a threaded server: its I/O thread sends the rest.
 */
static void homa_reply__returns_before_the_reply_is_sent(void **state)
{
	(void)state;
	reply_returns_early(HOMA_MODE_THREADED);
}

/**
 * homa_reply__returns_before_the_reply_is_sent_polled() - The same with a
 * polled server that nobody polls after the call: its standby thread
 * sends the rest.
 */
static void homa_reply__returns_before_the_reply_is_sent_polled(void **state)
{
	(void)state;
	reply_returns_early(HOMA_MODE_POLLED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_reply__returns_before_the_reply_is_sent),
		cmocka_unit_test(homa_reply__returns_before_the_reply_is_sent_polled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
