/* SPDX-License-Identifier: MIT */
/**
 * @file stats.h
 * Counters and gauges kept by one engine. Read a consistent copy with
 * homa_engine_stats(); counters only grow, gauges (marked) go up and down.
 */
#ifndef HOMA_STATS_H
#define HOMA_STATS_H

#include "homa/export.h"

#include <stdint.h>

#include "homa/pkt_type.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Why an incoming packet was dropped. */
enum homa_drop_reason {
	HOMA_DROP_TRUNCATED = 0,  /**< shorter than its header */
	HOMA_DROP_BAD_TYPE,       /**< unknown packet type */
	HOMA_DROP_BAD_FIELD,      /**< inconsistent lengths or field values */
	HOMA_DROP_BAD_OFFSET,     /**< data or grant offset past the message */
	HOMA_DROP_TOO_LONG,       /**< message_length above settings.max_message */
	HOMA_DROP_LENGTH_CHANGED, /**< message_length differs from earlier packets */
	HOMA_DROP_UNKNOWN_RPC,    /**< no such RPC (and the packet cannot create one) */
	HOMA_DROP_WRONG_PORT,     /**< destination port is not this endpoint's */
	HOMA_DROP_NOT_SERVER,     /**< a request arrived but the endpoint does not serve */
	HOMA_DROP_MEMORY,         /**< a memory or RPC cap was reached */
	HOMA_DROP_VERIFY,         /**< the packet verifier (encryption seam) rejected it */
	HOMA_DROP_COMPLETED,      /**< a late request packet for an RPC already executed and acked */
	HOMA_DROP_PEER_LIMIT,     /**< a new request from a host with settings.max_peer_partial_msgs partly received (docs/THREATS.md) */
	HOMA_DROP_PARTIAL_LIMIT,  /**< a new request while settings.max_partial_msgs are partly received from all hosts */
	HOMA_DROP_REASONS
};

/** Log2 histogram buckets: bucket i counts values in [2^i, 2^(i+1)). */
#define HOMA_HIST_BUCKETS 40

/** Snapshot of an engine's counters and gauges. */
struct homa_stats {
	uint64_t pkts_sent[HOMA_PKT_TYPES];   /**< by type - HOMA_PKT_FIRST */
	uint64_t bytes_sent[HOMA_PKT_TYPES];
	uint64_t pkts_recv[HOMA_PKT_TYPES];
	uint64_t bytes_recv[HOMA_PKT_TYPES];
	uint64_t pkts_sent_prio[8];           /**< all packets by priority */
	uint64_t drops[HOMA_DROP_REASONS];
	uint64_t client_rpcs_started;
	uint64_t client_rpcs_completed;
	uint64_t server_requests_received;    /**< requests handed to the application */
	uint64_t server_replies_sent;
	uint64_t rpcs_aborted;                /**< by the application */
	uint64_t rpcs_timed_out;
	uint64_t rpc_restarts;                /**< client restarts after RPC_UNKNOWN */
	uint64_t requests_resent;             /**< short requests sent again after an unanswered RESEND */
	uint64_t resends_sent;
	uint64_t resends_received;
	uint64_t retransmitted_bytes;
	uint64_t duplicate_bytes;             /**< received data we already had */
	uint64_t busy_sent;
	uint64_t grants_sent;
	uint64_t fifo_grants_sent;
	uint64_t grants_merged;               /**< GRANTs folded into one still queued for the same RPC */
	uint64_t start_msgs_resent;
	uint64_t acks_received;               /**< server RPCs freed by an ack */
	uint64_t peers_declared_dead;
	uint64_t sends_refused;               /**< sends that returned HOMA_EAGAIN */
	uint64_t pacer_throttled_ns;          /**< time output was held back by the NIC model */
	uint64_t unknown_replies_suppressed;  /**< RPC_UNKNOWN not sent: rate limit */
	uint64_t unreachable_received;        /**< ICMP unreachable reports that named an RPC of ours (homa_engine_unreachable()) */
	uint64_t msgs_evicted;                /**< incomplete requests freed to make rx room (all causes) */
	uint64_t stale_evicted;               /**< of which: silent after their unscheduled bytes, under memory pressure */
	uint64_t evicted_bytes;               /**< message bytes those requests had received */
	uint64_t payload_copied_out;          /**< payload bytes copied from messages into packets or engine buffers (sends) */
	uint64_t payload_copied_in;           /**< payload bytes copied from received packets into messages */
	uint64_t payload_lent_in;             /**< payload bytes kept in place in the driver's buffers (homa_engine_input_lend()) */
	uint64_t rx_copies_refused;           /**< payload pieces not stored: the caller's copy list was full (homa_engine_defer_copies()); the sender resends them */
	uint64_t cutoffs_version;             /**< gauge: current cutoff version */
	/* gauges */
	uint64_t active_rpcs;
	uint64_t incoming_msgs;               /**< messages being received */
	uint64_t granted_msgs;                /**< of which currently granted */
	uint64_t outgoing_msgs;               /**< messages with bytes left to send */
	uint64_t rx_buffered_bytes;
	uint64_t tx_buffered_bytes;
	uint64_t pacer_backlog_bytes;         /**< bytes sendable but not yet sent */
	uint64_t peers;
	uint64_t control_queue;               /**< control packets waiting */
	uint64_t pacer_slack_ns;              /**< slack the pacer keeps for late calls (pacer.c) */
	uint64_t done_rpcs;                   /**< finished RPCs remembered for at-most-once (done.c) */
	uint64_t done_bytes;                  /**< memory of that ring and its index, bounded by max_done_rpcs */
	/* histograms */
	uint64_t rx_msg_size_hist[HOMA_HIST_BUCKETS]; /**< completed incoming message lengths */
	uint64_t rpc_latency_hist[HOMA_HIST_BUCKETS]; /**< client RPC round trips, ns */
};

/**
 * homa_drop_reason_name() - Stable snake_case name of a drop reason.
 * Return: a static string ("truncated", "bad_type", ...); "unknown" if out of range.
 */
HOMA_API const char *homa_drop_reason_name(int reason);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_STATS_H */
