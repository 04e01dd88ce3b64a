/* SPDX-License-Identifier: MIT */
/* Latency recorder, exact percentiles and equal-count size buckets. */
#include "util/latency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "homa/errors.h"

void homa_lat_init(struct homa_lat *l)
{
	memset(l, 0, sizeof(*l));
}

/** lat_reserve() - Make room for @extra more samples. Return: 0 or HOMA_ENOMEM. */
static int lat_reserve(struct homa_lat *l, size_t extra)
{
	if (l->n + extra <= l->cap)
		return 0;
	size_t cap = l->cap ? l->cap : 1024;
	while (cap < l->n + extra)
		cap *= 2;
	struct homa_lat_sample *v = realloc(l->v, cap * sizeof(*v));
	if (!v)
		return HOMA_ENOMEM;
	l->v = v;
	l->cap = cap;
	return 0;
}

int homa_lat_add(struct homa_lat *l, uint32_t size, uint64_t ns)
{
	if (lat_reserve(l, 1))
		return HOMA_ENOMEM;
	l->v[l->n].ns = ns;
	l->v[l->n].size = size;
	l->n++;
	return 0;
}

int homa_lat_merge(struct homa_lat *dst, const struct homa_lat *src)
{
	if (src->n == 0)
		return 0;
	if (lat_reserve(dst, src->n))
		return HOMA_ENOMEM;
	memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
	dst->n += src->n;
	return 0;
}

void homa_lat_free(struct homa_lat *l)
{
	free(l->v);
	homa_lat_init(l);
}

/** cmp_double() - qsort order for doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/** rank() - Nearest-rank percentile @q of sorted @v (@n > 0). */
static double rank(const double *v, size_t n, double q)
{
	double r = ceil(q * (double)n - 1e-9);
	size_t i = r < 1 ? 0 : (size_t)r - 1;

	return v[i < n ? i : n - 1];
}

void homa_summary_of(double *vals, size_t n, struct homa_summary *out)
{
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(vals, n, sizeof(*vals), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += vals[i];
	out->count = n;
	out->min = vals[0];
	out->max = vals[n - 1];
	out->mean = sum / (double)n;
	out->p50 = rank(vals, n, 0.50);
	out->p99 = rank(vals, n, 0.99);
	out->p999 = rank(vals, n, 0.999);
}

int homa_lat_summary(const struct homa_lat *l, uint32_t lo, uint32_t hi,
		     struct homa_summary *out)
{
	double *vals = malloc((l->n ? l->n : 1) * sizeof(*vals));
	size_t k = 0;

	if (!vals)
		return HOMA_ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].size >= lo && l->v[i].size <= hi)
			vals[k++] = (double)l->v[i].ns;
	homa_summary_of(vals, k, out);
	free(vals);
	return 0;
}

int homa_buckets_from_workload(const struct homa_workload *w, size_t nb,
			       struct homa_buckets *out)
{
	memset(out, 0, sizeof(*out));
	if (nb < 1 || nb > HOMA_BUCKETS_MAX)
		return HOMA_EINVAL;
	for (size_t i = 1; i <= nb; i++) {
		uint32_t up = homa_workload_quantile(w, (double)i / (double)nb);
		if (out->n > 0 && up <= out->upper[out->n - 1])
			continue;
		out->upper[out->n++] = up;
	}
	if (out->upper[out->n - 1] < w->hi)
		out->upper[out->n - 1] = w->hi;
	return 0;
}

size_t homa_buckets_index(const struct homa_buckets *b, uint32_t size)
{
	size_t lo = 0, hi = b->n ? b->n - 1 : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->upper[mid] >= size)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

uint32_t homa_buckets_lower(const struct homa_buckets *b, size_t i)
{
	return i == 0 ? 1 : b->upper[i - 1] + 1;
}
