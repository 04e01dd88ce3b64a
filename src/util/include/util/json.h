/* SPDX-License-Identifier: MIT */
/**
 * @file json.h
 * A tiny streaming JSON writer onto a FILE. It inserts commas and keys'
 * colons itself, escapes strings, writes non-finite numbers as null, and
 * remembers the first misuse (a value where a key is needed, unbalanced
 * ends, nesting deeper than HOMA_JSON_DEPTH) so the caller checks once at
 * the end with homa_json_finish().
 */
#ifndef HOMA_UTIL_JSON_H
#define HOMA_UTIL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/** Deepest nesting of objects and arrays. */
#define HOMA_JSON_DEPTH 16

/** Writer state. Does not own @f. */
struct homa_json {
	FILE *f;
	int depth;
	bool in_object[HOMA_JSON_DEPTH]; /**< container at each level is an object */
	bool has_items[HOMA_JSON_DEPTH]; /**< a comma is due before the next item */
	bool want_value;                 /**< a key was written; its value is next */
	bool pretty;                     /**< newline and indent between items */
	int err;                         /**< first error (HOMA_EINVAL) or 0 */
};

/** homa_json_init() - Start writing to @f (compact unless @pretty). */
void homa_json_init(struct homa_json *j, FILE *f, bool pretty);

/** homa_json_object() - Open an object (as a value). */
void homa_json_object(struct homa_json *j);
/** homa_json_array() - Open an array (as a value). */
void homa_json_array(struct homa_json *j);
/** homa_json_end() - Close the innermost object or array. */
void homa_json_end(struct homa_json *j);
/** homa_json_key() - Write a key inside an object; a value must follow. */
void homa_json_key(struct homa_json *j, const char *key);
/** homa_json_str() - Write a string value (escaped). */
void homa_json_str(struct homa_json *j, const char *s);
/** homa_json_num() - Write a number (%.6g; null when not finite). */
void homa_json_num(struct homa_json *j, double v);
/** homa_json_int() - Write an integer value. */
void homa_json_int(struct homa_json *j, int64_t v);
/** homa_json_bool() - Write true or false. */
void homa_json_bool(struct homa_json *j, bool v);
/** homa_json_null() - Write null. */
void homa_json_null(struct homa_json *j);

/** homa_json_kv_num() - Shorthand for homa_json_key() then homa_json_num(). */
void homa_json_kv_num(struct homa_json *j, const char *key, double v);
/** homa_json_kv_str() - Shorthand for homa_json_key() then homa_json_str(). */
void homa_json_kv_str(struct homa_json *j, const char *key, const char *s);

/**
 * homa_json_finish() - End the document (writes a newline).
 * Return: 0 if the document is complete and well formed, HOMA_EINVAL
 * after a misuse or with containers still open, HOMA_EIO if writing failed.
 */
int homa_json_finish(struct homa_json *j);

#endif
