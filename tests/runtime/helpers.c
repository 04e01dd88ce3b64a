/* SPDX-License-Identifier: MIT */
/**
 * @file helpers.c
 * See helpers.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

int test_transport = HOMA_TRANSPORT_HOMA;
int32_t test_rx_lend_slots;

/** test_open() - See helpers.h. */
int test_open(homa_socket **s, int driver, int mode, bool server, uint16_t port,
	      const struct homa_settings *st)
{
	struct homa_open_opts o;
	struct homa_settings tolerant;

	if (!st) {
		homa_settings_default(&tolerant);
		tolerant.timeout_ticks = TEST_TIMEOUT_TICKS;
		st = &tolerant;
	}

	homa_open_opts_default(&o);
	o.driver = driver;
	o.mode = mode;
	o.server = server;
	o.port = port;
	o.bind_addr = "127.0.0.1";
	o.settings = st;
	o.transport = test_transport;
	o.rx_lend_slots = test_rx_lend_slots;
	return homa_open(s, &o);
}

/** test_serve_forever() - See helpers.h. */
void test_serve_forever(homa_socket *s, uint64_t *served, uint64_t *errors)
{
	struct homa_message m;
	size_t cap = 0;
	uint8_t *buf = NULL;

	while (homa_recv(s, HOMA_RECV_REQUEST, 0, -1, &m) == 0) {
		if (m.length > cap) {
			free(buf);
			cap = m.length;
			buf = malloc(cap);
		}
		homa_message_copy(&m, 0, buf, m.length);
		for (size_t i = 0; i < m.length; i++)
			buf[i] ^= 0x5a;
		if (homa_reply_buf(s, m.id, buf, m.length))
			atomic_fetch_add((_Atomic uint64_t *)errors, 1);
		else
			atomic_fetch_add((_Atomic uint64_t *)served, 1);
		homa_message_release(&m);
	}
	free(buf);
}

/** server_thread() - One answering thread of a test_server. */
static void *server_thread(void *arg)
{
	struct test_server *ts = arg;

	test_serve_forever(ts->s, &ts->served, &ts->errors);
	return NULL;
}

/** test_server_start() - See helpers.h. */
int test_server_start(struct test_server *ts, int driver, int mode, int nthreads,
		      const struct homa_settings *st)
{
	int err;

	memset(ts, 0, sizeof(*ts));
	err = test_open(&ts->s, driver, mode, true, 0, st);
	if (err)
		return err;
	ts->port = homa_local_port(ts->s);
	ts->nthreads = nthreads > 16 ? 16 : nthreads;
	for (int i = 0; i < ts->nthreads; i++)
		pthread_create(&ts->threads[i], NULL, server_thread, ts);
	return 0;
}

/** test_server_stop() - See helpers.h. */
void test_server_stop(struct test_server *ts)
{
	homa_close(ts->s);
	for (int i = 0; i < ts->nthreads; i++)
		pthread_join(ts->threads[i], NULL);
}

/** test_dst() - See helpers.h. */
struct sockaddr_storage test_dst(int port)
{
	struct sockaddr_storage d;
	socklen_t len;

	homa_sockaddr_parse("127.0.0.1", (uint16_t)port, &d, &len);
	return d;
}

/** test_fill() - See helpers.h. A xorshift stream seeded by @seed. */
void test_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
}

/** test_check_response() - See helpers.h. */
bool test_check_response(const struct homa_message *m, size_t len, uint64_t seed)
{
	uint8_t *want;
	size_t off = 0;
	bool ok = true;

	if (m->length != len)
		return false;
	want = malloc(len ? len : 1);
	test_fill(want, len, seed);
	while (ok && off < len) {
		const void *p;
		size_t n = homa_message_segment(m, off, &p);

		if (n == 0)
			break;
		for (size_t i = 0; i < n; i++)
			if (((const uint8_t *)p)[i] != (want[off + i] ^ 0x5a))
				ok = false;
		off += n;
	}
	free(want);
	return ok && off == len;
}

/** test_now_ms() - See helpers.h. */
int64_t test_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/** test_watch() - See helpers.h. */
int test_watch(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int ep = epoll_create1(0);

	assert_true(ep >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	return ep;
}

/** test_rpc() - See helpers.h. */
void test_rpc(homa_socket *c, int port)
{
	struct sockaddr_storage dst = test_dst(port);
	struct homa_message m;
	uint8_t buf[100];
	uint64_t id;

	memset(buf, 7, sizeof(buf));
	assert_int_equal(homa_request_buf(c, (struct sockaddr *)&dst, buf, sizeof(buf), 1, &id), 0);
	assert_int_equal(homa_recv(c, HOMA_RECV_RESPONSE, id, 5000000000ll, &m), 0);
	homa_message_release(&m);
}

/** test_is_root() - See helpers.h. */
bool test_is_root(void)
{
	return geteuid() == 0;
}

/** test_sem_wait_s() - See helpers.h. */
bool test_sem_wait_s(sem_t *s, int sec)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += sec;
	while (sem_timedwait(s, &ts) != 0)
		if (errno != EINTR)
			return false;
	return true;
}

/** test_tid() - See helpers.h. */
pid_t test_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/**
 * in_wait() - True if thread @tid is now in futex() (a waiter's sleep) or
 * ppoll() (a waiting thread that drives the socket's I/O itself).
 */
static bool in_wait(pid_t tid)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr == SYS_futex || nr == SYS_ppoll;
}

/** test_wait_asleep() - See helpers.h. */
bool test_wait_asleep(pid_t tid, int sec)
{
	int64_t end = test_now_ms() + (int64_t)sec * 1000;
	int seen = 0;

	while (test_now_ms() < end) {
		seen = in_wait(tid) ? seen + 1 : 0;
		if (seen == 2)
			return true;
		usleep(10000);
	}
	return false;
}

/** test_polled_rpc() - See helpers.h. */
int test_polled_rpc(homa_socket *cli, homa_socket *srv, const struct sockaddr_storage *dst)
{
	const int64_t wait_ns = 30000000000LL;
	uint8_t buf[100];
	struct homa_message m;
	uint64_t cid;
	int err;

	memset(buf, 7, sizeof(buf));
	err = homa_send(cli, (const struct sockaddr *)dst, buf, sizeof(buf), 0, &cid);
	if (!err)
		err = homa_recv(srv, HOMA_RECV_REQUEST, 0, wait_ns, &m);
	if (err)
		return err;
	err = homa_reply_buf(srv, m.id, buf, sizeof(buf));
	homa_message_release(&m);
	if (!err)
		err = homa_recv(cli, HOMA_RECV_RESPONSE, cid, wait_ns, &m);
	if (err)
		return err;
	err = m.error ? m.error : m.length == sizeof(buf) ? 0 : HOMA_EPROTO;
	homa_message_release(&m);
	return err;
}
