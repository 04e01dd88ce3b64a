/* SPDX-License-Identifier: MIT */
/**
 * @file rt_load.h
 * A closed-loop client for the hardening tests: keeps a window of RPCs
 * outstanding against an rt_server, checks every response byte, and
 * records how each RPC ended.
 */
#ifndef HOMA_HARDENING_RT_LOAD_H
#define HOMA_HARDENING_RT_LOAD_H

#include <stdint.h>

#include "rt_util.h"

/** Latencies kept per run for percentiles. */
#define RT_LAT_SAMPLES 4096

/** Distinct error codes counted per run (homa error codes are -1 .. -RT_ERR_CODES+1). */
#define RT_ERR_CODES 64
/** Failed RPCs recorded one by one per run (the first ones). */
#define RT_FAIL_SAMPLES 16

/** One failed RPC: which error ended it, and when. */
struct rt_failure {
	uint64_t serial;        /**< the RPC's serial (its cookie) */
	int error;              /**< the homa error code that ended it (negative) */
	uint64_t after_ns;      /**< time from its homa_send() to the error */
};

/** Outcome of a run. */
struct rt_result {
	uint64_t sent;
	uint64_t ok;            /**< responses, bit-exact */
	uint64_t failed;        /**< RPCs that ended with an error */
	uint64_t last_error;    /**< the error code of the latest failure (negated) */
	uint64_t corrupt;       /**< responses that were not bit-exact */
	uint64_t twice;         /**< RPCs that ended more than once */
	uint64_t hung;          /**< RPCs with no outcome within the wait bound */
	uint64_t lat_sum_ns, lat_max_ns, lat_n;
	uint64_t lat[RT_LAT_SAMPLES]; /**< the first RT_LAT_SAMPLES latencies, ns (for percentiles) */
	uint64_t errors[RT_ERR_CODES]; /**< failed RPCs by error: errors[-code] (last slot: any other code) */
	struct rt_failure fail[RT_FAIL_SAMPLES]; /**< the first failed RPCs, in order */
};

/**
 * rt_result_print_failures() - Print to stdout, prefixed by @what, how many
 * RPCs of @res each error code ended (with homa_strerror()'s text) and the
 * first failed RPCs with the time each took to fail. Prints nothing if no
 * RPC failed.
 */
void rt_result_print_failures(const char *what, const struct rt_result *res);

/**
 * rt_lat_percentile() - The @pct-th percentile (0..100) of the recorded
 * latencies of @res, in ns (0 if none). Sorts res->lat in place.
 */
uint64_t rt_lat_percentile(struct rt_result *res, double pct);

/**
 * rt_load_run() - Send @n RPCs (serials @first .. @first+@n-1) to
 * 127.0.0.1:@port, @window at a time, from socket @c. Waits at most
 * @wait_ns for each next outcome before counting the rest as hung.
 * @stop_ns: if non-zero, stop sending new RPCs at this rt_now() time.
 */
void rt_load_run(homa_socket *c, int port, uint64_t first, uint64_t n, int window,
		 uint64_t wait_ns, uint64_t stop_ns, struct rt_result *res);

#endif
