/* SPDX-License-Identifier: MIT */
/*
 * Tests for tools/bench/coll_sync.c and coll_device.c: the step board's
 * barrier across processes and a device's step accounting, over a fake
 * transport whose RPCs finish a few milliseconds after they start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "collective.h"
#include "homa/errors.h"

/** How long a fake RPC takes. */
#define FAKE_RPC_NS 3000000u

/** Fake transport: RPCs in flight, when each finishes, whether it fails. */
struct fake {
	uint64_t tag[64], due[64];
	int err[64];
	int n;
	int started;
};

/** Fake transport: the first RPC of every device fails once (0: none). */
static int fail_first;

/** fake_open() - A fresh fake client. */
static int fake_open(void **ctx, const struct bench_tr_cfg *cfg)
{
	*ctx = calloc(1, sizeof(struct fake));
	return *ctx ? 0 : HOMA_ENOMEM;
}

/** fake_start() - An RPC finishing FAKE_RPC_NS from now. */
static int fake_start(void *ctx, size_t server, uint32_t req, uint32_t resp, uint64_t tag)
{
	struct fake *f = ctx;

	if (f->n == 64)
		return HOMA_EAGAIN;
	f->tag[f->n] = tag;
	f->err[f->n] = fail_first && f->started++ == 0 ? HOMA_ECANCELED : 0;
	f->due[f->n++] = bench_now_ns() + FAKE_RPC_NS;
	return 0;
}

/** fake_wait() - Sleep until the first RPC is due (or @deadline), return it. */
static int fake_wait(void *ctx, uint64_t deadline_ns, struct bench_done *out, int max)
{
	struct fake *f = ctx;

	if (f->n == 0 || max < 1)
		return 0;
	uint64_t t = f->due[0] < deadline_ns ? f->due[0] : deadline_ns;
	while (bench_now_ns() < t)
		usleep(200);
	if (bench_now_ns() < f->due[0])
		return 0;
	out[0] = (struct bench_done){ .tag = f->tag[0], .err = f->err[0] };
	memmove(f->tag, f->tag + 1, (size_t)(f->n - 1) * sizeof(f->tag[0]));
	memmove(f->err, f->err + 1, (size_t)(f->n - 1) * sizeof(f->err[0]));
	memmove(f->due, f->due + 1, (size_t)(f->n - 1) * sizeof(f->due[0]));
	f->n--;
	return 1;
}

/** fake_close() - Free the client. */
static void fake_close(void *ctx)
{
	free(ctx);
}

static const struct bench_client_ops fake_ops = {
	.name = "fake", .open = fake_open, .start = fake_start, .wait = fake_wait,
	.close = fake_close,
};

/** cfg_of() - @n made-up servers (the fake transport never uses them). */
static void cfg_of(struct bench_tr_cfg *cfg, uint32_t n)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nservers = n;
}

/** fork_device() - Fork a process running device @d of @n on board @s. Return: its pid. */
static pid_t fork_device(struct coll_sync *s, const struct coll_device *d, uint32_t n)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct bench_tr_cfg cfg;

		cfg_of(&cfg, n);
		_exit(coll_device_run(&fake_ops, &cfg, d, s) ? 1 : 0);
	}
	return pid;
}

/** wait_devices() - Reap the @n device processes @pid. Return: 0 if all succeeded. */
static int wait_devices(const pid_t *pid, uint32_t n)
{
	int bad = 0;

	for (uint32_t i = 0; i < n; i++) {
		int st;
		waitpid(pid[i], &st, 0);
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	}
	return bad;
}

/** run_devices() - Fork @n devices of pattern @p on board @s; 0 if all succeeded. */
static int run_devices(struct coll_sync *s, uint32_t n, enum coll_pattern p, uint32_t steps)
{
	pid_t pid[8];

	for (uint32_t i = 0; i < n; i++) {
		struct coll_device d = {
			.pattern = p, .rank = i, .steps = steps, .compute_us = 2000,
			.msg_bytes = 1000, .lookups = 3, .step_timeout_s = 20, .seed = 1,
		};
		pid[i] = fork_device(s, &d, n);
	}
	return wait_devices(pid, n);
}

