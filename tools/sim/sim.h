/* SPDX-License-Identifier: MIT */
/**
 * @file sim.h
 * homa-sim: the real Homa engine on a simulated leaf-spine datacenter.
 * Shared types of the tool's modules: options (opts.c), the fabric and
 * engine sizing (fabric.c), traffic and the run loop (traffic.c), the
 * ideal SRPT reference (ideal.c), the report (report.c) and the pcap
 * writer (pcapw.c).
 */
#ifndef HOMA_TOOLS_SIM_H
#define HOMA_TOOLS_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "homa/engine.h"
#include "sim/engine_host.h"
#include "sim/leafspine.h"
#include "sim/net.h"
#include "util/latency.h"
#include "util/poisson.h"
#include "util/rng.h"
#include "util/workload.h"

/** Homa port of every simulated endpoint. */
#define SIM_PORT 4000

/**
 * Default max_overcommit of the simulated engines (the Linux module's and
 * homa_settings_default()'s is 8): with 8, W4 at 89% load on the 144-host
 * fabric delivers 0.992 of the ideal SRPT reference over 3 s (0.985 of the
 * generated load); with 16, 1.000 (0.9935) (docs/SIMULATION.md, "Highest
 * sustainable load").
 * max_incoming follows it (max_overcommit x unsched_bytes).
 */
#define SIM_OVERCOMMIT 16

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#endif

/**
 * Free engine objects (RPCs, event nodes, message records) the network
 * keeps for reuse instead of returning them to malloc (sim/objcache.h):
 * per-message malloc and free were a tenth of a W1 run's instructions.
 * None under AddressSanitizer, so that it sees every engine free.
 */
#ifdef SIM_ASAN
#define SIM_ENGINE_CACHE_BYTES 0u
#else
#define SIM_ENGINE_CACHE_BYTES (8u << 20)
#endif

/** Traffic patterns. */
enum sim_pattern {
	SIM_POISSON = 0,  /**< open-loop Poisson arrivals, uniform destinations */
	SIM_INCAST = 1,   /**< many senders, one receiver, all at time 0 */
	SIM_ALLTOALL = 2, /**< every host sends one message to every other at time 0 */
	SIM_ALLTOALL_STEP = 3,  /**< steps: compute, then all-to-all (steps.c) */
	SIM_RING_ALLREDUCE = 4, /**< steps: compute, then 2(N-1) ring rounds */
	SIM_LOOKUP_BATCH = 5,   /**< steps: compute, then K lookups per host */
};

/** How a one-way message ends once the server has it. */
enum sim_oneway {
	SIM_ONEWAY_ABORT = 0, /**< both RPC halves are dropped silently (no reply traffic) */
	SIM_ONEWAY_REPLY = 1, /**< the server answers with a 1-byte reply */
};

/** Command-line options. */
struct sim_opts {
	char workload[128];
	double load;             /**< offered load, share of host link capacity */
	int hosts, racks, spines;
	double host_gbps, core_gbps;
	uint64_t switch_delay_ns;
	uint64_t host_delay_ns;  /**< receive-side software time per packet */
	uint64_t queue_bytes;    /**< switch port buffer, 0 = unlimited */
	uint32_t wire_overhead;  /**< framing bytes per packet on the wire */
	uint64_t messages;
	double warmup;           /**< share of messages left out of the statistics */
	uint64_t seed;
	bool start_msg;
	bool json;
	bool no_timing;          /**< leave wall-clock fields out (byte-identical reports) */
	bool ideal;              /**< compute the SRPT reference */
	int pattern;             /**< enum sim_pattern */
	int oneway;              /**< enum sim_oneway */
	uint32_t size;           /**< message size of incast / all-to-all */
	int senders;             /**< incast senders */
	uint32_t max_size;       /**< cap on sampled sizes (0 = none) */
	uint32_t unsched_bytes;  /**< 0 = link rate x RTT */
	uint32_t max_incoming;   /**< 0 = max_overcommit x unsched_bytes */
	uint32_t overcommit;     /**< max_overcommit; SIM_OVERCOMMIT unless set */
	uint64_t max_tx_buffered; /**< cap on a sender's queued message bytes, 0 = engine default (256 MiB) */
	uint32_t unsched_prios;  /**< 0 = engine default */
	uint64_t tick_us;        /**< timer tick in us, 0 = engine default (1000) */
	uint32_t grant_step;     /**< least bytes per GRANT, 0 = engine default (a third of unsched_bytes) */
	uint32_t fifo_increment; /**< bytes per FIFO grant, 0 = engine default (unsched_bytes) */
	uint32_t grant_silence_rtts; /**< 0 = engine default (4) */
	bool no_grant_silence;   /**< grant_silence_rtts 0: silent messages hold the budget */
	double max_time_ms;      /**< cap on simulated time (0 = automatic) */
	const char *pcap;
	uint64_t pcap_count;
	const char *samples;     /**< write per-message "size slowdown ideal" lines here */
	uint32_t steps;          /**< step patterns: steps (10) */
	double compute_us;       /**< step patterns: compute phase per step (100) */
	uint32_t lookups;        /**< lookup-batch: lookups per host and step (16) */
	double bg_load;          /**< step patterns: background bulk load, share of host link (0) */
	uint32_t bg_size;        /**< step patterns: background message size (1000000) */
};

/** One message of the run. */
struct sim_msg {
	uint64_t start_ns;   /**< handed to the sender's engine */
	uint64_t done_ns;    /**< fully received (0: not yet) */
	uint64_t best_ns;    /**< unloaded time for this size and path */
	uint64_t ideal_ns;   /**< completion time under the SRPT reference */
	uint64_t client_id;  /**< the sender's RPC id */
	uint32_t size;
	int32_t src, dst;
	bool background;     /**< background bulk traffic beside a step pattern (background.c) */
};

