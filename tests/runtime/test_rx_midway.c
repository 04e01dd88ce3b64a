/* SPDX-License-Identifier: MIT */
/**
 * @file test_rx_midway.c
 * A received batch lists more payload copies than the copy list can hold
 * (src/runtime/io.c copy_midway()): the list's copies are done mid-batch,
 * with the socket lock released, and the rest of the batch is listed
 * afresh. The server's list is cut to RT_RX_COPIES_ROOM + LIST_SPARE
 * entries, so it fills every few packets, and its I/O thread is held at
 * the socket lock while the client sends, so the packets queue in the
 * kernel and reach the engine in batches of many (HELD_PACKETS): whatever
 * the timing, a batch fills the list before its last packet.
 * The binary links with -Wl,--wrap=homa_rt_copy_payload to add up the
 * bytes copied from the list: the engine copies a piece itself only when
 * nothing is listed (copy listing off), so with every copy listed those
 * bytes equal the payload bytes the engines stored.
 */
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
#include "rt.h"

void __real_homa_rt_copy_payload(const struct homa_rx_copy *c, uint32_t n);

/** Entries of the server's copy list beyond the room kept before each packet. */
#define LIST_SPARE 2

/**
 * Packets the client has sent before the server's I/O thread is let go.
 * Held at the lock, that thread has read at most one batch of them; the
 * rest wait in the kernel for its next receive (up to a batch of 32
 * datagrams). One of those two batches has at least half of them: more
 * than LIST_SPARE + 1 packets, each listing at least one copy, so the
 * list fills before its last packet.
 */
#define HELD_PACKETS (4 * (LIST_SPARE + 2))

/** Requests sent at once; their packets mix in the server's batches. */
#define NREQ 4

/** Length of request @i: each its own, none a multiple of a 64 KiB chunk. */
#define REQ_LEN(i) ((size_t)150001 + (size_t)(i) * 33331)

/** Payload bytes homa_rt_copy_payload() copied, all sockets together. */
static _Atomic uint64_t listed_bytes;

/**
 * __wrap_homa_rt_copy_payload() - homa_rt_copy_payload(), adding the
 * bytes of the @n copies at @c to listed_bytes.
 */
void __wrap_homa_rt_copy_payload(const struct homa_rx_copy *c, uint32_t n)
{
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < n; i++)
		bytes += c[i].len;
	atomic_fetch_add(&listed_bytes, bytes);
	__real_homa_rt_copy_payload(c, n);
}

/**
 * hold_server() - Take server @s's socket lock (its I/O thread stops at
 * its next batch) and cut its copy list to RT_RX_COPIES_ROOM + LIST_SPARE
 * entries. Return: the socket's runtime, locked and referenced.
 */
static struct homa_rt *hold_server(homa_socket *s)
{
	struct homa_rt *rt = homa_rt_get(s);

	assert_non_null(rt);
	homa_rt_lock(rt);
	assert_true(rt->rx_copies_cap >= RT_RX_COPIES_ROOM + LIST_SPARE);
	rt->rx_copies_cap = RT_RX_COPIES_ROOM + LIST_SPARE;
	return rt;
}

/** release_server() - Let go of what hold_server() took. */
static void release_server(struct homa_rt *rt)
{
	homa_rt_unlock(rt);
	homa_rt_put(rt);
}

/**
 * wait_sent() - Wait until socket @s has handed at least @n packets to
 * the kernel (on loopback: queued at the receiver). Return: true if
 * within 30 s.
 */
static bool wait_sent(homa_socket *s, uint64_t n)
{
	int64_t end = test_now_ms() + 30000;
	struct homa_io_stats io;

	while (test_now_ms() < end) {
		assert_int_equal(homa_io_stats(s, &io), 0);
		if (io.tx_packets >= n)
			return true;
	}
	return false;
}

/** midway_count() - Server @s's copies done mid-batch so far (rt->rx_midway). */
static uint64_t midway_count(homa_socket *s)
{
	struct homa_rt *rt = homa_rt_get(s);
	uint64_t n;

	assert_non_null(rt);
	homa_rt_lock(rt);
	n = rt->rx_midway;
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return n;
}

/**
 * send_requests() - Send the NREQ requests from @cli to @dst, request i
 * REQ_LEN(i) bytes of test_fill() seed i; their ids into @ids.
 */
