/* SPDX-License-Identifier: MIT */
/**
 * @file test_conformance.c
 * Code and comment agree for include/homa/obs.h: the test reads the
 * header (tests/api/doc_codes.c), drives every HOMA_API function into
 * each error its comment lists and into its documented answer to misuse
 * (NULL arguments, out-of-range levels and priorities, buffers too
 * small, ports in use, files that cannot be written), and fails if a
 * call returns something its comment does not say, a documented code is
 * not provoked here or accounted for, or a function has no case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "doc_codes.h"
#include "homa/obs.h"
#include "tmpdir.h"

/** path_in() - @name inside the group's temporary directory (static buffer). */
static const char *path_in(const char *name)
{
	static char buf[160];

	snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
	return buf;
}

/** fill_text() - A metrics callback that writes "x". */
static int fill_text(void *arg, char *buf, size_t cap)
{
	(void)arg;
	if (cap < 2)
		return HOMA_ENOSPC;
	memcpy(buf, "x", 2);
	return 1;
}

/** snap() - An exporter snapshot with no extra values. */
static int snap(void *arg, struct homa_stats *st, struct homa_metric_value *extra, size_t *n)
{
	(void)arg, (void)st, (void)extra;
	*n = 0;
	return 0;
}

/* ---- metrics ---- */

static int render_null_src(void)
{
	char buf[64];

	return homa_metrics_render(NULL, 1, NULL, 0, buf, sizeof(buf), NULL);
}

/** render_small() - A short buffer: HOMA_ENOSPC, @needed says how much, text cut. */
static int render_small(void)
{
	struct homa_metric_value v = {.name = "pool_used_bytes", .kind = HOMA_METRIC_GAUGE,
				      .value = 1};
	size_t needed = 0;
	char buf[16];
	int r = homa_metrics_render(NULL, 0, &v, 1, buf, sizeof(buf), &needed);

	return needed > sizeof(buf) && strlen(buf) < sizeof(buf) ? r : 1;
}

static int render_bad_name(void)
{
	struct homa_metric_value v = {.name = "Bad-Name", .kind = HOMA_METRIC_GAUGE};
	char buf[256];

	return homa_metrics_render(NULL, 0, &v, 1, buf, sizeof(buf), NULL);
}

/* ---- HTTP listener and exporter ---- */

static int http_null(void)
{
	homa_http *h;

	return homa_http_start(NULL, NULL, NULL, &h);
}

static int http_bad_addr(void)
{
	struct homa_http_opts o = {.bind_addr = "not an address"};
	homa_http *h;

	return homa_http_start(&o, fill_text, NULL, &h);
}

/** http_in_use() - A second listener on the first one's port. */
static int http_in_use(void)
{
	struct homa_http_opts o = {0};
	homa_http *a, *b = NULL;
	int r;

	assert_int_equal(homa_http_start(&o, fill_text, NULL, &a), 0);
	o.port = homa_http_port(a);
	r = homa_http_start(&o, fill_text, NULL, &b);
	homa_http_stop(b);
	homa_http_stop(a);
	return r;
}

static int http_port_null(void) { return homa_http_port(NULL); }
static int http_requests_null(void) { return (int)homa_http_requests(NULL); }

static int http_stop_null(void)
{
	homa_http_stop(NULL);
	return 0;
}

static int join_null(void)
{
	homa_exporter_member *m;

	return homa_exporter_join(NULL, NULL, snap, NULL, &m);
}

/** join_in_use() - The port is held by a listener that is no exporter. */
static int join_in_use(void)
{
	struct homa_http_opts o = {0};
	homa_exporter_member *m = NULL;
	homa_http *a;
	int r;

	assert_int_equal(homa_http_start(&o, fill_text, NULL, &a), 0);
	o.port = homa_http_port(a);
	r = homa_exporter_join(&o, "1", snap, NULL, &m);
	homa_exporter_leave(m);
	homa_http_stop(a);
	return r;
}

static int exporter_port_null(void) { return homa_exporter_port(NULL); }

static int leave_null(void)
{
	homa_exporter_leave(NULL);
	return 0;
}

/* ---- pcap ---- */

static int pcap_null(void)
{
	homa_pcap *pc;

	return homa_pcap_open(NULL, NULL, &pc);
}

static int pcap_snaplen(void)
{
	struct homa_pcap_opts o = {.snaplen = 100};
	homa_pcap *pc;

	return homa_pcap_open(path_in("a.pcap"), &o, &pc);
}

