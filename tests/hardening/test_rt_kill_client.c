/* SPDX-License-Identifier: MIT */
/**
 * @file test_rt_kill_client.c
 * A client process killed with SIGKILL in the middle of a run of large
 * RPCs: the server must free every RPC it held for that client (partly
 * received requests, replies being sent, replies awaiting an ack) within
 * its timeout bound (timeout_ticks x tick, plus slack for a busy machine),
 * nothing may hang, and a restarted client is served again. Run twice so
 * the second kill hits a server that already recovered once.
 *
 * The client runs as a child process: this binary re-executed as
 * "hardening_rt_kill_client client <port>".
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt_load.h"

#define TIMEOUT_TICKS 200
/* Clients wait longer than the server: the test bounds the server's
 * cleanup, and a client on a loaded machine (sanitizers, tests beside it)
 * must not give up on a live server that did not run for 200 ms. */
#define CLIENT_TIMEOUT_TICKS 5000
#define TICK_NS 1000000ull
#define SLACK_NS 3000000000ull

static const char *self_path;

/** client_main() - Child: run 300 KB RPCs forever; say "up" after the first response. */
static int client_main(int port)
{
	struct homa_settings st;
	struct rt_result r;
	homa_socket *c;
	uint64_t first = 0;

	rt_settings(&st, CLIENT_TIMEOUT_TICKS);
	if (rt_open(&c, false, 0, &st)) {
		fprintf(stderr, "client: cannot open a socket\n");
		return 1;
	}
	rt_load_run(c, port, 0, 1, 1, 10000000000ull, 0, &r);
	if (r.ok != 1) {
		dup2(STDERR_FILENO, STDOUT_FILENO);  /* stdout is the parent's pipe */
		fprintf(stderr, "client: first RPC not answered (failed %llu, hung %llu)\n",
			(unsigned long long)r.failed, (unsigned long long)r.hung);
		rt_result_print_failures("client: first RPC", &r);
		return 1;
	}
	printf("up\n");
	fflush(stdout);
	for (;;) {
		rt_load_run(c, port, first, 1000, 16, 10000000000ull, 0, &r);
		first += r.sent;
	}
}

/** start_client() - Fork and exec a client child. Return: its pid, once it is up. */
static pid_t start_client(int port)
{
	char arg[16], line[16] = "";
	int fds[2];
	pid_t pid;
	FILE *f;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		snprintf(arg, sizeof(arg), "%d", port);
		execl(self_path, self_path, "client", arg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "up\n");
	return pid;
}

/**
 * kill_mid_run__server_frees_state: see the file comment.
 */
static void kill_mid_run__server_frees_state(void **state)
{
	struct homa_settings st;
	struct rt_server sv;
	struct homa_stats ss;
	int round, status;

	rt_settings(&st, TIMEOUT_TICKS);
	assert_int_equal(rt_server_start(&sv, 2, 0, &st), 0);
	for (round = 0; round < 2; round++) {
		pid_t pid = start_client(sv.port);
		uint64_t t_kill, t_free;

		usleep(300000); /* let RPCs pile up mid-flight */
		homa_socket_stats(sv.s, &ss);
		print_message("round %d: server holds %llu RPCs, %llu bytes at the kill\n", round,
			      (unsigned long long)ss.active_rpcs,
			      (unsigned long long)ss.rx_buffered_bytes);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		t_kill = rt_now();
		for (;;) {
			homa_socket_stats(sv.s, &ss);
			t_free = rt_now();
			if ((ss.active_rpcs == 0 && ss.rx_buffered_bytes == 0) ||
			    t_free - t_kill > TIMEOUT_TICKS * TICK_NS + SLACK_NS)
				break;
			usleep(5000);
		}
		print_message("round %d: server freed its RPCs %.0f ms after the kill "
			      "(bound %llu ms + slack), %llu RPCs left, rx %llu bytes\n", round,
			      (t_free - t_kill) / 1e6, (unsigned long long)TIMEOUT_TICKS,
			      (unsigned long long)ss.active_rpcs,
			      (unsigned long long)ss.rx_buffered_bytes);
		assert_int_equal(ss.active_rpcs, 0);
		assert_int_equal(ss.rx_buffered_bytes, 0);
	}
	/* a client started afterwards is served normally */
	{
		struct rt_result r;
		homa_socket *c;

		rt_settings(&st, CLIENT_TIMEOUT_TICKS);
		assert_int_equal(rt_open(&c, false, 0, &st), 0);
		rt_load_run(c, sv.port, 0, 50, 8, 10000000000ull, 0, &r);
		rt_result_print_failures("client after the kills", &r);
		assert_int_equal(r.ok, 50);
		homa_close(c);
	}
	assert_int_equal(atomic_load(&sv.bad), 0);
	rt_server_stop(&sv);
}

/** main() - Run the test, or act as the client child. */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kill_mid_run__server_frees_state),
	};

	self_path = argv[0];
	if (argc == 3 && strcmp(argv[1], "client") == 0)
		return client_main(atoi(argv[2]));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
