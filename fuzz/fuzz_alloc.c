/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_alloc.c
 * See fuzz_alloc.h. Each block carries a 16-byte header holding its size
 * and a magic word, so a free with the wrong size or pointer is caught.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_alloc.h"

#define FZ_MAGIC 0x686f6d61616c6c6fULL /* "homaallo" */
#define FZ_HDR 16

/** fz_fail() - See fuzz_alloc.h. */
void fz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "invariant broken: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

/** should_fail() - Apply the failure plan to one request of @size bytes. */
static int should_fail(struct fz_alloc *a, size_t size)
{
	a->calls++;
	switch (a->mode) {
	case FZ_FAIL_NEXT:
		if (a->arg == 0)
			return 0;
		a->arg--;
		return 1;
	case FZ_FAIL_EVERY:
		return a->arg && a->calls % a->arg == 0;
	case FZ_FAIL_ABOVE:
		return size > a->arg;
	default:
		return 0;
	}
}

/** fz_hook_alloc() - struct homa_alloc.alloc: counted malloc with a header. */
static void *fz_hook_alloc(void *ctx, size_t size)
{
	struct fz_alloc *a = ctx;
	uint8_t *p;
	uint64_t hdr[2];

	if (should_fail(a, size)) {
		a->failed++;
		return NULL;
	}
	p = malloc(size + FZ_HDR);
	if (!p)
		return NULL;
	hdr[0] = FZ_MAGIC;
	hdr[1] = size;
	memcpy(p, hdr, sizeof(hdr));
	a->allocs++;
	a->live_bytes += size;
	if (a->live_bytes > a->peak_bytes)
		a->peak_bytes = a->live_bytes;
	return p + FZ_HDR;
}

/** fz_hook_free() - struct homa_alloc.free: checks the header and the size. */
static void fz_hook_free(void *ctx, void *ptr, size_t size)
{
	struct fz_alloc *a = ctx;
	uint8_t *p;
	uint64_t hdr[2];

	if (!ptr)
		return;
	p = (uint8_t *)ptr - FZ_HDR;
	memcpy(hdr, p, sizeof(hdr));
	if (hdr[0] != FZ_MAGIC)
		fz_fail("free of a block the hooks did not allocate");
	if (hdr[1] != size)
		fz_fail("free of a %llu-byte block claims %zu bytes",
			(unsigned long long)hdr[1], size);
	hdr[0] = 0;
	memcpy(p, hdr, sizeof(hdr));
	a->frees++;
	a->live_bytes -= size;
	free(p);
}

/** fz_alloc_init() - See fuzz_alloc.h. */
void fz_alloc_init(struct fz_alloc *a, struct homa_alloc *hooks)
{
	memset(a, 0, sizeof(*a));
	hooks->alloc = fz_hook_alloc;
	hooks->free = fz_hook_free;
	hooks->ctx = a;
}

/** fz_alloc_fail() - See fuzz_alloc.h. */
void fz_alloc_fail(struct fz_alloc *a, int mode, uint64_t arg)
{
	a->mode = mode;
	a->arg = arg;
}

/** fz_alloc_check_clean() - See fuzz_alloc.h. */
void fz_alloc_check_clean(const struct fz_alloc *a, const char *who)
{
	if (a->allocs != a->frees || a->live_bytes)
		fz_fail("%s: %llu allocs, %llu frees, %llu bytes still live", who,
			(unsigned long long)a->allocs, (unsigned long long)a->frees,
			(unsigned long long)a->live_bytes);
}
