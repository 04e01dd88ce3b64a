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

/** free_port() - A UDP port of 127.0.0.1 nothing is bound to right now. */
static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/**
 * Three Homa devices whose sockets serve (no server process exists): every
 * all-to-all step completes, so each socket answered the others' requests;
 * each device's background (20 KB messages to its ring neighbour) was
 * started, and its answers counted in no step: each message log holds
 * exactly the step messages.
 */
static void device__serves_and_sends_background(void **state)
{
	char list[128] = "", path[NDEV][64];
	uint16_t port[NDEV];
	pid_t pid[NDEV];
	struct coll_sync s;

	for (uint32_t i = 0; i < NDEV; i++) {
		port[i] = free_port();
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s127.0.0.1:%u",
			 i ? "," : "", port[i]);
		snprintf(path[i], sizeof(path[i]), "/tmp/coll-bg-%d-%u", (int)getpid(), i);
	}
	assert_int_equal(coll_sync_open(&s, NULL, NDEV, STEPS), 0);
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
			bench_opts_default(&o);
			if (coll_tr_cfg(&o, list, &cfg))
				_exit(2);
			cfg.serve_port = port[i];
			_exit(coll_device_run(&bench_homa_client, &cfg, &d, &s) ? 1 : 0);
		}
	}
	for (uint32_t i = 0; i < NDEV; i++) {
		int st;
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
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
