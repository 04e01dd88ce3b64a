/* SPDX-License-Identifier: MIT */
/**
 * @file doc_codes.c
 * Reads the doc comments of a public header and checks a table of error
 * cases against them (doc_codes.h).
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "doc_codes.h"

/** add_code() - Add the @len bytes at @code to @f once. */
static void add_code(struct doc_fn *f, const char *code, size_t len)
{
	for (int i = 0; i < f->n; i++)
		if (strlen(f->codes[i]) == len && !strncmp(f->codes[i], code, len))
			return;
	if (f->n < DOC_MAX_CODES && len < sizeof(f->codes[0])) {
		memcpy(f->codes[f->n], code, len);
		f->codes[f->n++][len] = 0;
	}
}

/**
 * code_len() - Length of the error code name at @p ("HOMA_E" and capital
 * letters only: HOMA_EV_REQUEST or HOMA_EXT_MARK are no codes), or 0.
 */
static size_t code_len(const char *p)
{
	size_t n = 6;

	while (p[n] >= 'A' && p[n] <= 'Z')
		n++;
	return p[n] == '_' || n == 6 ? 0 : n;
}

/** parse_comment() - Fill @f from the doc comment [@b, @e). */
static void parse_comment(struct doc_fn *f, const char *b, const char *e)
{
	const char *p = b, *ret = strstr(b, "Return:");
	size_t fl = strlen(f->fn);

	while ((p = strstr(p, "HOMA_E")) && p < e) {
		size_t n = code_len(p);

		if (n)
			add_code(f, p, n);
		p += n ? n : 6;
	}
	if (ret && ret < e && (p = strstr(ret, "as homa_")) && p < e) {
		size_t n = 0;

		p += 3;
		while (p[n] && p[n] != '(' && n < sizeof(f->as) - 1)
			n++;
		memcpy(f->as, p, n);
		f->as[n] = 0;
	}
	for (p = b + 3; p < e && (*p == ' ' || *p == '\n' || *p == '*' || *p == '\t'); p++)
		;
	f->named = p + fl + 4 < e && !strncmp(p, f->fn, fl) && !strncmp(p + fl, "() -", 4);
}

/** add_fn() - Record the function declared at @p (after "HOMA_API "), if it is one. */
static void add_fn(struct doc_set *d, const char *text, const char *p)
{
	const char *open = strchr(p, '('), *name = open;
	const char *end = p, *start;
	struct doc_fn *f;
	size_t n;

	while (name && name > p && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
		name--;
	if (!open || strncmp(name, "homa_", 5) || d->n == DOC_MAX_FNS)
		return;
	while (end > text && strncmp(end, "*/", 2))
		end--;
	start = end;
	while (start > text && strncmp(start, "/**", 3))
		start--;
	f = &d->fns[d->n++];
	memset(f, 0, sizeof(*f));
	n = (size_t)(open - name) < sizeof(f->fn) - 1 ? (size_t)(open - name) : sizeof(f->fn) - 1;
	memcpy(f->fn, name, n);
	parse_comment(f, start, end);
}

/** doc_load() - See doc_codes.h. */
int doc_load(struct doc_set *d, const char *path)
{
	static char text[200000];
	FILE *fp = fopen(path, "r");
	const char *p;
	size_t len;

	d->n = 0;
	if (!fp)
		return -1;
	len = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[len] = 0;
	for (p = text; (p = strstr(p, "\nHOMA_API ")); p++)
		add_fn(d, text, p + 10);
	return d->n;
}

/** doc_find() - See doc_codes.h. */
const struct doc_fn *doc_find(const struct doc_set *d, const char *fn)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->fns[i].fn, fn))
			return &d->fns[i];
	return NULL;
}

/** doc_documents() - See doc_codes.h. */
bool doc_documents(const struct doc_set *d, const char *fn, const char *code)
{
	const struct doc_fn *f = doc_find(d, fn);

	if (!f)
		return false;
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->codes[i], code))
			return true;
	return f->as[0] && strcmp(f->as, fn) && doc_documents(d, f->as, code);
}

/** has_case() - True if a case of @fn returns @code (any case if @code is NULL). */
static bool has_case(const struct doc_case *cases, size_t n, const char *fn, const char *code)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cases[i].fn, fn) && (!code || !strcmp(cases[i].code, code)))
			return true;
	return false;
}

/** elsewhere() - True if @el accounts for @fn's @code (NULL: for the function). */
static bool elsewhere(const struct doc_elsewhere *el, size_t nel, const char *fn,
		      const char *code)
{
	for (size_t i = 0; i < nel; i++)
		if (!strcmp(el[i].fn, fn) &&
		    (!strcmp(el[i].code, "*") || (code && !strcmp(el[i].code, code))))
			return true;
	return false;
}

/** run_cases() - Run every case. Return: failures. */
static int run_cases(const struct doc_set *d, const struct doc_case *cases, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		const struct doc_case *k = &cases[i];
		int got = k->run();

		if (got != k->want) {
			print_error("%s: wanted %s (%d), got %d\n", k->fn, k->code, k->want, got);
			bad++;
		}
		if (strcmp(k->code, "-") && !doc_documents(d, k->fn, k->code)) {
			print_error("%s returns %s but its comment does not say so\n", k->fn, k->code);
			bad++;
		}
		if (!doc_find(d, k->fn)) {
			print_error("%s: a case of a function the header does not declare\n", k->fn);
			bad++;
		}
	}
	return bad;
}

/** doc_check() - See doc_codes.h. */
int doc_check(const struct doc_set *d, const struct doc_case *cases, size_t n,
	      const struct doc_elsewhere *el, size_t nel)
{
	int bad = run_cases(d, cases, n);

	for (int i = 0; i < d->n; i++) {
		const struct doc_fn *f = &d->fns[i];

		if (!f->named) {
			print_error("%s: its comment does not start with \"%s() -\"\n", f->fn, f->fn);
			bad++;
		}
		if (!has_case(cases, n, f->fn, NULL) && !elsewhere(el, nel, f->fn, NULL)) {
			print_error("%s: no case at all\n", f->fn);
			bad++;
		}
		for (int j = 0; j < f->n; j++) {
			if (has_case(cases, n, f->fn, f->codes[j]) ||
			    elsewhere(el, nel, f->fn, f->codes[j]))
				continue;
			print_error("%s documents %s: no case provokes it\n", f->fn, f->codes[j]);
			bad++;
		}
	}
	return bad;
}

/** doc_assert_header() - See doc_codes.h. */
void doc_assert_header(const char *path, int min, const struct doc_case *cases, size_t n,
		       const struct doc_elsewhere *el, size_t nel)
{
	static struct doc_set d;

	assert_true(doc_load(&d, path) >= min);
	assert_int_equal(doc_check(&d, cases, n, el, nel), 0);
}
