/* SPDX-License-Identifier: MIT */
/**
 * @file collective.h
 * The collective scenario: emulated accelerators that alternate a compute
 * phase of C microseconds (nothing is sent) with a communication phase
 * that must complete before the next step, in one of three patterns:
 *   alltoall   every device sends S bytes to every other device;
 *   allreduce  ring all-reduce: 2(N-1) rounds, each device sending one
 *              chunk of S bytes to its ring neighbour, every round waiting
 *              for its slowest chunk;
 *   lookups    every device issues K lookups (100 B requests, answers of
 *              100 B-4 KB) to random other devices and waits for all.
 * A step ends when every device's messages are through (the slowest one
 * decides). Every message is an RPC to the destination device's server,
 * complete when the server has it all and has answered. A device is a
 * process that computes and sends, beside the server that receives for it.
 */
#ifndef HOMA_BENCH_COLLECTIVE_H
#define HOMA_BENCH_COLLECTIVE_H

#include "bench.h"
#include "coll_sync.h"

/** Patterns. */
enum coll_pattern { COLL_ALLTOALL = 0, COLL_ALLREDUCE = 1, COLL_LOOKUPS = 2, COLL_PATTERNS = 3 };

/** Smallest and largest lookup answer (bytes) and the lookup request. */
#define COLL_LOOKUP_MIN 100u
#define COLL_LOOKUP_MAX 4096u
#define COLL_LOOKUP_REQ 100u

/**
 * homa-bench device: the wait at the start for every device to arrive, in
 * step timeouts (the testbed starts its devices one by one, each through
 * ip netns exec, which took over a minute for eight on a loaded machine).
 */
#define COLL_JOIN_TIMEOUTS 10

/** What one device does. */
struct coll_device {
	enum coll_pattern pattern;
	uint32_t rank;          /**< this device: index into the server list */
	uint32_t steps;         /**< steps run (warm-up included) */
	double compute_us;      /**< compute phase of every step */
	uint32_t msg_bytes;     /**< alltoall message, allreduce chunk */
	uint32_t lookups;       /**< lookups per step */
	double step_timeout_s;  /**< longest wait for a step or a barrier */
	/**
	 * Longest wait at the start for every device to arrive (0: step_timeout_s).
	 * Devices started one by one on a loaded machine arrive far apart.
	 */
	double join_timeout_s;
	/**
	 * File whose appearance releases the start (NULL: none): the device
	 * opens its transport, then waits for it within join_timeout_s before
	 * meeting the others, so a run can start its devices first and its
	 * background traffic after them.
	 */
	const char *start_file;
	/**
	 * File that gets one line per message of every step (NULL: none):
	 * "step round dst req_bytes resp_bytes start_us done_us tries", times
	 * from the end of this device's compute phase of that step, then the
	 * socket's protocol counters as a "#" line. Opened (truncated) before
	 * the first step; a file that cannot be opened fails the run with
	 * HOMA_EINVAL before any step.
	 */
	const char *msg_log;
	/**
	 * Background bulk traffic this device sends through its own transport
	 * (coll_bg.h), beside its steps: bg_gbps on average (0: none) of
	 * bg_bytes messages to the server of device bg_peer (not this one),
	 * from the transport's opening to the end of the last step; its
	 * answers count in no step. The transport must take start() from two
	 * threads at once (Homa).
	 */
	double bg_gbps;
	uint32_t bg_peer;
	uint32_t bg_bytes;
	uint64_t seed;
};

/** coll_pattern_name() - "alltoall", "allreduce" or "lookups". */
const char *coll_pattern_name(enum coll_pattern p);

/** coll_pattern_parse() - Pattern of @name. Return: it, or -1 if unknown. */
int coll_pattern_parse(const char *name);

/**
 * coll_device_run() - Run device @d against the servers of @cfg (one per
 * device, @d->rank being this one's) with transport @ops, recording every
 * step on the board @s. Return: 0, a negative HOMA_E* code of the
 * transport, HOMA_ETIMEDOUT or HOMA_ECANCELED (the board failed; this
 * device marks it failed on its own errors too).
 */
int coll_device_run(const struct bench_client_ops *ops, const struct bench_tr_cfg *cfg,
		    const struct coll_device *d, struct coll_sync *s);

/**
 * coll_tr_cfg() - Transport settings of a collective run from @o: the
 * servers @servers ("IP:PORT,...", one per device in rank order), one
 * connection each. Return: 0 or HOMA_EINVAL (message on stderr).
 */
int coll_tr_cfg(const struct bench_opts *o, const char *servers, struct bench_tr_cfg *cfg);

/**
 * coll_board_stats() - Figures of the steps on board @s after @skip
 * warm-up steps. Return: 0, HOMA_EINVAL (no step left), HOMA_ENOMEM.
 */
int coll_board_stats(const struct coll_sync *s, uint32_t skip, struct homa_step_stats *out);

/**
 * coll_board_cpu_us_per_step() - The devices' CPU (getrusage: user plus
 * system of the device processes, servers not included) per step, over
 * every step of the board, warm-up included.
 */
double coll_board_cpu_us_per_step(const struct coll_sync *s);

/**
 * coll_board_host_us_per_step() - Busy time per step of the CPUs device 0
 * may run on (wall time x CPUs minus /proc/stat idle and iowait, every
 * process on them counted), over every step; -1 if unknown.
 */
double coll_board_host_us_per_step(const struct coll_sync *s);

/**
 * bench_device_main() - homa-bench device: one device of a run started
 * apart (the testbed), its board the file o->sync; rank 0 writes the
 * figures (JSON) to o->json once every device is through.
 * Return: 0 or a negative error (message on stderr).
 */
int bench_device_main(const struct bench_opts *o);

/**
 * bench_collective_compare() - compare --scenario collective: every
 * pattern alone and beside background bulk traffic, Homa and TCP, on
 * loopback; the table on @out, the JSON on stdout with --json.
 * Return: 0 or the first error.
 */
int bench_collective_compare(const struct bench_opts *o, uint16_t port, FILE *out);

#endif
