/* SPDX-License-Identifier: MIT */
/**
 * @file test_standby.c
 * Polled mode when the application is away (src/runtime/standby.c): a
 * polled socket whose owner makes no call for several RPC timeouts in
 * the middle of an RPC must not make that RPC fail, on either side; and
 * while the application is there, the standby thread stays asleep. The
 * same for threaded mode, whose I/O thread naps while an application
 * thread waiting in homa_recv() drives the socket.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>

#include "helpers.h"

/** RPC timeout in these tests: 300 ticks of 1 ms (tolerates a loaded machine). */
#define TICKS 300
/** How long the owner stays away: five RPC timeouts. */
#define AWAY_MS (5 * TICKS)
/** Message size: needs grants and many packets in both directions. */
#define LEN 1000000

/** sleep_ms() - Sleep @ms milliseconds without touching any socket. */
static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/** settings() - Defaults with a TICKS-tick RPC timeout. */
static void settings(struct homa_settings *st)
{
	homa_settings_default(st);
	st->timeout_ticks = TICKS;
}

/**
 * away_server() - Polled server: take one request, reply with the
 * transformed bytes, then stay away for AWAY_MS (no call at all), then
 * serve until the socket closes.
 */
static void *away_server(void *arg)
{
	homa_socket *s = arg;
	struct homa_message m;
	uint8_t *buf = malloc(LEN);
	uint64_t served = 0, errors = 0;

	assert_int_equal(homa_recv(s, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
	assert_int_equal(m.length, LEN);
	homa_message_copy(&m, 0, buf, LEN);
	for (size_t i = 0; i < LEN; i++)
		buf[i] ^= 0x5a;
	assert_int_equal(homa_reply_buf(s, m.id, buf, LEN), 0);
	homa_message_release(&m);
	sleep_ms(AWAY_MS);
	free(buf);
	test_serve_forever(s, &served, &errors);
	return NULL;
}

/**
 * server_owner_away() - The server's owner (a socket in @mode) replies
 * (1 MB, most of it waiting for grants) and then makes no call for five
 * RPC timeouts: the client still gets the whole response, not a timeout.
 */
static void server_owner_away(int mode)
{
	struct homa_settings st;
	struct homa_stats peer;
	struct sockaddr_storage dst;
	struct homa_message m;
	homa_socket *srv, *cli;
	uint8_t *req = malloc(LEN);
	pthread_t th;
	uint64_t id;

	settings(&st);
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, mode, true, 0, &st), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	pthread_create(&th, NULL, away_server, srv);
	dst = test_dst(homa_local_port(srv));
	test_fill(req, LEN, 7);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, req, LEN, 7, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 60000000000LL, &m), 0);
	assert_int_equal(m.error, 0);
	assert_true(test_check_response(&m, LEN, 7));
	homa_message_release(&m);
	assert_int_equal(homa_socket_stats(cli, &peer), 0);
	assert_int_equal(peer.rpcs_timed_out, 0);
	homa_close(cli);
	homa_close(srv);
	pthread_join(th, NULL);
	free(req);
}

/** polled__server_owner_away() - server_owner_away() in polled mode (the standby steps in). */
static void polled__server_owner_away(void **state)
{
	(void)state;
	server_owner_away(HOMA_MODE_POLLED);
}

/**
 * threaded__server_owner_away() - server_owner_away() in threaded mode:
 * the I/O thread steps in once the thread that waited in homa_recv()
 * and drove the socket is gone.
 */
static void threaded__server_owner_away(void **state)
{
	(void)state;
	server_owner_away(HOMA_MODE_THREADED);
}

/**
 * client_owner_away() - A client (a socket in @mode) sends a 1 MB request
 * (most of it waiting for grants) and makes no call for five RPC
 * timeouts before asking for the response: the RPC completes, and the
 * server never timed it out meanwhile.
 */
static void client_owner_away(int mode)
{
	struct homa_settings st;
	struct test_server ts;
	struct homa_stats peer;
	struct sockaddr_storage dst;
	struct homa_message m;
	homa_socket *cli;
	uint8_t *req = malloc(LEN);
	uint64_t id;

	settings(&st);
	assert_int_equal(test_server_start(&ts, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, &st), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, mode, false, 0, &st), 0);
	dst = test_dst(ts.port);
	test_fill(req, LEN, 9);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, req, LEN, 9, &id), 0);
	sleep_ms(AWAY_MS);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 60000000000LL, &m), 0);
	assert_int_equal(m.error, 0);
	assert_true(test_check_response(&m, LEN, 9));
	homa_message_release(&m);
	assert_int_equal(homa_socket_stats(ts.s, &peer), 0);
	assert_int_equal(peer.rpcs_timed_out, 0); /* the server never gave up on it */
	homa_close(cli);
	test_server_stop(&ts);
	assert_int_equal(ts.served, 1);
	free(req);
}

/** polled__client_owner_away() - client_owner_away() in polled mode. */
static void polled__client_owner_away(void **state)
{
	(void)state;
	client_owner_away(HOMA_MODE_POLLED);
}

