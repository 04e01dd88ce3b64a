/* SPDX-License-Identifier: MIT */
/**
 * @file stat_report.c
 * Print the series that changed between two scrapes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stat.h"

/** lookup() - @key in @old, trying index @i first (scrapes keep their order). */
static const struct stat_sample *lookup(const struct stat_set *old, size_t i, const char *key)
{
	if (i < old->n && !strcmp(old->s[i].key, key))
		return &old->s[i];
	return stat_find(old, key);
}

/** wanted() - True if sample @s passes the kind and text filters. */
static bool wanted(const struct stat_sample *s, const struct stat_report_opts *o)
{
	if (s->kind == STAT_BUCKET && !o->buckets)
		return false;
	return !o->filter || strstr(s->key, o->filter);
}

/** fmt_num() - Integers exactly (up to 2^53), anything else with 6 significant digits. */
static const char *fmt_num(char *out, size_t cap, double v, bool sign)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		snprintf(out, cap, sign ? "%+.0f" : "%.0f", v);
	else
		snprintf(out, cap, sign ? "%+.6g" : "%.6g", v);
	return out;
}

/** fmt_rate() - A rate: whole numbers from 1000 up, 4 significant digits below. */
static const char *fmt_rate(char *out, size_t cap, double r)
{
	snprintf(out, cap, fabs(r) >= 1000 ? "%.0f" : "%.4g", r);
	return out;
}

/** print_line() - One series: value, change and (for counters) rate. */
static void print_line(FILE *f, const struct stat_sample *s, const struct stat_sample *prev,
		       double elapsed_s)
{
	bool counter = s->kind != STAT_GAUGE && s->kind != STAT_UNTYPED;
	char v[32], d[32], r[32];
	double delta;

	fmt_num(v, sizeof(v), s->value, false);
	if (!prev) {
		fprintf(f, "%-72s %16s\n", s->key, v);
		return;
	}
	delta = s->value - prev->value;
	if (counter && delta < 0)
		delta = s->value; /* the counter was reset (process restarted) */
	fmt_num(d, sizeof(d), delta, true);
	if (counter && elapsed_s > 0)
		fprintf(f, "%-72s %16s %14s %14s/s\n", s->key, v, d,
			fmt_rate(r, sizeof(r), delta / elapsed_s));
	else
		fprintf(f, "%-72s %16s %14s\n", s->key, v, d);
}

/** stat_report() - See stat.h. */
int stat_report(FILE *f, const struct stat_set *old, const struct stat_set *cur,
		double elapsed_s, const struct stat_report_opts *o)
{
	const struct stat_sample zero = {NULL, 0, STAT_UNTYPED};
	int lines = 0;
	size_t i;

	for (i = 0; i < cur->n; i++) {
		const struct stat_sample *s = &cur->s[i];
		const struct stat_sample *prev = old ? lookup(old, i, s->key) : NULL;
		bool changed;

		if (!wanted(s, o))
			continue;
		if (old)
			changed = !prev || prev->value != s->value ||
				  (isnan(prev->value) != isnan(s->value));
		else
			changed = s->value != 0;
		if (!changed && !o->all)
			continue;
		if (!lines && old)
			fprintf(f, "%-72s %16s %14s %16s\n", "# series", "value",
				"change", "per second");
		print_line(f, s, old ? (prev ? prev : &zero) : NULL, elapsed_s);
		lines++;
	}
	return lines;
}