static int pcap_no_dir(void)
{
	homa_pcap *pc;

	return homa_pcap_open(path_in("no/such/dir.pcap"), NULL, &pc);
}

/** one_pkt() - A 1000-byte UDP packet between two IPv4 addresses. */
static struct homa_pcap_pkt one_pkt(void)
{
	static uint8_t data[1000];

	return (struct homa_pcap_pkt){.data = data, .len = sizeof(data),
				      .src = homa_addr_ipv4(1), .dst = homa_addr_ipv4(2)};
}

static int write_bad_priority(void)
{
	struct homa_pcap_pkt p = one_pkt();
	homa_pcap *pc;
	int r;

	assert_int_equal(homa_pcap_open(path_in("b.pcap"), NULL, &pc), 0);
	p.priority = HOMA_MAX_PRIORITIES;
	r = homa_pcap_write(pc, &p);
	assert_int_equal(homa_pcap_close(pc), 0);
	return r;
}

/** full_pcap() - A capture into /dev/full (every write to the file fails). */
static homa_pcap *full_pcap(void)
{
	homa_pcap *pc;

	assert_int_equal(homa_pcap_open("/dev/full", NULL, &pc), 0);
	return pc;
}

/** write_full() - Writes fail once the buffer reaches the file; later ones too. */
static int write_full(void)
{
	struct homa_pcap_pkt p = one_pkt();
	homa_pcap *pc = full_pcap();
	int r = 1;

	for (int i = 0; i < 1000 && r == 1; i++)
		r = homa_pcap_write(pc, &p);
	if (r == HOMA_EIO)
		r = homa_pcap_write(pc, &p);
	homa_pcap_close(pc);
	return r;
}

static int flush_full(void)
{
	homa_pcap *pc = full_pcap();
	int r = homa_pcap_flush(pc);

	homa_pcap_close(pc);
	return r;
}

static int flush_null(void) { return homa_pcap_flush(NULL); }

static int pcap_stats_null(void)
{
	struct homa_pcap_stats st;
	homa_pcap *pc = full_pcap();

	memset(&st, 0x55, sizeof(st));
	homa_pcap_get_stats(NULL, &st);
	homa_pcap_get_stats(pc, NULL);
	homa_pcap_close(pc);
	return st.errors || st.seen[0];
}

static int close_full(void) { return homa_pcap_close(full_pcap()); }
static int close_null(void) { return homa_pcap_close(NULL); }

/* ---- logging ---- */

static int level_bad(void) { return homa_log_set_level(HOMA_LOG_DEBUG + 1); }
static int level_get(void) { return homa_log_get_level() == HOMA_LOG_WARN ? 0 : 1; }

static int sinks;

/** count_sink() - A log sink that counts messages. */
static void count_sink(void *arg, int level, const char *file, int line, const char *msg)
{
	(void)arg, (void)level, (void)file, (void)line, (void)msg;
	sinks++;
}

/** sink_restore() - A sink gets the messages; NULL gives stderr back. */
static int sink_restore(void)
{
	static struct homa_log_site site;

	sinks = 0;
	homa_log_set_sink(count_sink, NULL);
	homa_log_emit(&site, HOMA_LOG_ERROR, "f", 1, "%s", "one");
	homa_log_set_sink(NULL, NULL);
	return sinks == 1 ? 0 : 1;
}

static int rate_bad(void) { return homa_log_set_rate(3, 0); }

static uint64_t fixed_now(void) { return 5; }

static int clock_restore(void)
{
	homa_log_set_clock(fixed_now);
	homa_log_set_clock(NULL);
	return 0;
}

static int enabled_range(void)
{
	return homa_log_enabled(HOMA_LOG_DEBUG + 7) || !homa_log_enabled(HOMA_LOG_ERROR);
}

/** emit_null() - A NULL site or format is ignored (nothing reaches the sink). */
static int emit_null(void)
{
	static struct homa_log_site site;

	sinks = 0;
	homa_log_set_sink(count_sink, NULL);
	homa_log_emit(NULL, HOMA_LOG_ERROR, "f", 1, "%s", "x");
	homa_log_emit(&site, HOMA_LOG_ERROR, "f", 1, NULL);
	homa_log_set_sink(NULL, NULL);
	return sinks;
}

