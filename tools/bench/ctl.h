/* SPDX-License-Identifier: MIT */
/**
 * @file ctl.h
 * The control exchange between a homa-bench client and its servers: each
 * server listens on a TCP control port (data port + 1 unless
 * --ctl-port says otherwise) and answers the line "stat" with
 * "CPU_US RPCS CTXSW SYSCALLS COPIED": its process CPU time (getrusage),
 * RPCs answered so far, context switches, system calls and the payload
 * bytes the Homa library copied (usage.h; -1 where unknown). A client asks at the start and the end of its measurement window
 * and reports the difference as the servers' CPU.
 */
#ifndef HOMA_BENCH_CTL_H
#define HOMA_BENCH_CTL_H

#include <stdint.h>
#include <sys/socket.h>

#include "bench.h"

/** Write end of a pipe that gets one byte when the server is ready, or -1. */
extern int bench_ready_fd;

/** bench_ctl_count_rpc() - Count one answered RPC (thread-safe). */
void bench_ctl_count_rpc(void);

/**
 * bench_ctl_ready() - The data path listens on @port: tell bench_ready_fd,
 * or stderr ("homa-bench server: ready on port PORT") when there is none.
 */
void bench_ctl_ready(uint16_t port);

/**
 * bench_ctl_start() - Start the control thread for server options @o.
 * Return: 0, HOMA_EADDRINUSE, HOMA_EIO (message on stderr).
 */
int bench_ctl_start(const struct bench_opts *o);

/** bench_ctl_join() - Wait for the control thread after bench_stop is set. */
void bench_ctl_join(void);

/**
 * bench_ctl_query() - Ask the server at @ss (its data address) on
 * control port @port. Return: 0 with @use and @rpcs set, or HOMA_EIO.
 */
int bench_ctl_query(const struct sockaddr_storage *ss, int port, struct bench_usage *use,
		    uint64_t *rpcs);

#endif
