/* SPDX-License-Identifier: MIT */
/* Message-size distributions: loading, sampling, quantiles. */
#include "util/workload.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "homa/errors.h"

#ifndef HOMA_WORKLOAD_DIR
#define HOMA_WORKLOAD_DIR "workloads"
#endif
/* Where an installed homa-bench or homa-sim finds them (share/homa/workloads). */
#ifndef HOMA_WORKLOAD_INSTALL_DIR
#define HOMA_WORKLOAD_INSTALL_DIR HOMA_WORKLOAD_DIR
#endif

/**
 * default_dir() - The folder of the named workloads when the caller gave
 * none: $HOMA_WORKLOAD_DIR, else the source tree's workloads/ if it is
 * there, else the installed copy. Returns a static string.
 */
static const char *default_dir(void)
{
	const char *dir = getenv("HOMA_WORKLOAD_DIR");

	if (dir)
		return dir;
	if (access(HOMA_WORKLOAD_DIR "/w1.txt", R_OK) == 0)
		return HOMA_WORKLOAD_DIR;
	return HOMA_WORKLOAD_INSTALL_DIR;
}

/** One parsed line of a workload file. */
struct wl_entry {
	uint32_t size;
	double weight;
};

/** set_err() - Format a message into @err (if @err is not NULL). */
__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (!err || !cap)
		return;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
}

/** cmp_entry() - qsort order of entries: by size. */
static int cmp_entry(const void *a, const void *b)
{
	const struct wl_entry *x = a, *y = b;

	return (x->size > y->size) - (x->size < y->size);
}

int homa_parse_size(const char *s, uint32_t *out)
{
	char *end;
	double v, mult = 1;

	if (!s || !*s)
		return HOMA_EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return HOMA_EINVAL;
	if (!strcmp(end, "K") || !strcmp(end, "k") || !strcmp(end, "KB"))
		mult = 1000;
	else if (!strcmp(end, "M") || !strcmp(end, "MB"))
		mult = 1000000;
	else if (!strcmp(end, "Ki") || !strcmp(end, "KiB"))
		mult = 1024;
	else if (!strcmp(end, "Mi") || !strcmp(end, "MiB"))
		mult = 1048576;
	else if (*end)
		return HOMA_EINVAL;
	v *= mult;
	if (v < 1 || v > 2147483648.0 || v != (double)(uint32_t)v)
		return HOMA_EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/**
 * build_table() - Turn sorted entries into @w's size/CDF table, merging
 * repeated sizes. Return: 0, HOMA_EINVAL (zero total weight), HOMA_ENOMEM.
 */
static int build_table(struct wl_entry *e, size_t n, struct homa_workload *w)
{
	double total = 0, acc = 0, sum = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		total += e[i].weight;
	if (n == 0 || !(total > 0))
		return HOMA_EINVAL;
	w->sizes = malloc(n * sizeof(*w->sizes));
	w->cdf = malloc(n * sizeof(*w->cdf));
	if (!w->sizes || !w->cdf) {
		homa_workload_free(w);
		return HOMA_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		acc += e[i].weight;
		sum += (double)e[i].size * e[i].weight;
		if (k > 0 && w->sizes[k - 1] == e[i].size) {
			w->cdf[k - 1] = acc / total;
			continue;
		}
		w->sizes[k] = e[i].size;
		w->cdf[k++] = acc / total;
	}
	/* Drop leading zero-weight sizes so quantile(0) is a real size. */
	size_t skip = 0;
	while (skip + 1 < k && w->cdf[skip] <= 0)
		skip++;
	memmove(w->sizes, w->sizes + skip, (k - skip) * sizeof(*w->sizes));
	memmove(w->cdf, w->cdf + skip, (k - skip) * sizeof(*w->cdf));
	k -= skip;
	w->cdf[k - 1] = 1.0;
	w->n = k;
	w->kind = HOMA_WORKLOAD_TABLE;
	w->lo = w->sizes[0];
	w->hi = w->sizes[k - 1];
	w->mean = sum / total;
	return 0;
}

/**
 * parse_line() - Parse one workload line into @e.
 * Return: 1 for an entry, 0 for a blank or comment line, HOMA_EINVAL.
 */
static int parse_line(char *line, struct wl_entry *e)
{
	char *p = line, *end;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
		return 0;
	errno = 0;
	unsigned long long len = strtoull(p, &end, 10);
	if (errno || end == p || len == 0 || len > 2147483648ULL)
		return HOMA_EINVAL;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	e->size = (uint32_t)len;
	e->weight = 1.0;
	if (*p && *p != '\n' && *p != '\r' && *p != '#') {
		e->weight = strtod(p, &end);
		if (end == p || !(e->weight >= 0) || e->weight > 1e300)
			return HOMA_EINVAL;
		for (p = end; *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'; p++)
			;
		if (*p && *p != '#')
			return HOMA_EINVAL;
	}
	return 1;
}

int homa_workload_load_file(const char *path, struct homa_workload *out,
			    char *err, size_t err_cap)
{
	FILE *f = fopen(path, "r");
	struct wl_entry *e = NULL;
	size_t n = 0, cap = 0;
	char line[256];
	long lineno = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!f) {
		set_err(err, err_cap, "cannot open workload file %s: %s", path, strerror(errno));
		return HOMA_EIO;
	}
	while (fgets(line, sizeof(line), f)) {
		struct wl_entry one;
		int r = parse_line(line, &one);

		lineno++;
		if (r < 0) {
			set_err(err, err_cap, "%s: line %ld: expected `length [weight]`", path, lineno);
			rc = HOMA_EINVAL;
			break;
		}
		if (r == 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct wl_entry *ne = realloc(e, ncap * sizeof(*e));
			if (!ne) {
				rc = HOMA_ENOMEM;
				break;
			}
			e = ne;
			cap = ncap;
		}
		e[n++] = one;
	}
	fclose(f);
	if (rc == 0) {
		qsort(e, n, sizeof(*e), cmp_entry);
		rc = build_table(e, n, out);
		if (rc == HOMA_EINVAL)
			set_err(err, err_cap, "%s: no sizes with positive weight", path);
	}
	free(e);
	if (rc == 0) {
		const char *base = strrchr(path, '/');
		snprintf(out->name, sizeof(out->name), "file:%s", base ? base + 1 : path);
	}
	return rc;
}

int homa_workload_fixed(uint32_t size, struct homa_workload *out)
{
	struct wl_entry e = { size, 1.0 };

	memset(out, 0, sizeof(*out));
	if (size == 0)
		return HOMA_EINVAL;
	int rc = build_table(&e, 1, out);
	if (rc == 0)
		snprintf(out->name, sizeof(out->name), "%u", size);
	return rc;
}

int homa_workload_range(uint32_t lo, uint32_t hi, struct homa_workload *out)
{
	memset(out, 0, sizeof(*out));
	if (lo == 0 || lo > hi)
		return HOMA_EINVAL;
	out->kind = HOMA_WORKLOAD_RANGE;
	out->lo = lo;
	out->hi = hi;
	out->mean = ((double)lo + (double)hi) / 2;
	snprintf(out->name, sizeof(out->name), "range:%u-%u", lo, hi);
	return 0;
}

/** parse_range() - Handle "LO-HI" after "range:". */
static int parse_range(const char *s, struct homa_workload *out, char *err, size_t cap)
{
	char buf[64];
	uint32_t lo, hi;
	const char *dash = strchr(s, '-');

	if (!dash || (size_t)(dash - s) >= sizeof(buf)) {
		set_err(err, cap, "bad range '%s': want range:LO-HI", s);
		return HOMA_EINVAL;
	}
	memcpy(buf, s, (size_t)(dash - s));
	buf[dash - s] = 0;
	if (homa_parse_size(buf, &lo) || homa_parse_size(dash + 1, &hi) || lo > hi) {
		set_err(err, cap, "bad range '%s': want range:LO-HI, 0 < LO <= HI", s);
		return HOMA_EINVAL;
	}
	return homa_workload_range(lo, hi, out);
}

int homa_workload_parse(const char *spec, const char *dir,
			struct homa_workload *out, char *err, size_t err_cap)
{
	char path[4096];
	uint32_t size;

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec) {
		set_err(err, err_cap, "empty workload");
		return HOMA_EINVAL;
	}
	if (spec[0] == 'w' && spec[1] >= '1' && spec[1] <= '5' && !spec[2]) {
		if (!dir)
			dir = default_dir();
		snprintf(path, sizeof(path), "%s/%s.txt", dir, spec);
		int rc = homa_workload_load_file(path, out, err, err_cap);
		if (rc == 0)
			snprintf(out->name, sizeof(out->name), "%s", spec);
		return rc;
	}
	if (!strncmp(spec, "file:", 5))
		return homa_workload_load_file(spec + 5, out, err, err_cap);
	if (!strncmp(spec, "range:", 6))
		return parse_range(spec + 6, out, err, err_cap);
	if (homa_parse_size(spec, &size) == 0)
		return homa_workload_fixed(size, out);
	set_err(err, err_cap, "unknown workload '%s': want w1..w5, SIZE, range:LO-HI or file:PATH",
		spec);
	return HOMA_EINVAL;
}