/** admit_null() - A NULL site is not admitted. */
static int admit_null(void)
{
	return homa_log_admit(NULL, HOMA_LOG_ERROR, "f", 1);
}

/** emit_admitted_null() - A NULL site or format is ignored (nothing reaches the sink). */
static int emit_admitted_null(void)
{
	static struct homa_log_site site;

	sinks = 0;
	homa_log_set_sink(count_sink, NULL);
	homa_log_emit_admitted(NULL, HOMA_LOG_ERROR, "f", 1, "%s", "x");
	homa_log_emit_admitted(&site, HOMA_LOG_ERROR, "f", 1, NULL);
	homa_log_set_sink(NULL, NULL);
	return sinks;
}

static int report_none(void) { return homa_log_report_suppressed() < 0; }
static int level_name_bad(void) { return strcmp(homa_log_level_name(-1), "unknown"); }

static const struct doc_case cases[] = {
	DOC_CASE(homa_metrics_render, HOMA_EINVAL, render_null_src),
	DOC_CASE(homa_metrics_render, HOMA_ENOSPC, render_small),
	DOC_CASE(homa_metrics_render, HOMA_EINVAL, render_bad_name),
	DOC_CASE(homa_http_start, HOMA_EINVAL, http_null),
	DOC_CASE(homa_http_start, HOMA_EINVAL, http_bad_addr),
	DOC_CASE(homa_http_start, HOMA_EADDRINUSE, http_in_use),
	DOC_ANSWER(homa_http_port, http_port_null),
	DOC_ANSWER(homa_http_requests, http_requests_null),
	DOC_ANSWER(homa_http_stop, http_stop_null),
	DOC_CASE(homa_exporter_join, HOMA_EINVAL, join_null),
	DOC_CASE(homa_exporter_join, HOMA_EADDRINUSE, join_in_use),
	DOC_ANSWER(homa_exporter_port, exporter_port_null),
	DOC_ANSWER(homa_exporter_leave, leave_null),
	DOC_CASE(homa_pcap_open, HOMA_EINVAL, pcap_null),
	DOC_CASE(homa_pcap_open, HOMA_EINVAL, pcap_snaplen),
	DOC_CASE(homa_pcap_open, HOMA_EIO, pcap_no_dir),
	DOC_CASE(homa_pcap_write, HOMA_EINVAL, write_bad_priority),
	DOC_CASE(homa_pcap_write, HOMA_EIO, write_full),
	DOC_CASE(homa_pcap_flush, HOMA_EIO, flush_full),
	DOC_CASE(homa_pcap_flush, HOMA_EINVAL, flush_null),
	DOC_ANSWER(homa_pcap_get_stats, pcap_stats_null),
	DOC_CASE(homa_pcap_close, HOMA_EIO, close_full),
	DOC_ANSWER(homa_pcap_close, close_null),
	DOC_CASE(homa_log_set_level, HOMA_EINVAL, level_bad),
	DOC_ANSWER(homa_log_get_level, level_get),
	DOC_ANSWER(homa_log_set_sink, sink_restore),
	DOC_CASE(homa_log_set_rate, HOMA_EINVAL, rate_bad),
	DOC_ANSWER(homa_log_set_clock, clock_restore),
	DOC_ANSWER(homa_log_enabled, enabled_range),
	DOC_ANSWER(homa_log_emit, emit_null),
	DOC_ANSWER(homa_log_admit, admit_null),
	DOC_ANSWER(homa_log_emit_admitted, emit_admitted_null),
	DOC_ANSWER(homa_log_report_suppressed, report_none),
	DOC_ANSWER(homa_log_level_name, level_name_bad),
};

static const struct doc_elsewhere elsewhere[] = {
	{"homa_http_start", "HOMA_ENOMEM", "allocation failure"},
	{"homa_http_start", "HOMA_EIO", "socket, pipe or thread creation failure"},
	{"homa_exporter_join", "HOMA_ENOMEM", "allocation failure"},
	{"homa_exporter_join", "HOMA_EIO", "as homa_http_start()'s"},
	{"homa_pcap_open", "HOMA_ENOMEM", "allocation failure"},
};

/** conformance__obs_h() - obs.h's functions against their comments. */
static void conformance__obs_h(void **state)
{
	(void)state;
	doc_assert_header(OBS_H_PATH, 22, cases, DOC_N(cases), elsewhere, DOC_N(elsewhere));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conformance__obs_h),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
