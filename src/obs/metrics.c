/* SPDX-License-Identifier: MIT */
/**
 * @file metrics.c
 * Prometheus text rendering of struct homa_stats: scalar counters and
 * gauges, and the families labelled by packet type, priority and drop
 * reason. Histograms are in metrics_hist.c, extra values in
 * metrics_extra.c.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "metrics_int.h"

/** A scalar field of struct homa_stats and the family it becomes. */
struct scalar_def {
	const char *name;
	const char *help;
	const char *type;   /**< "counter" or "gauge" */
	size_t offset;      /**< of a uint64_t in struct homa_stats */
};

#define C(n, f, h) {"homa_" n, h, "counter", offsetof(struct homa_stats, f)}
#define G(n, f, h) {"homa_" n, h, "gauge", offsetof(struct homa_stats, f)}

static const struct scalar_def scalars[] = {
	C("client_rpcs_started_total", client_rpcs_started, "Client RPCs started."),
	C("client_rpcs_completed_total", client_rpcs_completed, "Client RPCs whose response arrived."),
	C("server_requests_received_total", server_requests_received, "Requests handed to the application."),
	C("server_replies_sent_total", server_replies_sent, "Responses the application sent."),
	C("rpcs_aborted_total", rpcs_aborted, "RPCs aborted by the application."),
	C("rpcs_timed_out_total", rpcs_timed_out, "RPCs aborted because the peer stopped answering."),
	C("rpc_restarts_total", rpc_restarts, "Client RPCs restarted after RPC_UNKNOWN."),
	C("requests_resent_total", requests_resent, "Short requests sent again after an unanswered RESEND."),
	C("resends_sent_total", resends_sent, "RESEND packets sent."),
	C("resends_received_total", resends_received, "RESEND packets received and answered."),
	C("retransmitted_bytes_total", retransmitted_bytes, "Data bytes sent again."),
	C("duplicate_bytes_total", duplicate_bytes, "Received data bytes that were already there."),
	C("busy_sent_total", busy_sent, "BUSY packets sent."),
	C("grants_sent_total", grants_sent, "GRANT packets sent."),
	C("fifo_grants_sent_total", fifo_grants_sent, "GRANT packets sent to the oldest message (FIFO share)."),
	C("grants_merged_total", grants_merged, "GRANTs folded into a GRANT still queued for the same RPC."),
	C("start_msgs_resent_total", start_msgs_resent, "START_MSG packets repeated."),
	C("acks_received_total", acks_received, "Server RPCs freed by an ack."),
	C("peers_declared_dead_total", peers_declared_dead, "Peers declared dead after repeated silence."),
	C("sends_refused_total", sends_refused, "Sends refused with HOMA_EAGAIN (memory cap)."),
	C("unknown_replies_suppressed_total", unknown_replies_suppressed, "RPC_UNKNOWN replies not sent because of the rate limit."),
	C("unreachable_received_total", unreachable_received, "ICMP unreachable reports that ended RPCs to a port or host."),
	C("msgs_evicted_total", msgs_evicted, "Incomplete requests freed to make room in the rx budget."),
	C("stale_evicted_total", stale_evicted, "Of which: silent after their unscheduled bytes, under memory pressure."),
	C("evicted_bytes_total", evicted_bytes, "Message bytes the evicted requests had received."),
	C("payload_copied_out_bytes_total", payload_copied_out, "Payload bytes the engine copied on the send side."),
	C("payload_copied_in_bytes_total", payload_copied_in, "Payload bytes the engine copied from packets into messages."),
	C("payload_lent_in_bytes_total", payload_lent_in, "Payload bytes kept in place in the driver's receive buffers."),
	C("rx_copies_refused_total", rx_copies_refused, "Payload pieces dropped because the receive copy list was full (never copied under the socket lock)."),
	G("cutoffs_version", cutoffs_version, "Version of the unscheduled priority cutoffs in force."),
	G("active_rpcs", active_rpcs, "RPCs alive now."),
	G("incoming_messages", incoming_msgs, "Messages being received."),
	G("granted_messages", granted_msgs, "Incoming messages currently granted."),
	G("outgoing_messages", outgoing_msgs, "Messages with bytes left to send."),
	G("rx_buffered_bytes", rx_buffered_bytes, "Received bytes held for the application."),
	G("tx_buffered_bytes", tx_buffered_bytes, "Bytes of outgoing messages held."),
	G("pacer_backlog_bytes", pacer_backlog_bytes, "Bytes sendable but held back by the pacer."),
	G("peers", peers, "Peers known."),
	G("control_queue_packets", control_queue, "Control packets waiting to be sent."),
	G("pacer_slack_nanoseconds", pacer_slack_ns, "Slack the pacer keeps for late output calls, ns."),
	G("done_rpcs", done_rpcs, "Finished RPCs remembered for at-most-once."),
	G("done_bytes", done_bytes, "Memory of the finished-RPC ring, bounded by max_done_rpcs."),
};

