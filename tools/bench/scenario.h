/* SPDX-License-Identifier: MIT */
/**
 * @file scenario.h
 * The compare scenarios (rtt, throughput, rate, mixed): each runs every
 * arm on loopback, one after the other, and keeps the figures per arm.
 */
#ifndef HOMA_BENCH_SCENARIO_H
#define HOMA_BENCH_SCENARIO_H

#include "bench.h"
#include "report.h"

/**
 * Arms, in table order: the Homa API (over o->homa_transport), kernel TCP,
 * the UDP floor (rtt only), and with --homa-transport all the Homa API
 * over the TCP and AUTO transports too (the Homa arm then runs over Homa).
 */
enum { ARM_HOMA = 0, ARM_TCP = 1, ARM_UDP = 2, ARM_API_TCP = 3, ARM_API_AUTO = 4, ARM_COUNT = 5 };

/** bench_arm_name() - "homa", "tcp", "udp", "api-tcp" or "api-auto". */
const char *bench_arm_name(int arm);

/** Figures of one arm in one scenario. */
struct scen_arm {
	int ran;                   /**< 1 if the arm was run */
	int rc;                    /**< 0 or why it failed */
	struct bench_stats st;     /**< main run (lookups for mixed) */
	struct bench_stats extra;  /**< throughput: 4 streams; mixed: bulk */
	struct bench_stats by_size;/**< mixed: lookups and bulk together */
	double gbps, rpcs_per_sec, cpu_us_per_rpc; /**< headline figures */
	/** Headline usage per RPC (-1: unknown): the machine's busy time,
	 *  system calls and context switches (client + server), and the
	 *  library's payload copies per payload byte (both sides). */
	double host_us_per_rpc, syscalls_per_rpc, ctxsw_per_rpc, copies_per_byte;
};

/** One scenario's results. */
struct scen {
	const char *name;
	const char *what;          /**< one-line description */
	char what_buf[160];        /**< storage for a built description */
	const char *extra_key;     /**< JSON key of extra, or NULL */
	struct scen_arm a[ARM_COUNT];
};

/**
 * bench_scenario_run() - Run scenario @name (rtt|throughput|rate|mixed|workload)
 * with ports from @port (2 x ARM_COUNT consecutive). Return: 0 or the first error.
 */
int bench_scenario_run(const struct bench_opts *o, const char *name, uint16_t port,
		       struct scen *s);

#endif
