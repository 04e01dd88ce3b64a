/* SPDX-License-Identifier: MIT */
/* Figures from a client run: percentiles, buckets, slowdown, rates, CPU. */
#include "report.h"

#include <math.h>
#include <string.h>

#include "homa/errors.h"
#include "homa/settings.h"
#include "homa/wire.h"

uint32_t bench_short_max(void)
{
	struct homa_settings s;

	homa_settings_default(&s);
	return s.mtu - HOMA_DATA_HDR_LEN;
}

/** proto_merge() - Add @src's counters to @dst's (valid if either is). */
static void proto_merge(struct bench_proto *dst, const struct bench_proto *src)
{
	if (!src->valid)
		return;
	dst->valid = true;
	dst->data_sent += src->data_sent;
	dst->data_recv += src->data_recv;
	dst->grants_sent += src->grants_sent;
	dst->grants_recv += src->grants_recv;
	dst->resends_sent += src->resends_sent;
	dst->resends_recv += src->resends_recv;
	dst->busy_sent += src->busy_sent;
	dst->retransmitted_bytes += src->retransmitted_bytes;
	dst->rpcs_timed_out += src->rpcs_timed_out;
	dst->dropped += src->dropped;
}

int bench_result_merge(struct bench_result *dst, const struct bench_result *src)
{
	if (homa_lat_merge(&dst->lat, &src->lat))
		return HOMA_ENOMEM;
	dst->rpcs += src->rpcs;
	dst->bytes += src->bytes;
	dst->errors += src->errors;
	dst->skipped += src->skipped;
	dst->unfinished += src->unfinished;
	dst->secs += src->secs;
	dst->client_cpu_us += src->client_cpu_us;
	dst->server_rpcs += src->server_rpcs;
	bench_usage_add(&dst->client_use, &src->client_use);
	bench_usage_add(&dst->server_use, &src->server_use);
	dst->host_busy_us = dst->host_busy_us < 0 || src->host_busy_us < 0
			    ? -1 : dst->host_busy_us + src->host_busy_us;
	proto_merge(&dst->proto, &src->proto);
	if (dst->server_cpu_us < 0 || src->server_cpu_us < 0)
		dst->server_cpu_us = -1;
	else
		dst->server_cpu_us += src->server_cpu_us;
	return 0;
}

/** to_us() - Scale a summary in ns to µs. */
static void to_us(struct homa_summary *s)
{
	s->min /= 1000;
	s->mean /= 1000;
	s->p50 /= 1000;
	s->p99 /= 1000;
	s->p999 /= 1000;
	s->max /= 1000;
}

/** fill_buckets() - Per-bucket latency and slowdown. Return: 0 or HOMA_ENOMEM. */
static int fill_buckets(const struct bench_result *res, const struct homa_buckets *bk,
			const struct homa_baseline *bl, struct bench_stats *st)
{
	st->nbuckets = bk->n;
	for (size_t i = 0; i < bk->n; i++) {
		struct bench_bucket *b = &st->b[i];
		struct homa_summary s;
		b->lo = homa_buckets_lower(bk, i);
		b->hi = i + 1 == bk->n ? UINT32_MAX : bk->upper[i];
		if (homa_lat_summary(&res->lat, b->lo, b->hi, &s))
			return HOMA_ENOMEM;
		b->hi = bk->upper[i];
		b->count = s.count;
		b->p50_us = s.p50 / 1000;
		b->p99_us = s.p99 / 1000;
		if (st->have_slow) {
			if (homa_slowdown_summary(&res->lat, bl, b->lo,
						  i + 1 == bk->n ? UINT32_MAX : b->hi, &s))
				return HOMA_ENOMEM;
			b->p50_slow = s.p50;
			b->p99_slow = s.p99;
		}
	}
	return 0;
}

/** per() - @v / @n, or -1 if @v is unknown (negative). */
static double per(int64_t v, double n)
{
	return v < 0 ? -1 : (double)v / n;
}

