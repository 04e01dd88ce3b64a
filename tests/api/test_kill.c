/* SPDX-License-Identifier: MIT */
/**
 * @file test_kill.c
 * The API suite's kill case, over the transport named on the command
 * line (homa, the default; tcp; auto), as test_conformance runs: a
 * server process killed with SIGKILL while it holds two requests. A
 * thread waiting in homa_recv() and one waiting in
 * homa_recv_partial_wait() on those RPCs both get a documented RPC
 * error (HOMA_ETIMEDOUT or HOMA_ENOSERVER) well before their own
 * timeouts, never a hang; a new request to the dead port fails the same
 * way (or with HOMA_EPEERDEAD from the send).
 *
 * The server is this binary re-executed as "test_api_kill serve
 * <transport>": it prints its port, then one line per request it takes,
 * and never answers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "api.h"

/** The client's RPC timeout: 1000 silent ticks of 1 ms. */
#define TIMEOUT_TICKS 1000
/** How long a waiter waits at most: far past the RPC timeout. */
#define WAIT_NS 60000000000LL

/** The server child, killed at the end even when a check fails. */
static pid_t child = -1;

/** transport_name() - The command-line name of api_transport. */
static const char *transport_name(void)
{
	return api_transport == HOMA_TRANSPORT_TCP    ? "tcp"
	       : api_transport == HOMA_TRANSPORT_AUTO ? "auto"
						      : "homa";
}

/** serve_main() - Child: take requests, say so on stdout, never answer. */
static int serve_main(void)
{
	struct homa_message m;
	homa_socket *s;

	if (api_open(&s, HOMA_MODE_THREADED, true, NULL))
		return 1;
	printf("%d\n", homa_local_port(s));
	fflush(stdout);
	while (homa_recv(s, HOMA_RECV_REQUEST, 0, -1, &m) == 0) {
		printf("took\n");
		fflush(stdout);
	}
	return 0;
}

/**
 * spawn_server() - Start the server child; @out receives its stdout.
 * Return: its port.
 */
static int spawn_server(FILE **out)
{
	char line[32] = {0};
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl("/proc/self/exe", "test_api_kill", "serve", transport_name(), (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	*out = fdopen(fds[0], "r");
	assert_non_null(fgets(line, sizeof(line), *out));
	assert_true(atoi(line) > 0);
	return atoi(line);
}

/** One waiting thread: its RPC, how it waits, what it got and when. */
struct waiter {
	homa_socket *cli;
	uint64_t id;
	bool partial;
	int err;
	uint64_t at;
};

/** wait_main() - Thread: wait for the response of @arg's RPC. */
static void *wait_main(void *arg)
{
	struct waiter *w = arg;
	struct homa_message m;
	char b[8];

	if (w->partial)
		w->err = (int)homa_recv_partial_wait(w->cli, w->id, 0, b, sizeof(b), WAIT_NS, NULL);
	else
		w->err = homa_recv(w->cli, HOMA_RECV_RESPONSE, w->id, WAIT_NS, &m);
	w->at = api_now_ns();
	if (w->err == 0)
		homa_message_release(&m);
	return NULL;
}

/** rpc_error() - True if @err is a documented error of an RPC whose server died. */
static bool rpc_error(int err)
{
	return err == HOMA_ETIMEDOUT || err == HOMA_ENOSERVER;
}

/** kill__waiters_get_a_documented_error() - The scenario. */
static void kill__waiters_get_a_documented_error(void **state)
{
	struct homa_settings st;
	struct waiter w[2];
	struct sockaddr_storage dst;
	struct homa_message m;
	pthread_t th[2];
	homa_socket *cli;
	char line[32];
	uint64_t id, killed_at;
	socklen_t len;
	FILE *out;
	int port, err;

	(void)state;
	port = spawn_server(&out);
	homa_settings_default(&st);
	st.timeout_ticks = TIMEOUT_TICKS;
	assert_int_equal(api_open(&cli, HOMA_MODE_THREADED, false, &st), 0);
	assert_int_equal(homa_sockaddr_parse("127.0.0.1", (uint16_t)port, &dst, &len), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
		w[i] = (struct waiter){.cli = cli, .id = id, .partial = i == 1};
		assert_non_null(fgets(line, sizeof(line), out)); /* the server took it */
		assert_int_equal(pthread_create(&th[i], NULL, wait_main, &w[i]), 0);
	}
	usleep(20000); /* both threads wait */
	killed_at = api_now_ns();
	assert_int_equal(kill(child, SIGKILL), 0);
	waitpid(child, NULL, 0);
	child = -1;
	fclose(out);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		print_message("%s: %s waiter got %s after %.0f ms\n", transport_name(),
			      w[i].partial ? "partial" : "homa_recv()", homa_strerror(w[i].err),
			      (double)(w[i].at - killed_at) / 1e6);
		assert_true(rpc_error(w[i].err));
		/* homa_recv() still reports the failed RPC read partially */
		if (w[i].partial)
			assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, w[i].id, 0, &m), w[i].err);
	}
	/* a new request to the dead port fails too, without a hang */
	err = homa_send(cli, (struct sockaddr *)&dst, "r", 1, 0, &id);
	if (err == 0)
		err = homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &m);
	print_message("%s: a new request to the dead port: %s\n", transport_name(),
		      homa_strerror(err));
	assert_true(rpc_error(err) || err == HOMA_EPEERDEAD);
	assert_int_equal(homa_close(cli), 0);
}

/** teardown() - Kill the server child if a check failed before its kill. */
static int teardown(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(kill__waiters_get_a_documented_error, teardown),
	};
	int arg = argc > 2 && strcmp(argv[1], "serve") == 0 ? 2 : 1;

	if (argc > arg && strcmp(argv[arg], "tcp") == 0)
		api_transport = HOMA_TRANSPORT_TCP;
	else if (argc > arg && strcmp(argv[arg], "auto") == 0)
		api_transport = HOMA_TRANSPORT_AUTO;
	else if (argc > arg && strcmp(argv[arg], "homa") != 0)
		return 2;
	if (arg == 2)
		return serve_main();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
