/* SPDX-License-Identifier: MIT */
/* Unloaded baselines and slowdown statistics. */
#include "util/slowdown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa/errors.h"

void homa_baseline_init(struct homa_baseline *b)
{
	memset(b, 0, sizeof(*b));
}

void homa_baseline_free(struct homa_baseline *b)
{
	free(b->size);
	free(b->best_ns);
	homa_baseline_init(b);
}

/** find_ge() - First index with size[i] >= @size (n if none). */
static size_t find_ge(const struct homa_baseline *b, uint32_t size)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->size[mid] >= size)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/** grow() - Make room for one more point. Return: 0 or HOMA_ENOMEM. */
static int grow(struct homa_baseline *b)
{
	if (b->n < b->cap)
		return 0;
	size_t cap = b->cap ? b->cap * 2 : 16;
	uint32_t *s = realloc(b->size, cap * sizeof(*s));
	if (!s)
		return HOMA_ENOMEM;
	b->size = s;
	double *t = realloc(b->best_ns, cap * sizeof(*t));
	if (!t)
		return HOMA_ENOMEM;
	b->best_ns = t;
	b->cap = cap;
	return 0;
}

int homa_baseline_add(struct homa_baseline *b, uint32_t size, double ns)
{
	if (!(ns > 0))
		return HOMA_EINVAL;
	size_t i = find_ge(b, size);
	if (i < b->n && b->size[i] == size) {
		if (ns < b->best_ns[i])
			b->best_ns[i] = ns;
		return 0;
	}
	if (grow(b))
		return HOMA_ENOMEM;
	memmove(b->size + i + 1, b->size + i, (b->n - i) * sizeof(*b->size));
	memmove(b->best_ns + i + 1, b->best_ns + i, (b->n - i) * sizeof(*b->best_ns));
	b->size[i] = size;
	b->best_ns[i] = ns;
	b->n++;
	return 0;
}

/** line_at() - Value at @size on the line through points @i and @j. */
static double line_at(const struct homa_baseline *b, size_t i, size_t j, uint32_t size)
{
	double x0 = b->size[i], x1 = b->size[j];
	double y0 = b->best_ns[i], y1 = b->best_ns[j];

	return y0 + (y1 - y0) * ((double)size - x0) / (x1 - x0);
}

double homa_baseline_best(const struct homa_baseline *b, uint32_t size)
{
	if (b->n == 0)
		return 0;
	size_t i = find_ge(b, size);
	if (i < b->n && b->size[i] == size)
		return b->best_ns[i];
	if (i == 0 || b->n == 1)
		return b->best_ns[i < b->n ? i : b->n - 1];
	double v = i < b->n ? line_at(b, i - 1, i, size) : line_at(b, b->n - 2, b->n - 1, size);
	/* An extension with a falling slope must not go below the last point. */
	if (i == b->n && v < b->best_ns[b->n - 1])
		v = b->best_ns[b->n - 1];
	return v;
}

double homa_slowdown(const struct homa_baseline *b, uint32_t size, double ns)
{
	double best = homa_baseline_best(b, size);

	return best > 0 ? ns / best : 0;
}

int homa_baseline_save(const struct homa_baseline *b, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return HOMA_EIO;
	fprintf(f, "# homa-bench baseline: size_bytes best_unloaded_ns\n");
	for (size_t i = 0; i < b->n; i++)
		fprintf(f, "%u %.1f\n", b->size[i], b->best_ns[i]);
	return fclose(f) == 0 ? 0 : HOMA_EIO;
}

int homa_baseline_load(struct homa_baseline *b, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int rc = 0;

	if (!f)
		return HOMA_EIO;
	homa_baseline_free(b);
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		unsigned long size;
		double ns;
		char extra;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%lu %lf %c", &size, &ns, &extra) != 2 || size == 0 ||
		    size > 2147483648UL)
			rc = HOMA_EINVAL;
		else
			rc = homa_baseline_add(b, (uint32_t)size, ns);
	}
	fclose(f);
	if (rc == 0 && b->n == 0)
		rc = HOMA_EINVAL;
	if (rc)
		homa_baseline_free(b);
	return rc;
}

int homa_slowdown_summary(const struct homa_lat *l, const struct homa_baseline *b,
			  uint32_t lo, uint32_t hi, struct homa_summary *out)
{
	if (b->n == 0)
		return HOMA_EINVAL;
	double *vals = malloc((l->n ? l->n : 1) * sizeof(*vals));
	size_t k = 0;

	if (!vals)
		return HOMA_ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].size >= lo && l->v[i].size <= hi)
			vals[k++] = homa_slowdown(b, l->v[i].size, (double)l->v[i].ns);
	homa_summary_of(vals, k, out);
	free(vals);
	return 0;
}
