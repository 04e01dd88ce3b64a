/* SPDX-License-Identifier: MIT */
/**
 * @file spawn.h
 * Child processes for compare and demo: a server per arm, and client jobs
 * (a load run or a calibration) whose results come back through a pipe.
 * Each process measures its own CPU with getrusage, so the arms never mix.
 */
#ifndef HOMA_BENCH_SPAWN_H
#define HOMA_BENCH_SPAWN_H

#include <sys/types.h>

#include "bench.h"

/** A client job on loopback. */
struct bench_job {
	int calibrate;              /**< 1: calibrate @sizes instead of a load run */
	enum bench_transport t;
	uint16_t port;              /**< server data port (control: port + 1) */
	const char *workload;
	uint32_t response;
	int outstanding, conns;
	double rate;                /**< > 0: open loop at this rate (RPCs/s) */
	double duration, warmup;
	uint64_t seed;
	const uint32_t *sizes;      /**< calibrate: sizes */
	size_t nsizes;
	int calib_count;
	const char *label;
	bool progress;
	const struct bench_opts *o; /**< driver, polled, cc */
};

/** A started child. */
struct bench_child {
	pid_t pid;
	int fd; /**< read end: results (jobs) or readiness (servers) */
	double limit_s;     /**< jobs: seconds to wait for the result before SIGKILL */
	const char *label;  /**< jobs: for messages */
};

/**
 * bench_spawn_server() - Fork a server for transport @t on 127.0.0.1:@port
 * (control port + 1) and wait until it listens.
 * Return: 0 or a negative error (the child is reaped).
 */
int bench_spawn_server(const struct bench_opts *o, enum bench_transport t, uint16_t port,
		       struct bench_child *c);

/** bench_stop_server() - SIGTERM the server and reap it (SIGKILL after 5 s). */
void bench_stop_server(struct bench_child *c);

/** bench_spawn_job() - Fork a client running @j. Return: 0 or HOMA_EIO. */
int bench_spawn_job(const struct bench_job *j, struct bench_child *c);

/**
 * bench_collect_job() - Read a job's result and reap it. For a calibration
 * res->lat holds one (size, best ns) sample per size.
 * A job that does not report within its time limit is killed.
 * Return: the job's status (0 or a negative error), HOMA_EIO if it died
 * or timed out.
 */
int bench_collect_job(struct bench_child *c, struct bench_result *res);

#endif
