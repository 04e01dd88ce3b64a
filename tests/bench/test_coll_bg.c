/* SPDX-License-Identifier: MIT */
/*
 * Tests for tools/bench/coll_bg.c and the device's serving Homa socket
 * (homa-bench device --serve-port, --bg-peer): devices on loopback with no
 * server processes, each socket answering the others' requests while it
 * sends its steps and its background through the same engine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "coll_bg.h"
#include "collective.h"
#include "homa/errors.h"
#include "opts.h"

#define NDEV 3u
#define STEPS 5u

/** Exit status of a device whose socket could not bind its port. */
#define PORT_TAKEN 3
/** Runs of the devices, each on new ports, before a taken port fails the test. */
#define ATTEMPTS 5

/**
 * free_ports() - @n distinct UDP ports of 127.0.0.1 nothing is bound to
 * right now (all held while choosing, so no two are the same). Another
 * process may still bind one before a device does: see run_devices().
 */
static void free_ports(uint16_t *port, uint32_t n)
{
	int fd[NDEV];

	for (uint32_t i = 0; i < n; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(a);

		fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
		assert_true(fd[i] >= 0);
		assert_int_equal(bind(fd[i], (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(getsockname(fd[i], (struct sockaddr *)&a, &len), 0);
		port[i] = ntohs(a.sin_port);
	}
	for (uint32_t i = 0; i < n; i++)
		close(fd[i]);
}

/**
 * run_devices() - Run the NDEV devices of the test, each in a child
 * process serving on its port of @port, logging its messages to @path,
 * recording on board @s. Return: true if every device finished (asserts
 * each exited 0), false if a device's port was taken before it could
 * bind it (exit PORT_TAKEN; the others then fail on the board too).
 */
static bool run_devices(const uint16_t *port, char path[][64], struct coll_sync *s)
{
	char list[128] = "";
	bool taken = false;
	pid_t pid[NDEV];
	int st[NDEV];

	for (uint32_t i = 0; i < NDEV; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s127.0.0.1:%u",
			 i ? "," : "", port[i]);
	for (uint32_t i = 0; i < NDEV; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			struct bench_opts o;
			struct bench_tr_cfg cfg;
			struct coll_device d = {
				.pattern = COLL_ALLTOALL, .rank = i, .steps = STEPS,
				.compute_us = 20000, .msg_bytes = 30000, .step_timeout_s = 20,
				.seed = 1, .msg_log = path[i], .bg_gbps = 0.01,
				.bg_peer = (i + 1) % NDEV, .bg_bytes = 20000,
			};
			int rc;

			bench_opts_default(&o);
			if (coll_tr_cfg(&o, list, &cfg))
				_exit(2);
			cfg.serve_port = port[i];
			rc = coll_device_run(&bench_homa_client, &cfg, &d, s);
			_exit(rc == HOMA_EADDRINUSE ? PORT_TAKEN : rc ? 1 : 0);
		}
	}
	for (uint32_t i = 0; i < NDEV; i++) {
		assert_int_equal(waitpid(pid[i], &st[i], 0), pid[i]);
		assert_true(WIFEXITED(st[i]));
		taken |= WEXITSTATUS(st[i]) == PORT_TAKEN;
	}
	for (uint32_t i = 0; i < NDEV && taken; i++)
		unlink(path[i]);
	for (uint32_t i = 0; i < NDEV && !taken; i++)
		assert_int_equal(WEXITSTATUS(st[i]), 0);
	return !taken;
}

/**
 * Three Homa devices whose sockets serve (no server process exists): every
 * all-to-all step completes, so each socket answered the others' requests;
 * each device's background (20 KB messages to its ring neighbour) was
 * started, and its answers counted in no step: each message log holds
 * exactly the step messages. The ports are chosen free and bound by the
 * devices later: a port another process took meanwhile makes the run
 * start again on new ports.
 */
static void device__serves_and_sends_background(void **state)
{
	char path[NDEV][64];
	uint16_t port[NDEV];
	struct coll_sync s;
	int attempt = 0;

	(void)state;
	for (uint32_t i = 0; i < NDEV; i++)
		snprintf(path[i], sizeof(path[i]), "/tmp/coll-bg-%d-%u", (int)getpid(), i);
	for (;;) {
		bool done;

		free_ports(port, NDEV);
		assert_int_equal(coll_sync_open(&s, NULL, NDEV, STEPS), 0);
		done = run_devices(port, path, &s);
		if (done)
			break;
		coll_sync_close(&s);
		if (++attempt == ATTEMPTS)
			fail_msg("a device's port was taken in each of %d runs", ATTEMPTS);
		print_message("coll_bg: a port was taken before its device bound it; again\n");
	}
	assert_int_equal(atomic_load(&s.b->done), NDEV);
	for (uint32_t i = 0; i < NDEV; i++) {
		FILE *f = fopen(path[i], "r");
		char line[512];
		uint32_t lines = 0, to = 99;
		unsigned long long started = 0, refused = 99;

		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			if (line[0] != '#') {
				lines++;
				continue;
			}
			char *b = strstr(line, "background to device");
			if (b)
				assert_int_equal(sscanf(b, "background to device %u: %llu messages of "
						       "20000 B started, %llu refused", &to, &started,
						       &refused), 3);
		}
		fclose(f);
		unlink(path[i]);
		assert_int_equal(lines, STEPS * (NDEV - 1));
		assert_int_equal(to, (i + 1) % NDEV);
		assert_true(started > 0);
		assert_int_equal(refused, 0);
	}
	coll_sync_close(&s);
}

/** A background without load, or without a size, is refused; stopping an unstarted one is a no-op. */
static void coll_bg_start__refuses_bad_settings(void **state)
{
	struct coll_bg b = { .ops = &bench_homa_client, .peer = 1, .bytes = 1000, .gbps = 0 };

	assert_int_equal(coll_bg_start(&b), HOMA_EINVAL);
	b.gbps = 1;
	b.bytes = 4;
	assert_int_equal(coll_bg_start(&b), HOMA_EINVAL);
	coll_bg_stop(&b);
	assert_false(b.running);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(device__serves_and_sends_background),
		cmocka_unit_test(coll_bg_start__refuses_bad_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