/** Message tags per block of sim_run.tags. */
#define SIM_TAG_BLOCK 4096u

/** The fabric and its engines. */
struct sim_fabric {
	struct homa_sim_net *net;
	struct homa_sim_leafspine ls;
	struct homa_sim_engine_host **eh; /**< per host */
	struct homa_settings settings;
	uint32_t payload;        /**< DATA payload bytes per full packet */
	uint64_t rtt_ns;         /**< unloaded round trip (full DATA out, GRANT back) */
};

/** Everything one run produces. */
struct sim_run {
	const struct sim_opts *o;
	struct sim_fabric fab;
	struct homa_workload wl;
	struct sim_msg *msgs;    /**< grows (sim_send_msg): hold indexes, not pointers, across sends */
	uint64_t cap;            /**< room in msgs */
	uint64_t nmsgs;          /**< messages issued so far */
	/**
	 * Every message's index, the first 8 bytes engines read in place, in
	 * blocks of SIM_TAG_BLOCK that never move while msgs grows.
	 */
	uint64_t **tags;
	size_t ntag_blocks;
	uint64_t done;           /**< messages completed */
	uint64_t measure_from;   /**< first message in the statistics */
	double rate_per_ns;      /**< all hosts together (Poisson) */
	double mean_wire;        /**< mean wire bytes per message */
	uint64_t next_arrival;
	struct homa_poisson arrivals;
	struct homa_rng rng;
	uint8_t *buf;            /**< zeros: every message's bytes after its tag (engines read them in place) */
	uint64_t win_start, win_end; /**< load window: arrivals of the measured messages */
	uint64_t win_bytes;      /**< DATA wire bytes delivered inside the window */
	double ideal_win_bytes;  /**< the same for the ideal reference (-1: not computed) */
	double ideal_max_sender_bytes; /**< most wire bytes one sender held unsent in the ideal */
	uint64_t send_errors, rpc_errors, replies;
	struct homa_sim_leafspine_queues queues; /**< snapshot at win_end */
	bool queues_taken;
	FILE *pcap;
	uint64_t pcap_left;
	double wall_s;           /**< wall-clock time of the event loop */
	double cpu_s;            /**< CPU time of the event loop (events_per_sec uses it) */
	uint64_t events;
	uint64_t end_ns;
	struct sim_steps *steps; /**< step patterns: the step machine (steps.c), else NULL */
	struct homa_poisson bg_arrivals; /**< background arrivals (background.c) */
	struct homa_rng bg_rng;  /**< background pairs, apart from the patterns' draws */
	uint64_t bg_lead_ns;     /**< background runs this long before the first step */
	uint64_t bg_sent, bg_done; /**< background messages issued and delivered */
};

/** Everything computed from the messages (report.c). */
struct sim_stats {
	struct homa_buckets b;
	struct homa_summary eng[HOMA_BUCKETS_MAX], ideal[HOMA_BUCKETS_MAX];
	struct homa_summary all, all_ideal;
	double short_p99, short_ideal_p99;
	uint64_t measured, incomplete;
	uint64_t step_ns, ideal_step_ns;
};

/* opts.c */
int sim_opts_parse(struct sim_opts *o, int argc, char **argv, FILE *err);
void sim_usage(FILE *f);

/* fabric.c */
int sim_fabric_build(struct sim_fabric *f, const struct sim_opts *o,
		     homa_sim_event_cb cb, void *ctx);
void sim_fabric_free(struct sim_fabric *f);
uint64_t sim_wire_bytes(const struct sim_fabric *f, const struct sim_opts *o, uint32_t size);
uint64_t sim_best_ns(const struct sim_fabric *f, const struct sim_opts *o,
		     uint32_t size, int src, int dst);
uint64_t sim_host_ser_ns(const struct sim_fabric *f, const struct sim_opts *o, uint32_t size);

/* traffic.c */
int sim_run(struct sim_run *r, const struct sim_opts *o);
void sim_run_free(struct sim_run *r);

/* traffic.c, shared with steps.c */
int sim_send_msg(struct sim_run *r, uint32_t size, int src, int dst);

/* background.c: bulk traffic beside the step patterns */
int sim_bg_start(struct sim_run *r);

/* steps.c: the step-synchronous patterns */
bool sim_is_step_pattern(int pattern);
uint64_t sim_step_messages(const struct sim_opts *o);
int sim_steps_start(struct sim_run *r);
void sim_steps_on_done(struct sim_run *r, struct sim_msg *m, uint64_t now);
bool sim_steps_more(const struct sim_run *r);
/* the step boundaries (engine or ideal), @done steps finished; NULL if no step pattern */
const uint64_t *sim_steps_bounds(const struct sim_run *r, bool ideal, uint32_t *done);
int sim_steps_ideal(struct sim_run *r);
int sim_steps_report(const struct sim_run *r, FILE *f);
void sim_steps_free(struct sim_run *r);

/* ideal.c */
int sim_ideal(struct sim_run *r);

/* report.c */
int sim_stats_compute(const struct sim_run *r, struct sim_stats *s);
double sim_achieved_load(const struct sim_run *r);
double sim_generated_load(const struct sim_run *r);
double sim_ideal_load(const struct sim_run *r);
void sim_engine_totals(const struct sim_run *r, struct homa_stats *t);

/* output.c */
int sim_report(const struct sim_run *r, FILE *f);
int sim_write_samples(const struct sim_run *r, const char *path);

/* pcapw.c */
int sim_pcap_open(struct sim_run *r, const char *path);
void sim_pcap_packet(struct sim_run *r, const struct homa_sim_pkt *pkt, uint64_t now);

#endif /* HOMA_TOOLS_SIM_H */
