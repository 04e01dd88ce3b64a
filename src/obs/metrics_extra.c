/* SPDX-License-Identifier: MIT */
/**
 * @file metrics_extra.c
 * Extra named values (runtime gauges and counters) rendered after the
 * engine's families, one family per distinct name.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics_int.h"

/** Longest extra name accepted (without prefix and suffix). */
#define EXTRA_NAME_MAX 100

/** valid_name() - True if @n matches [a-z_][a-z0-9_]* and is not too long. */
static bool valid_name(const char *n)
{
	size_t i;

	if (!n || !*n || strlen(n) > EXTRA_NAME_MAX)
		return false;
	for (i = 0; n[i]; i++) {
		char c = n[i];

		if (!((c >= 'a' && c <= 'z') || c == '_' || (i && c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

/** full_name() - Write homa_<name>[_total] into @out. */
static void full_name(const struct homa_metric_value *v, char *out, size_t cap)
{
	snprintf(out, cap, "homa_%s%s", v->name,
		 v->kind == HOMA_METRIC_COUNTER ? "_total" : "");
}

/** valid_label() - True if @v has no extra label, or a valid one with a value. */
static bool valid_label(const struct homa_metric_value *v)
{
	if (!v->label)
		return true;
	return valid_name(v->label) && strcmp(v->label, "endpoint") && v->label_value;
}

/** check_extras() - Validate names, labels and kinds. Return: 0 or HOMA_EINVAL. */
static int check_extras(const struct homa_metric_value *extra, size_t n)
{
	char full[EXTRA_NAME_MAX + 16];
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (!valid_name(extra[i].name) || !valid_label(&extra[i]))
			return HOMA_EINVAL;
		if (extra[i].kind != HOMA_METRIC_COUNTER && extra[i].kind != HOMA_METRIC_GAUGE)
			return HOMA_EINVAL;
		full_name(&extra[i], full, sizeof(full));
		if (homa_metrics_builtin_taken(full))
			return HOMA_EINVAL;
		for (j = 0; j < i; j++)
			if (!strcmp(extra[i].name, extra[j].name) &&
			    extra[i].kind != extra[j].kind)
				return HOMA_EINVAL;
	}
	return 0;
}

/** write_value() - A double in exposition syntax (NaN, +Inf, -Inf or %.17g). */
static void write_value(struct homa_textbuf *tb, double v)
{
	if (isnan(v))
		homa_textbuf_puts(tb, " NaN\n");
	else if (isinf(v))
		homa_textbuf_puts(tb, v > 0 ? " +Inf\n" : " -Inf\n");
	else
		homa_textbuf_printf(tb, " %.17g\n", v);
}

/** first_of_name() - True if no earlier entry has the same name as entry @i. */
static bool first_of_name(const struct homa_metric_value *extra, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (!strcmp(extra[i].name, extra[j].name))
			return false;
	return true;
}

/** homa_metrics_extras() - See metrics_int.h. */
int homa_metrics_extras(struct homa_textbuf *tb,
			const struct homa_metric_value *extra, size_t n)
{
	char full[EXTRA_NAME_MAX + 16];
	size_t i, j;
	int err = check_extras(extra, n);

	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (!first_of_name(extra, i))
			continue;
		full_name(&extra[i], full, sizeof(full));
		homa_metrics_header(tb, full, extra[i].help ? extra[i].help : extra[i].name,
				    extra[i].kind == HOMA_METRIC_COUNTER ? "counter" : "gauge");
		for (j = i; j < n; j++) {
			if (strcmp(extra[i].name, extra[j].name))
				continue;
			homa_textbuf_puts(tb, full);
			homa_metrics_labels(tb, extra[j].endpoint, extra[j].label,
					    extra[j].label_value);
			write_value(tb, extra[j].value);
		}
	}
	return 0;
}