/** threaded__client_owner_away() - client_owner_away() in threaded mode. */
static void threaded__client_owner_away(void **state)
{
	(void)state;
	client_owner_away(HOMA_MODE_THREADED);
}

/**
 * task_switches() - Voluntary context switches of this process's threads
 * named @name (read from /proc/self/task/TID/comm and status).
 */
static long task_switches(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long sum = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], line[128];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;  /* the thread ended meanwhile */
		bool match = fgets(line, sizeof(line), f) && !strncmp(line, name, strlen(name));

		fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = match ? fopen(path, "r") : NULL;
		while (f && fgets(line, sizeof(line), f)) {
			long v;

			if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
				sum += v;
		}
		if (f)
			fclose(f);
	}
	closedir(d);
	return sum;
}

/** Small RPCs in polled__standby_sleeps_while_app_polls. */
#define SMALL_RPCS 300

/**
 * helper_sleeps() - A client and a server in @mode, each with an
 * application thread always inside homa_recv(): their helper threads
 * (named @name: the standby, or the I/O thread) must not wake per
 * message. They may wake on their own timeout (50 ms here), when the
 * engine has work due while the application is away, or on a lock held
 * by a preempted thread. A helper that does every receive itself (the
 * old threaded mode) wakes at least once per RPC on each side, 2 per RPC
 * in all (601 over 300 RPCs); the bound, one per RPC, is half of that
 * and above what a loaded machine adds (5 when idle, 132 in a clang run
 * beside other tests).
 */
static void helper_sleeps(int mode, const char *name)
{
	struct homa_settings st;
	struct test_server ts;
	struct sockaddr_storage dst;
	homa_socket *cli;
	uint8_t req[100];
	long before;

	settings(&st);
	st.resend_ticks = st.resend_interval = 50;  /* the standby's absence: 50 ms */
	if (mode == HOMA_MODE_THREADED) {
		st.tick_ns = 50000000;  /* the I/O thread's: one tick, 50 ms */
		st.resend_ticks = st.resend_interval = 5;
		st.timeout_ticks = 100;
	}
	assert_int_equal(test_server_start(&ts, HOMA_DRIVER_UDP, mode, 1, &st), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, mode, false, 0, &st), 0);
	dst = test_dst(ts.port);
	before = task_switches(name);
	for (int i = 0; i < SMALL_RPCS; i++) {
		struct homa_message m;
		uint64_t id;

		test_fill(req, sizeof(req), (uint64_t)i);
		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, req, sizeof(req),
					   (uint64_t)i, &id), 0);
		assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
		assert_true(test_check_response(&m, sizeof(req), (uint64_t)i));
		homa_message_release(&m);
	}
	long woke = task_switches(name) - before;

	print_message("%s wake-ups over %d RPCs: %ld\n", name, SMALL_RPCS, woke);
	assert_true(woke < SMALL_RPCS);
	homa_close(cli);
	test_server_stop(&ts);
}

/**
 * polled__standby_sleeps_while_app_polls() - helper_sleeps() in polled
 * mode: the standby threads woke on every delivered batch (two context
 * switches and about four system calls per RPC).
 */
static void polled__standby_sleeps_while_app_polls(void **state)
{
	(void)state;
	helper_sleeps(HOMA_MODE_POLLED, "homa-standby");
}

/**
 * threaded__io_sleeps_while_app_waits() - helper_sleeps() in threaded
 * mode: the I/O threads received every message and woke the application
 * thread waiting for it (about six system calls and three and a half
 * context switches per RPC over kernel TCP's); now the waiting thread
 * receives it itself.
 */
static void threaded__io_sleeps_while_app_waits(void **state)
{
	(void)state;
	helper_sleeps(HOMA_MODE_THREADED, "homa-io");
}

/**
 * threaded_auto__io_sleeps_while_app_waits() - helper_sleeps() in
 * threaded mode over transport AUTO, whose peer answers Homa: the thread
 * waiting in homa_recv() drives the Homa socket and the TCP connections
 * together. When such a socket left Homa's packets to its I/O thread,
 * that thread woke for every message (12.5 system calls per RPC against
 * 6.3 over transport HOMA).
 */
static void threaded_auto__io_sleeps_while_app_waits(void **state)
{
	(void)state;
	test_transport = HOMA_TRANSPORT_AUTO;
	helper_sleeps(HOMA_MODE_THREADED, "homa-io");
	test_transport = HOMA_TRANSPORT_HOMA;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(polled__server_owner_away),
		cmocka_unit_test(polled__client_owner_away),
		cmocka_unit_test(polled__standby_sleeps_while_app_polls),
		cmocka_unit_test(threaded__server_owner_away),
		cmocka_unit_test(threaded__client_owner_away),
		cmocka_unit_test(threaded__io_sleeps_while_app_waits),
		cmocka_unit_test(threaded_auto__io_sleeps_while_app_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