#undef C
#undef G

/** A family labelled by one extra key, read from an array in struct homa_stats. */
struct array_def {
	const char *name;
	const char *help;
	const char *key;   /**< label name */
	int kind;          /**< 0: packet type, 1: priority, 2: drop reason */
	size_t offset;     /**< of uint64_t[n] in struct homa_stats */
};

#define A(n, k, kind, f, h) {"homa_" n, h, k, kind, offsetof(struct homa_stats, f)}

static const struct array_def arrays[] = {
	A("packets_sent_total", "type", 0, pkts_sent, "Packets sent, by type."),
	A("bytes_sent_total", "type", 0, bytes_sent, "Bytes sent (Homa header and payload), by packet type."),
	A("packets_received_total", "type", 0, pkts_recv, "Packets received, by type."),
	A("bytes_received_total", "type", 0, bytes_recv, "Bytes received (Homa header and payload), by packet type."),
	A("packets_sent_by_priority_total", "priority", 1, pkts_sent_prio, "Packets sent, by priority (0 lowest, 7 highest)."),
	A("packets_dropped_total", "reason", 2, drops, "Incoming packets dropped, by reason."),
};

#undef A

/** Names of the families written elsewhere, for homa_metrics_builtin_taken(). */
static const char *const other_names[] = {
	"homa_pacer_throttled_seconds_total",
	"homa_rx_message_size_bytes",
	"homa_client_rpc_latency_seconds",
};

/** stat_u64() - The uint64_t at @offset inside @st. */
static uint64_t stat_u64(const struct homa_stats *st, size_t offset)
{
	uint64_t v;

	memcpy(&v, (const char *)st + offset, sizeof(v));
	return v;
}

/** homa_metrics_header() - See metrics_int.h. */
void homa_metrics_header(struct homa_textbuf *tb, const char *name,
			 const char *help, const char *type)
{
	homa_textbuf_printf(tb, "# HELP %s ", name);
	homa_textbuf_escaped(tb, help, false);
	homa_textbuf_printf(tb, "\n# TYPE %s %s\n", name, type);
}

/** homa_metrics_labels() - See metrics_int.h. */
void homa_metrics_labels(struct homa_textbuf *tb, const char *endpoint,
			 const char *key, const char *value)
{
	if (!endpoint && !key)
		return;
	homa_textbuf_puts(tb, "{");
	if (endpoint) {
		homa_textbuf_puts(tb, "endpoint=\"");
		homa_textbuf_escaped(tb, endpoint, true);
		homa_textbuf_puts(tb, key ? "\"," : "\"");
	}
	if (key) {
		homa_textbuf_printf(tb, "%s=\"", key);
		homa_textbuf_escaped(tb, value, true);
		homa_textbuf_puts(tb, "\"");
	}
	homa_textbuf_puts(tb, "}");
}

/** render_scalars() - Write every scalar family, one sample per source. */
static void render_scalars(struct homa_textbuf *tb,
			   const struct homa_metrics_source *src, size_t nsrc)
{
	size_t i, j;

	for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		homa_metrics_header(tb, scalars[i].name, scalars[i].help, scalars[i].type);
		for (j = 0; j < nsrc; j++) {
			homa_textbuf_puts(tb, scalars[i].name);
			homa_metrics_labels(tb, src[j].endpoint, NULL, NULL);
			homa_textbuf_printf(tb, " %" PRIu64 "\n",
					    stat_u64(src[j].stats, scalars[i].offset));
		}
	}
}