/** sum_known() - @a + @b, or -1 if either is unknown. */
static double sum_known(double a, double b)
{
	return a < 0 || b < 0 ? -1 : a + b;
}

/**
 * usage_compute() - Per-RPC system calls and context switches (client
 * per RPC completed @n, servers per RPC answered @sn), copies per payload
 * byte on each side, and the machine's busy time per RPC.
 */
static void usage_compute(const struct bench_result *res, double n, double sn,
			  struct bench_stats *st)
{
	const struct bench_usage *c = &res->client_use, *s = &res->server_use;
	double bytes_per_rpc = res->rpcs ? (double)res->bytes / (double)res->rpcs : 0;

	st->host_cpu_us_per_rpc = per(res->host_busy_us, n);
	st->syscalls_per_rpc = sum_known(per(c->syscalls, n), per(s->syscalls, sn));
	st->ctxsw_per_rpc = sum_known(per(c->ctxsw, n), per(s->ctxsw, sn));
	st->client_copies_per_byte = bytes_per_rpc > 0 ? per(c->copied, n * bytes_per_rpc) : -1;
	st->server_copies_per_byte = bytes_per_rpc > 0 ? per(s->copied, sn * bytes_per_rpc) : -1;
}

int bench_stats_compute(const struct bench_result *res, const struct homa_buckets *bk,
			const struct homa_baseline *bl, uint32_t short_max,
			struct bench_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (homa_lat_summary(&res->lat, 0, UINT32_MAX, &st->lat_us))
		return HOMA_ENOMEM;
	to_us(&st->lat_us);
	st->rpcs = res->rpcs;
	st->errors = res->errors;
	st->skipped = res->skipped;
	st->unfinished = res->unfinished;
	st->proto = res->proto;
	if (res->secs > 0) {
		st->gbps = (double)res->bytes * 8 / res->secs / 1e9;
		st->rpcs_per_sec = (double)res->rpcs / res->secs;
	}
	double n = res->rpcs ? (double)res->rpcs : 1;
	st->client_cpu_us_per_rpc = (double)res->client_cpu_us / n;
	/* Per RPC the servers answered: right also when other clients share them. */
	double sn = res->server_rpcs ? (double)res->server_rpcs : n;
	st->server_cpu_us_per_rpc = res->server_cpu_us >= 0 ? (double)res->server_cpu_us / sn : -1;
	st->cpu_us_per_rpc = st->client_cpu_us_per_rpc +
			     (st->server_cpu_us_per_rpc > 0 ? st->server_cpu_us_per_rpc : 0);
	usage_compute(res, n, sn, st);
	st->have_slow = bl && bl->n > 0;
	if (st->have_slow) {
		struct homa_summary s;
		if (homa_slowdown_summary(&res->lat, bl, 0, short_max, &s))
			return HOMA_ENOMEM;
		st->short_count = s.count;
		st->short_p50_slow = s.p50;
		st->short_p99_slow = s.p99;
	}
	return bk ? fill_buckets(res, bk, bl, st) : 0;
}

/** A protocol counter's name (as in the JSON) and value. */
struct proto_field {
	const char *k;
	uint64_t v;
};

#define PROTO_FIELDS 10

/** proto_fields() - @p's counters as named fields into @f (PROTO_FIELDS). */
static void proto_fields(const struct bench_proto *p, struct proto_field *f)
{
	const struct proto_field all[PROTO_FIELDS] = {
		{"data_pkts_sent", p->data_sent}, {"data_pkts_received", p->data_recv},
		{"grants_sent", p->grants_sent}, {"grants_received", p->grants_recv},
		{"resends_sent", p->resends_sent}, {"resends_received", p->resends_recv},
		{"busy_sent", p->busy_sent}, {"retransmitted_bytes", p->retransmitted_bytes},
		{"rpcs_timed_out", p->rpcs_timed_out}, {"packets_dropped", p->dropped},
	};

	memcpy(f, all, sizeof(all));
}

