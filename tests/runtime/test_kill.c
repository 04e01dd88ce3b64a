/* SPDX-License-Identifier: MIT */
/**
 * @file test_kill.c
 * A server process killed with SIGKILL in the middle of a run: the
 * clients' RPCs fail with HOMA_ETIMEDOUT (HOMA_ENOSERVER once the dead
 * port's ICMP port unreachable arrives) within the configured bound
 * (timeout_ticks x tick_ns, plus scheduling slack), and a server
 * restarted on the same port serves the same client socket again.
 *
 * The server runs as a child process: this binary re-executed as
 * "test_kill serve <port>", which prints its port and answers requests.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#define CLIENTS 8
/** The client's timeout: 200 silent ticks of 1 ms. */
#define TICK_NS 1000000ull
#define TIMEOUT_TICKS 1000
/** Slack for a busy CI machine on top of the configured bound. */
#define SLACK_NS 3000000000ull

static const char *self_path;

/** now_ns() - CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/** serve_main() - Child process: serve on @port until killed. */
static int serve_main(int port)
{
	homa_socket *s;
	uint64_t served = 0, errors = 0;

	if (test_open(&s, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, (uint16_t)port, NULL))
		return 1;
	printf("%d\n", homa_local_port(s));
	fflush(stdout);
	test_serve_forever(s, &served, &errors);
	return 0;
}

/**
 * spawn_server() - Start a server child on @port (0 = any).
 * @port_out: receives the port it bound. Return: its pid.
 */
static pid_t spawn_server(int port, int *port_out)
{
	int fds[2];
	char arg[16], line[32] = {0};
	pid_t pid;
	FILE *f;

	assert_int_equal(pipe(fds), 0);
	snprintf(arg, sizeof(arg), "%d", port);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(self_path, self_path, "serve", arg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	*port_out = atoi(line);
	assert_true(*port_out > 0);
	return pid;
}

/** Shared by the client threads. */
struct run {
	homa_socket *cli;
	int port;
	int err[CLIENTS];
	uint64_t err_at[CLIENTS];
	_Atomic uint64_t ok;
	_Atomic int done;
};

/** client_thread() - RPCs (small and 300 KB) until the first error. */
static void *client_thread(void *arg)
{
	struct run *r = ((void **)arg)[0];
	int t = (int)(intptr_t)((void **)arg)[1];
	struct sockaddr_storage dst = test_dst(r->port);
	uint8_t *buf = malloc(300000);

	for (int i = 0;; i++) {
		size_t len = (i + t) % 3 ? 100 : 300000;
		uint64_t seed = (uint64_t)t << 32 | (uint64_t)i, id;
		struct homa_message m;
		int err;

		test_fill(buf, len, seed);
		err = homa_send(r->cli, (struct sockaddr *)&dst, buf, len, 0, &id);
		if (!err)
			err = homa_recv(r->cli, HOMA_RECV_RESPONSE, id, 20000000000LL, &m);
		if (err) {
			r->err[t] = err;
			r->err_at[t] = now_ns();
			break;
		}
		if (!test_check_response(&m, len, seed)) {
			r->err[t] = HOMA_EPROTO;  /* wrong bytes: fails the test */
			homa_message_release(&m);
			break;
		}
		homa_message_release(&m);
		r->ok++;
	}
	r->done++;
	free(buf);
	return NULL;
}

/** retry_rpc() - Retry one RPC for up to 10 s; return its final result. */
static int retry_rpc(homa_socket *cli, int port, size_t len)
{
	struct sockaddr_storage dst = test_dst(port);
	uint8_t *buf = malloc(len);
	int err = HOMA_EAGAIN;

	test_fill(buf, len, 42);
	for (uint64_t until = now_ns() + 10000000000ull; now_ns() < until;) {
		struct homa_message m;
		uint64_t id;

		err = homa_send(cli, (struct sockaddr *)&dst, buf, len, 0, &id);
		if (!err)
			err = homa_recv(cli, HOMA_RECV_RESPONSE, id, 5000000000LL, &m);
		if (!err) {
			assert_true(test_check_response(&m, len, 42));
			homa_message_release(&m);
			break;
		}
		usleep(10000);
	}
	free(buf);
	return err;
}

/** server_killed__clients_time_out_then_restart_serves() - The scenario. */
static void server_killed__clients_time_out_then_restart_serves(void **state)
{
	struct homa_settings st;
	struct run r;
	pthread_t th[CLIENTS];
	void *args[CLIENTS][2];
	uint64_t killed_at, bound = TIMEOUT_TICKS * TICK_NS, worst = 0;
	int port, port2, timeouts = 0;
	pid_t pid;

	memset(&r, 0, sizeof(r));
	pid = spawn_server(0, &port);
	homa_settings_default(&st);
	st.tick_ns = TICK_NS;
	st.timeout_ticks = TIMEOUT_TICKS;
	assert_int_equal(test_open(&r.cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	r.port = port;
	for (int t = 0; t < CLIENTS; t++) {
		args[t][0] = &r;
		args[t][1] = (void *)(intptr_t)t;
		pthread_create(&th[t], NULL, client_thread, args[t]);
	}
	while (r.ok < 200 && r.done == 0)
		usleep(10000);
	assert_int_equal(r.done, 0); /* nobody failed before the kill */
	killed_at = now_ns();
	assert_int_equal(kill(pid, SIGKILL), 0);
	waitpid(pid, NULL, 0);
	for (int t = 0; t < CLIENTS; t++) {
		pthread_join(th[t], NULL);
		/* a closed UDP port answers ICMP port unreachable: HOMA_ENOSERVER */
		assert_true(r.err[t] == HOMA_ETIMEDOUT || r.err[t] == HOMA_EPEERDEAD ||
			    r.err[t] == HOMA_ENOSERVER);
		timeouts += r.err[t] == HOMA_ETIMEDOUT || r.err[t] == HOMA_ENOSERVER;
		if (r.err_at[t] - killed_at > worst)
			worst = r.err_at[t] - killed_at;
	}
	print_message("%lu RPCs before the kill; %d of %d clients got HOMA_ETIMEDOUT or "
		      "HOMA_ENOSERVER, the rest HOMA_EPEERDEAD; last error %.0f ms after the "
		      "kill (bound %.0f ms)\n",
		      (unsigned long)r.ok, timeouts, CLIENTS, worst / 1e6, bound / 1e6);
	assert_true(timeouts >= 1);
	assert_true(worst <= bound + SLACK_NS);
	/* a new server on the same port serves the same client socket */
	pid = spawn_server(port, &port2);
	assert_int_equal(port2, port);
	assert_int_equal(retry_rpc(r.cli, port, 1000), 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(retry_rpc(r.cli, port, (size_t)(1 + i * 20000)), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	homa_close(r.cli);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(server_killed__clients_time_out_then_restart_serves),
	};

	if (argc > 2 && strcmp(argv[1], "serve") == 0)
		return serve_main(atoi(argv[2]));
	self_path = "/proc/self/exe";
	return cmocka_run_group_tests(tests, NULL, NULL);
}
