/* SPDX-License-Identifier: MIT */
/**
 * @file bench.h
 * Shared types of homa-bench: the options of every mode, the client
 * transport interface that the TCP, UDP and Homa arms implement, and the
 * result of one client run.
 */
#ifndef HOMA_BENCH_H
#define HOMA_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "usage.h"
#include "util/latency.h"
#include "util/slowdown.h"
#include "util/workload.h"

/** Most servers a client can target. */
#define BENCH_MAX_SERVERS 64

/** Which stack carries the RPCs. */
enum bench_transport {
	BENCH_TR_HOMA = 0,
	BENCH_TR_TCP = 1,
	BENCH_TR_UDP = 2, /**< plain UDP ping-pong: the floor (datagrams up to 65000 B) */
};

/**
 * Homa engine settings homa-bench passes on to both ends (0, or -1 where
 * noted: the engine's default). One copy travels from the options to the
 * transport configuration and the Homa arm.
 */
struct bench_homa_knobs {
	uint32_t mtu;           /**< packet size incl. header */
	double link_gbps;       /**< pacer rate */
	uint32_t unsched;       /**< unsched_bytes */
	uint32_t incoming;      /**< max_incoming */
	double nicq_us;         /**< max_nic_queue_ns in us */
	double slack_us;        /**< max_pacer_slack_ns in us (-1: engine default) */
	double tick_us;         /**< timer tick in us */
	uint32_t grant_step;    /**< least bytes per GRANT */
	int silence_rtts;       /**< grant_silence_rtts (-1: engine default) */
	uint32_t resend_ticks;  /**< resend_ticks and resend_interval (0: engine default) */
	bool no_offload;        /**< UDP driver without UDP_SEGMENT / UDP_GRO (--homa-offload 0) */
	bool spin;              /**< wait by polling homa_recv() with a zero timeout (--homa-spin 1) */
	uint64_t spin_ns;       /**< with spin: poll at most this long per wait, then sleep (0: no bound) */
	uint32_t rcvbuf;        /**< homa_open_opts.rcvbuf_bytes (0: the library's) */
	int64_t recv_spin_us;   /**< homa_open_opts.spin_us (-1: the library's default) */
	int32_t rx_lend_slots;  /**< homa_open_opts.rx_lend_slots (0: the library's default; -1: copy) */
	uint32_t overcommit;    /**< max_overcommit: messages granted at once (0: engine default) */
	int64_t short_window;   /**< grant_short_window (-1: engine default, off; 0: off) */
	bool copy;              /**< send with the copying calls, not zero copy (--homa-copy 1) */
	bool no_more;           /**< the server replies without HOMA_SEND_MORE (--homa-more 0) */
};

