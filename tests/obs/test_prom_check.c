/* SPDX-License-Identifier: MIT */
/**
 * @file test_prom_check.c
 * The strict exposition checker must accept valid text and refuse every
 * kind of broken text, including real renderer output with one mutation:
 * proof that the metrics tests can fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "homa/obs.h"
#include "prom_check.h"

#define HG "# HELP g A gauge.\n# TYPE g gauge\n"
#define HC "# HELP c_total A counter.\n# TYPE c_total counter\n"
#define HH "# HELP h A histogram.\n# TYPE h histogram\n"

/** prom_check__accepts_valid() - Well-formed texts pass. */
static void prom_check__accepts_valid(void **state)
{
	static const char *const ok[] = {
		"",
		HG "g 1\n",
		HG "g{a=\"x\",b=\"y\\\"z\\\\\\n\"} -1.5e-3\n",
		HG "g{a=\"x\",} NaN\n",
		HG "g +Inf 1700000000000\n" "# a free comment\n",
		HC "c_total{k=\"1\"} 3\nc_total{k=\"2\"} 0\n",
		HH "h_bucket{le=\"1\"} 1\nh_bucket{le=\"3\"} 2\nh_bucket{le=\"+Inf\"} 2\n"
		   "h_sum 4\nh_count 2\n",
		HH "h_bucket{x=\"a\",le=\"1\"} 0\nh_bucket{x=\"a\",le=\"+Inf\"} 1\nh_sum{x=\"a\"} 9\n"
		   "h_count{x=\"a\"} 1\nh_bucket{x=\"b\",le=\"+Inf\"} 0\nh_sum{x=\"b\"} 0\n"
		   "h_count{x=\"b\"} 0\n",
	};
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (prom_check(ok[i], err, sizeof(err)))
			fail_msg("valid text %zu refused: %s", i, err);
}

/** prom_check__refuses_broken() - Each broken text fails, with a line number. */
static void prom_check__refuses_broken(void **state)
{
	static const char *const bad[] = {
		"g 1\n",                                          /* no HELP/TYPE */
		"# TYPE g gauge\ng 1\n",                          /* no HELP */
		"# HELP g x\ng 1\n",                              /* no TYPE */
		HG "g 1",                                         /* no final newline */
		HG "\ng 1\n",                                     /* blank line */
		HG "g abc\n",                                     /* bad value */
		HG "g 0x10\n",                                    /* hex is not allowed */
		HG "g\n",                                         /* no value */
		HG "g 1 2.5\n",                                   /* float timestamp */
		HG "g{a=x} 1\n",                                  /* unquoted label */
		HG "g{a=\"x} 1\n",                                /* unterminated label */
		HG "g{a=\"\\t\"} 1\n",                            /* bad escape */
		HG "g{1a=\"x\"} 1\n",                             /* bad label name */
		HG "g{__a=\"x\"} 1\n",                            /* reserved label name */
		HG "g{a=\"x\",a=\"y\"} 1\n",                      /* duplicate label */
		HG "g{a=\"x\" b=\"y\"} 1\n",                      /* missing comma */
		HG "g 1\ng 2\n",                                  /* duplicate series */
		HG "# HELP 9g x\n",                               /* bad name in HELP */
		HG "# TYPE g gauge\n",                            /* second TYPE */
		HG "# HELP g again\n",                            /* second HELP */
		"# HELP g x\n# TYPE g meter\n",                   /* bad type */
		"# HELP g a\\tb\n# TYPE g gauge\n",               /* bad HELP escape */
		"#TYPE g gauge\n",                                /* malformed comment */
		HG "g 1\n" HC "c_total 1\ng{a=\"1\"} 2\n",        /* not contiguous */
		HG "g 1\n# HELP g late\n",                        /* HELP after samples */
		"# HELP c A.\n# TYPE c counter\nc 1\n",           /* counter without _total */
		HC "c_total -1\n",                                /* negative counter */
		HH "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\n",      /* no _count */
		HH "h_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",                    /* no +Inf */
		HH "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",    /* no _sum */
		HH "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",                 /* +Inf != count */
		HH "h_bucket{le=\"3\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\n"
		   "h_sum 1\nh_count 1\n",                                           /* le decreasing */
		HH "h_bucket{le=\"1\"} 2\nh_bucket{le=\"3\"} 1\nh_bucket{le=\"+Inf\"} 2\n"
		   "h_sum 1\nh_count 2\n",                                           /* counts decreasing */
		HH "h_bucket 1\n",                                                   /* bucket without le */
		HH "h_bucket{le=\"x\"} 1\n",                                         /* bad le */
		HH "h 1\n",                                                          /* bare histogram name */
		HH "h_count{le=\"1\"} 1\n",                                          /* le on _count */
		HH "h_bucket{le=\"+Inf\"} 1.5\nh_sum 1\nh_count 1.5\n",              /* fractional count */
	};
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!prom_check(bad[i], err, sizeof(err)))
			fail_msg("broken text %zu accepted:\n%s", i, bad[i]);
		assert_int_equal(strncmp(err, "line ", 5), 0);
	}
}

/** mutate() - Copy @text replacing the first @from with @to. Caller frees. */
static char *mutate(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);
	size_t len = strlen(text) + strlen(to) + 1;
	char *out = malloc(len);

	assert_non_null(p);
	snprintf(out, len, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
	return out;
}

/** prom_check__refuses_mutated_render() - Real output passes; one wrong byte fails it. */
static void prom_check__refuses_mutated_render(void **state)
{
	static char buf[1 << 18];
	struct homa_stats st;
	struct homa_metrics_source src = {"9", &st};
	static const char *const muts[][2] = {
		{"_bucket{endpoint=\"9\",le=\"4095\"} 3", "_bucket{endpoint=\"9\",le=\"4095\"} 1"},
		{"homa_rx_message_size_bytes_count{endpoint=\"9\"} 3",
		 "homa_rx_message_size_bytes_count{endpoint=\"9\"} 4"},
		{"# TYPE homa_peers gauge\n", ""},
		{"homa_peers{endpoint=\"9\"} 0", "homa_peers{endpoint=\"9\"} zero"},
		{"{endpoint=\"9\"}", "{endpoint=9}"},
	};
	char err[256];
	size_t i;

	memset(&st, 0, sizeof(st));
	st.rx_msg_size_hist[10] = 3;
	assert_true(homa_metrics_render(&src, 1, NULL, 0, buf, sizeof(buf), NULL) > 0);
	assert_int_equal(prom_check(buf, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		char *m = mutate(buf, muts[i][0], muts[i][1]);

		if (!prom_check(m, err, sizeof(err)))
			fail_msg("mutation %zu accepted", i);
		free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prom_check__accepts_valid),
		cmocka_unit_test(prom_check__refuses_broken),
		cmocka_unit_test(prom_check__refuses_mutated_render),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