/**
 * Every pattern: each step ends (at its barrier) no earlier than any
 * device's last message, which comes at least one fake RPC after that
 * device's compute end, which comes at least the compute phase after the
 * step's start; and the figures add up.
 */
static void coll_device_run__step_ends_after_last_message(void **state)
{
	for (int p = 0; p < COLL_PATTERNS; p++) {
		struct coll_sync s;
		const uint32_t n = 3, steps = 4;
		struct homa_step_stats st;

		assert_int_equal(coll_sync_open(&s, NULL, n, steps), 0);
		assert_int_equal(run_devices(&s, n, (enum coll_pattern)p, steps), 0);
		assert_int_equal(atomic_load(&s.b->done), n);
		for (uint32_t k = 0; k < steps; k++) {
			for (uint32_t d = 0; d < n; d++) {
				const struct homa_step_dev *r = &s.dev[k * n + d];
				assert_true(r->compute_end_ns >= s.bound[k] + 2000000u);
				assert_true(r->last_msg_ns >= r->compute_end_ns + FAKE_RPC_NS);
				assert_true(s.bound[k + 1] >= r->last_msg_ns);
			}
		}
		assert_int_equal(coll_board_stats(&s, 1, &st), 0);
		assert_int_equal(st.steps, steps - 1);
		/* all-reduce: 2(n-1) = 4 rounds of one fake RPC each */
		double least_comm = p == COLL_ALLREDUCE ? 4 * FAKE_RPC_NS / 1000.0 : FAKE_RPC_NS / 1000.0;
		assert_true(st.comm_us_per_step >= least_comm);
		assert_true(st.p50_us >= 2000 + least_comm);
		assert_true(st.idle_fraction > 0 && st.idle_fraction < 1);
		coll_sync_close(&s);
	}
}

/**
 * An RPC that fails is sent again: every device's first RPC fails once,
 * the run still completes every pattern, and each retry is counted.
 */
static void coll_device_run__retries_failed_rpc(void **state)
{
	fail_first = 1;
	for (int p = 0; p < COLL_PATTERNS; p++) {
		struct coll_sync s;

		assert_int_equal(coll_sync_open(&s, NULL, 2, 2), 0);
		assert_int_equal(run_devices(&s, 2, (enum coll_pattern)p, 2), 0);
		assert_int_equal(atomic_load(&s.b->retries), 2);
		for (uint32_t k = 0; k < 2; k++)
			for (uint32_t d = 0; d < 2; d++)
				assert_true(s.bound[k + 1] >= s.dev[k * 2 + d].last_msg_ns);
		coll_sync_close(&s);
	}
	fail_first = 0;
}

/**
 * Devices started one by one, the last one later than a step timeout
 * after the first, still run: the start waits up to join_timeout_s for
 * every device to arrive (the step timeout bounds steps and later
 * barriers only).
 */
static void coll_device_run__late_device_joins(void **state)
{
	const uint32_t n = 3;
	struct coll_sync s;
	pid_t pid[3];

	assert_int_equal(coll_sync_open(&s, NULL, n, 2), 0);
	for (uint32_t i = 0; i < n; i++) {
		struct coll_device d = {
			.pattern = COLL_ALLTOALL, .rank = i, .steps = 2, .compute_us = 2000,
			.msg_bytes = 1000, .step_timeout_s = 2, .join_timeout_s = 60, .seed = 1,
		};
		if (i == n - 1)
			usleep(3000000); /* longer than the step timeout above */
		pid[i] = fork_device(&s, &d, n);
	}
	assert_int_equal(wait_devices(pid, n), 0);
	assert_int_equal(atomic_load(&s.b->failed), 0);
	assert_int_equal(atomic_load(&s.b->done), n);
	coll_sync_close(&s);
}

/**
 * With a start file, devices open their transport and wait for the file:
 * no step starts before it appears (the testbed starts its background
 * traffic meanwhile), and then the run completes.
 */