/** Every option of every mode (see bench_usage()). */
struct bench_opts {
	const char *mode;
	enum bench_transport transport;
	uint16_t port;          /**< server: data port (default 4000) */
	bool port_set;          /**< --port was given */
	int ctl_port;           /**< server: control port (-1: data port + 1) */
	const char *bind;       /**< server: local address (default 0.0.0.0) */
	int driver;             /**< enum homa_driver_kind */
	const char *ifname;     /**< --ifname: the XDP driver's interface */
	bool polled;            /**< Homa sockets in polled mode (default; --threaded clears) */
	int homa_transport;     /**< --homa-transport: enum homa_transport of the Homa arm */
	bool homa_transport_all; /**< --homa-transport all (compare): the API over each transport */
	struct bench_homa_knobs homa; /**< --homa-* settings */
	int threads;            /**< server threads (default 1) */
	const char *servers;    /**< client: IP:PORT[,IP:PORT...] */
	const char *workload;   /**< request sizes (default "100") */
	uint32_t response;      /**< response size (default 100) */
	double rate;            /**< open loop: RPCs per second (0: unset) */
	double load_gbps;       /**< open loop: offered load (0: unset) */
	double link_gbps;       /**< link rate, to report load as a share */
	int outstanding;        /**< closed loop: RPCs in flight (0: unset) */
	int max_outstanding;    /**< open loop: cap on RPCs in flight */
	int conns;              /**< TCP: connections per server (default 1) */
	double duration;        /**< seconds of measurement (default 5) */
	double warmup;          /**< seconds before measuring (-1: automatic) */
	uint64_t seed;
	const char *json;       /**< client/calibrate: JSON output file ("-" = stdout) */
	bool json_stdout;       /**< compare/demo: --json given */
	const char *plot;       /**< PNG file for gnuplot */
	const char *baseline;   /**< calibrate: output; client: input */
	const char *cc;         /**< TCP congestion control (NULL: kernel default) */
	int buckets;            /**< size buckets (default 10) */
	const char *scenario;   /**< compare: rtt|throughput|rate|mixed|all */
	bool quiet;             /**< no progress line */
	int calib_count;        /**< calibrate: RPCs per size (default 200) */
	int rounds;             /**< compare: measurements per arm, arms alternating (1) */
	const char *pcap;       /**< server/client, Homa: capture file (NULL: none) */
	uint16_t metrics_port;  /**< server/client, Homa: /metrics on 127.0.0.1 (0: none) */
	bool encrypt;           /**< --encrypt: Homa with PSP, TCP with TLS 1.3 (tls.h) */
	const char *certs;      /**< --certs DIR; with encrypt, main() sets the folder used */
	uint16_t psp_port;      /**< --psp-port: encrypted Homa via the host's PSP receiver (0: no) */
	/* collective (compare --scenario collective, device mode) */
	const char *pattern;    /**< device: alltoall|allreduce|lookups */
	const char *sync;       /**< device: the shared step board file */
	const char *start_file; /**< device: start once this file exists (NULL: at once) */
	const char *msg_log;    /**< device: one line per message into this file (NULL: none) */
	int rank;               /**< device: this device's index in --servers */
	uint32_t steps;         /**< measured steps (default 100) */
	uint32_t warmup_steps;  /**< steps run before them (default 5) */
	double compute_us;      /**< compute phase per step (default 1000) */
	uint32_t msg_bytes;     /**< all-to-all message, all-reduce chunk (default 64 KiB) */
	uint32_t lookups;       /**< lookups per step (default 16) */
	int devices;            /**< compare: devices (default 4) */
	double background_gbps; /**< compare: background bulk load (default 1; 0: none) */
	double step_timeout_s;  /**< longest wait for any barrier or step (default 30) */
	uint16_t serve_port;    /**< device, Homa: its socket is also the host's server on this port (0: no) */
	int bg_peer;            /**< device, Homa: background to this device's server (-1: none) */
	double bg_gbps;         /**< device: the background's average load */
	uint32_t bg_bytes;      /**< device: the background's message size (default 2 MB) */
};

/** One RPC that finished (successfully or not). */
struct bench_done {
	uint64_t tag;
	int err; /**< 0 or a negative HOMA_E* code */
};

/** Where a client arm connects and how. */
struct bench_tr_cfg {
	struct sockaddr_storage servers[BENCH_MAX_SERVERS];
	socklen_t server_lens[BENCH_MAX_SERVERS];
	size_t nservers;
	int conns;          /**< TCP connections per server */
	const char *cc;     /**< TCP congestion control or NULL */
	int driver;         /**< Homa driver */
	const char *ifname; /**< Homa XDP driver: interface */
	bool polled;        /**< Homa polled mode */
	int homa_transport; /**< Homa arm: enum homa_transport */
	struct bench_homa_knobs homa; /**< Homa engine settings */
	uint32_t max_size;  /**< largest request or response that will be sent */
	const char *pcap;   /**< Homa: capture file of the client socket (NULL: none) */
	uint16_t metrics_port; /**< Homa: /metrics port of the client socket (0: none) */
	const char *certs;  /**< encrypted arms: certificate folder (tls.h); NULL: clear text */
	uint16_t psp_port;  /**< encrypted Homa: the host PSP port sealed packets go to (0: none) */
	/**
	 * Homa: open the client socket as a server socket on this port that
	 * also answers requests (a thread of the client's process, as
	 * `homa-bench server` does), so one engine carries everything the
	 * process's host sends (0: a client socket only).
	 */
	uint16_t serve_port;
};

/**
 * Protocol counters of a client's socket over its whole run (Homa only:
 * the engine's statistics, homa_socket_stats()). They show what the
 * latency figures cannot: retransmission and grant traffic.
 */
struct bench_proto {
	bool valid;                   /**< filled by the arm */
	uint64_t data_sent, data_recv;   /**< DATA packets */
	uint64_t grants_sent, grants_recv;
	uint64_t resends_sent, resends_recv;
	uint64_t busy_sent;
	uint64_t retransmitted_bytes;
	uint64_t rpcs_timed_out;
	uint64_t dropped;             /**< received packets dropped, all reasons */
};

/**
 * A client arm. start() begins an RPC and must not block for long;
 * wait() returns finished RPCs, waiting until @deadline_ns (CLOCK_MONOTONIC;
 * 0: do not wait) for the first one.
 */
