/* SPDX-License-Identifier: MIT */
/**
 * @file test_loopback.c
 * Many threads, many RPCs, every size from 1 byte to 4 MB, over loopback
 * with the driver named on the command line ("udp" or "raw"): every
 * response must be bit-exact and every RPC accounted for.
 *
 * 32 client threads share one client socket and run 500 RPCs each
 * against a 4-thread server. Sizes: one 1-byte and one 4 MiB RPC per
 * thread (the big ones staggered over the run), every 100th 100 KB-1 MB,
 * every 10th 1-100 KB, the rest 1-1000 bytes (so the run fits a small CI
 * machine).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

#define THREADS 32
#define RPCS 500
#define BIG (4u << 20)

static int driver = HOMA_DRIVER_UDP;

/** Shared by the client threads. */
struct run {
	homa_socket *cli;
	int port;
	_Atomic uint64_t ok, bad, failed, bytes;
	_Atomic int first_error;
};

/** size_for() - The size of thread @t's RPC @i (see the file comment). */
static size_t size_for(int t, int i)
{
	uint64_t x = (uint64_t)t * 1000003u + (uint64_t)i * 7919u + 17;

	x ^= x >> 11;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	if (i == 1)
		return 1;
	if (i == 20 + t * 15)
		return BIG;
	if (i % 100 == 0)
		return 100000 + x % 900000;
	if (i % 10 == 0)
		return 1000 + x % 99000;
	return 1 + x % 1000;
}

/** client_thread() - Run RPCS RPCs one after the other and check each. */
static void *client_thread(void *arg)
{
	struct run *r = ((void **)arg)[0];
	int t = (int)(intptr_t)((void **)arg)[1];
	struct sockaddr_storage dst = test_dst(r->port);
	uint8_t *buf = malloc(BIG);

	for (int i = 0; i < RPCS; i++) {
		size_t len = size_for(t, i);
		uint64_t seed = (uint64_t)t * 100000 + (uint64_t)i, id;
		struct homa_message m;
		int err;

		test_fill(buf, len, seed);
		err = homa_send(r->cli, (struct sockaddr *)&dst, buf, len, seed, &id);
		if (!err)
			err = homa_recv(r->cli, HOMA_RECV_RESPONSE, id, 120000000000LL, &m);
		if (err) {
			int zero = 0;

			atomic_compare_exchange_strong(&r->first_error, &zero, err);
			r->failed++;
			continue;
		}
		if (m.cookie == seed && test_check_response(&m, len, seed))
			r->ok++;
		else
			r->bad++;
		r->bytes += len;
		homa_message_release(&m);
	}
	free(buf);
	return NULL;
}

/** loopback__32_threads_500_rpcs_bit_exact() - The whole run. */
static void loopback__32_threads_500_rpcs_bit_exact(void **state)
{
	struct test_server srv;
	struct run r;
	pthread_t th[THREADS];
	void *args[THREADS][2];
	struct homa_stats cs, ss;
	struct homa_io_stats io;
	int err;

	if (driver == HOMA_DRIVER_RAW && !test_is_root()) {
		print_message("raw driver loopback test skipped: needs root (CAP_NET_RAW)\n");
		skip();
	}
	memset(&r, 0, sizeof(r));
	err = test_server_start(&srv, driver, HOMA_MODE_THREADED, 4, NULL);
	assert_int_equal(err, 0);
	assert_int_equal(test_open(&r.cli, driver, HOMA_MODE_THREADED, false, 0, NULL), 0);
	r.port = srv.port;
	for (int t = 0; t < THREADS; t++) {
		args[t][0] = &r;
		args[t][1] = (void *)(intptr_t)t;
		pthread_create(&th[t], NULL, client_thread, args[t]);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	homa_socket_stats(r.cli, &cs);
	homa_socket_stats(srv.s, &ss);
	homa_io_stats(r.cli, &io);
	print_message("%s: %lu ok, %lu bad, %lu failed (first error: %s), %.1f MB each way; "
		      "client resends %lu, tx gso batches %lu, rx gro batches %lu\n",
		      driver == HOMA_DRIVER_RAW ? "raw" : "udp",
		      (unsigned long)r.ok, (unsigned long)r.bad, (unsigned long)r.failed,
		      homa_strerror(r.first_error), r.bytes / 1e6,
		      (unsigned long)cs.resends_sent, (unsigned long)io.tx_gso_batches,
		      (unsigned long)io.rx_gro_batches);
	print_message("client: restarts %lu, timed out %lu, RPC_UNKNOWN received %lu; server: "
		      "timed out %lu, evicted %lu (stale %lu), RPC_UNKNOWN sent %lu, acks %lu\n",
		      (unsigned long)cs.rpc_restarts, (unsigned long)cs.rpcs_timed_out,
		      (unsigned long)cs.pkts_recv[HOMA_PKT_RPC_UNKNOWN - HOMA_PKT_FIRST],
		      (unsigned long)ss.rpcs_timed_out, (unsigned long)ss.msgs_evicted,
		      (unsigned long)ss.stale_evicted,
		      (unsigned long)ss.pkts_sent[HOMA_PKT_RPC_UNKNOWN - HOMA_PKT_FIRST],
		      (unsigned long)ss.acks_received);
	assert_int_equal(r.failed, 0);
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.ok, THREADS * RPCS);
	assert_int_equal(cs.client_rpcs_started, THREADS * RPCS);
	assert_int_equal(cs.client_rpcs_completed, THREADS * RPCS);
	assert_int_equal(ss.server_requests_received, THREADS * RPCS);
	uint64_t by_prio = 0, above0 = 0;

	for (int p = 0; p < 8; p++) {
		by_prio += io.rx_packets_prio[p];
		above0 += p ? io.rx_packets_prio[p] : 0;
	}
	assert_int_equal(by_prio, io.rx_packets); /* every received packet has a priority */
	assert_true(above0 > 0);                  /* responses and grants come above 0 */
	homa_close(r.cli);
	test_server_stop(&srv);
	assert_int_equal(srv.served, THREADS * RPCS);
	assert_int_equal(srv.errors, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loopback__32_threads_500_rpcs_bit_exact),
	};

	if (argc > 1 && strcmp(argv[1], "raw") == 0)
		driver = HOMA_DRIVER_RAW;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