static void coll_device_run__start_file_holds_the_start(void **state)
{
	char path[] = "/tmp/homa-coll-gate-XXXXXX";
	const uint32_t n = 2;
	struct coll_sync s;
	pid_t pid[2];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(coll_sync_open(&s, NULL, n, 2), 0);
	for (uint32_t i = 0; i < n; i++) {
		struct coll_device d = {
			.pattern = COLL_LOOKUPS, .rank = i, .steps = 2, .compute_us = 2000,
			.msg_bytes = 1000, .lookups = 2, .step_timeout_s = 2,
			.join_timeout_s = 60, .start_file = path, .seed = 1,
		};
		pid[i] = fork_device(&s, &d, n);
	}
	usleep(300000);
	assert_int_equal(s.bound[0], 0);
	uint64_t opened = bench_now_ns();
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	int bad = wait_devices(pid, n);
	unlink(path);
	assert_int_equal(bad, 0);
	assert_true(s.bound[0] >= opened);
	assert_int_equal(atomic_load(&s.b->done), n);
	coll_sync_close(&s);
}

/** A start file that never appears times the start out and fails the board. */
static void coll_device_run__start_file_never_appears(void **state)
{
	struct coll_sync s;
	struct bench_tr_cfg cfg;
	struct coll_device d = {
		.pattern = COLL_ALLTOALL, .rank = 0, .steps = 1, .msg_bytes = 1000,
		.step_timeout_s = 1, .join_timeout_s = 0.2,
		.start_file = "/nonexistent/homa-coll-gate", .seed = 1,
	};

	assert_int_equal(coll_sync_open(&s, NULL, 2, 1), 0);
	cfg_of(&cfg, 2);
	assert_int_equal(coll_device_run(&fake_ops, &cfg, &d, &s), HOMA_ETIMEDOUT);
	assert_int_equal(atomic_load(&s.b->failed), 1);
	assert_int_equal(s.bound[0], 0);
	coll_sync_close(&s);
}

/** A device that never arrives makes the others' barrier time out, not hang. */
static void coll_sync_barrier__times_out(void **state)
{
	struct coll_sync s;
	uint64_t rel;

	assert_int_equal(coll_sync_open(&s, NULL, 2, 1), 0);
	assert_int_equal(coll_sync_barrier(&s, bench_now_ns() + 50000000u, &rel), HOMA_ETIMEDOUT);
	assert_int_equal(atomic_load(&s.b->failed), 1);
	assert_int_equal(coll_sync_barrier(&s, bench_now_ns() + 50000000u, &rel), HOMA_ECANCELED);
	coll_sync_close(&s);
}

/**
 * The message log: one line per message of every step, started no earlier
 * than the device's compute end and through at least one fake RPC later;
 * the last message of each step in the log is the one the step accounting
 * took (last_msg_ns); a log that cannot be written fails the run before
 * any step, with the board marked failed.
 */
static void coll_device_run__msg_log(void **state)
{
	const uint32_t n = 3, steps = 3;
	char path[n][64];
	pid_t pid[3];
	struct coll_sync s;

	assert_int_equal(coll_sync_open(&s, NULL, n, steps), 0);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(path[i], sizeof(path[i]), "/tmp/coll-msglog-%d-%u", (int)getpid(), i);
		struct coll_device d = {
			.pattern = COLL_ALLTOALL, .rank = i, .steps = steps, .compute_us = 2000,
			.msg_bytes = 1000, .step_timeout_s = 20, .seed = 1, .msg_log = path[i],
		};
		pid[i] = fork_device(&s, &d, n);
	}
	assert_int_equal(wait_devices(pid, n), 0);
	for (uint32_t i = 0; i < n; i++) {
		FILE *f = fopen(path[i], "r");
		char line[256];
		uint32_t lines = 0;
		double last[3] = { 0, 0, 0 };

		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			unsigned st, rd, dst, req, resp, tries;
			double start, done;
			if (line[0] == '#')
				continue;
			assert_int_equal(sscanf(line, "%u %u %u %u %u %lf %lf %u", &st, &rd, &dst, &req,
						&resp, &start, &done, &tries), 8);
			assert_true(st < steps && rd == 0 && dst != i && dst < n && req == 1000);
			assert_int_equal(tries, 1);
			assert_true(start >= 0 && done >= start + FAKE_RPC_NS / 1000.0);
			if (done > last[st])
				last[st] = done;
			lines++;
		}
		fclose(f);
		unlink(path[i]);
		assert_int_equal(lines, steps * (n - 1));
		for (uint32_t k = 0; k < steps; k++) {
			const struct homa_step_dev *r = &s.dev[k * n + i];
			double want = (double)(r->last_msg_ns - r->compute_end_ns) / 1000;
			assert_true(last[k] > want - 1 && last[k] < want + 1);
		}
	}
	coll_sync_close(&s);

	struct bench_tr_cfg cfg;
	struct coll_device d = {
		.pattern = COLL_ALLTOALL, .rank = 0, .steps = 1, .msg_bytes = 100,
		.step_timeout_s = 1, .msg_log = "/nonexistent-dir/log",
	};
	assert_int_equal(coll_sync_open(&s, NULL, 2, 1), 0);
	cfg_of(&cfg, 2);
	assert_int_equal(coll_device_run(&fake_ops, &cfg, &d, &s), HOMA_EINVAL);
	assert_int_equal(atomic_load(&s.b->failed), 1);
	coll_sync_close(&s);
}

