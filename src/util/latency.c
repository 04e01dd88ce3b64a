/* SPDX-License-Identifier: MIT */
/* Latency recorder, exact percentiles and equal-count size buckets. */
#include "util/latency.h"

#include <math.h>
#include <stddef.h>
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

/** swap2() - Exchange *@a and *@b. */
static inline void swap2(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/**
 * split() - Hoare partition of v[lo..hi) (at least 2 values) around the
 * median of its first, middle and last values. Return: j with every value
 * of v[lo..j] <= every value of v[j+1..hi), lo <= j < hi - 1.
 */
static ptrdiff_t split(double *v, ptrdiff_t lo, ptrdiff_t hi)
{
	ptrdiff_t mid = lo + (hi - lo) / 2, i = lo - 1, j = hi;
	double p;

	/* order v[lo], v[mid], v[hi-1]; the median goes first as the pivot */
	if (v[mid] < v[lo])
		swap2(&v[mid], &v[lo]);
	if (v[hi - 1] < v[mid])
		swap2(&v[hi - 1], &v[mid]);
	if (v[mid] < v[lo])
		swap2(&v[mid], &v[lo]);
	swap2(&v[lo], &v[mid]);
	p = v[lo];
	for (;;) {
		do
			i++;
		while (v[i] < p);
		do
			j--;
		while (v[j] > p);
		if (i >= j)
			return j;
		swap2(&v[i], &v[j]);
	}
}

void homa_select_nth(double *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n;

	if (k >= n)
		return;
	while (hi - lo > 1) {
		ptrdiff_t j = split(v, lo, hi);

		if ((ptrdiff_t)k <= j)
			hi = j + 1;
		else
			lo = j + 1;
	}
}

/** rank_index() - 0-based index of nearest-rank percentile @q of @n (> 0) values. */
static size_t rank_index(size_t n, double q)
{
	double r = ceil(q * (double)n - 1e-9);
	size_t i = r < 1 ? 0 : (size_t)r - 1;

	return i < n ? i : n - 1;
}

/**
 * at_rank() - The value of rank index @i of @v[0..n), where every value
 * before @from is at most every value from @from on (@from <= @i): places
 * it at v[i] with the same property at @i.
 */
static double at_rank(double *v, size_t n, size_t from, size_t i)
{
	homa_select_nth(v + from, n - from, i - from);
	return v[i];
}

void homa_summary_of(double *vals, size_t n, struct homa_summary *out)
{
	size_t i50, i99, i999;
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	out->min = out->max = vals[0];
	for (size_t i = 0; i < n; i++) {
		sum += vals[i];
		if (vals[i] < out->min)
			out->min = vals[i];
		if (vals[i] > out->max)
			out->max = vals[i];
	}
	out->count = n;
	out->mean = sum / (double)n;
	i50 = rank_index(n, 0.50);
	i99 = rank_index(n, 0.99);
	i999 = rank_index(n, 0.999);
	out->p50 = at_rank(vals, n, 0, i50);
	out->p99 = at_rank(vals, n, i50, i99);
	out->p999 = at_rank(vals, n, i99, i999);
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
