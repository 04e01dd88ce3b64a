/* SPDX-License-Identifier: MIT */
/**
 * @file prom_check.c
 * Strict Prometheus text-format checker (see prom_check.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom_check.h"

#define NAME_MAX_LEN 200
#define LABELS_MAX 16
#define VALUE_MAX 256

/** A metric family declared by HELP/TYPE. */
struct family {
	char name[NAME_MAX_LEN];
	char type[16];
	bool help, typed, sampled;
};

/** One histogram series group (labels other than le). */
struct hgroup {
	int fam;
	char key[1024];
	double last_le, last_count, inf_count, count;
	int nbuckets;
	bool has_inf, has_sum, has_count;
};

/** A label pair of one sample. */
struct label {
	char name[NAME_MAX_LEN];
	char value[VALUE_MAX];
};

/** Checker state. */
struct checker {
	struct family *fams;
	int nfams, cur;
	char **series;
	int nseries;
	struct hgroup *groups;
	int ngroups;
	int line;
	char *err;
	size_t cap;
};

/** fail() - Record "line N: reason". Return: -1. */
static int fail(struct checker *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err && c->cap)
		snprintf(c->err, c->cap, "line %d: %s", c->line, msg);
	return -1;
}

/** name_len() - Length of a valid name at @s ([a-zA-Z_:][a-zA-Z0-9_:]*; no colon if !@colon). */
static size_t name_len(const char *s, bool colon)
{
	size_t n = 0;

	while (s[n] && ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
			s[n] == '_' || (colon && s[n] == ':') ||
			(n && s[n] >= '0' && s[n] <= '9')))
		n++;
	return n;
}

/** parse_float() - Strict float syntax (Go ParseFloat subset used by Prometheus). */
static bool parse_float(const char *s, size_t len, double *out)
{
	char tmp[64];
	size_t i = 0;
	bool digits = false;

	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (!strcmp(tmp, "NaN") || !strcmp(tmp, "+Inf") || !strcmp(tmp, "-Inf") ||
	    !strcmp(tmp, "Inf")) {
		*out = tmp[0] == 'N' ? NAN : (tmp[0] == '-' ? -INFINITY : INFINITY);
		return true;
	}
	if (tmp[i] == '+' || tmp[i] == '-')
		i++;
	for (; tmp[i] >= '0' && tmp[i] <= '9'; i++)
		digits = true;
	if (tmp[i] == '.')
		for (i++; tmp[i] >= '0' && tmp[i] <= '9'; i++)
			digits = true;
	if (!digits)
		return false;
	if (tmp[i] == 'e' || tmp[i] == 'E') {
		i++;
		if (tmp[i] == '+' || tmp[i] == '-')
			i++;
		if (!(tmp[i] >= '0' && tmp[i] <= '9'))
			return false;
		while (tmp[i] >= '0' && tmp[i] <= '9')
			i++;
	}
	if (tmp[i])
		return false;
	*out = strtod(tmp, NULL);
	return true;
}

/** find_family() - Index of family @name (length @n), or -1. */
static int find_family(struct checker *c, const char *name, size_t n)
{
	int i;

	for (i = 0; i < c->nfams; i++)
		if (strlen(c->fams[i].name) == n && !strncmp(c->fams[i].name, name, n))
			return i;
	return -1;
}

/** get_family() - Find or add family @name. Return: index, or -1 (bad name). */
static int get_family(struct checker *c, const char *name, size_t n)
{
	int i = find_family(c, name, n);

	if (i >= 0)
		return i;
	if (n >= NAME_MAX_LEN)
		return -1;
	c->fams = realloc(c->fams, sizeof(*c->fams) * (size_t)(c->nfams + 1));
	memset(&c->fams[c->nfams], 0, sizeof(*c->fams));
	memcpy(c->fams[c->nfams].name, name, n);
	return c->nfams++;
}

/** check_help_text() - Only \\ and \n escapes in a docstring. */
static bool check_help_text(const char *s)
{
	for (; *s; s++)
		if (*s == '\\' && s[1] != '\\' && s[1] != 'n')
			return false;
		else if (*s == '\\')
			s++;
	return true;
}

