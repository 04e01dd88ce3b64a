/* SPDX-License-Identifier: MIT */
/**
 * @file report.h
 * Turning a client run into figures: latency percentiles in µs overall
 * and per size bucket, slowdown against a baseline, goodput, RPC rate and
 * CPU per RPC; printing them as text and as JSON.
 */
#ifndef HOMA_BENCH_REPORT_H
#define HOMA_BENCH_REPORT_H

#include <stdio.h>

#include "bench.h"
#include "util/json.h"

/** Figures of one size bucket. */
struct bench_bucket {
	uint32_t lo, hi;
	size_t count;
	double p50_us, p99_us;
	double p50_slow, p99_slow; /**< 0 without a baseline */
};

/** Figures of one arm. */
struct bench_stats {
	struct homa_summary lat_us; /**< all RPCs, µs */
	double gbps;                /**< payload bytes both ways, per second */
	double rpcs_per_sec;
	double client_cpu_us_per_rpc;
	double server_cpu_us_per_rpc; /**< servers' CPU / RPCs they answered; < 0: unknown */
	double cpu_us_per_rpc;        /**< client + server (client only if unknown) */
	double host_cpu_us_per_rpc;   /**< the machine's busy time / RPCs (< 0: unknown) */
	double syscalls_per_rpc;      /**< client + server system calls / RPCs (< 0: unknown) */
	double ctxsw_per_rpc;         /**< client + server context switches / RPCs (< 0: unknown) */
	double client_copies_per_byte; /**< library payload copies / payload byte, client (< 0: unknown) */
	double server_copies_per_byte; /**< the same, server */
	uint64_t rpcs, errors, skipped, unfinished;
	int have_slow;
	double short_p50_slow, short_p99_slow; /**< messages that fit one packet */
	size_t short_count;
	size_t nbuckets;
	struct bench_bucket b[HOMA_BUCKETS_MAX];
	struct bench_proto proto;     /**< client socket's protocol counters (valid: Homa) */
};

/**
 * bench_stats_compute() - Figures of @res. @bk (may be NULL: no buckets),
 * @bl (may be NULL or empty: no slowdown), @short_max: largest size that
 * fits one packet. @cpu_rpcs: RPCs to divide CPU time by (0: res->rpcs).
 * Return: 0 or HOMA_ENOMEM.
 */
int bench_stats_compute(const struct bench_result *res, const struct homa_buckets *bk,
			const struct homa_baseline *bl, uint32_t short_max,
			struct bench_stats *st);

/**
 * bench_json_begin() - Open @path ("-": stdout) for a JSON document in @j
 * and start its object with "mode" @mode and "transport" @transport.
 * Return: the stream (hand it to bench_json_done()), or NULL if @path
 * cannot be written (message on stderr).
 */
FILE *bench_json_begin(struct homa_json *j, const char *path, const char *mode,
		       const char *transport);

/**
 * bench_json_done() - End the object begun by bench_json_begin(), flush
 * and close @f (unless stdout). Return: 0 or HOMA_EIO.
 */
int bench_json_done(struct homa_json *j, FILE *f);

/** bench_stats_json() - Write @st's fields into the open JSON object @j. */
void bench_stats_json(struct homa_json *j, const struct bench_stats *st);

/** bench_stats_print() - Human-readable figures of one arm on @f. */
void bench_stats_print(FILE *f, const char *label, const struct bench_stats *st);

/**
 * bench_result_merge() - Pool @src into @dst: samples appended, counters,
 * window lengths and CPU times added (server CPU stays unknown if either
 * is unknown). @src keeps its samples. Return: 0 or HOMA_ENOMEM.
 */
int bench_result_merge(struct bench_result *dst, const struct bench_result *src);

/**
 * bench_proto_print() - One line "WHO: homa counters: name=value ..." with
 * the JSON's names, on @out; nothing if @p is not valid.
 */
void bench_proto_print(FILE *out, const char *who, const struct bench_proto *p);

/** bench_short_max() - Largest message that fits one Homa packet (default MTU). */
uint32_t bench_short_max(void);

#endif
