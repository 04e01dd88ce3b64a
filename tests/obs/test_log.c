/* SPDX-License-Identifier: MIT */
/**
 * @file test_log.c
 * Logger: levels, sinks, the per-call-site token bucket and the reports
 * of suppressed messages. Time comes from a fake clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/obs.h"

static uint64_t fake_now;

/** fake_clock() - The test's clock. */
static uint64_t fake_clock(void)
{
	return fake_now;
}

/** What the sink saw. */
static struct {
	int n;
	int level[64];
	int line[64];
	char msg[64][600];
} seen;

/** sink() - Record each message. */
static void sink(void *arg, int level, const char *file, int line, const char *msg)
{
	assert_ptr_equal(arg, &seen);
	assert_non_null(strstr(file, "test_log.c"));
	if (seen.n < 64) {
		seen.level[seen.n] = level;
		seen.line[seen.n] = line;
		snprintf(seen.msg[seen.n], sizeof(seen.msg[0]), "%s", msg);
	}
	seen.n++;
}

/**
 * reset() - Defaults, the fake clock and the recording sink. Call sites
 * keep their state between tests, so time jumps ahead (buckets refill)
 * and counts left over by the previous test are flushed first.
 */
static int reset(void **state)
{
	homa_log_set_clock(fake_clock);
	homa_log_set_sink(sink, &seen);
	homa_log_set_rate(10, 1);
	fake_now += 100000000000ull;
	homa_log_report_suppressed();
	fake_now += 100000000000ull;
	memset(&seen, 0, sizeof(seen));
	return homa_log_set_level(HOMA_LOG_WARN);
}

/** log_bad_packet() - One call site, as a packet handler would have. */
static void log_bad_packet(int i)
{
	HOMA_LOG_WARN("bad packet %d from %s", i, "10.0.0.1");
}

/** log__levels_filter() - Default warn: error and warn pass, info and debug do not. */
static void log__levels_filter(void **state)
{
	assert_int_equal(homa_log_get_level(), HOMA_LOG_WARN);
	HOMA_LOG_ERROR("e%d", 1);
	HOMA_LOG_WARN("w");
	HOMA_LOG_INFO("i");
	HOMA_LOG_DEBUG("d");
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.msg[0], "e1");
	assert_int_equal(seen.level[1], HOMA_LOG_WARN);
	assert_int_equal(homa_log_set_level(HOMA_LOG_DEBUG), 0);
	HOMA_LOG_DEBUG("d");
	assert_int_equal(seen.n, 3);
	assert_int_equal(homa_log_set_level(9), HOMA_EINVAL);
	assert_int_equal(homa_log_set_level(-1), HOMA_EINVAL);
	assert_string_equal(homa_log_level_name(HOMA_LOG_INFO), "info");
	assert_string_equal(homa_log_level_name(7), "unknown");
}

/** log__flood_is_rate_limited() - 1000 calls at once give the burst only; the count follows. */
static void log__flood_is_rate_limited(void **state)
{
	int i;

	for (i = 0; i < 1000; i++)
		log_bad_packet(i);
	assert_int_equal(seen.n, 10);
	assert_string_equal(seen.msg[9], "bad packet 9 from 10.0.0.1");
	fake_now += 500000000;                  /* half a token: still limited */
	log_bad_packet(1000);
	assert_int_equal(seen.n, 10);
	fake_now += 600000000;                  /* the limit lifts */
	log_bad_packet(1001);
	assert_int_equal(seen.n, 11);
	assert_string_equal(seen.msg[10],
			    "bad packet 1001 from 10.0.0.1 (991 similar messages suppressed)");
	fake_now += 1000000000;
	log_bad_packet(1002);
	assert_string_equal(seen.msg[11], "bad packet 1002 from 10.0.0.1");
}

/** Times format_arg() was called. */
static int formats;

/** format_arg() - An argument whose evaluation the test counts. */
static const char *format_arg(void)
{
	formats++;
	return "10.0.0.1";
}

