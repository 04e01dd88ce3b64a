/* SPDX-License-Identifier: MIT */
/**
 * @file test_stat.c
 * homa-stat: parsing, state file, change report, and the tool itself run
 * against a live /metrics listener on loopback.
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
#include "stat.h"
#include "tmpdir.h"


static const char sample_text[] =
	"# HELP a_total A.\n# TYPE a_total counter\n"
	"a_total{endpoint=\"x y\",k=\"}\"} 5\n"
	"# HELP g G.\n# TYPE g gauge\ng 2.5\n"
	"# HELP h H.\n# TYPE h histogram\n"
	"h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"
	"garbage line\nu 7\n";

/** stat__parse_kinds() - Keys with labels, values and kinds from TYPE lines. */
static void stat__parse_kinds(void **state)
{
	struct stat_set set = {0};
	const struct stat_sample *s;

	assert_int_equal(stat_parse(sample_text, &set), 7);
	s = stat_find(&set, "a_total{endpoint=\"x y\",k=\"}\"}");
	assert_non_null(s);
	assert_true(s->value == 5 && s->kind == STAT_COUNTER);
	s = stat_find(&set, "g");
	assert_true(s && s->value == 2.5 && s->kind == STAT_GAUGE);
	assert_int_equal(stat_find(&set, "h_bucket{le=\"+Inf\"}")->kind, STAT_BUCKET);
	assert_int_equal(stat_find(&set, "h_count")->kind, STAT_HISTSUM);
	assert_int_equal(stat_find(&set, "u")->kind, STAT_UNTYPED);
	assert_null(stat_find(&set, "garbage"));
	stat_free(&set);
}

/** stat__state_roundtrip() - Saved and loaded sets are equal. */
static void stat__state_roundtrip(void **state)
{
	struct stat_set a = {0}, b;
	char path[128];
	size_t i;

	snprintf(path, sizeof(path), "%s/state", tmpdir);
	stat_parse(sample_text, &a);
	a.time_ns = 1234567890123ull;
	assert_int_equal(stat_save(path, &a), 0);
	assert_int_equal(stat_load(path, &b), 0);
	assert_int_equal(b.n, a.n);
	assert_true(b.time_ns == a.time_ns);
	for (i = 0; i < a.n; i++) {
		assert_string_equal(a.s[i].key, b.s[i].key);
		assert_true(a.s[i].value == b.s[i].value);
		assert_int_equal(a.s[i].kind, b.s[i].kind);
	}
	stat_free(&a);
	stat_free(&b);
	snprintf(path, sizeof(path), "%s/absent", tmpdir);
	assert_int_equal(stat_load(path, &b), -1);
}

/** report_text() - stat_report() into a string. Caller frees. */
static char *report_text(const char *old_text, const char *cur_text, double secs,
			 struct stat_report_opts *o, int *lines)
{
	struct stat_set old = {0}, cur = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	stat_parse(old_text, &old);
	stat_parse(cur_text, &cur);
	*lines = stat_report(f, old_text ? &old : NULL, &cur, secs, o);
	fclose(f);
	stat_free(&old);
	stat_free(&cur);
	return buf;
}

/** stat__report_changes() - Only changed series; counter delta and rate; gauges; resets. */
static void stat__report_changes(void **state)
{
	static const char old_t[] = "# TYPE c_total counter\nc_total 100\nd_total 50\n"
				    "# TYPE g gauge\ng 4\n# TYPE h histogram\n"
				    "h_bucket{le=\"1\"} 1\nh_count 1\n";
	static const char cur_t[] = "# TYPE c_total counter\nc_total 300\nd_total 50\n"
				    "# TYPE g gauge\ng 1\nnew 9\n# TYPE h histogram\n"
				    "h_bucket{le=\"1\"} 2\nh_count 2\n# TYPE r_total counter\nr_total 3\n";
	static const char old_r[] = "# TYPE r_total counter\nr_total 10\n";
	struct stat_report_opts o = {0};
	char *t;
	int n;

	t = report_text(old_t, cur_t, 2.0, &o, &n);
	assert_int_equal(n, 5); /* c_total, g, new, h_count, r_total; not d_total or the bucket */
	assert_non_null(strstr(t, "c_total"));
	assert_non_null(strstr(t, "+200"));
	assert_non_null(strstr(t, "100/s"));
	assert_null(strstr(t, "d_total"));
	assert_null(strstr(t, "h_bucket"));
	assert_non_null(strstr(t, "-3"));              /* gauge went down by 3 */
	free(t);
	o.buckets = true;
	o.filter = "h_";
	t = report_text(old_t, cur_t, 2.0, &o, &n);
	assert_int_equal(n, 2);
	free(t);
	o = (struct stat_report_opts){.all = true};
	t = report_text(old_t, cur_t, 2.0, &o, &n);
	assert_int_equal(n, 6);
	free(t);
	o = (struct stat_report_opts){0};
	t = report_text(old_r, "# TYPE r_total counter\nr_total 3\n", 1.0, &o, &n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(t, "+3"));              /* reset: the new value is the increase */
	free(t);
	t = report_text(NULL, cur_t, 0, &o, &n);
	assert_int_equal(n, 6);                         /* first call: every non-zero series */
	free(t);
}