/** valid_type() - One of the five metric types. */
static bool valid_type(const char *t)
{
	return !strcmp(t, "counter") || !strcmp(t, "gauge") || !strcmp(t, "histogram") ||
	       !strcmp(t, "summary") || !strcmp(t, "untyped");
}

/** comment_line() - "# HELP name text", "# TYPE name type" or another comment. */
static int comment_line(struct checker *c, const char *l)
{
	bool help = !strncmp(l, "# HELP ", 7), type = !strncmp(l, "# TYPE ", 7);
	size_t n;
	int f;

	if (!help && !type)
		return l[1] == ' ' || l[1] == '\0' ? 0 : fail(c, "bad comment");
	n = name_len(l + 7, true);
	if (!n || (l[7 + n] != ' ' && l[7 + n] != '\0'))
		return fail(c, "bad metric name in %s", help ? "HELP" : "TYPE");
	f = get_family(c, l + 7, n);
	if (f < 0)
		return fail(c, "name too long");
	if (c->fams[f].sampled)
		return fail(c, "%s after samples of %s", help ? "HELP" : "TYPE", c->fams[f].name);
	if (help) {
		if (c->fams[f].help)
			return fail(c, "second HELP for %s", c->fams[f].name);
		c->fams[f].help = true;
		return check_help_text(l + 7 + n) ? 0 : fail(c, "bad escape in HELP");
	}
	if (c->fams[f].typed)
		return fail(c, "second TYPE for %s", c->fams[f].name);
	if (l[7 + n] != ' ' || !valid_type(l + 8 + n))
		return fail(c, "bad TYPE value");
	snprintf(c->fams[f].type, sizeof(c->fams[f].type), "%s", l + 8 + n);
	c->fams[f].typed = true;
	return 0;
}

/** parse_label_value() - Quoted, escaped value at *@p into @out. Return: 0 or -1. */
static int parse_label_value(const char **p, char *out, size_t cap)
{
	const char *s = *p;
	size_t n = 0;

	if (*s++ != '"')
		return -1;
	for (; *s != '"'; s++) {
		char ch = *s;

		if (!ch || n + 1 >= cap)
			return -1;
		if (ch == '\\') {
			s++;
			if (*s == 'n')
				ch = '\n';
			else if (*s == '\\' || *s == '"')
				ch = *s;
			else
				return -1;
		}
		out[n++] = ch;
	}
	out[n] = '\0';
	*p = s + 1;
	return 0;
}

/** parse_labels() - "{a="x",b="y"}" at *@p. Return: label count or -1. */
static int parse_labels(struct checker *c, const char **p, struct label *lab)
{
	const char *s = *p + 1;
	int n = 0, i;

	while (*s != '}') {
		size_t len = name_len(s, false);

		if (!len || len >= NAME_MAX_LEN || n == LABELS_MAX || !strncmp(s, "__", 2))
			return fail(c, "bad label name");
		memcpy(lab[n].name, s, len);
		lab[n].name[len] = '\0';
		s += len;
		if (*s++ != '=' || parse_label_value(&s, lab[n].value, VALUE_MAX))
			return fail(c, "bad label value");
		for (i = 0; i < n; i++)
			if (!strcmp(lab[i].name, lab[n].name))
				return fail(c, "duplicate label %s", lab[n].name);
		n++;
		if (*s == ',')
			s++;
		else if (*s != '}')
			return fail(c, "bad label separator");
	}
	*p = s + 1;
	return n;
}

/** cmp_label() - qsort order of labels by name. */
static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

/** label_key() - Canonical text of the labels, skipping @skip (may be NULL). */
static void label_key(struct label *lab, int n, const char *skip, char *out, size_t cap)
{
	size_t len = 0;
	int i;

	qsort(lab, (size_t)n, sizeof(*lab), cmp_label);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		if (!skip || strcmp(lab[i].name, skip))
			len += (size_t)snprintf(out + len, len < cap ? cap - len : 0,
						"%s=%s\x01", lab[i].name, lab[i].value);
}