/** proto_json() - The "homa_counters" object of @p (nothing if not valid). */
static void proto_json(struct homa_json *j, const struct bench_proto *p)
{
	struct proto_field f[PROTO_FIELDS];

	if (!p->valid)
		return;
	proto_fields(p, f);
	homa_json_key(j, "homa_counters");
	homa_json_object(j);
	for (size_t i = 0; i < PROTO_FIELDS; i++) {
		homa_json_key(j, f[i].k);
		homa_json_int(j, (int64_t)f[i].v);
	}
	homa_json_end(j);
}

void bench_proto_print(FILE *out, const char *who, const struct bench_proto *p)
{
	struct proto_field f[PROTO_FIELDS];

	if (!p->valid)
		return;
	proto_fields(p, f);
	fprintf(out, "%s: homa counters:", who);
	for (size_t i = 0; i < PROTO_FIELDS; i++)
		fprintf(out, " %s=%llu", f[i].k, (unsigned long long)f[i].v);
	fprintf(out, "\n");
}

void bench_stats_json(struct homa_json *j, const struct bench_stats *st)
{
	double none = st->lat_us.count ? 0 : NAN; /* no samples: null, not 0 */
	homa_json_kv_num(j, "p50_us", st->lat_us.p50 + none);
	homa_json_kv_num(j, "p99_us", st->lat_us.p99 + none);
	homa_json_kv_num(j, "p999_us", st->lat_us.p999 + none);
	homa_json_kv_num(j, "mean_us", st->lat_us.mean + none);
	homa_json_kv_num(j, "gbps", st->gbps);
	homa_json_kv_num(j, "rpcs_per_sec", st->rpcs_per_sec);
	homa_json_kv_num(j, "cpu_us_per_rpc", st->cpu_us_per_rpc);
	homa_json_kv_num(j, "client_cpu_us_per_rpc", st->client_cpu_us_per_rpc);
	homa_json_key(j, "server_cpu_us_per_rpc");
	if (st->server_cpu_us_per_rpc >= 0)
		homa_json_num(j, st->server_cpu_us_per_rpc);
	else
		homa_json_null(j);
	homa_json_kv_num(j, "host_cpu_us_per_rpc", st->host_cpu_us_per_rpc < 0 ? NAN
			 : st->host_cpu_us_per_rpc);
	homa_json_kv_num(j, "syscalls_per_rpc", st->syscalls_per_rpc < 0 ? NAN : st->syscalls_per_rpc);
	homa_json_kv_num(j, "ctxsw_per_rpc", st->ctxsw_per_rpc < 0 ? NAN : st->ctxsw_per_rpc);
	homa_json_kv_num(j, "client_copies_per_byte", st->client_copies_per_byte < 0 ? NAN
			 : st->client_copies_per_byte);
	homa_json_kv_num(j, "server_copies_per_byte", st->server_copies_per_byte < 0 ? NAN
			 : st->server_copies_per_byte);
	homa_json_key(j, "rpcs");
	homa_json_int(j, (int64_t)st->rpcs);
	homa_json_key(j, "errors");
	homa_json_int(j, (int64_t)st->errors);
	homa_json_key(j, "unfinished");
	homa_json_int(j, (int64_t)(st->unfinished + st->skipped));
	if (st->have_slow) {
		homa_json_kv_num(j, "short_p50_slowdown", st->short_count ? st->short_p50_slow : NAN);
		homa_json_kv_num(j, "short_p99_slowdown", st->short_count ? st->short_p99_slow : NAN);
	}
	proto_json(j, &st->proto);
	if (st->nbuckets == 0)
		return;
	homa_json_key(j, "buckets");
	homa_json_array(j);
	for (size_t i = 0; i < st->nbuckets; i++) {
		const struct bench_bucket *b = &st->b[i];
		homa_json_object(j);
		homa_json_key(j, "max_bytes");
		homa_json_int(j, b->hi);
		homa_json_key(j, "count");
		homa_json_int(j, (int64_t)b->count);
		homa_json_kv_num(j, "p50_us", b->count ? b->p50_us : NAN);
		homa_json_kv_num(j, "p99_us", b->count ? b->p99_us : NAN);
		if (st->have_slow) {
			homa_json_kv_num(j, "p50_slowdown", b->count ? b->p50_slow : NAN);
			homa_json_kv_num(j, "p99_slowdown", b->count ? b->p99_slow : NAN);
		}
		homa_json_end(j);
	}
	homa_json_end(j);
}

