/* SPDX-License-Identifier: MIT */
/**
 * @file obs.h
 * Observability: Prometheus text rendering of struct homa_stats, an
 * optional HTTP listener that serves /metrics, a pcap writer for every
 * Homa packet sent and received, and a rate-limited logger.
 *
 * Library target homa_obs (libc and pthreads only). Nothing here is used
 * by the protocol engine; the runtime and tools call it.
 */
#ifndef HOMA_OBS_H
#define HOMA_OBS_H

#include "homa/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa/engine.h"
#include "homa/errors.h"
#include "homa/pcap_opts.h"
#include "homa/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Metrics: Prometheus text exposition format (version 0.0.4)          */
/* ------------------------------------------------------------------ */

/** Content-Type of the rendered text, for HTTP responses. */
#define HOMA_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/** One endpoint's counters, labelled endpoint="@endpoint". */
struct homa_metrics_source {
	const char *endpoint;         /**< label value (e.g. the port as text); any UTF-8, escaped */
	const struct homa_stats *stats; /**< snapshot (caller owns) */
};

/** Kinds of extra values. */
enum homa_metric_kind {
	HOMA_METRIC_COUNTER = 0, /**< only grows; name gets the suffix _total */
	HOMA_METRIC_GAUGE = 1,   /**< goes up and down */
};

/**
 * An extra named value the runtime adds (buffer-pool use, threads, ...).
 * Entries with the same name form one metric family (one HELP and TYPE,
 * taken from the first entry); they should differ in @endpoint or in the
 * value of their one optional extra label.
 */
struct homa_metric_value {
	const char *name;     /**< without the homa_ prefix: [a-z_][a-z0-9_]*, e.g. "pool_used_bytes" */
	const char *help;     /**< one line of text (escaped on output); NULL = name */
	int kind;             /**< enum homa_metric_kind; must be the same for one name */
	const char *endpoint; /**< endpoint label value, or NULL for none */
	double value;         /**< finite, or NaN / +-Inf (rendered as NaN, +Inf, -Inf) */
	const char *label;    /**< extra label name ([a-z_][a-z0-9_]*, not "endpoint"), or NULL */
	const char *label_value; /**< its value (any UTF-8, escaped); needed when @label is set */
};

/**
 * homa_metrics_render() - Render counters of several endpoints, plus extra
 * values, as Prometheus text. Every metric family is written once, with
 * HELP and TYPE lines, followed by one sample per endpoint. Names are
 * stable and prefixed homa_ (see docs/OBSERVABILITY.md for the list).
 * Needs no allocation: writes into @buf only.
 * @src: @nsrc endpoints (may be 0; then only @extra is rendered).
 * @extra: @nextra extra values (may be NULL when @nextra is 0).
 * @buf: output, NUL-terminated when it fits (caller owns); may be NULL if @cap is 0.
 * @cap: bytes available in @buf.
 * @needed: if not NULL, receives the bytes needed including the NUL, also on HOMA_ENOSPC.
 * Return: bytes written (without the NUL); HOMA_ENOSPC if @cap is too small
 * (then @buf holds a truncated prefix); HOMA_EINVAL for a NULL source or
 * stats, an extra with a bad name or label (or a label without a value),
 * an unknown kind, or one name with two kinds.
 */
HOMA_API int homa_metrics_render(const struct homa_metrics_source *src, size_t nsrc,
			const struct homa_metric_value *extra, size_t nextra,
			char *buf, size_t cap, size_t *needed);

/* ------------------------------------------------------------------ */
/* HTTP listener that serves GET /metrics                              */
/* ------------------------------------------------------------------ */

/**
 * Fills @buf (@cap bytes) with the metrics text. Called on the listener
 * thread, so it must be safe against the application's own threads.
 * Return: bytes written; HOMA_ENOSPC to be called again with a larger
 * buffer (the listener doubles it up to 64 MiB); any other negative error
 * gives a 500 response.
 */
typedef int (*homa_metrics_fill_fn)(void *arg, char *buf, size_t cap);

/** Options of homa_http_start(). Zeroed fields take the defaults. */
struct homa_http_opts {
	const char *bind_addr;  /**< numeric IPv4/IPv6 address; NULL = "127.0.0.1" */
	uint16_t port;          /**< TCP port; 0 = any free port (see homa_http_port()) */
	size_t max_request;     /**< longest request head accepted (default 8192); longer gets 431 */
	int timeout_ms;         /**< idle time before a connection is closed (default 5000) */
	int max_conns;          /**< connections served at once (default 16, at most 64) */
};

