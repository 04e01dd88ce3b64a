/* SPDX-License-Identifier: MIT */
/**
 * @file test_enc_send.c
 * Ordinary (copying) sends on encrypted sockets, real stack (UDP on
 * loopback): the engine lends its own copy of the message to the seal
 * (homa_engine_output_ref(), tx.c, homa_rt_enc_seal()), so the library
 * copies each payload byte once (into the message), not twice; and the
 * borrowed memory outlives every packet that points into it, with
 * packets lost (fault_wrap.c drops received datagrams, so requests and
 * responses are retransmitted) and RPCs aborted while their packets are
 * still being sent.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fault_wrap.h"
#include "homa/encrypt.h"
#include "homa/engine.h"
#include "homa/homa.h"
#include "rt_helpers.h"

/** Bytes a thread seals between two yields (encrypt_pkt.c). */
#define SEAL_YIELD_BYTES (256u << 10)
/** Milliseconds without yields after a long one (encrypt_pkt.c). */
#define SEAL_YIELD_BACKOFF_MS 50u

/** Largest message echoed (4 MiB). */
#define BIG (4u << 20)

/** pattern() - Byte @i of the test message of @len bytes. */
static uint8_t pattern(size_t i, size_t len)
{
	return (uint8_t)(i * 131 + (i >> 11) + len);
}

/**
 * open_pair() - A client and an echo server socket on 127.0.0.1 (@enc:
 * encrypted, each holding an association to the other), the server
 * answered by crypto_echo_start().
 */
static void open_pair(bool enc, homa_socket **c, struct crypto_echo *srv)
{
	int cport;

	*c = crypto_open(enc, false);
	assert_non_null(*c);
	crypto_echo_start(srv, crypto_open(enc, true));
	cport = homa_local_port(*c);
	if (enc) {
		crypto_associate(*c, srv->s, srv->port);
		crypto_associate(srv->s, *c, cport);
	}
}

/**
 * echo() - One RPC of @len patterned bytes from @c to @port through
 * homa_send_request() (the copying path); the response must match bit
 * for bit. Return: 0 or the RPC's error (HOMA_EPROTO: a wrong echo).
 */
static int echo(homa_socket *c, int port, uint8_t *out, uint8_t *in, size_t len)
{
	struct sockaddr_storage sa = crypto_dst(port);
	struct homa_iov iov = {out, len};
	struct homa_message m;
	uint64_t id;
	int err;

	for (size_t i = 0; i < len; i++)
		out[i] = pattern(i, len);
	err = homa_send_request(c, (struct sockaddr *)&sa, &iov, 1, 0, &id);
	if (err)
		return err;
	memset(out, 0, len);  /* the library's copy is what travels */
	err = homa_recv(c, HOMA_RECV_RESPONSE, id, 60000000000ll, &m);
	if (err)
		return err;
	err = m.error;
	if (!err && (m.length != len || homa_message_copy(&m, 0, in, len) != len))
		err = HOMA_EPROTO;
	for (size_t i = 0; !err && i < len; i++)
		if (in[i] != pattern(i, len))
			err = HOMA_EPROTO;
	homa_message_release(&m);
	return err;
}

/**
 * copied() - @s's tx_copied_bytes and retransmitted_bytes, and the most
 * bytes its sends may copy in short pieces (under HOMA_REF_MIN_CHUNK,
 * which are copied, not lent) while @srv granted: one piece per GRANT
 * and one at the message's end.
 */
static void copied(homa_socket *s, homa_socket *srv, uint64_t *tx, uint64_t *retx,
		   uint64_t *shorts)
{
	struct homa_stats sst;

	struct homa_io_stats io;
	struct homa_stats st;

	assert_int_equal(homa_io_stats(s, &io), 0);
	assert_int_equal(homa_socket_stats(s, &st), 0);
	*tx = io.tx_copied_bytes;
	*retx = st.retransmitted_bytes;
	assert_int_equal(homa_socket_stats(srv, &sst), 0);
	*shorts = (HOMA_REF_MIN_CHUNK - 1) * (sst.grants_sent + 1);
}

