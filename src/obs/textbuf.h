/* SPDX-License-Identifier: MIT */
/**
 * @file textbuf.h
 * A bounded text appender over a caller buffer (private to homa_obs). It
 * never allocates; once the buffer is full it keeps counting the bytes
 * that would have been written, so the caller learns the size it needs.
 */
#ifndef HOMA_OBS_TEXTBUF_H
#define HOMA_OBS_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

/** Output buffer state. @len counts every byte appended, written or not. */
struct homa_textbuf {
	char *buf;  /**< caller's buffer, may be NULL when cap is 0 */
	size_t cap; /**< bytes in buf */
	size_t len; /**< bytes appended so far (may exceed cap) */
};

/** homa_textbuf_init() - Start appending to @buf (@cap bytes; NUL-terminates it). */
void homa_textbuf_init(struct homa_textbuf *tb, char *buf, size_t cap);

/** homa_textbuf_printf() - Append formatted text. */
void homa_textbuf_printf(struct homa_textbuf *tb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** homa_textbuf_puts() - Append @s verbatim. */
void homa_textbuf_puts(struct homa_textbuf *tb, const char *s);

/**
 * homa_textbuf_escaped() - Append @s escaped for the exposition format:
 * backslash and newline always, and the double quote when @quote is true
 * (label values).
 */
void homa_textbuf_escaped(struct homa_textbuf *tb, const char *s, bool quote);

/** homa_textbuf_fits() - True if everything appended (and a NUL) fit in the buffer. */
bool homa_textbuf_fits(const struct homa_textbuf *tb);

#endif /* HOMA_OBS_TEXTBUF_H */