void bench_stats_print(FILE *f, const char *label, const struct bench_stats *st)
{
	fprintf(f, "%s: %llu RPCs (%llu failed, %llu unfinished), %.0f RPC/s, %.3f Gbps\n", label,
		(unsigned long long)st->rpcs, (unsigned long long)st->errors,
		(unsigned long long)(st->unfinished + st->skipped), st->rpcs_per_sec, st->gbps);
	fprintf(f, "  latency us: P50 %.1f  P99 %.1f  P99.9 %.1f  (min %.1f, mean %.1f, max %.1f)\n",
		st->lat_us.p50, st->lat_us.p99, st->lat_us.p999, st->lat_us.min, st->lat_us.mean,
		st->lat_us.max);
	if (st->server_cpu_us_per_rpc >= 0)
		fprintf(f, "  CPU us per RPC: client %.2f + server %.2f = %.2f\n",
			st->client_cpu_us_per_rpc, st->server_cpu_us_per_rpc, st->cpu_us_per_rpc);
	else
		fprintf(f, "  CPU us per RPC: client %.2f (server unknown)\n",
			st->client_cpu_us_per_rpc);
	if (st->host_cpu_us_per_rpc >= 0)
		fprintf(f, "  machine busy us per RPC: %.2f\n", st->host_cpu_us_per_rpc);
	if (st->syscalls_per_rpc >= 0 || st->ctxsw_per_rpc >= 0)
		fprintf(f, "  per RPC: %.2f system calls, %.2f context switches (client + server)\n",
			st->syscalls_per_rpc, st->ctxsw_per_rpc);
	if (st->client_copies_per_byte >= 0)
		fprintf(f, "  library payload copies per byte: client %.2f, server %.2f\n",
			st->client_copies_per_byte, st->server_copies_per_byte);
	if (st->have_slow && st->short_count)
		fprintf(f, "  one-packet messages: slowdown P50 %.2f  P99 %.2f (%zu RPCs)\n",
			st->short_p50_slow, st->short_p99_slow, st->short_count);
	if (st->nbuckets == 0)
		return;
	fprintf(f, "  %12s %8s %10s %10s %9s %9s\n", "size <=", "RPCs", "P50 us", "P99 us",
		"P50 slow", "P99 slow");
	for (size_t i = 0; i < st->nbuckets; i++) {
		const struct bench_bucket *b = &st->b[i];
		fprintf(f, "  %12u %8zu %10.1f %10.1f", b->hi, b->count, b->p50_us, b->p99_us);
		if (st->have_slow)
			fprintf(f, " %9.2f %9.2f", b->p50_slow, b->p99_slow);
		fprintf(f, "\n");
	}
}

FILE *bench_json_begin(struct homa_json *j, const char *path, const char *mode,
		       const char *transport)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "homa-bench: cannot write %s\n", path);
		return NULL;
	}
	homa_json_init(j, f, true);
	homa_json_object(j);
	homa_json_kv_str(j, "mode", mode);
	homa_json_kv_str(j, "transport", transport);
	return f;
}

int bench_json_done(struct homa_json *j, FILE *f)
{
	homa_json_end(j);
	int rc = homa_json_finish(j);
	if (f != stdout && fclose(f) != 0)
		rc = HOMA_EIO;
	return rc;
}
