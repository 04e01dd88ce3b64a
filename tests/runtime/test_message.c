/* SPDX-License-Identifier: MIT */
/**
 * @file test_message.c
 * Received messages (src/runtime/message.c): releasing one twice, also
 * through a copy of the struct and after its memory went to another
 * message, is an error and frees nothing. Receiving into pieces the
 * application allocates (homa_open_opts.rx_alloc).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "homa/engine.h"

/** echo() - One RPC through @srv's threads; fill @m with the response. */
static void echo(homa_socket *cli, int port, struct homa_message *m)
{
	struct sockaddr_storage dst = test_dst(port);
	uint8_t buf[3000];
	uint64_t id;

	test_fill(buf, sizeof(buf), 1);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, buf, sizeof(buf), 0, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, m), 0);
	assert_true(test_check_response(m, sizeof(buf), 1));
}

/** homa_message_release__twice_is_an_error() - See the file comment. */
static void homa_message_release__twice_is_an_error(void **state)
{
	struct homa_message m, copy, next;
	struct test_server srv;
	homa_socket *cli;

	(void)state;
	assert_int_equal(test_server_start(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	echo(cli, srv.port, &m);
	copy = m;
	assert_int_equal(homa_message_release(&m), 0);
	assert_int_equal(homa_message_release(&m), HOMA_EALREADY);
	/* the next message may reuse the same memory: the stale copy must not free it */
	echo(cli, srv.port, &next);
	assert_int_equal(homa_message_release(&copy), HOMA_EALREADY);
	assert_true(test_check_response(&next, 3000, 1));
	assert_int_equal(homa_message_release(&next), 0);
	assert_int_equal(homa_message_release(NULL), HOMA_EINVAL);
	echo(cli, srv.port, &m);
	homa_close(cli);
	assert_int_equal(homa_message_release(&m), HOMA_ESHUTDOWN);
	test_server_stop(&srv);
}

/** The pieces a test's receive hooks handed out (they run on the runtime's thread). */
struct pieces {
	pthread_mutex_t lock;
	void *ptr[64];
	size_t size[64];
	int allocs, frees, bad_frees;
};

/** piece_alloc() - rx_alloc hook: malloc, remembering the piece. */
static void *piece_alloc(void *ctx, size_t size)
{
	struct pieces *p = ctx;
	void *b = malloc(size);

	pthread_mutex_lock(&p->lock);
	if (b && p->allocs < 64) {
		p->ptr[p->allocs] = b;
		p->size[p->allocs++] = size;
	}
	pthread_mutex_unlock(&p->lock);
	return b;
}

/** piece_free() - rx_free hook: a piece handed out, with its size. */
static void piece_free(void *ctx, void *ptr, size_t size)
{
	struct pieces *p = ctx;
	bool known = false;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->allocs; i++)
		known |= p->ptr[i] == ptr && p->size[i] == size;
	p->frees++;
	p->bad_frees += !known;
	pthread_mutex_unlock(&p->lock);
	free(ptr);
}

/** in_piece() - Index of the piece @ptr starts, or -1. */
static int in_piece(struct pieces *p, const void *ptr)
{
	int at = -1;

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->allocs; i++)
		if (p->ptr[i] == ptr)
			at = i;
	pthread_mutex_unlock(&p->lock);
	return at;
}

/**
 * homa_open_opts_rx_alloc__pieces_from_the_hooks() - A 150,000-byte
 * response lands in pieces from the socket's rx_alloc hooks: each segment
 * of the message is a whole piece (65536, 65536, 18928 bytes), the bytes
 * are intact, and release frees each piece through the hooks with its
 * size. Hooks without free are HOMA_EINVAL; a version 2 caller's struct
 * ends before rx_alloc and is not read.
 */
static void homa_open_opts_rx_alloc__pieces_from_the_hooks(void **state)
{
	static uint8_t buf[150000];
	struct pieces pc = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct homa_alloc hooks = {piece_alloc, piece_free, &pc}, half = {piece_alloc, NULL, &pc};
	struct homa_open_opts o;
	struct homa_message m;
	struct test_server srv;
	struct sockaddr_storage dst;
	homa_socket *cli;
	uint64_t id;
	int n = 0;

	(void)state;
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.rx_alloc = &half;
	assert_int_equal(homa_open(&cli, &o), HOMA_EINVAL);
	o.version = 2;
	assert_int_equal(homa_open(&cli, &o), 0);
	homa_close(cli);
	o.version = HOMA_OPEN_OPTS_VERSION;
	o.rx_alloc = &hooks;
	assert_int_equal(homa_open(&cli, &o), 0);
	assert_int_equal(test_server_start(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	dst = test_dst(srv.port);
	test_fill(buf, sizeof(buf), 3);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, buf, sizeof(buf), 0, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	assert_true(test_check_response(&m, sizeof(buf), 3));
	for (size_t off = 0; off < sizeof(buf); off += 65536, n++) {
		const void *p;
		size_t len = homa_message_segment(&m, off, &p);
		int i = in_piece(&pc, p);

		assert_true(i >= 0);
		assert_int_equal(len, sizeof(buf) - off < 65536 ? sizeof(buf) - off : 65536);
		assert_int_equal(pc.size[i], len);
	}
	assert_int_equal(n, 3);
	assert_int_equal(homa_message_release(&m), 0);
	pthread_mutex_lock(&pc.lock);
	assert_int_equal(pc.allocs, 3);
	assert_int_equal(pc.frees, 3);
	assert_int_equal(pc.bad_frees, 0);
	pthread_mutex_unlock(&pc.lock);
	homa_close(cli);
	test_server_stop(&srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_message_release__twice_is_an_error),
		cmocka_unit_test(homa_open_opts_rx_alloc__pieces_from_the_hooks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
