/* SPDX-License-Identifier: MIT */
/*
 * Tests for tools/bench/tr_tcp.c's client against a listening socket of the
 * test itself on loopback: with batching (--homa-more 1, the default) the
 * requests started between two waits are written together by the next
 * wait(), connection by connection in the order they were started; without
 * it each is written when it is started.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench.h"
#include "frame.h"

#define NREQ 8
#define REQ_BYTES 100

/** One client connected to the test's own listening socket. */
struct conn_pair {
	void *ctx;  /**< the TCP client (bench_tcp_client) */
	int lfd;    /**< listening socket */
	int afd;    /**< the server end of the client's connection */
};

/** open_pair() - Listen on 127.0.0.1, open the client (@batch) and accept it. */
static void open_pair(struct conn_pair *p, bool batch)
{
	struct bench_tr_cfg cfg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	memset(&cfg, 0, sizeof(cfg));
	p->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(p->lfd >= 0);
	assert_int_equal(bind(p->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(p->lfd, 4), 0);
	assert_int_equal(getsockname(p->lfd, (struct sockaddr *)&a, &len), 0);
	memcpy(&cfg.servers[0], &a, sizeof(a));
	cfg.server_lens[0] = sizeof(a);
	cfg.nservers = 1;
	cfg.conns = 1;
	cfg.homa.no_more = !batch;
	assert_int_equal(bench_tcp_client.open(&p->ctx, &cfg), 0);
	p->afd = accept(p->lfd, NULL, NULL);
	assert_true(p->afd >= 0);
}

/** close_pair() - Close the client and the test's sockets. */
static void close_pair(struct conn_pair *p)
{
	bench_tcp_client.close(p->ctx);
	close(p->afd);
	close(p->lfd);
}

/** readable() - Whether the server end has bytes waiting now. */
static bool readable(int fd)
{
	char b;

	return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

/** read_all() - Read @want bytes from @fd within 5 s. Return: bytes read. */
static size_t read_all(int fd, size_t want)
{
	char buf[4096];
	size_t got = 0;

	while (got < want) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, 5000) != 1)
			break;
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/** Batching: nothing is written until wait(); then every request at once. */
static void tcp_client__batch_written_by_wait(void **state)
{
	struct conn_pair p;
	struct bench_done done[NREQ];

	(void)state;
	open_pair(&p, true);
	for (int i = 0; i < NREQ; i++)
		assert_int_equal(bench_tcp_client.start(p.ctx, 0, REQ_BYTES, 100, (uint64_t)i), 0);
	assert_false(readable(p.afd));
	assert_int_equal(bench_tcp_client.wait(p.ctx, bench_now_ns(), done, NREQ), 0);
	assert_int_equal(read_all(p.afd, NREQ * (FRAME_HDR + REQ_BYTES)),
			 NREQ * (FRAME_HDR + REQ_BYTES));
	assert_false(readable(p.afd));
	close_pair(&p);
}

/** Without batching (--homa-more 0) a request is written when started. */
static void tcp_client__unbatched_written_at_start(void **state)
{
	struct conn_pair p;

	(void)state;
	open_pair(&p, false);
	assert_int_equal(bench_tcp_client.start(p.ctx, 0, REQ_BYTES, 100, 1), 0);
	assert_int_equal(read_all(p.afd, FRAME_HDR + REQ_BYTES), FRAME_HDR + REQ_BYTES);
	close_pair(&p);
}

#define NSRV 3

/** Three servers, the client connected to each (batching on), epoll over the accepted ends. */
struct three_servers {
	void *ctx;        /**< the TCP client */
	int lfd[NSRV];    /**< listening sockets, server i's at i */
	int afd[NSRV];    /**< the server ends of the client's connections */
	int ep;           /**< epoll over afd[], data.u32 the server's index */
};

/** open_three() - Listen three times on 127.0.0.1, open a batching client, accept. */
static void open_three(struct three_servers *t)
{
	struct bench_tr_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	for (int i = 0; i < NSRV; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(a);
		t->lfd[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(t->lfd[i] >= 0);
		assert_int_equal(bind(t->lfd[i], (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(listen(t->lfd[i], 4), 0);
		assert_int_equal(getsockname(t->lfd[i], (struct sockaddr *)&a, &len), 0);
		memcpy(&cfg.servers[i], &a, sizeof(a));
		cfg.server_lens[i] = sizeof(a);
	}
	cfg.nservers = NSRV;
	cfg.conns = 1;
	assert_int_equal(bench_tcp_client.open(&t->ctx, &cfg), 0);
	t->ep = epoll_create1(0);
	assert_true(t->ep >= 0);
	for (int i = 0; i < NSRV; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		t->afd[i] = accept(t->lfd[i], NULL, NULL);
		assert_true(t->afd[i] >= 0);
		assert_int_equal(epoll_ctl(t->ep, EPOLL_CTL_ADD, t->afd[i], &ev), 0);
	}
}

/** close_three() - Close the client and the test's sockets. */
static void close_three(struct three_servers *t)
{
	bench_tcp_client.close(t->ctx);
	close(t->ep);
	for (int i = 0; i < NSRV; i++) {
		close(t->afd[i]);
		close(t->lfd[i]);
	}
}

/**
 * Batching keeps the caller's order across connections: requests started
 * to servers 2, 0, 1 reach them in that order (epoll lists the server ends
 * in the order their data arrived), as an all-to-all's shifted schedule
 * needs; the old client wrote its connections in index order (0, 1, 2), so
 * every device of an all-to-all sent to device 0 first.
 */
static void tcp_client__batch_written_in_start_order(void **state)
{
	static const int want[NSRV] = { 2, 0, 1 };
	struct three_servers t;
	struct bench_done done[NSRV];
	int got[NSRV], n = 0;

	(void)state;
	open_three(&t);
	for (int i = 0; i < NSRV; i++)
		assert_int_equal(bench_tcp_client.start(t.ctx, (size_t)want[i], REQ_BYTES, 100,
							(uint64_t)i), 0);
	assert_int_equal(bench_tcp_client.wait(t.ctx, bench_now_ns(), done, NSRV), 0);
	while (n < NSRV) {
		struct epoll_event evs[NSRV];
		int k = epoll_wait(t.ep, evs, NSRV - n, 5000);
		assert_true(k > 0);
		for (int i = 0; i < k; i++) {
			struct epoll_event off = { 0 };
			got[n++] = (int)evs[i].data.u32;
			assert_int_equal(epoll_ctl(t.ep, EPOLL_CTL_DEL, t.afd[evs[i].data.u32], &off), 0);
		}
	}
	assert_memory_equal(got, want, sizeof(want));
	close_three(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tcp_client__batch_written_by_wait),
		cmocka_unit_test(tcp_client__unbatched_written_at_start),
		cmocka_unit_test(tcp_client__batch_written_in_start_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
