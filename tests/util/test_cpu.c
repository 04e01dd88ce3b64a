/* SPDX-License-Identifier: MIT */
/* Tests for util/cpu.c. */
#define _GNU_SOURCE /* CPU_SET */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "util/cpu.h"

/** spin() - Burn CPU until @who has used at least @us more microseconds. */
static void spin(enum homa_cpu_who who, int64_t us)
{
	int64_t start = homa_cpu_now_us(who);
	volatile uint64_t x = 0;

	while (homa_cpu_now_us(who) - start < us)
		for (int i = 0; i < 10000; i++)
			x += i;
	(void)x;
}

/** Burning CPU shows up in the process and thread meters. */
static void homa_cpu_elapsed_us__counts_work(void **state)
{
	struct homa_cpu_meter p, t;

	assert_int_equal(homa_cpu_start(&p, HOMA_CPU_PROCESS), 0);
	assert_int_equal(homa_cpu_start(&t, HOMA_CPU_THREAD), 0);
	spin(HOMA_CPU_THREAD, 20000);
	assert_true(homa_cpu_elapsed_us(&t) >= 20000);
	assert_true(homa_cpu_elapsed_us(&p) >= 20000);
}

/** A waited-for child's CPU appears under HOMA_CPU_CHILDREN. */
static void homa_cpu_elapsed_us__children(void **state)
{
	struct homa_cpu_meter c;

	assert_int_equal(homa_cpu_start(&c, HOMA_CPU_CHILDREN), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		spin(HOMA_CPU_PROCESS, 20000);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(homa_cpu_elapsed_us(&c) >= 20000);
}

/** /proc/stat text of two CPUs: idle and iowait are the 4th and 5th numbers. */
static const char stat_a[] = "cpu  10 0 10 300 20 0 5 0 0 0\n"
			     "cpu0 5 0 5 100 10 0 3 0 0 0\n"
			     "cpu1 5 0 5 200 10 0 2 0 0 0\n"
			     "intr 12345\n";

/**
 * Busy time is wall x CPUs minus idle and iowait, whatever the tick
 * columns say: over 1 s, cpu0 idle +30 and iowait +10 ticks at 100 Hz
 * (0.4 s), so 0.6 s busy, though user and system moved by 2 ticks only.
 */
static void homa_host_busy_us__wall_minus_idle(void **state)
{
	long hz = sysconf(_SC_CLK_TCK);
	char b[256];
	cpu_set_t only0;
	struct homa_host_cpu s0, s1;

	snprintf(b, sizeof(b), "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 6 0 6 %ld %ld 0 3 0 0 0\n"
		 "cpu1 5 0 5 200 10 0 2 0 0 0\n", 100 + 3 * hz / 10, 10 + hz / 10);
	CPU_ZERO(&only0);
	CPU_SET(0, &only0);
	assert_int_equal(homa_host_cpu_parse(stat_a, &only0, 1000000000u, &s0), 0);
	assert_int_equal(homa_host_cpu_parse(b, &only0, 2000000000u, &s1), 0);
	assert_int_equal(s0.ncpus, 1);
	double busy = homa_host_busy_us(&s0, &s1);
	assert_true(busy > 599999 && busy < 600001);
	/* every CPU: cpu1 did not move its idle, so it was busy the whole second */
	assert_int_equal(homa_host_cpu_parse(stat_a, NULL, 1000000000u, &s0), 0);
	assert_int_equal(homa_host_cpu_parse(b, NULL, 2000000000u, &s1), 0);
	assert_int_equal(s1.ncpus, 2);
	busy = homa_host_busy_us(&s0, &s1);
	assert_true(busy > 1599999 && busy < 1600001);
}

/** Text without CPU lines, or a truncated one, is refused; a snapshot works. */
static void homa_host_cpu_parse__bad_text(void **state)
{
	struct homa_host_cpu s;

	assert_int_equal(homa_host_cpu_parse("intr 1\n", NULL, 0, &s), HOMA_EINVAL);
	assert_int_equal(homa_host_cpu_parse("cpu0 1 2 3\n", NULL, 0, &s), HOMA_EINVAL);
	assert_int_equal(homa_host_cpu_snap(&s), 0);
	assert_true(s.ncpus >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_cpu_elapsed_us__counts_work),
		cmocka_unit_test(homa_cpu_elapsed_us__children),
		cmocka_unit_test(homa_host_busy_us__wall_minus_idle),
		cmocka_unit_test(homa_host_cpu_parse__bad_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
