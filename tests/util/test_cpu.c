/* SPDX-License-Identifier: MIT */
/* Tests for util/cpu.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_cpu_elapsed_us__counts_work),
		cmocka_unit_test(homa_cpu_elapsed_us__children),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
