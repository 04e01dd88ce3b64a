/* SPDX-License-Identifier: MIT */
/**
 * @file settings.h
 * Every tunable of the protocol engine in one struct. Fill it with
 * homa_settings_default(), change what you need, and pass it to
 * homa_open() (opts.settings), homa_set_settings(), homa_engine_new() or
 * homa_engine_set_settings() (the last two apply it at run time).
 * homa_settings_validate() says what is wrong with a struct.
 *
 * Versioned by size: the first field, size, holds sizeof(struct
 * homa_settings) as the program was compiled (homa_settings_default()
 * writes it). New fields are only ever appended, so a newer library
 * accepts the struct of a program built against an older settings.h and
 * gives the fields that program does not know their defaults. A size below
 * HOMA_SETTINGS_SIZE_MIN (the first layout versioned by size) or above the
 * library's own struct (a program newer than the library) is HOMA_EINVAL.
 */
#ifndef HOMA_SETTINGS_H
#define HOMA_SETTINGS_H

#include "homa/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Protocol parameters (GUIDE section 4 names). Times are nanoseconds. */
struct homa_settings {
	uint32_t size;             /**< sizeof(struct homa_settings); homa_settings_default() writes it */
	uint64_t link_mbps;        /**< NIC rate used by the pacer (default 25000) */
	uint32_t mtu;              /**< largest Homa packet incl. the Homa header (default 1500 - 28) */
	uint32_t unsched_bytes;    /**< bytes sent without grants (default 40000); a message
				    *   no longer than this rounded up to whole DATA packets
				    *   goes all unscheduled, with no GRANT for a short tail */
	uint32_t max_incoming;     /**< granted-but-unreceived bytes across messages (400000) */
	uint32_t max_overcommit;   /**< messages granted at once (8) */
	uint32_t grant_fifo_fraction;  /**< per mille of grants to the oldest message (50) */
	uint32_t fifo_grant_increment; /**< bytes per FIFO grant (0 = unsched_bytes, one window,
					*   as the Linux module's equal defaults; was 50000) */
	uint32_t pacer_fifo_fraction;  /**< per mille of pacer output to the oldest message (50) */
	uint32_t max_nic_queue_ns;     /**< NIC backlog limit (5000; never below four full packets of link
					*   time); the pacer refills the backlog when one packet is left */
	uint32_t num_priorities;       /**< levels used, 1..8 (8) */
	/**
	 * Unscheduled priority cutoffs: a message of length L uses the highest
	 * priority p with L <= unsched_cutoffs[p]; unused levels are 0.
	 * Default {0,0,0,0, max, 15000, 2800, 200} for 8 levels: 4 unscheduled,
	 * the 4 lowest for scheduled traffic.
	 */
	uint32_t unsched_cutoffs[8];
	uint32_t num_unsched_priorities; /**< levels reserved for unscheduled data (4) */
	bool dynamic_cutoffs;      /**< recompute cutoffs from observed sizes (true) */
	uint64_t tick_ns;          /**< timer tick (1000000) */
	uint32_t resend_ticks;     /**< silent ticks before the first RESEND (5) */
	uint32_t resend_interval;  /**< ticks between RESENDs (5) */
	uint32_t timeout_ticks;    /**< silent ticks before the RPC is aborted (100) */
	uint32_t request_ack_ticks;/**< ticks before a server sends NEED_ACK (2) */
	uint64_t max_message;      /**< longest message accepted or sent (64 MiB) */
	uint64_t max_rx_buffered;  /**< cap on buffered incoming bytes + RPC state (256 MiB); keep it
				    *   above the largest message you expect to receive plus max_incoming:
				    *   a message that cannot fit never completes */
	uint64_t max_tx_buffered;  /**< cap on queued outgoing message bytes (256 MiB) */
	uint32_t max_rpcs;         /**< cap on live RPCs (client + server) (65536) */
	bool start_msg;            /**< announce scheduled messages with START_MSG (false) */
	uint32_t incast_threshold; /**< outstanding RPCs to one server that trigger incast control (8; 0 = off) */
	uint32_t incast_unsched_bytes; /**< unscheduled bytes a response may use under incast (1400) */
	uint32_t max_control_queue; /**< control packets queued before new ones are dropped (4096) */
	/**
	 * Most slack the pacer adds to the NIC backlog bound when the host
	 * calls it back late: it asks to be called that much earlier and lets
	 * the backlog grow by as much, so a busy host's late wake-ups do not
	 * idle the link (1000000 = 1 ms; 0 = the bound is max_nic_queue_ns only).
	 */
	uint32_t max_pacer_slack_ns;
	/**
	 * Bytes by which a GRANT moves a message's window at least; each
	 * GRANT also reaches that much less one packet past the one-RTT
	 * window, so the bytes in flight never drop below what per-packet
	 * GRANTs keep (0 = a third of unsched_bytes rounded up to whole
	 * packets, at least two; held within one packet .. unsched_bytes
	 * and to max_incoming in whole packets).
	 */
	uint32_t grant_step;
	/**
	 * Round trips (unsched_bytes at link_mbps) of idle receive link
	 * (time not taken by packets received) since a message with granted
	 * bytes in flight last sent DATA or got a GRANT, after which its
	 * sender counts as serving other receivers first: the message then
	 * stops holding a max_overcommit slot and its bytes stop counting
	 * against max_incoming (at most two windows engine-wide, so a
	 * returning sender's burst stays bounded). Default 4; 0 = never.
	 */
	uint32_t grant_silence_rtts;
	/**
	 * Interoperation with hosts running the Linux kernel module
	 * (docs/INTEROP.md). HOMA_COMPAT_AUTO (0, the default) is
	 * HOMA_COMPAT_MODULE on the raw IP driver (the only one a module host
	 * can reach) and HOMA_COMPAT_OFF on UDP; the engine alone treats it as
	 * HOMA_COMPAT_OFF. In HOMA_COMPAT_MODULE our extensions (START_MSG,
	 * the incast bit, messages above HOMA_MODULE_MAX_MESSAGE bytes) are
	 * used only toward peers known to be ours: listed with
	 * homa_engine_set_peer_ours() or seen sending our marker (HOMA_EXT_MARK
	 * in wire.h), which a module host never sends. Sends of more than
	 * HOMA_MODULE_MAX_MESSAGE bytes to any other peer fail with
	 * HOMA_EMSGSIZE.
	 */
	uint32_t compat;
	/**
	 * Restarts of one client RPC (the server answered RPC_UNKNOWN before
	 * any response byte arrived) after which the next RPC_UNKNOWN fails it
	 * with HOMA_EABANDONED (default 3; 0 = never restart): a server at that
	 * port dropped the request every time. No cap while that port answered
	 * a request of this endpoint as a server (a GRANT, a BUSY or response
	 * bytes) within timeout_ticks: it serves and lost the request (e.g.
	 * under a flood), so the RPC restarts until the port stops answering.
	 * Toward an endpoint of ours the cap also waits until the RPC has been
	 * restarting for timeout_ticks (such an endpoint that does not serve
	 * says so, so its plain RPC_UNKNOWN means a lost request). A port that
	 * does not serve is reported at once
	 * (HOMA_ENOSERVER): by ICMP port unreachable (raw driver) or by an
	 * endpoint of ours that does not serve.
	 */
	uint32_t max_restarts;
	/**
	 * Most finished server RPCs remembered for at-most-once (262144,
	 * about 12 MiB at most; memory grows to it only under load). Each is
	 * kept for 5 x timeout_ticks after it finished; when more finish in
	 * that time, the oldest are forgotten and later requests of their
	 * clients fail with HOMA_EABANDONED instead of running twice
	 * (docs/THREATS.md). At least 4096, or 0: remember none, as the
	 * Linux module (used to model a module host: a late duplicate of a
	 * request can then run twice); whether it is 0 is fixed when the
	 * engine is created (homa_engine_set_settings() refuses a change).
	 */
	uint32_t max_done_rpcs;
	/** Explicit padding, always 0; never reused for a field (see below). */
	uint32_t pad0;
	/**
	 * Requests one client host may have partly received at this server
	 * at once (64; 1 .. max_partial_msgs). A packet that would open one
	 * more and does not carry its whole message is dropped
	 * (HOMA_DROP_PEER_LIMIT); the client's RESEND then draws RPC_UNKNOWN
	 * and it sends the request again (docs/THREATS.md).
	 */
	uint32_t max_peer_partial_msgs;
	/**
	 * Requests partly received at this server at once, from all hosts
	 * together (1024; at least 1). Bounds the sorted grant list and the
	 * RPCs a flood of forged requests from many (spoofed) hosts can open:
	 * a packet that would open one more and does not carry its whole
	 * message is dropped (HOMA_DROP_PARTIAL_LIMIT).
	 */
	uint32_t max_partial_msgs;
	/**
	 * Window in bytes of each scheduled message for one tick (tick_ns)
	 * after a message that needs no grant (no longer than unsched_bytes)
	 * started arriving; 0, the default, keeps every window at
	 * unsched_bytes. Held within one packet .. unsched_bytes; GRANTs then
	 * move a window by a third of it in whole packets (at least two, at
	 * most grant_step). For a receiver that is short of CPU rather than of
	 * link (loopback; docs/BENCH.md, "Lookups beside bulk"): long
	 * messages keep less data queued at it while short ones are being
	 * served, so their senders wait for GRANTs and the receiver's CPU goes
	 * to the short messages. On a network it idles the link under long
	 * messages whenever short ones arrive; leave it 0 there.
	 */
	uint32_t grant_short_window;
	/** Explicit padding, always 0; never reused for a field. */
	uint32_t pad1;
	/**
	 * Requests one client host that is still a stranger may have partly
	 * received at this server at once (16; 1 .. max_partial_msgs; a value
	 * above max_peer_partial_msgs acts as max_peer_partial_msgs). A host
	 * stops being a stranger once one whole message came from it, or once
	 * this endpoint started an RPC to it; from then on
	 * max_peer_partial_msgs applies. A packet that would open one more and
	 * does not carry its whole message is dropped (HOMA_DROP_PEER_LIMIT),
	 * as for max_peer_partial_msgs. Every request partly received is an
	 * RPC that the timer visits every resend_interval ticks until it
	 * times out, on the thread that also serves the honest peers, so
	 * forged requests from a few addresses cost the honest RPCs' tail
	 * latency in proportion to this (docs/HARDENING.md, homa-flood).
	 */
	uint32_t max_stranger_partial_msgs;
	/** Explicit padding, always 0; never reused for a field. */
	uint32_t pad2;
	/*
	 * New fields go here, after all others, and the struct keeps no tail
	 * padding (settings.c checks), so that a larger size always means
	 * more fields.
	 */
};

