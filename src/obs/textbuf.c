/* SPDX-License-Identifier: MIT */
/**
 * @file textbuf.c
 * Bounded text appender (see textbuf.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "textbuf.h"

/** homa_textbuf_init() - See textbuf.h. */
void homa_textbuf_init(struct homa_textbuf *tb, char *buf, size_t cap)
{
	tb->buf = buf;
	tb->cap = buf ? cap : 0;
	tb->len = 0;
	if (tb->cap)
		buf[0] = '\0';
}

/** room() - Bytes still free in the buffer, 0 once it has overflowed. */
static size_t room(const struct homa_textbuf *tb)
{
	return tb->len < tb->cap ? tb->cap - tb->len : 0;
}

/** homa_textbuf_printf() - See textbuf.h. Formatting errors append nothing. */
void homa_textbuf_printf(struct homa_textbuf *tb, const char *fmt, ...)
{
	size_t free_bytes = room(tb);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(free_bytes ? tb->buf + tb->len : NULL, free_bytes, fmt, ap);
	va_end(ap);
	if (n > 0)
		tb->len += (size_t)n;
}

/** homa_textbuf_putn() - Append @n bytes of @s. */
static void homa_textbuf_putn(struct homa_textbuf *tb, const char *s, size_t n)
{
	size_t free_bytes = room(tb);

	if (free_bytes > n) {
		memcpy(tb->buf + tb->len, s, n);
		tb->buf[tb->len + n] = '\0';
	} else if (free_bytes) {
		memcpy(tb->buf + tb->len, s, free_bytes - 1);
		tb->buf[tb->cap - 1] = '\0';
	}
	tb->len += n;
}

/** homa_textbuf_puts() - See textbuf.h. */
void homa_textbuf_puts(struct homa_textbuf *tb, const char *s)
{
	homa_textbuf_putn(tb, s, strlen(s));
}

/** homa_textbuf_escaped() - See textbuf.h. */
void homa_textbuf_escaped(struct homa_textbuf *tb, const char *s, bool quote)
{
	const char *run = s;

	for (; *s; s++) {
		const char *esc = NULL;

		if (*s == '\\')
			esc = "\\\\";
		else if (*s == '\n')
			esc = "\\n";
		else if (*s == '"' && quote)
			esc = "\\\"";
		if (!esc)
			continue;
		homa_textbuf_putn(tb, run, (size_t)(s - run));
		homa_textbuf_putn(tb, esc, 2);
		run = s + 1;
	}
	homa_textbuf_putn(tb, run, (size_t)(s - run));
}

/** homa_textbuf_fits() - See textbuf.h. */
bool homa_textbuf_fits(const struct homa_textbuf *tb)
{
	return tb->len < tb->cap;
}