/** Listener state: counters that move on every scrape. */
struct live {
	struct homa_stats st;
	int scrapes;
};

/** live_fill() - Each scrape: 5 more RPCs started, 2 more DATA packets; peers = scrapes. */
static int live_fill(void *arg, char *buf, size_t cap)
{
	struct live *l = arg;
	struct homa_metrics_source src = {"4000", &l->st};

	l->scrapes++;
	l->st.client_rpcs_started += 5;
	l->st.pkts_sent[0] += 2;
	l->st.peers = (uint64_t)l->scrapes;
	return homa_metrics_render(&src, 1, NULL, 0, buf, cap, NULL);
}

/** run() - Run homa-stat with @args; return its stdout (caller frees) and exit status. */
static char *run(const char *args, int *status)
{
	char cmd[512], *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];
	FILE *p, *out = open_memstream(&buf, &len);

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", HOMA_STAT_BIN, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, out);
	*status = pclose(p);
	fclose(out);
	return buf;
}

/** stat__tool_against_listener() - First call totals, second call changes, interval rates. */
static void stat__tool_against_listener(void **state)
{
	struct live l = {0};
	char args[256], *out;
	homa_http *h;
	int st;

	assert_int_equal(homa_http_start(NULL, live_fill, &l, &h), 0);
	snprintf(args, sizeof(args), "-p %u -s %s/st", homa_http_port(h), tmpdir);
	out = run(args, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "# first call"));
	assert_non_null(strstr(out, "homa_client_rpcs_started_total{endpoint=\"4000\"}"));
	assert_null(strstr(out, "homa_rpcs_aborted_total"));   /* zero: not shown */
	free(out);
	out = run(args, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "# changes over the last"));
	assert_non_null(strstr(out, "homa_client_rpcs_started_total{endpoint=\"4000\"}"));
	assert_non_null(strstr(out, "+5"));
	assert_non_null(strstr(out, "homa_packets_sent_total{endpoint=\"4000\",type=\"DATA\"}"));
	assert_null(strstr(out, "type=\"GRANT\""));            /* unchanged: not shown */
	free(out);
	snprintf(args, sizeof(args), "http://127.0.0.1:%u/metrics -i 0.1 -c 2 -f peers",
		 homa_http_port(h));
	out = run(args, &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "# rates over"));
	assert_non_null(strstr(strstr(out, "# rates over") + 1, "# rates over"));
	assert_non_null(strstr(out, "homa_peers{endpoint=\"4000\"}"));
	assert_null(strstr(out, "homa_client_rpcs"));          /* filtered out */
	free(out);
	homa_http_stop(h);
}

/** stat__tool_errors() - Nothing listening, bad target, HTTP errors: non-zero exit. */
static void stat__tool_errors(void **state)
{
	struct live l = {0};
	char args[256], *out;
	homa_http *h;
	int st;

	assert_int_equal(homa_http_start(NULL, live_fill, &l, &h), 0);
	snprintf(args, sizeof(args), "127.0.0.1:%u/nothing -s %s/st2", homa_http_port(h), tmpdir);
	out = run(args, &st);
	assert_true(st != 0);
	assert_non_null(strstr(out, "HTTP status 404"));
	free(out);
	homa_http_stop(h);
	out = run(args, &st);                         /* listener gone */
	assert_true(st != 0);
	assert_non_null(strstr(out, "connect"));
	free(out);
	out = run("nonsense", &st);
	assert_true(st != 0);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stat__parse_kinds),
		cmocka_unit_test(stat__state_roundtrip),
		cmocka_unit_test(stat__report_changes),
		cmocka_unit_test(stat__tool_against_listener),
		cmocka_unit_test(stat__tool_errors),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