typedef struct homa_http homa_http;

/**
 * homa_http_start() - Bind, listen and start the listener thread.
 * GET (or HEAD) /metrics is answered with the text from @fill; other paths
 * get 404, other methods 405, over-long or garbled requests 431 or 400.
 * Every response closes the connection.
 * @opts: options (copied); NULL for defaults.
 * @fill: the callback; @arg is passed to it.
 * @out: receives the listener (caller owns; stop with homa_http_stop()).
 * Return: 0; HOMA_EINVAL (NULL @fill or @out, bad address);
 * HOMA_EADDRINUSE; HOMA_ENOMEM; HOMA_EIO (socket or thread failure).
 */
HOMA_API int homa_http_start(const struct homa_http_opts *opts, homa_metrics_fill_fn fill,
		    void *arg, homa_http **out);

/** homa_http_port() - The TCP port the listener is bound to (0 for NULL). */
HOMA_API uint16_t homa_http_port(const homa_http *h);

/**
 * homa_http_requests() - Number of requests answered so far (any
 * status; 0 for NULL).
 */
HOMA_API uint64_t homa_http_requests(const homa_http *h);

/**
 * homa_http_stop() - Wake the thread, close every connection and the
 * socket, join the thread and free @h. NULL is ignored. After it returns
 * @fill is never called again; @h is freed, so a second call with it is
 * the caller's error.
 */
HOMA_API void homa_http_stop(homa_http *h);

/* ------------------------------------------------------------------ */
/* Exporter: one /metrics listener shared by the endpoints of a process */
/* ------------------------------------------------------------------ */

/** Most extra values one endpoint can add to a scrape. */
#define HOMA_EXPORTER_MAX_EXTRA 96

/**
 * Fills one endpoint's snapshot for a scrape (called on the listener
 * thread, with the exporter's lock held: it must not call
 * homa_exporter_join() or homa_exporter_leave()).
 * @stats: to fill. @extra: room for HOMA_EXPORTER_MAX_EXTRA values (their
 * endpoint label is set by the exporter). @nextra: receives how many.
 * Return: 0, or a negative error to leave this endpoint out of the scrape.
 */
typedef int (*homa_exporter_snapshot_fn)(void *arg, struct homa_stats *stats,
					 struct homa_metric_value *extra, size_t *nextra);

typedef struct homa_exporter_member homa_exporter_member;

/**
 * homa_exporter_join() - Serve endpoint @endpoint's counters on the
 * listener at @opts (address and port; see struct homa_http_opts). The
 * first endpoint on an address and port starts the listener; later ones
 * with the same address and non-zero port share it, each labelled with
 * its own endpoint="...". Port 0 always starts a new listener.
 * @out: receives the membership (caller owns; homa_exporter_leave()).
 * Return: 0; HOMA_EINVAL (NULL @fn, @endpoint or @out); HOMA_ENOMEM; or
 * as homa_http_start() (HOMA_EADDRINUSE: the port is held by a listener
 * that is not an exporter of this process).
 */
HOMA_API int homa_exporter_join(const struct homa_http_opts *opts, const char *endpoint,
		       homa_exporter_snapshot_fn fn, void *arg,
		       homa_exporter_member **out);

/** homa_exporter_port() - TCP port of the member's listener (0 for NULL). */
HOMA_API uint16_t homa_exporter_port(const homa_exporter_member *m);

/**
 * homa_exporter_leave() - Stop serving @m (@fn is never called again once
 * this returns); the last member stops the listener. NULL is ignored;
 * @m is freed (a second call with it is the caller's error). Must not be
 * called with a lock that @fn takes.
 */
HOMA_API void homa_exporter_leave(homa_exporter_member *m);

/* ------------------------------------------------------------------ */
/* pcap capture                                                        */
/* ------------------------------------------------------------------ */

/** How the packet travelled; selects the headers written before it. */
enum homa_pcap_transport {
	HOMA_PCAP_UDP = 0, /**< IPv4/IPv6 + UDP (ports = Homa ports) + Homa */
	HOMA_PCAP_RAW = 1, /**< IPv4/IPv6 with protocol 146 + Homa */
};

