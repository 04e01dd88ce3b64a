/* SPDX-License-Identifier: MIT */
/* Streaming JSON writer. */
#include "util/json.h"

#include <math.h>
#include <string.h>

#include "homa/errors.h"

void homa_json_init(struct homa_json *j, FILE *f, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
}

/** newline() - In pretty mode, start a new line indented to the depth. */
static void newline(struct homa_json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/**
 * before_value() - Emit the separator a value needs and check that a value
 * is allowed here. Return: true if the value may be written.
 */
static bool before_value(struct homa_json *j)
{
	if (j->err)
		return false;
	if (j->depth == 0) {
		if (j->has_items[0]) {
			j->err = HOMA_EINVAL; /* a second top-level value */
			return false;
		}
		j->has_items[0] = true;
		return true;
	}
	if (j->in_object[j->depth]) {
		if (!j->want_value) {
			j->err = HOMA_EINVAL;
			return false;
		}
		j->want_value = false;
		return true;
	}
	if (j->has_items[j->depth])
		fputc(',', j->f);
	j->has_items[j->depth] = true;
	newline(j);
	return true;
}

/** json_open() - Open a container; @obj selects object or array. */
static void json_open(struct homa_json *j, bool obj)
{
	if (!before_value(j))
		return;
	if (j->depth + 1 >= HOMA_JSON_DEPTH) {
		j->err = HOMA_EINVAL;
		return;
	}
	fputc(obj ? '{' : '[', j->f);
	j->depth++;
	j->in_object[j->depth] = obj;
	j->has_items[j->depth] = false;
}

void homa_json_object(struct homa_json *j)
{
	json_open(j, true);
}

void homa_json_array(struct homa_json *j)
{
	json_open(j, false);
}

void homa_json_end(struct homa_json *j)
{
	if (j->err)
		return;
	if (j->depth == 0 || j->want_value) {
		j->err = HOMA_EINVAL;
		return;
	}
	bool obj = j->in_object[j->depth];
	bool items = j->has_items[j->depth];
	j->depth--;
	if (items)
		newline(j);
	fputc(obj ? '}' : ']', j->f);
}

/** put_string() - Write @s quoted, escaping what JSON requires. */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void homa_json_key(struct homa_json *j, const char *key)
{
	if (j->err)
		return;
	if (j->depth == 0 || !j->in_object[j->depth] || j->want_value || !key) {
		j->err = HOMA_EINVAL;
		return;
	}
	if (j->has_items[j->depth])
		fputc(',', j->f);
	j->has_items[j->depth] = true;
	newline(j);
	put_string(j->f, key);
	fputs(j->pretty ? ": " : ":", j->f);
	j->want_value = true;
}

void homa_json_str(struct homa_json *j, const char *s)
{
	if (before_value(j))
		put_string(j->f, s ? s : "");
}

void homa_json_num(struct homa_json *j, double v)
{
	if (!before_value(j))
		return;
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void homa_json_int(struct homa_json *j, int64_t v)
{
	if (before_value(j))
		fprintf(j->f, "%lld", (long long)v);
}

void homa_json_bool(struct homa_json *j, bool v)
{
	if (before_value(j))
		fputs(v ? "true" : "false", j->f);
}

void homa_json_null(struct homa_json *j)
{
	if (before_value(j))
		fputs("null", j->f);
}

void homa_json_kv_num(struct homa_json *j, const char *key, double v)
{
	homa_json_key(j, key);
	homa_json_num(j, v);
}

void homa_json_kv_str(struct homa_json *j, const char *key, const char *s)
{
	homa_json_key(j, key);
	homa_json_str(j, s);
}

int homa_json_finish(struct homa_json *j)
{
	if (j->err)
		return j->err;
	if (j->depth != 0 || !j->has_items[0])
		return HOMA_EINVAL;
	fputc('\n', j->f);
	return ferror(j->f) ? HOMA_EIO : 0;
}