/**
 * enc_send__ordinary_send_copied_once() - A 250 kB homa_send_request()
 * on an encrypted socket copies the payload once (into the message), as
 * the clear socket's does at most: the client's tx_copied_bytes stays
 * within the clear socket's and within N plus the retransmitted bytes
 * (packets that span two 64 KiB chunks of the message are sealed from
 * both pieces) plus short pieces: a payload under HOMA_REF_MIN_CHUNK is
 * copied, and one can end at each grant's offset (the server's
 * grants_sent) and at the message's end. Sealing into the packet after
 * copying the payload there (the old code) copies 2 N.
 */
static void enc_send__ordinary_send_copied_once(void **state)
{
	enum { N = 250000 };
	uint8_t *out = malloc(N), *in = malloc(N);
	uint64_t tx[2], retx[2], shorts[2];

	(void)state;
	assert_non_null(out);
	assert_non_null(in);
	hd_faults_set(0, 0, 0, 1);
	for (int enc = 0; enc < 2; enc++) {
		struct crypto_echo srv;
		homa_socket *c;

		open_pair(enc, &c, &srv);
		assert_int_equal(echo(c, srv.port, out, in, N), 0);
		copied(c, srv.s, &tx[enc], &retx[enc], &shorts[enc]);
		homa_close(c);
		crypto_echo_stop(&srv);
	}
	print_message("tx copied: clear %llu, encrypted %llu of %d (retransmitted %llu, short pieces at most %llu)\n",
		      (unsigned long long)tx[0], (unsigned long long)tx[1], N,
		      (unsigned long long)retx[1], (unsigned long long)shorts[1]);
	free(out);
	free(in);
	if (tx[1] > N + retx[1] + shorts[1])
		fail_msg("encrypted send copied %llu bytes of %d (retransmitted %llu, short pieces at most %llu)",
			 (unsigned long long)tx[1], N, (unsigned long long)retx[1],
			 (unsigned long long)shorts[1]);
	if (tx[1] > tx[0] + retx[1])
		fail_msg("encrypted send copied %llu, clear %llu", (unsigned long long)tx[1],
			 (unsigned long long)tx[0]);
}

/** struct echo_job - One echo() run by echo_thread(), on CPU cpu if it is >= 0. */
struct echo_job {
	homa_socket *c;
	int port;
	size_t len;
	int cpu;
	int pin_err;  /**< pin()'s result */
	int err;
	uint64_t ms;  /**< how long the echo took */
};

/**
 * pin() - Keep the calling thread on CPU @cpu (nothing when negative).
 * Return: 0 or pthread_setaffinity_np()'s error (threads other than the
 * test's own may not call cmocka's asserts; the test checks it).
 */
static int pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/**
 * echo_thread() - Run @arg's echo (struct echo_job) on a thread of its
 * own, whose per-thread count of sealed bytes and yield backoff start
 * afresh.
 */
static void *echo_thread(void *arg)
{
	struct echo_job *j = arg;
	uint8_t *out = malloc(j->len), *in = malloc(j->len);
	uint64_t t0;

	j->pin_err = pin(j->cpu);
	t0 = crypto_now_ms();
	j->err = out && in ? echo(j->c, j->port, out, in, j->len) : HOMA_ENOMEM;
	j->ms = crypto_now_ms() - t0;
	free(out);
	free(in);
	return NULL;
}

/** Set to end spin_thread(). */
static atomic_bool spin_stop;
/** spin_pin_err - spin_thread()'s pin() result. */
static int spin_pin_err;

/** spin_thread() - A busy loop on CPU *(int *)@arg until spin_stop is set. */
static void *spin_thread(void *arg)
{
	spin_pin_err = pin(*(int *)arg);
	while (!atomic_load(&spin_stop))
		;
	return NULL;
}

/**
 * enc_send__sealing_thread_yields() - A 1 MiB echo on an encrypted pair:
 * each side seals 1 MiB, so its thread crossed 256 KiB sealed and offered
 * its CPU (tx_seal_yields > 0), at most once per 256 KiB (plus slack for
 * a second sending thread). The clear pair seals nothing and never
 * yields.
 */