/** add_series() - Record a series key. Return: 0, or -1 if it was seen before. */
static int add_series(struct checker *c, const char *name, const char *key)
{
	size_t len = strlen(name) + strlen(key) + 2;
	char *s = malloc(len);
	int i;

	snprintf(s, len, "%s|%s", name, key);
	for (i = 0; i < c->nseries; i++)
		if (!strcmp(c->series[i], s)) {
			free(s);
			return fail(c, "duplicate series %s", name);
		}
	c->series = realloc(c->series, sizeof(char *) * (size_t)(c->nseries + 1));
	c->series[c->nseries++] = s;
	return 0;
}

/** family_of() - Family a sample name belongs to; sets *@suffix ("", "_bucket", ...). */
static int family_of(struct checker *c, const char *name, size_t n, const char **suffix)
{
	static const char *const sfx[] = {"_bucket", "_sum", "_count"};
	int f = find_family(c, name, n), i;

	*suffix = "";
	if (f >= 0 && (strcmp(c->fams[f].type, "histogram") && strcmp(c->fams[f].type, "summary")))
		return f;
	for (i = 0; i < 3; i++) {
		size_t sl = strlen(sfx[i]);

		if (n > sl && !strncmp(name + n - sl, sfx[i], sl)) {
			int g = find_family(c, name, n - sl);

			if (g >= 0 && (!strcmp(c->fams[g].type, "histogram") ||
				       (i && !strcmp(c->fams[g].type, "summary")))) {
				*suffix = sfx[i];
				return g;
			}
		}
	}
	return f >= 0 && !strcmp(c->fams[f].type, "summary") ? f : -1;
}

/** get_group() - Histogram group of family @f with label key @key. */
static struct hgroup *get_group(struct checker *c, int f, const char *key)
{
	struct hgroup *g;
	int i;

	for (i = 0; i < c->ngroups; i++)
		if (c->groups[i].fam == f && !strcmp(c->groups[i].key, key))
			return &c->groups[i];
	c->groups = realloc(c->groups, sizeof(*g) * (size_t)(c->ngroups + 1));
	g = &c->groups[c->ngroups++];
	memset(g, 0, sizeof(*g));
	g->fam = f;
	snprintf(g->key, sizeof(g->key), "%s", key);
	return g;
}

/** find_label() - Value of label @name, or NULL. */
static const char *find_label(const struct label *lab, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(lab[i].name, name))
			return lab[i].value;
	return NULL;
}

/** histogram_sample() - Check one _bucket, _sum or _count sample. */
static int histogram_sample(struct checker *c, int f, const char *suffix,
			    struct label *lab, int n, double v)
{
	const char *le = find_label(lab, n, "le");
	char key[1024];
	struct hgroup *g;
	double bound;

	if (!strcmp(suffix, "") || (le && strcmp(suffix, "_bucket")))
		return fail(c, "bad histogram series");
	label_key(lab, n, "le", key, sizeof(key));
	g = get_group(c, f, key);
	if (!strcmp(suffix, "_sum")) {
		g->has_sum = true;
		return 0;
	}
	if (isnan(v) || v < 0 || v != floor(v))
		return fail(c, "histogram count not a non-negative integer");
	if (!strcmp(suffix, "_count")) {
		g->has_count = true;
		g->count = v;
		return 0;
	}
	if (!le || !parse_float(le, strlen(le), &bound) || isnan(bound))
		return fail(c, "bucket without a valid le");
	if (g->nbuckets && (bound <= g->last_le || v < g->last_count))
		return fail(c, "buckets not increasing (le %s)", le);
	g->nbuckets++;
	g->last_le = bound;
	g->last_count = v;
	if (isinf(bound) && bound > 0) {
		g->has_inf = true;
		g->inf_count = v;
	}
	return 0;
}

/** parse_value_part() - " value [timestamp]" after the name and labels. */
static int parse_value_part(struct checker *c, const char *s, double *v)
{
	const char *end;
	double ts;

	if (*s != ' ' && *s != '\t')
		return fail(c, "missing space before value");
	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strcspn(s, " \t");
	if (!parse_float(s, (size_t)(end - s), v))
		return fail(c, "bad value");
	s = end;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	if (strchr(s, '.') || strchr(s, 'e') || !parse_float(s, strlen(s), &ts) || isinf(ts) || isnan(ts))
		return fail(c, "bad timestamp");
	return 0;
}