/** table_index() - First index i with cdf[i] >= @u (binary search). */
static size_t table_index(const struct homa_workload *w, double u)
{
	size_t lo = 0, hi = w->n - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->cdf[mid] >= u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

uint32_t homa_workload_sample(const struct homa_workload *w, struct homa_rng *rng)
{
	if (w->kind == HOMA_WORKLOAD_RANGE)
		return w->lo + (uint32_t)homa_rng_below(rng, (uint64_t)w->hi - w->lo + 1);
	/* u in (0, 1]: never picks a size whose cumulative probability is 0. */
	return w->sizes[table_index(w, 1.0 - homa_rng_double(rng))];
}

uint32_t homa_workload_quantile(const struct homa_workload *w, double q)
{
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	if (w->kind == HOMA_WORKLOAD_RANGE) {
		double span = (double)w->hi - w->lo + 1;
		double v = w->lo + q * span - 1;
		if (v < w->lo)
			v = w->lo;
		return (uint32_t)(v + 0.999999);
	}
	return w->sizes[table_index(w, q - 1e-12)];
}

double homa_workload_cdf_at(const struct homa_workload *w, uint32_t size)
{
	if (size < w->lo)
		return 0;
	if (size >= w->hi)
		return 1;
	if (w->kind == HOMA_WORKLOAD_RANGE)
		return ((double)size - w->lo + 1) / ((double)w->hi - w->lo + 1);
	size_t lo = 0, hi = w->n - 1; /* last index with sizes[i] <= size */
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		if (w->sizes[mid] <= size)
			lo = mid;
		else
			hi = mid - 1;
	}
	return w->cdf[lo];
}

void homa_workload_free(struct homa_workload *w)
{
	free(w->sizes);
	free(w->cdf);
	w->sizes = NULL;
	w->cdf = NULL;
	w->n = 0;
}