/**
 * Smallest size accepted: the struct up to pad0, the first layout
 * versioned by size.
 */
#define HOMA_SETTINGS_SIZE_MIN \
	(offsetof(struct homa_settings, pad0) + sizeof(uint32_t))

/** Values of homa_settings.compat. */
enum homa_compat {
	HOMA_COMPAT_AUTO = 0,   /**< module-compatible on the raw driver, off on UDP */
	HOMA_COMPAT_MODULE = 1, /**< extensions only toward peers known to be ours */
	HOMA_COMPAT_OFF = 2,    /**< every peer is ours (no module host on this network) */
};

/**
 * homa_settings_default() - Fill @s with the defaults documented per field.
 * @s: caller-owned struct; every field is written.
 */
HOMA_API void homa_settings_default(struct homa_settings *s);

/**
 * homa_settings_import() - Bring settings filled by a program built
 * against this or an older settings.h into this library's layout.
 * @dst: caller-owned; written only on success: the first @src->size bytes
 *	of @src, the defaults for every field past them, and dst->size =
 *	sizeof(*dst).
 * @src: settings whose size field says how many bytes may be read; no
 *	byte past them is read.
 * Return: 0; HOMA_EINVAL (NULL argument, or @src->size below
 * HOMA_SETTINGS_SIZE_MIN or above sizeof(struct homa_settings)). The
 * values themselves are not checked: see homa_settings_validate().
 */
HOMA_API int homa_settings_import(struct homa_settings *dst, const struct homa_settings *src);

/**
 * homa_settings_validate() - Check a settings struct for nonsense.
 * @s: settings to check.
 * @why: if not NULL, set to a static string naming the bad field.
 * Return: 0 if usable, HOMA_EINVAL otherwise (size out of range, as
 * homa_settings_import(); mtu too small
 * for a DATA header, zero link rate or tick, num_priorities outside 1..8,
 * cutoffs not increasing, max_message above 2^32-1, compat not one of
 * enum homa_compat, max_restarts above 1000, caps smaller than one
 * message's unscheduled bytes, ...).
 */
HOMA_API int homa_settings_validate(const struct homa_settings *s, const char **why);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SETTINGS_H */