/** enter_family() - Switch to family @f; its samples must be contiguous. */
static int enter_family(struct checker *c, int f)
{
	if (!c->fams[f].help || !c->fams[f].typed)
		return fail(c, "sample of %s before its HELP and TYPE", c->fams[f].name);
	if (f != c->cur && c->fams[f].sampled)
		return fail(c, "samples of %s are not contiguous", c->fams[f].name);
	c->cur = f;
	c->fams[f].sampled = true;
	return 0;
}

/** sample_line() - Check one sample line. */
static int sample_line(struct checker *c, const char *l)
{
	struct label lab[LABELS_MAX];
	const char *s = l, *suffix;
	size_t n = name_len(l, true);
	char name[NAME_MAX_LEN], key[1024];
	int nl = 0, f;
	double v;

	if (!n || n >= NAME_MAX_LEN)
		return fail(c, "bad metric name");
	memcpy(name, l, n);
	name[n] = '\0';
	s += n;
	if (*s == '{' && (nl = parse_labels(c, &s, lab)) < 0)
		return -1;
	if (parse_value_part(c, s, &v))
		return -1;
	f = family_of(c, name, n, &suffix);
	if (f < 0)
		return fail(c, "sample %s without HELP and TYPE", name);
	if (enter_family(c, f))
		return -1;
	label_key(lab, nl, NULL, key, sizeof(key));
	if (add_series(c, name, key))
		return -1;
	if (!strcmp(c->fams[f].type, "counter") &&
	    (n < 6 || strcmp(name + n - 6, "_total") || isnan(v) || v < 0))
		return fail(c, "counter %s must end in _total and not be negative", name);
	if (!strcmp(c->fams[f].type, "histogram"))
		return histogram_sample(c, f, suffix, lab, nl, v);
	return 0;
}

/** check_groups() - Every histogram group has +Inf == _count, and _sum. */
static int check_groups(struct checker *c)
{
	int i;

	for (i = 0; i < c->ngroups; i++) {
		struct hgroup *g = &c->groups[i];

		if (!g->has_inf || !g->has_count || !g->has_sum)
			return fail(c, "histogram %s lacks +Inf, _count or _sum",
				    c->fams[g->fam].name);
		if (g->inf_count != g->count)
			return fail(c, "histogram %s: +Inf bucket %.0f != _count %.0f",
				    c->fams[g->fam].name, g->inf_count, g->count);
	}
	return 0;
}

/** check_lines() - Walk the text line by line. */
static int check_lines(struct checker *c, const char *text)
{
	char line[4096];
	const char *p = text;

	if (!*text)
		return 0;
	if (text[strlen(text) - 1] != '\n')
		return fail(c, "text does not end with a newline");
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = (size_t)(nl - p);
		int r;

		c->line++;
		if (len >= sizeof(line))
			return fail(c, "line too long");
		memcpy(line, p, len);
		line[len] = '\0';
		if (!len)
			return fail(c, "blank line");
		r = line[0] == '#' ? comment_line(c, line) : sample_line(c, line);
		if (r)
			return r;
		p = nl + 1;
	}
	return check_groups(c);
}

/** prom_check() - See prom_check.h. */
int prom_check(const char *text, char *err, size_t cap)
{
	struct checker c = {.cur = -1, .err = err, .cap = cap};
	int i, r;

	if (err && cap)
		err[0] = '\0';
	r = check_lines(&c, text);
	for (i = 0; i < c.nseries; i++)
		free(c.series[i]);
	free(c.series);
	free(c.fams);
	free(c.groups);
	return r;
}

/** prom_value() - See prom_check.h. */
int prom_value(const char *text, const char *name, const char *labels, double *out)
{
	size_t nl = strlen(name), ll = strlen(labels);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, name, nl) && !strncmp(p + nl, labels, ll) && p[nl + ll] == ' ') {
			*out = strtod(p + nl + ll + 1, NULL);
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}