/** Direction of a captured packet (pcap itself has no field for it). */
enum homa_pcap_dir {
	HOMA_PCAP_TX = 0,
	HOMA_PCAP_RX = 1,
};

/**
 * TOS / traffic-class bit (DSCP's lowest) set in the IP header of a
 * captured packet that travelled encrypted (struct homa_pcap_pkt.encrypted).
 */
#define HOMA_PCAP_TOS_ENCRYPTED 0x04

/** Counts kept by a capture. */
struct homa_pcap_stats {
	uint64_t seen[2];       /**< packets offered, by enum homa_pcap_dir */
	uint64_t written[2];    /**< packets written, by direction */
	uint64_t bytes_written; /**< file bytes over all files, headers included */
	uint64_t truncated;     /**< packets cut to snaplen */
	uint64_t rotations;
	uint64_t errors;        /**< write failures (capture then stops) */
};

typedef struct homa_pcap homa_pcap;

/**
 * homa_pcap_open() - Create (truncate) @path and write a pcap header
 * (nanosecond timestamps, linktype RAW = 101: every record starts with an
 * IPv4 or IPv6 header).
 * @out: receives the writer (caller owns; homa_pcap_close()).
 * Return: 0; HOMA_EINVAL (NULL argument, empty path, snaplen below 128);
 * HOMA_ENOMEM; HOMA_EIO (the file cannot be created).
 */
HOMA_API int homa_pcap_open(const char *path, const struct homa_pcap_opts *opts, homa_pcap **out);

/** One packet for homa_pcap_write(). */
struct homa_pcap_pkt {
	const uint8_t *data;  /**< the Homa packet (header and payload) */
	size_t len;
	homa_addr src;        /**< IPv4-mapped or IPv6; both must be the same family */
	homa_addr dst;
	uint8_t priority;     /**< 0..7, written as DSCP: TOS/traffic class = priority << 5 */
	uint8_t dir;          /**< enum homa_pcap_dir */
	uint8_t transport;    /**< enum homa_pcap_transport */
	/**
	 * Nonzero: the packet travelled encrypted (PSP) and @data is its clear
	 * text; written as the lowest DSCP bit (TOS/traffic class bit 0x04).
	 */
	uint8_t encrypted;
	uint64_t ts_ns;       /**< wall-clock ns since the Unix epoch; 0 = now */
};

/**
 * homa_pcap_write() - Record one packet (thread-safe). Builds the IP (and
 * for UDP the UDP) header, with valid checksums, from @p; honours
 * sampling, snaplen and rotation. UDP ports are the Homa ports in the
 * first four bytes of the packet.
 * Return: 1 if written, 0 if skipped by sampling; HOMA_EINVAL (NULL,
 * priority >= 8, unknown transport or direction, fewer than 4 bytes for
 * UDP, mixed address families; too long for one IP packet, checked
 * only for packets that sampling keeps); HOMA_EIO
 * (the file could not be written or rotated; later calls return it too).
 */
HOMA_API int homa_pcap_write(homa_pcap *pc, const struct homa_pcap_pkt *p);

/**
 * homa_pcap_flush() - Push buffered records to the file.
 * Return: 0, HOMA_EIO (the file could not be written), or HOMA_EINVAL
 * (NULL @pc).
 */
HOMA_API int homa_pcap_flush(homa_pcap *pc);

/**
 * homa_pcap_get_stats() - Copy the counts (thread-safe; all zero for a
 * NULL @pc; a NULL @out is ignored).
 */
HOMA_API void homa_pcap_get_stats(homa_pcap *pc, struct homa_pcap_stats *out);

/**
 * homa_pcap_close() - Flush, close the file and free @pc. NULL is ignored.
 * Return: 0, or HOMA_EIO if the final flush (or an earlier write)
 * failed; @pc is freed either way (a second call with it is the
 * caller's error).
 */
HOMA_API int homa_pcap_close(homa_pcap *pc);

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

/** Log levels, most severe first. */
enum homa_log_level {
	HOMA_LOG_ERROR = 0,
	HOMA_LOG_WARN = 1,
	HOMA_LOG_INFO = 2,
	HOMA_LOG_DEBUG = 3,
};

/** Receives each formatted message (no trailing newline). */
typedef void (*homa_log_fn)(void *arg, int level, const char *file, int line,
			    const char *msg);

/**
 * State of one logging call site: a token bucket and the number of
 * messages it suppressed. Declared static by HOMA_LOG(); zero-initialized.
 */