/** log_drop() - One call site whose argument counts its evaluations. */
static void log_drop(void)
{
	HOMA_LOG_WARN("dropped from %s", format_arg());
}

/**
 * log__suppressed_not_formatted() - 1000 calls at once at one site: only
 * the burst's 10 evaluate their arguments (a suppressed message is
 * counted, not formatted); the count still follows on the next one.
 */
static void log__suppressed_not_formatted(void **state)
{
	formats = 0;
	for (int i = 0; i < 1000; i++)
		log_drop();
	if (formats != 10)
		fail_msg("%d of 1000 rate-limited messages formatted (10 emitted)", formats);
	assert_int_equal(seen.n, 10);
	fake_now += 1000000000;
	for (int i = 0; i < 2; i++)
		log_drop();
	assert_int_equal(formats, 11);
	assert_string_equal(seen.msg[10], "dropped from 10.0.0.1 (990 similar messages suppressed)");
}

/** log__sites_are_independent() - A flood at one site does not silence another. */
static void log__sites_are_independent(void **state)
{
	int i;

	for (i = 0; i < 50; i++)
		log_bad_packet(i);
	HOMA_LOG_ERROR("other site");
	assert_int_equal(seen.n, 11);
	assert_string_equal(seen.msg[10], "other site");
}

/** log__report_suppressed() - Counts are reported by the periodic call once the limit lifts. */
static void log__report_suppressed(void **state)
{
	int i;

	for (i = 0; i < 25; i++)
		log_bad_packet(i);
	assert_int_equal(seen.n, 10);
	assert_int_equal(homa_log_report_suppressed(), 0);   /* no token yet */
	fake_now += 2000000000;
	assert_int_equal(homa_log_report_suppressed(), 1);
	assert_string_equal(seen.msg[10], "15 similar messages suppressed");
	assert_int_equal(seen.level[10], HOMA_LOG_WARN);
	assert_int_equal(seen.line[10], seen.line[0]);
	assert_int_equal(homa_log_report_suppressed(), 0);   /* reported once */
}

/** log__rate_zero_disables_limit() - burst 0 lets everything through. */
static void log__rate_zero_disables_limit(void **state)
{
	int i;

	assert_int_equal(homa_log_set_rate(5, 0), HOMA_EINVAL);
	assert_int_equal(homa_log_set_rate(0, 0), 0);
	for (i = 0; i < 40; i++)
		log_bad_packet(i);
	assert_int_equal(seen.n, 40);
}

/** log__long_message_cut() - Messages are bounded, never overflow. */
static void log__long_message_cut(void **state)
{
	char big[2000];

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	HOMA_LOG_ERROR("%s", big);
	assert_int_equal(seen.n, 1);
	assert_int_equal(strlen(seen.msg[0]), 480);
}

/** log__stderr_format() - Without a sink: one line on stderr with level and place. */
static void log__stderr_format(void **state)
{
	char buf[256] = {0};
	int fds[2], saved;
	ssize_t n;

	homa_log_set_sink(NULL, NULL);
	assert_int_equal(pipe(fds), 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fds[1], 2);
	HOMA_LOG_WARN("disk %s", "full");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	assert_true(n > 0);
	assert_int_equal(strncmp(buf, "homa warn: disk full (test_log.c:", 33), 0);
	assert_int_equal(buf[n - 1], '\n');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(log__levels_filter, reset),
		cmocka_unit_test_setup(log__flood_is_rate_limited, reset),
		cmocka_unit_test_setup(log__suppressed_not_formatted, reset),
		cmocka_unit_test_setup(log__sites_are_independent, reset),
		cmocka_unit_test_setup(log__report_suppressed, reset),
		cmocka_unit_test_setup(log__rate_zero_disables_limit, reset),
		cmocka_unit_test_setup(log__long_message_cut, reset),
		cmocka_unit_test_setup(log__stderr_format, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