static void send_requests(homa_socket *cli, const struct sockaddr_storage *dst, uint64_t *ids)
{
	for (int i = 0; i < NREQ; i++) {
		uint8_t *buf = malloc(REQ_LEN(i));

		assert_non_null(buf);
		test_fill(buf, REQ_LEN(i), (uint64_t)i);
		assert_int_equal(homa_send(cli, (const struct sockaddr *)dst, buf, REQ_LEN(i), 0,
					   &ids[i]), 0);
		free(buf);
	}
}

/**
 * check_request() - @m is one of the requests, bit-exact: the one whose
 * length it has (each its own). Return: its index.
 */
static int check_request(const struct homa_message *m)
{
	uint8_t *want, *got;
	int i = 0;

	while (i < NREQ && REQ_LEN(i) != m->length)
		i++;
	assert_true(i < NREQ);
	want = malloc(REQ_LEN(i));
	got = malloc(REQ_LEN(i));
	assert_non_null(want);
	assert_non_null(got);
	test_fill(want, REQ_LEN(i), (uint64_t)i);
	assert_int_equal(homa_message_copy(m, 0, got, REQ_LEN(i)), REQ_LEN(i));
	assert_memory_equal(got, want, REQ_LEN(i));
	free(want);
	free(got);
	return i;
}

/**
 * serve_requests() - Receive the NREQ requests on @srv, check each
 * (check_request(), each once) and answer it with an empty response.
 */
static void serve_requests(homa_socket *srv)
{
	bool seen[NREQ] = {false};

	for (int k = 0; k < NREQ; k++) {
		struct homa_message m;
		int i;

		assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
		i = check_request(&m);
		assert_false(seen[i]);
		seen[i] = true;
		assert_int_equal(homa_reply_buf(srv, m.id, NULL, 0), 0);
		homa_message_release(&m);
	}
}

/** await_responses() - The empty responses of the RPCs @ids reach @cli. */
static void await_responses(homa_socket *cli, const uint64_t *ids)
{
	for (int i = 0; i < NREQ; i++) {
		struct homa_message m;

		assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, ids[i], 30000000000LL, &m), 0);
		assert_int_equal(m.length, 0);
		homa_message_release(&m);
	}
}

/**
 * check_copies() - After the exchange: the server's list was copied mid-batch
 * at least once, it refused no piece, and every payload byte the two
 * sockets stored went through the lists (listed_bytes).
 */
static void check_copies(homa_socket *cli, homa_socket *srv)
{
	struct homa_stats cs, ss;
	uint64_t midway = midway_count(srv), want = 0;

	assert_int_equal(homa_socket_stats(cli, &cs), 0);
	assert_int_equal(homa_socket_stats(srv, &ss), 0);
	for (int i = 0; i < NREQ; i++)
		want += REQ_LEN(i);
	print_message("midway copies %llu, stored %llu + %llu bytes, listed %llu, refused %llu\n",
		      (unsigned long long)midway, (unsigned long long)ss.payload_copied_in,
		      (unsigned long long)cs.payload_copied_in,
		      (unsigned long long)atomic_load(&listed_bytes),
		      (unsigned long long)ss.rx_copies_refused);
	assert_true(midway >= 1);
	assert_int_equal(ss.rx_copies_refused, 0);
	assert_true(ss.payload_copied_in >= want);
	assert_int_equal(atomic_load(&listed_bytes), ss.payload_copied_in + cs.payload_copied_in);
}

/**
 * copy_midway__batch_beyond_the_list() - NREQ requests whose first
 * HELD_PACKETS packets (at least) queue while the server's I/O thread is
 * held, its copy list cut to a few entries: the list is copied mid-batch
 * (rt->rx_midway), no piece is refused, every request arrives bit-exact
 * and every stored payload byte was listed and copied outside the lock
 * (zero-copy receive off: every payload byte is copied).
 */
static void copy_midway__batch_beyond_the_list(void **state)
{
	struct sockaddr_storage dst;
	uint64_t ids[NREQ];
	homa_socket *cli, *srv;
	struct homa_rt *held;

	(void)state;
	test_rx_lend_slots = -1;
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	held = hold_server(srv);
	send_requests(cli, &dst, ids);
	assert_true(wait_sent(cli, HELD_PACKETS));
	release_server(held);
	serve_requests(srv);
	await_responses(cli, ids);
	check_copies(cli, srv);
	homa_close(cli);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copy_midway__batch_beyond_the_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
