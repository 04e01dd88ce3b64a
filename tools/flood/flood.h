/* SPDX-License-Identifier: MIT */
/**
 * @file flood.h
 * homa-flood: 100 B RPCs between real Homa sockets on loopback while a
 * thread floods both sockets with hostile-but-valid packets from many
 * source addresses and ports as fast as one core sends them; the RPCs'
 * latency with and without the flood, side by side in one run
 * (docs/THREATS.md, homa-flood(1)).
 */
#ifndef HOMA_FLOOD_H
#define HOMA_FLOOD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "homa/homa.h"

/** Most source sockets the flood opens. */
#define FLOOD_MAX_PORTS 1024
/** Most server threads. */
#define FLOOD_MAX_THREADS 8

/** Command-line options. */
struct flood_opts {
	double seconds;   /**< length of each arm in each round */
	int rounds;       /**< rounds; each runs both arms, order alternating */
	uint32_t size;    /**< request and response bytes */
	int ports;        /**< flood source sockets (each its own UDP port) */
	int hosts;        /**< flood source addresses 127.0.0.2 .. 127.0.0.(1+hosts) */
	int threads;      /**< server threads */
	uint32_t timeout_ms; /**< settings.timeout_ticks in ms (0: the library default) */
	double rate;      /**< flood packets per second (0: as fast as one core sends) */
	uint32_t rcvbuf;  /**< both sockets' homa_open_opts.rcvbuf_bytes (0: the library's) */
	int32_t stranger_budget; /**< both sockets' homa_open_opts.stranger_budget (0: the library's) */
	int32_t stranger_cpu_us; /**< both sockets' homa_open_opts.stranger_cpu_us (0: the library's) */
	int data_only;    /**< forge only DATA packets, all aimed at the server */
};

/** The flooding thread and its sockets. */
struct flood_attack {
	uint16_t server_port;      /**< targets: the echo server ... */
	uint16_t client_port;      /**< ... and the probing client */
	int nports, nhosts;
	double rate;               /**< packets per second, 0 for no pacing */
	int data_only;             /**< only lying DATA, all to the server */
	int fds[FLOOD_MAX_PORTS];
	pthread_t thread;
	_Atomic int stop;
	_Atomic uint64_t sent;     /**< packets the kernel accepted */
	_Atomic uint64_t refused;  /**< packets the kernel refused (full buffer) */
};

/** One arm's figures, summed over its rounds. */
struct flood_arm {
	uint64_t ok, failed, hung;
	uint64_t timed_out;        /**< of failed: ended with HOMA_ETIMEDOUT */
	uint64_t refused;          /**< sends refused at once (HOMA_EPEERDEAD: the port timed out
	                                lately); no RPC, so not in failed */
	int first_error;           /**< the error that ended the first failed RPC (0: none) */
	double *lat_us;            /**< every completed RPC's latency, µs */
	size_t n, cap;
	double wall_us;            /**< measured time */
	double proc_cpu_us;        /**< getrusage(RUSAGE_SELF): the whole process */
	double flood_cpu_us;       /**< the flooding thread's CPU time */
	double busy_us;            /**< machine busy time (wall x CPUs - idle) */
	uint64_t flood_sent;       /**< forged packets sent */
	uint64_t server_rx;        /**< packets the server's engine took in */
	uint64_t client_rx;        /**< packets the client's engine took in */
	uint64_t kernel_drops;     /**< UDP receive-buffer drops (all sockets) */
	uint64_t drops[HOMA_DROP_REASONS]; /**< packets the server's engine dropped, by reason */
	uint64_t sent[HOMA_PKT_TYPES];     /**< packets both engines sent, by type - HOMA_PKT_FIRST */
	int ncpus;
};

/**
 * flood_attack_start() - Open @a->nports UDP sockets on 127.0.0.2 ..
 * 127.0.0.(1 + @a->nhosts) and start the flooding thread. The caller
 * sets the ports and counts first. Return: 0 or a negative HOMA error
 * (HOMA_EIO: a socket could not be opened or bound).
 */
int flood_attack_start(struct flood_attack *a);

/** flood_attack_stop() - Stop and join the thread, close the sockets. */
void flood_attack_stop(struct flood_attack *a);

/**
 * flood_packet() - Build one forged packet into @buf (at least 1500
 * bytes): a well-formed Homa packet of a random type whose fields lie
 * (message lengths and `incoming` claims, ids no one uses, grant and
 * resend offsets, priorities, acks, cutoffs). @rng is the caller's
 * xorshift state. Sets *@to_server to 1 if it is aimed at the server, 0
 * at the client. Return: the packet's length (> 0).
 */
int flood_packet(uint64_t *rng, const struct flood_attack *a, uint8_t *buf, int *to_server);

/** A server that answers every request with the same number of bytes. */
struct flood_server {
	homa_socket *s;
	int nthreads;
	uint32_t size;
	pthread_t threads[FLOOD_MAX_THREADS];
};

/**
 * flood_open() - A Homa socket on 127.0.0.1, any port, with the default
 * settings but a timeout of @o->timeout_ms (0: the default's) and a
 * kernel receive buffer of @o->rcvbuf bytes (0: the default's).
 * Return: homa_open()'s result.
 */
int flood_open(homa_socket **s, int server, const struct flood_opts *o);

/**
 * flood_server_start() - Open the server (flood_open()) and start
 * @o->threads threads answering @o->size bytes. Return: 0 or an error.
 */
int flood_server_start(struct flood_server *sv, const struct flood_opts *o);

/** flood_server_stop() - Close the server socket and join its threads. */
void flood_server_stop(struct flood_server *sv);

/**
 * flood_probe() - Send @size-byte requests to 127.0.0.1:@port from @c one
 * at a time for @seconds, and add each outcome to @arm (latencies,
 * failures; an RPC with no outcome within @wait_ms, which should exceed
 * the socket's timeout, is aborted and counted hung: the library broke
 * its promise to end every RPC). A send refused at once because the
 * port timed out lately (HOMA_EPEERDEAD, for resend_ticks) starts no RPC:
 * it counts as refused, and the client waits a millisecond before the
 * next one instead of spinning. Return: 0, or HOMA_ENOMEM.
 */
int flood_probe(homa_socket *c, uint16_t port, uint32_t size, double seconds, uint32_t wait_ms,
		struct flood_arm *arm);

/** flood_now_us() - CLOCK_MONOTONIC in µs. */
double flood_now_us(void);

/** flood_udp_rcvbuf_errors() - The kernel's UDP RcvbufErrors (/proc/net/snmp); 0 if unreadable. */
uint64_t flood_udp_rcvbuf_errors(void);

/**
 * flood_report() - Print the two arms side by side, their ratios, and a
 * result line; @o gives the settings. Return: 0 if both arms completed
 * RPCs and none failed or hung, else 1.
 */
int flood_report(const struct flood_opts *o, struct flood_arm *quiet, struct flood_arm *loud);

#endif
