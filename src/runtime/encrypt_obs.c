/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt_obs.c
 * /metrics values of an encrypted socket: its PSP counters (sealed,
 * opened, dropped by reason, associations, key exchanges) and, for a
 * socket with a PSP port, the path its packets take from that port and
 * the host's drops there (docs/OBSERVABILITY.md lists the names).
 */
#include <string.h>

#include "enc.h"

/** Help of the families with one entry per label value. */
static const char *const rej_help =
	"PSP: incoming packets dropped before delivery, by reason.";
static const char *const seal_help = "PSP: outgoing packets dropped before sealing, by reason.";
static const char *const kx_help = "PSP: key exchanges, by result (done/failed: asked by this "
	"socket; served/refused: answered by its service).";
static const char *const path_help = "PSP: 1 for the path sealed packets sent to this host's PSP "
	"port take to this socket (steered: the kernel picks the socket; receiver: a process "
	"forwards them; own_port: no PSP port, packets come to the socket's port).";
static const char *const port_help = "PSP port of this host: datagrams dropped there, by reason "
	"(host-wide, the same on every socket of the process).";

/** reject_names - Label values of homa_psp_rejected_packets, by HOMA_PSP_REJ_*. */
static const char *const reject_names[HOMA_PSP_REJ_REASONS] = {
	"not_psp", "truncated", "bad_header", "unknown_spi", "expired_spi", "auth",
	"replay", "too_old"};

/** counter() - A counter entry without a label. */
static struct homa_metric_value counter(const char *name, const char *help, uint64_t v)
{
	return (struct homa_metric_value){.name = name, .help = help,
		.kind = HOMA_METRIC_COUNTER, .value = (double)v};
}

/** labelled() - An entry of @kind with the label @label = @value. */
static struct homa_metric_value labelled(const char *name, const char *help, int kind,
					 uint64_t v, const char *label, const char *value)
{
	return (struct homa_metric_value){.name = name, .help = help, .kind = kind,
		.value = (double)v, .label = label, .label_value = value};
}

/**
 * socket_values() - Append the socket's PSP counters @st to @ex.
 * Return: entries written (HOMA_PSP_REJ_REASONS + 11).
 */
static size_t socket_values(const struct homa_psp_stats *st, struct homa_metric_value *ex)
{
	size_t k = 0;

	ex[k++] = counter("psp_sealed_packets", "PSP: packets sealed and sent.", st->sealed);
	ex[k++] = counter("psp_opened_packets", "PSP: packets that authenticated and were "
			  "delivered.", st->opened);
	ex[k++] = labelled("psp_seal_drops", seal_help, HOMA_METRIC_COUNTER, st->seal_no_assoc,
			   "reason", "no_assoc");
	ex[k++] = labelled("psp_seal_drops", seal_help, HOMA_METRIC_COUNTER, st->seal_errors,
			   "reason", "error");
	for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++)
		ex[k++] = labelled("psp_rejected_packets", rej_help, HOMA_METRIC_COUNTER,
				   st->rejected[r], "reason", reject_names[r]);
	ex[k++] = (struct homa_metric_value){.name = "psp_rx_associations",
		.help = "PSP: receive SPIs issued and not expired.", .kind = HOMA_METRIC_GAUGE,
		.value = (double)st->rx_assocs};
	ex[k++] = (struct homa_metric_value){.name = "psp_tx_associations",
		.help = "PSP: send associations installed.", .kind = HOMA_METRIC_GAUGE,
		.value = (double)st->tx_assocs};
	ex[k++] = counter("psp_rotations", "PSP: master-key rotations.", st->rotations);
	ex[k++] = labelled("psp_key_exchanges", kx_help, HOMA_METRIC_COUNTER, st->kx_done,
			   "result", "done");
	ex[k++] = labelled("psp_key_exchanges", kx_help, HOMA_METRIC_COUNTER, st->kx_failed,
			   "result", "failed");
	ex[k++] = labelled("psp_key_exchanges", kx_help, HOMA_METRIC_COUNTER, st->kx_served,
			   "result", "served");
	ex[k++] = labelled("psp_key_exchanges", kx_help, HOMA_METRIC_COUNTER, st->kx_refused,
			   "result", "refused");
	return k;
}

/**
 * port_values() - Append the PSP path gauge of a socket (@steered,
 * @joined, @udp_port as in struct rt_enc) and, with a PSP port, the
 * host's counters there (homa_encrypt_host_stats()) to @ex.
 * Return: entries written (3, or 8 with a PSP port).
 */
static size_t port_values(bool steered, bool joined, uint16_t udp_port,
			  struct homa_metric_value *ex)
{
	struct homa_psp_host_stats h;
	size_t k = 0;

	ex[k++] = labelled("psp_path", path_help, HOMA_METRIC_GAUGE, steered, "path", "steered");
	ex[k++] = labelled("psp_path", path_help, HOMA_METRIC_GAUGE, !steered && joined, "path",
			   "receiver");
	ex[k++] = labelled("psp_path", path_help, HOMA_METRIC_GAUGE, !udp_port, "path",
			   "own_port");
	if (!udp_port || homa_encrypt_host_stats(&h) != 0)
		return k;
	ex[k++] = counter("psp_port_forwarded_packets", "PSP port of this host: sealed packets "
			  "the receiver of this process forwarded to its sockets.", h.forwarded);
	ex[k++] = labelled("psp_port_drops", port_help, HOMA_METRIC_COUNTER, h.not_psp,
			   "reason", "not_psp");
	ex[k++] = labelled("psp_port_drops", port_help, HOMA_METRIC_COUNTER, h.truncated,
			   "reason", "truncated");
	ex[k++] = labelled("psp_port_drops", port_help, HOMA_METRIC_COUNTER, h.no_port,
			   "reason", "no_port");
	ex[k++] = labelled("psp_port_drops", port_help, HOMA_METRIC_COUNTER, h.send_errors,
			   "reason", "send_error");
	return k;
}

/** homa_rt_enc_metrics() - See rt.h. */
size_t homa_rt_enc_metrics(struct homa_rt *rt, struct homa_metric_value *ex)
{
	struct rt_enc *x = rt->enc;
	struct homa_psp_stats st;
	size_t k;

	if (!x)
		return 0;
	memset(&st, 0, sizeof(st));
	pthread_mutex_lock(&x->mu);
	homa_psp_get_stats(x->psp, &st);
	st.kx_done = x->kx_done;
	st.kx_failed = x->kx_failed;
	pthread_mutex_unlock(&x->mu);
	homa_kx_server_counts(x->srv, &st.kx_served, &st.kx_refused);
	k = socket_values(&st, ex);
	return k + port_values(x->steered, x->host_joined, x->udp_port, ex + k);
}