struct bench_client_ops {
	const char *name;
	/** open() - Connect; Return: 0 or a negative HOMA_E* code (message on stderr). */
	int (*open)(void **ctx, const struct bench_tr_cfg *cfg);
	/** start() - Send a request of @req bytes asking for @resp bytes back. */
	int (*start)(void *ctx, size_t server, uint32_t req, uint32_t resp, uint64_t tag);
	/** wait() - Up to @max finished RPCs into @out; Return: count or error. */
	int (*wait)(void *ctx, uint64_t deadline_ns, struct bench_done *out, int max);
	/** proto() - Optional: the socket's protocol counters so far into @out. */
	void (*proto)(void *ctx, struct bench_proto *out);
	/** close() - Tear down; unfinished RPCs are dropped. */
	void (*close)(void *ctx);
};

extern const struct bench_client_ops bench_tcp_client;
extern const struct bench_client_ops bench_udp_client;
extern const struct bench_client_ops bench_homa_client;

/** Server loops: serve until bench_stop is set. Return: 0 or an error. */
int bench_tcp_server(const struct bench_opts *o);
int bench_udp_server(const struct bench_opts *o);
int bench_homa_server(const struct bench_opts *o);

struct homa_settings;
/**
 * bench_homa_settings() - Fill @st with the engine's defaults changed by
 * the --homa-* knobs @k (0 or -1 in a knob: keep the default). A RESEND
 * interval longer than the engine's also lengthens the RPC timeout in
 * proportion (see tr_homa.c). Never fails; homa_open() validates.
 */
void bench_homa_settings(const struct bench_homa_knobs *k, struct homa_settings *st);

/** Set by SIGINT/SIGTERM; every loop checks it. */
extern volatile int bench_stop;

/** What a client run measured. */
struct bench_result {
	struct homa_lat lat;     /**< completion time of each RPC started in the window
				      (finished in it or in the drain), keyed by request size */
	uint64_t rpcs;           /**< RPCs completed in the window */
	uint64_t bytes;          /**< request + response payload bytes of those */
	uint64_t errors;         /**< RPCs that failed */
	uint64_t skipped;        /**< open loop: arrivals dropped at max_outstanding */
	uint64_t unfinished;     /**< still in flight when the run ended */
	double secs;             /**< length of the measurement window */
	int64_t client_cpu_us;   /**< this process's CPU in the window */
	int64_t server_cpu_us;   /**< servers' CPU in the window (-1: unknown) */
	uint64_t server_rpcs;    /**< RPCs the servers answered in the window */
	struct bench_usage client_use; /**< this process's usage in the window */
	struct bench_usage server_use; /**< the servers' usage in the window (cpu_us -1: unknown) */
	int64_t host_busy_us;    /**< the machine's busy time in the window: wall x CPUs - idle (-1: unknown) */
	struct bench_proto proto; /**< the client socket's counters, whole run */
};

/** How a client run generates load. */
struct bench_load {
	const struct homa_workload *req; /**< request sizes */
	uint32_t response;               /**< response size */
	double rate;                     /**< > 0: open loop at this rate */
	int outstanding;                 /**< closed loop: RPCs in flight */
	int max_outstanding;             /**< open loop: cap */
	double duration, warmup;         /**< seconds */
	uint64_t seed;
	bool progress;                   /**< progress line on stderr */
	const char *label;               /**< for the progress line */
	const int *ctl_ports;            /**< per server control port, or NULL */
};

/** bench_now_ns() - CLOCK_MONOTONIC in ns. */
static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/**
 * bench_client_run() - Run one client: connect with @ops, generate @load,
 * fill @res (caller frees res->lat). Return: 0 or a negative error.
 */
int bench_client_run(const struct bench_client_ops *ops, const struct bench_tr_cfg *cfg,
		     const struct bench_load *load, struct bench_result *res);

/** bench_ops_for() - Client ops of a transport. */
const struct bench_client_ops *bench_ops_for(enum bench_transport t);

/** bench_transport_name() - "homa", "tcp" or "udp". */
const char *bench_transport_name(enum bench_transport t);

/**
 * bench_parse_servers() - Fill @cfg's server list from "IP:PORT,...".
 * Return: 0 or HOMA_EINVAL (message on stderr).
 */
int bench_parse_servers(const char *list, struct bench_tr_cfg *cfg);

/** bench_payload() - A zero-filled buffer of at least @len bytes (shared, read-only). */
const void *bench_payload(size_t len);

/** bench_install_signals() - SIGINT/SIGTERM set bench_stop; SIGPIPE ignored. */
void bench_install_signals(void);

/**
 * bench_serve() - Server mode: the control thread (unless ctl_port is -1)
 * and the data path of o->transport, until bench_stop. Return: 0 or error.
 */
int bench_serve(const struct bench_opts *o);

/** Largest message homa-bench sends (bytes). */
#define BENCH_MAX_MSG (64u << 20)

/** Smallest message: room for the 8-byte request header the servers read. */
#define BENCH_MIN_MSG 8u

#endif
