/* SPDX-License-Identifier: MIT */
/**
 * @file test_rx_copy.c
 * Receiving (src/runtime/io.c) while the application reads: a 16 MiB
 * response read with homa_recv_partial() as it arrives, its server in
 * the same process, with a thread churning the heap beside it (python
 * binding's test_recv_partial in C).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

/** Size of the response read as it arrives (python_binding's test_recv_partial). */
#define BIG_LEN ((size_t)16 << 20)

/** Rounds of the big response. */
#define BIG_ROUNDS 3

/** A server thread's reply to the big request. */
struct big_reply {
	homa_socket *srv;
	uint64_t id;
	const uint8_t *data;
	int err;
};

/** reply_thread() - Send the big response (homa_reply_buf() copies it). */
static void *reply_thread(void *arg)
{
	struct big_reply *r = arg;

	r->err = homa_reply_buf(r->srv, r->id, r->data, BIG_LEN);
	return NULL;
}

/** Heap churn beside the receive (heap_thread()). */
struct churn {
	atomic_bool stop;
	uint64_t bad;     /**< blocks whose pattern changed while allocated */
};

/**
 * heap_thread() - Allocate 64 KiB blocks (the size of a message chunk),
 * fill each with a pattern, check it a little later and free it, until
 * told to stop: memory written after the library freed it, and handed
 * out again by malloc, shows as a changed pattern (as in Python's heap,
 * where it crashed the garbage collector).
 */
static void *heap_thread(void *arg)
{
	struct churn *c = arg;
	enum { N = 8, SZ = 1 << 16 };
	uint8_t *b[N] = {0};
	uint8_t gen = 0;

	while (!atomic_load(&c->stop)) {
		for (int i = 0; i < N; i++) {
			b[i] = malloc(SZ);
			if (b[i])
				memset(b[i], 0xa5 ^ gen ^ i, SZ);
		}
		sched_yield();
		for (int i = 0; i < N; i++) {
			for (size_t k = 0; b[i] && k < SZ; k++) {
				if (b[i][k] != (uint8_t)(0xa5 ^ gen ^ i)) {
					c->bad++;
					break;
				}
			}
			free(b[i]);
		}
		gen++;
	}
	return NULL;
}

/**
 * read_big() - Read the response of @id with homa_recv_partial() as it
 * arrives into @part, without sleeping between calls, until homa_recv()
 * hands it whole. Return: homa_recv()'s result (@m filled on 0).
 */
static int read_big(homa_socket *cli, uint64_t id, uint8_t *part, const uint8_t *want,
		    struct homa_message *m, size_t *read)
{
	int64_t end = test_now_ms() + 60000;
	size_t got = 0;
	int err = HOMA_EAGAIN;

	while (test_now_ms() < end) {
		size_t avail = 0;
		int64_t n = homa_recv_partial(cli, id, got, part + got, BIG_LEN - got, &avail);

		if (n >= 0) {
			assert_true(got + (size_t)n <= avail && avail <= BIG_LEN);
			got += (size_t)n;
			continue;
		}
		assert_int_equal(n, HOMA_ENOTFOUND);  /* not started, or complete */
		err = homa_recv(cli, HOMA_RECV_RESPONSE, id, 0, m);
		if (err != HOMA_EAGAIN)
			break;
	}
	assert_memory_equal(part, want, got);
	*read = got;
	return err;
}

/**
 * homa_recv_partial__big_response_while_copied() - A 16 MiB response read
 * with homa_recv_partial() as it arrives, its server in the same process
 * replying from another thread, while a third thread churns the heap:
 * every round's response arrives intact, the bytes read on the way match,
 * and no heap block changes under its owner.
 */
static void homa_recv_partial__big_response_while_copied(void **state)
{
	uint8_t *data = malloc(BIG_LEN), *want = malloc(BIG_LEN), *part = malloc(BIG_LEN);
	struct churn churn = {0};
	struct sockaddr_storage dst;
	homa_socket *cli, *srv;
	pthread_t ht;

	(void)state;
	assert_non_null(data);
	assert_non_null(want);
	assert_non_null(part);
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	pthread_create(&ht, NULL, heap_thread, &churn);
	for (int round = 0; round < BIG_ROUNDS; round++) {
		struct big_reply r = {.srv = srv, .data = data};
		struct homa_message m;
		size_t read = 0;
		uint64_t cid;
		pthread_t rt;

		test_fill(data, BIG_LEN, 100 + (uint64_t)round);
		for (size_t i = 0; i < BIG_LEN; i++)
			data[i] ^= 0x5a;  /* test_check_response() expects an echo server's bytes */
		memcpy(want, data, BIG_LEN);
		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "big", 3, 0, &cid), 0);
		assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
		r.id = m.id;
		homa_message_release(&m);
		pthread_create(&rt, NULL, reply_thread, &r);
		assert_int_equal(read_big(cli, cid, part, want, &m, &read), 0);
		pthread_join(rt, NULL);
		assert_int_equal(r.err, 0);
		print_message("round %d: %zu of %zu bytes read as they arrived\n", round, read,
			      BIG_LEN);
		assert_true(test_check_response(&m, BIG_LEN, 100 + (uint64_t)round));
		homa_message_release(&m);
	}
	atomic_store(&churn.stop, true);
	pthread_join(ht, NULL);
	assert_int_equal(churn.bad, 0);
	homa_close(cli);
	homa_close(srv);
	free(data);
	free(want);
	free(part);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_recv_partial__big_response_while_copied),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