struct homa_log_site {
	double tokens;
	uint64_t last_ns;
	uint64_t suppressed;
	const char *file;
	int line;
	int level;
	bool registered;
	struct homa_log_site *next;
};

/**
 * homa_log_set_level() - Emit messages at @level and more severe ones
 * (default HOMA_LOG_WARN). Return: 0 or HOMA_EINVAL.
 */
HOMA_API int homa_log_set_level(int level);

/** homa_log_get_level() - The current level (HOMA_LOG_WARN until set). */
HOMA_API int homa_log_get_level(void);

/**
 * homa_log_set_sink() - Send messages to @fn (with @arg) instead of
 * stderr; NULL restores stderr.
 */
HOMA_API void homa_log_set_sink(homa_log_fn fn, void *arg);

/**
 * homa_log_set_rate() - Per call site token bucket: at most @burst
 * messages at once, refilled at @per_sec messages a second (defaults 10
 * and 1). @burst 0 disables rate limiting. Return: 0 or HOMA_EINVAL
 * (@per_sec 0 with @burst non-zero).
 */
HOMA_API int homa_log_set_rate(uint32_t burst, uint32_t per_sec);

/**
 * homa_log_set_clock() - Use @now (monotonic ns) instead of
 * CLOCK_MONOTONIC; NULL restores it. For tests.
 */
HOMA_API void homa_log_set_clock(uint64_t (*now)(void));

/** homa_log_enabled() - True if messages at @level are emitted now. */
HOMA_API bool homa_log_enabled(int level);

/**
 * homa_log_emit() - Format and emit one message for call site @site if
 * its bucket has a token; otherwise count it as suppressed. The first
 * message let through after suppression carries "(N similar messages
 * suppressed)". Thread-safe. Messages longer than 480 bytes are cut. A
 * NULL @site or @fmt is ignored.
 */
HOMA_API void homa_log_emit(struct homa_log_site *site, int level, const char *file,
		   int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/**
 * homa_log_admit() - Take a token from call site @site's bucket for a
 * message at @level from @file:@line, or count the message as suppressed.
 * HOMA_LOG() asks this first and only formats (evaluates its arguments
 * and calls homa_log_emit_admitted()) when it returns true, so a
 * suppressed message costs no formatting. Thread-safe.
 * Return: true if the message may be emitted; false for a NULL @site.
 */
HOMA_API bool homa_log_admit(struct homa_log_site *site, int level, const char *file, int line);

/**
 * homa_log_emit_admitted() - Format and emit one message for @site,
 * which homa_log_admit() admitted (takes no token), with "(N similar
 * messages suppressed)" when some were. Thread-safe. A NULL @site or
 * @fmt is ignored.
 */
HOMA_API void homa_log_emit_admitted(struct homa_log_site *site, int level, const char *file,
				     int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/**
 * homa_log_report_suppressed() - For every call site that suppressed
 * messages and whose limit has lifted, emit "N similar messages
 * suppressed" now (the runtime calls this from its timer). Return: the
 * number of reports emitted.
 */
HOMA_API int homa_log_report_suppressed(void);

/**
 * HOMA_LOG() - Log at @level with printf arguments, rate-limited per call
 * site. The arguments are evaluated only when the level is enabled and
 * the site's bucket has a token (a suppressed message is only counted).
 */
#define HOMA_LOG(level, ...)                                                  \
	do {                                                                  \
		static struct homa_log_site homa_log_site_;                   \
		if (homa_log_enabled(level) &&                                \
		    homa_log_admit(&homa_log_site_, level, __FILE__, __LINE__)) \
			homa_log_emit_admitted(&homa_log_site_, level,        \
					       __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define HOMA_LOG_ERROR(...) HOMA_LOG(HOMA_LOG_ERROR, __VA_ARGS__)
#define HOMA_LOG_WARN(...) HOMA_LOG(HOMA_LOG_WARN, __VA_ARGS__)
#define HOMA_LOG_INFO(...) HOMA_LOG(HOMA_LOG_INFO, __VA_ARGS__)
#define HOMA_LOG_DEBUG(...) HOMA_LOG(HOMA_LOG_DEBUG, __VA_ARGS__)

/** homa_log_level_name() - "error", "warn", "info", "debug" or "unknown". */
HOMA_API const char *homa_log_level_name(int level);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_OBS_H */