static void enc_send__sealing_thread_yields(void **state)
{
	enum { N = 1u << 20 };

	(void)state;
	hd_faults_set(0, 0, 0, 1);
	for (int enc = 0; enc < 2; enc++) {
		struct homa_io_stats cst, sst;
		struct crypto_echo srv;
		struct echo_job j = {.len = N, .cpu = -1};
		pthread_t t;

		open_pair(enc, &j.c, &srv);
		j.port = srv.port;
		assert_int_equal(pthread_create(&t, NULL, echo_thread, &j), 0);
		pthread_join(t, NULL);
		assert_int_equal(j.err, 0);
		assert_int_equal(homa_io_stats(j.c, &cst), 0);
		assert_int_equal(homa_io_stats(srv.s, &sst), 0);
		print_message("%s: seal yields client %llu, server %llu\n", enc ? "encrypted" : "clear",
			      (unsigned long long)cst.tx_seal_yields,
			      (unsigned long long)sst.tx_seal_yields);
		if (enc) {
			assert_in_range(cst.tx_seal_yields, 1, N / SEAL_YIELD_BYTES + 3);
			assert_in_range(sst.tx_seal_yields, 1, N / SEAL_YIELD_BYTES + 3);
		} else {
			assert_int_equal(cst.tx_seal_yields, 0);
			assert_int_equal(sst.tx_seal_yields, 0);
		}
		homa_close(j.c);
		crypto_echo_stop(&srv);
	}
}

/**
 * enc_send__sealing_yields_back_off_beside_busy_loop() - The client's
 * thread seals a 4 MiB request on the CPU of a busy loop: each yield
 * hands the loop a whole time slice (over 0.5 ms), after which the
 * thread does not yield for 50 ms, so it yields at most about once per
 * 50 ms of the echo (16 times, once per 256 KiB, without the backoff).
 * Where the echo took so long that the bound reaches 16 (slow
 * sanitizer builds), the test says so and is skipped.
 */
static void enc_send__sealing_yields_back_off_beside_busy_loop(void **state)
{
	enum { N = 4u << 20 };
	struct echo_job j = {.len = N, .cpu = sched_getcpu()};
	struct homa_io_stats cst;
	struct crypto_echo srv;
	pthread_t t, spin;
	uint64_t bound;

	(void)state;
	assert_true(j.cpu >= 0);
	hd_faults_set(0, 0, 0, 1);
	open_pair(true, &j.c, &srv);
	j.port = srv.port;
	atomic_store(&spin_stop, false);
	assert_int_equal(pthread_create(&spin, NULL, spin_thread, &j.cpu), 0);
	assert_int_equal(pthread_create(&t, NULL, echo_thread, &j), 0);
	pthread_join(t, NULL);
	atomic_store(&spin_stop, true);
	pthread_join(spin, NULL);
	assert_int_equal(spin_pin_err, 0);
	assert_int_equal(j.pin_err, 0);
	assert_int_equal(j.err, 0);
	assert_int_equal(homa_io_stats(j.c, &cst), 0);
	bound = 2 + j.ms / SEAL_YIELD_BACKOFF_MS;
	print_message("seal yields beside a busy loop: %llu in %llu ms (at most %llu)\n",
		      (unsigned long long)cst.tx_seal_yields, (unsigned long long)j.ms,
		      (unsigned long long)bound);
	homa_close(j.c);
	crypto_echo_stop(&srv);
	if (bound >= N / SEAL_YIELD_BYTES) {
		print_message("echo too slow to tell the backoff from none\n");
		skip();
	}
	assert_in_range(cst.tx_seal_yields, 1, bound);
}

/**
 * enc_send__echo_sizes_with_loss() - Encrypted echoes of 1 B to 4 MiB
 * (chunk edges, the smallest lent payload and below, one packet, many)
 * through the copying calls on both sides, with 2% of received datagrams
 * dropped: every echo is bit-exact and retransmissions happened.
 */