/** render_throttled() - The pacer's throttled time, converted from ns to seconds. */
static void render_throttled(struct homa_textbuf *tb,
			     const struct homa_metrics_source *src, size_t nsrc)
{
	const char *name = other_names[0];
	size_t j;

	homa_metrics_header(tb, name, "Time output was held back by the pacer, seconds.",
			    "counter");
	for (j = 0; j < nsrc; j++) {
		uint64_t ns = src[j].stats->pacer_throttled_ns;

		homa_textbuf_puts(tb, name);
		homa_metrics_labels(tb, src[j].endpoint, NULL, NULL);
		homa_textbuf_printf(tb, " %" PRIu64 ".%09" PRIu64 "\n",
				    ns / 1000000000u, ns % 1000000000u);
	}
}

/** array_size() - Number of elements of an array family. */
static int array_size(int kind)
{
	if (kind == 0)
		return HOMA_PKT_TYPES;
	if (kind == 1)
		return HOMA_MAX_PRIORITIES;
	return HOMA_DROP_REASONS;
}

/** array_label() - Label value of element @i of an array family; uses @tmp. */
static const char *array_label(int kind, int i, char *tmp, size_t cap)
{
	if (kind == 0)
		return homa_wire_type_name((uint8_t)(HOMA_PKT_FIRST + i));
	if (kind == 2)
		return homa_drop_reason_name(i);
	snprintf(tmp, cap, "%d", i);
	return tmp;
}

/** render_arrays() - Write the families labelled by type, priority and reason. */
static void render_arrays(struct homa_textbuf *tb,
			  const struct homa_metrics_source *src, size_t nsrc)
{
	char tmp[16];
	size_t i, j;
	int k;

	for (i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		const struct array_def *a = &arrays[i];

		homa_metrics_header(tb, a->name, a->help, "counter");
		for (j = 0; j < nsrc; j++) {
			for (k = 0; k < array_size(a->kind); k++) {
				size_t off = a->offset + (size_t)k * sizeof(uint64_t);

				homa_textbuf_puts(tb, a->name);
				homa_metrics_labels(tb, src[j].endpoint, a->key,
						    array_label(a->kind, k, tmp, sizeof(tmp)));
				homa_textbuf_printf(tb, " %" PRIu64 "\n",
						    stat_u64(src[j].stats, off));
			}
		}
	}
}

/** homa_metrics_builtin_taken() - See metrics_int.h. */
bool homa_metrics_builtin_taken(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (!strcmp(name, scalars[i].name))
			return true;
	for (i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		if (!strcmp(name, arrays[i].name))
			return true;
	for (i = 0; i < sizeof(other_names) / sizeof(other_names[0]); i++)
		if (!strncmp(name, other_names[i], strlen(other_names[i])))
			return true;
	return false;
}

/** homa_metrics_render() - See obs.h. */
int homa_metrics_render(const struct homa_metrics_source *src, size_t nsrc,
			const struct homa_metric_value *extra, size_t nextra,
			char *buf, size_t cap, size_t *needed)
{
	struct homa_textbuf tb;
	size_t j;
	int err;

	if ((nsrc && !src) || (nextra && !extra) || (cap && !buf))
		return HOMA_EINVAL;
	for (j = 0; j < nsrc; j++)
		if (!src[j].stats)
			return HOMA_EINVAL;
	homa_textbuf_init(&tb, buf, cap);
	if (nsrc) {
		render_scalars(&tb, src, nsrc);
		render_throttled(&tb, src, nsrc);
		render_arrays(&tb, src, nsrc);
		homa_metrics_histograms(&tb, src, nsrc);
	}
	err = homa_metrics_extras(&tb, extra, nextra);
	if (err)
		return err;
	if (needed)
		*needed = tb.len + 1;
	if (!homa_textbuf_fits(&tb))
		return HOMA_ENOSPC;
	return (int)tb.len;
}