/** Bad settings are refused and fail the board, so no peer waits forever. */
static void coll_device_run__rejects_bad_settings(void **state)
{
	struct coll_sync s;
	struct bench_tr_cfg cfg;
	struct coll_device d = {
		.pattern = COLL_ALLTOALL, .rank = 5, .steps = 1, .msg_bytes = 100,
		.step_timeout_s = 1,
	};

	assert_int_equal(coll_sync_open(&s, NULL, 2, 1), 0);
	cfg_of(&cfg, 2);
	assert_int_equal(coll_device_run(&fake_ops, &cfg, &d, &s), HOMA_EINVAL);
	assert_int_equal(atomic_load(&s.b->failed), 1);
	coll_sync_close(&s);
	/* background to itself, to no device, or of messages under 8 B */
	const uint32_t bad[3][2] = { { 0, 1000 }, { 2, 1000 }, { 1, 4 } };
	for (int k = 0; k < 3; k++) {
		d = (struct coll_device){ .pattern = COLL_ALLTOALL, .rank = 0, .steps = 1,
					  .msg_bytes = 100, .step_timeout_s = 1, .bg_gbps = 1,
					  .bg_peer = bad[k][0], .bg_bytes = bad[k][1] };
		assert_int_equal(coll_sync_open(&s, NULL, 2, 1), 0);
		assert_int_equal(coll_device_run(&fake_ops, &cfg, &d, &s), HOMA_EINVAL);
		assert_int_equal(atomic_load(&s.b->failed), 1);
		coll_sync_close(&s);
	}
	assert_int_equal(coll_sync_open(&s, NULL, 1, 1), HOMA_EINVAL);
	assert_int_equal(coll_sync_open(&s, NULL, 2, 0), HOMA_EINVAL);
}

/** A board file sized for another run is refused. */
static void coll_sync_open__file_of_another_run(void **state)
{
	char path[] = "/tmp/homa-coll-test-XXXXXX";
	struct coll_sync s;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(coll_sync_open(&s, path, 3, 10), 0);
	coll_sync_close(&s);
	assert_int_equal(coll_sync_open(&s, path, 3, 10), 0);
	coll_sync_close(&s);
	assert_int_equal(coll_sync_open(&s, path, 4, 10), HOMA_EINVAL);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(coll_device_run__step_ends_after_last_message),
		cmocka_unit_test(coll_device_run__retries_failed_rpc),
		cmocka_unit_test(coll_device_run__late_device_joins),
		cmocka_unit_test(coll_device_run__start_file_holds_the_start),
		cmocka_unit_test(coll_device_run__start_file_never_appears),
		cmocka_unit_test(coll_sync_barrier__times_out),
		cmocka_unit_test(coll_device_run__rejects_bad_settings),
		cmocka_unit_test(coll_device_run__msg_log),
		cmocka_unit_test(coll_sync_open__file_of_another_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