static void enc_send__echo_sizes_with_loss(void **state)
{
	static const size_t sizes[] = {1, 63, 64, 65, 1000, 1399, 1400, 1500, 9000, 65535,
				       65536, 65537, 131072, 250000, 1 << 20, BIG};
	uint8_t *out = malloc(BIG), *in = malloc(BIG);
	struct hd_fault_counts fc;
	struct crypto_echo srv;
	uint64_t tx, retx, shorts;
	homa_socket *c;

	(void)state;
	assert_non_null(out);
	assert_non_null(in);
	open_pair(true, &c, &srv);
	hd_faults_counts(&fc, 1);
	hd_faults_set(20000, 0, 0, 42);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int err = echo(c, srv.port, out, in, sizes[i]);

		if (err)
			fail_msg("echo of %zu bytes: %s", sizes[i], homa_strerror(err));
	}
	hd_faults_set(0, 0, 0, 1);
	hd_faults_counts(&fc, 1);
	copied(c, srv.s, &tx, &retx, &shorts);
	print_message("dropped %llu of %llu datagrams; client retransmitted %llu bytes\n",
		      (unsigned long long)fc.dropped, (unsigned long long)fc.seen,
		      (unsigned long long)retx);
	assert_true(fc.dropped > 0);
	homa_close(c);
	crypto_echo_stop(&srv);
	free(out);
	free(in);
}

/** Shared by abort_thread() and its test. */
struct aborter {
	homa_socket *c;
	_Atomic uint64_t id;
	_Atomic int stop;
};

/** abort_thread() - Abort the RPC whose id is posted in @arg, as soon as it is. */
static void *abort_thread(void *arg)
{
	struct aborter *a = arg;

	while (!a->stop) {
		uint64_t id = a->id;

		if (id) {
			homa_abort(a->c, id);  /* fails if the RPC ended first */
			a->id = 0;
		}
	}
	return NULL;
}

/**
 * enc_send__abort_while_sending() - Encrypted 1 MiB requests aborted by
 * another thread while their packets are sealed and sent (the engine
 * frees the message then), with 2% loss, then an RPC that must echo
 * intact: nothing read freed memory (ASan) and nothing stalled.
 */
static void enc_send__abort_while_sending(void **state)
{
	enum { N = 1 << 20 };
	uint8_t *out = malloc(N), *in = malloc(N);
	struct crypto_echo srv;
	struct aborter a = {0};
	pthread_t t;

	(void)state;
	assert_non_null(out);
	assert_non_null(in);
	open_pair(true, &a.c, &srv);
	hd_faults_set(20000, 0, 0, 7);
	assert_int_equal(pthread_create(&t, NULL, abort_thread, &a), 0);
	for (int i = 0; i < 20; i++) {
		struct sockaddr_storage sa = crypto_dst(srv.port);
		struct homa_iov iov = {out, N};
		struct homa_message m;
		uint64_t id;

		memset(out, i, N);
		assert_int_equal(homa_send_request(a.c, (struct sockaddr *)&sa, &iov, 1, 0, &id), 0);
		a.id = id;
		if (homa_recv(a.c, HOMA_RECV_RESPONSE, id, 60000000000ll, &m) == 0)
			homa_message_release(&m);
		while (a.id)
			;  /* the abort (or its failure: the RPC was done) is through */
	}
	a.stop = 1;
	pthread_join(t, NULL);
	assert_int_equal(echo(a.c, srv.port, out, in, N), 0);
	hd_faults_set(0, 0, 0, 1);
	homa_close(a.c);
	crypto_echo_stop(&srv);
	free(out);
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(enc_send__ordinary_send_copied_once),
		cmocka_unit_test(enc_send__sealing_thread_yields),
		cmocka_unit_test(enc_send__sealing_yields_back_off_beside_busy_loop),
		cmocka_unit_test(enc_send__echo_sizes_with_loss),
		cmocka_unit_test(enc_send__abort_while_sending),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
