/* SPDX-License-Identifier: MIT */
/**
 * @file observe.c
 * Runtime observability hooks (see observe.h): pcap capture at the
 * driver boundary and a /metrics snapshot of the engine and driver
 * counters.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rt.h"
#include "tp.h"
#include "homa/psp.h"

/** wall_ns() - CLOCK_REALTIME in ns (pcap timestamps are wall-clock). */
static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/**
 * local_for() - This socket's address as seen with peer @peer: the bound
 * address, or the wildcard of the peer's family when an IPv6 socket talks
 * to a mapped IPv4 peer.
 */
static homa_addr local_for(const struct homa_rt *rt, const homa_addr *peer)
{
	if (homa_addr_is_ipv4(&rt->drv->local) == homa_addr_is_ipv4(peer))
		return rt->drv->local;
	if (homa_addr_is_ipv4(peer))
		return homa_addr_ipv4(0);
	return (homa_addr){{0}};
}

/** homa_rt_obs_packet() - See observe.h. */
void homa_rt_obs_packet(struct homa_rt *rt, uint8_t dir, uint64_t ts_ns, const uint8_t *data,
			size_t len, const homa_addr *peer, uint8_t priority, bool encrypted)
{
	struct homa_pcap_pkt p = {.dir = dir, .transport = rt->obs.transport, .ts_ns = ts_ns,
				  .data = data, .len = len, .priority = priority,
				  .encrypted = encrypted};

	if (!rt->obs.pcap)
		return;
	if (!ts_ns)
		p.ts_ns = wall_ns();
	if (dir == HOMA_PCAP_TX) {
		p.dst = *peer;
		p.src = local_for(rt, peer);
	} else {
		p.src = *peer;
		p.dst = local_for(rt, peer);
	}
	homa_pcap_write(rt->obs.pcap, &p);
}

/** homa_rt_obs_tx() - See observe.h. */
void homa_rt_obs_tx(struct homa_rt *rt, const struct homa_io_tx *pkts, int n)
{
	uint64_t ts;

	if (!rt->obs.pcap)
		return;
	ts = wall_ns();
	for (int i = 0; i < n; i++)
		homa_rt_obs_packet(rt, HOMA_PCAP_TX, ts, pkts[i].data, pkts[i].len, &pkts[i].dst,
			pkts[i].priority, rt->enc != NULL);
}

/** homa_rt_obs_rx() - See observe.h. */
void homa_rt_obs_rx(struct homa_rt *rt, const struct homa_io_rx *pkts, int n)
{
	uint64_t ts;

	if (!rt->obs.pcap)
		return;
	ts = wall_ns();
	for (int i = 0; i < n; i++)
		homa_rt_obs_packet(rt, HOMA_PCAP_RX, ts, pkts[i].data, pkts[i].len, &pkts[i].src,
			pkts[i].priority, rt->enc != NULL);
}

/** homa_rt_obs_drop() - See observe.h. */
void homa_rt_obs_drop(struct homa_rt *rt, const homa_addr *src, int code)
{
	int reason = code - HOMA_INPUT_DROPPED;
	char a[64];

	if (reason < 0 || reason >= HOMA_DROP_REASONS)
		return;
	/* the arguments are only evaluated when the level is enabled */
	if (reason <= HOMA_DROP_BAD_OFFSET)
		HOMA_LOG_WARN("port %s: dropped a malformed packet from %s (%s)",
			      rt->obs.endpoint, homa_addr_format(src, a, sizeof(a)),
			      homa_drop_reason_name(reason));
	else
		HOMA_LOG_DEBUG("port %s: dropped a packet from %s (%s)", rt->obs.endpoint,
			       homa_addr_format(src, a, sizeof(a)), homa_drop_reason_name(reason));
}

/**
 * The driver and runtime values exported next to the engine's: counters
 * (homa_io_*_total) and the few that are levels, not counts (gauges,
 * homa_io_*: they go down as well as up, so a rate of them means nothing).
 */
#define IO_COUNTER(field, help) \
	{"io_" #field, help, offsetof(struct homa_io_counters, field), HOMA_METRIC_COUNTER}
#define IO_GAUGE(field, help) \
	{"io_" #field, help, offsetof(struct homa_io_counters, field), HOMA_METRIC_GAUGE}
static const struct {
	const char *name;
	const char *help;
	size_t offset;
	int kind;
} io_counters[] = {
	IO_COUNTER(tx_packets, "Homa packets handed to the driver."),
	IO_COUNTER(tx_bytes, "Bytes of those packets."),
	IO_COUNTER(tx_calls, "Send system calls."),
	IO_COUNTER(tx_gso_batches, "UDP_SEGMENT super-packets sent."),
	IO_COUNTER(tx_errors, "Packets the kernel refused (dropped)."),
	IO_COUNTER(rx_packets, "Homa packets received from the driver."),
	IO_COUNTER(rx_bytes, "Bytes of those packets."),
	IO_COUNTER(rx_calls, "Receive system calls that returned data."),
	IO_COUNTER(rx_gro_batches, "Coalesced UDP_GRO buffers split."),
	IO_COUNTER(rx_filtered, "Raw driver: packets for another port."),
	IO_GAUGE(xdp_zerocopy, "XDP driver: 1 if bound in zero-copy mode, 0 in copy mode."),
	IO_COUNTER(xdp_fill_empty, "XDP driver: packets dropped, fill ring empty."),
	IO_COUNTER(xdp_rx_dropped, "XDP driver: packets dropped, rx ring full or other."),
	IO_COUNTER(xdp_invalid_descs, "XDP driver: ring descriptors the kernel refused."),
	IO_COUNTER(xdp_tx_ring_full, "XDP driver: sends that found the tx ring full."),
	IO_COUNTER(xdp_rx_invalid, "XDP driver: frames refused for bad headers or checksums."),
	IO_COUNTER(xdp_unresolved, "XDP driver: packets dropped while the next hop was resolved."),
	IO_GAUGE(xdp_rx_lent, "XDP driver: receive frames held by messages (zero-copy receive)."),
	IO_COUNTER(xdp_reclaimed, "XDP driver: UMEM frames taken back from processes that died."),
	IO_GAUGE(rx_queues, "UDP driver: kernel receive queues read (2: by priority, 1: one for all)."),
	IO_COUNTER(rx_fast_packets, "UDP driver: packets read from the high-priority queue."),
	IO_GAUGE(rx_known_peers, "UDP driver: known peers with a kernel receive queue of their own."),
	IO_COUNTER(rx_known_packets, "UDP driver: packets read from known peers' queues."),
	IO_COUNTER(rx_known_refused, "UDP driver: known peers left on the port's queues (slots busy, kernel refused)."),
	IO_COUNTER(rx_gate_closed, "UDP driver: milliseconds in which the port's queues closed early: strangers used up their budget (stranger_budget), or drained them in a millisecond after one where they did."),
	IO_GAUGE(rx_lent_slots, "UDP driver: receive buffers held by messages (zero-copy receive, rx_lend_slots), as of its latest receive."),
};

/* every value snapshot() writes fits the exporter's room (5: homa_tp_metrics()) */
_Static_assert(1 + 2 + 3 + sizeof(io_counters) / sizeof(io_counters[0]) + 3 +
	       HOMA_MAX_PRIORITIES + 5 + HOMA_RT_ENC_METRICS <= HOMA_EXPORTER_MAX_EXTRA,
	       "raise HOMA_EXPORTER_MAX_EXTRA");

/** Label values of the priority family. */
static const char *const prio_labels[HOMA_MAX_PRIORITIES] = {
	"0", "1", "2", "3", "4", "5", "6", "7",
};

/**
 * rx_by_priority() - Append homa_packets_received_by_priority_total (the
 * driver's count of packets by the DSCP they arrived with) to @ex.
 * Return: entries written (HOMA_MAX_PRIORITIES).
 */
static size_t rx_by_priority(const struct homa_rt *rt, struct homa_metric_value *ex)
{
	size_t p;

	for (p = 0; p < HOMA_MAX_PRIORITIES; p++)
		ex[p] = (struct homa_metric_value){
			.name = "packets_received_by_priority",
			.help = "Packets received, by the priority of their IP DSCP (0 lowest, 7 highest).",
			.kind = HOMA_METRIC_COUNTER,
			.value = (double)homa_io_counter(&rt->drv->c.rx_prio[p]),
			.label = "priority", .label_value = prio_labels[p]};
	return HOMA_MAX_PRIORITIES;
}

/**
 * buffer_limits() - Append the caps of the buffered-bytes gauges (the
 * socket's buffer pools: homa_rx_buffered_bytes is the use of the first)
 * from settings @st to @ex. Return: entries written (2).
 */
static size_t buffer_limits(const struct homa_settings *st, struct homa_metric_value *ex)
{
	ex[0] = (struct homa_metric_value){.name = "rx_buffer_limit_bytes",
		.help = "Cap on buffered incoming bytes (settings.max_rx_buffered).",
		.kind = HOMA_METRIC_GAUGE, .value = (double)st->max_rx_buffered};
	ex[1] = (struct homa_metric_value){.name = "tx_buffer_limit_bytes",
		.help = "Cap on queued outgoing bytes (settings.max_tx_buffered).",
		.kind = HOMA_METRIC_GAUGE, .value = (double)st->max_tx_buffered};
	return 2;
}

/**
 * pool_values() - Append the chunk cache's state (@p, read under its
 * own lock) to @ex. Return: entries written (3).
 */
static size_t pool_values(struct rt_pool *p, struct homa_metric_value *ex)
{
	size_t count, reused;

	homa_rt_pool_stats(p, &count, &reused);
	ex[0] = (struct homa_metric_value){.name = "pool_cached_bytes",
		.help = "Freed message chunks kept for reuse.", .kind = HOMA_METRIC_GAUGE,
		.value = (double)(count * RT_POOL_BLOCK)};
	ex[1] = (struct homa_metric_value){.name = "pool_cached_limit_bytes",
		.help = "Most bytes of freed chunks kept.", .kind = HOMA_METRIC_GAUGE,
		.value = (double)(p->max * RT_POOL_BLOCK)};
	ex[2] = (struct homa_metric_value){.name = "pool_reuses",
		.help = "Message chunks served from the cache instead of malloc.",
		.kind = HOMA_METRIC_COUNTER, .value = (double)reused};
	return 3;
}

/**
 * snapshot() - The exporter's callback: engine counters under the socket
 * lock, driver and runtime counters beside them as homa_io_* values, the
 * buffer caps, the chunk cache, and received packets by priority.
 */
static int snapshot(void *arg, struct homa_stats *st, struct homa_metric_value *ex,
		    size_t *n)
{
	struct homa_rt *rt = arg;
	size_t i, k = 0;
	char *base = (char *)&rt->drv->c;

	homa_driver_refresh(rt->drv);
	homa_rt_lock(rt);
	homa_engine_stats(rt->engine, st);
	ex[k++] = (struct homa_metric_value){.name = "io_ready_messages",
		.help = "Messages waiting for homa_recv().", .kind = HOMA_METRIC_GAUGE,
		.value = (double)rt->nready};
	k += buffer_limits(homa_engine_settings(rt->engine), ex + k);
	k += pool_values(&rt->pool, ex + k);
	homa_rt_unlock(rt);
	for (i = 0; i < sizeof(io_counters) / sizeof(io_counters[0]); i++) {
		uint64_t v;

		v = homa_io_counter((const uint64_t *)(base + io_counters[i].offset));
		ex[k++] = (struct homa_metric_value){.name = io_counters[i].name,
			.help = io_counters[i].help, .kind = io_counters[i].kind, .value = (double)v};
	}
	ex[k++] = (struct homa_metric_value){.name = "io_wakeups",
		.help = "Application threads woken with a message.", .kind = HOMA_METRIC_COUNTER,
		.value = (double)rt->wakeups};
	ex[k++] = (struct homa_metric_value){.name = "io_send_waits",
		.help = "Sends that waited for buffer space.", .kind = HOMA_METRIC_COUNTER,
		.value = (double)rt->send_waits};
	ex[k++] = (struct homa_metric_value){.name = "io_seal_yields",
		.help = "Encrypted sockets: CPU offers (sched_yield()) after each 256 KiB a thread sealed.",
		.kind = HOMA_METRIC_COUNTER, .value = (double)rt->seal_yields};
	k += rx_by_priority(rt, ex + k);
	k += homa_tp_metrics(rt, ex + k);
	k += homa_rt_enc_metrics(rt, ex + k);
	*n = k;
	return 0;
}

/** homa_rt_obs_open() - See observe.h. */
int homa_rt_obs_open(struct homa_rt *rt, const struct homa_open_opts *o)
{
	struct homa_http_opts h = {.bind_addr = o->metrics_addr, .port = o->metrics_port};
	int err;

	rt->obs.transport = o->driver == HOMA_DRIVER_RAW || (o->driver == HOMA_DRIVER_XDP && o->xdp_raw)
		? HOMA_PCAP_RAW : HOMA_PCAP_UDP;
	snprintf(rt->obs.endpoint, sizeof(rt->obs.endpoint), "%u", rt->drv->port);
	if (o->pcap_path) {
		err = homa_pcap_open(o->pcap_path, &o->pcap, &rt->obs.pcap);
		if (err)
			return err;
	}
	if (o->metrics_port)
		return homa_exporter_join(&h, rt->obs.endpoint, snapshot, rt, &rt->obs.metrics);
	return 0;
}

/** homa_rt_obs_close() - See observe.h. */
void homa_rt_obs_close(struct homa_rt *rt)
{
	homa_exporter_leave(rt->obs.metrics);
	rt->obs.metrics = NULL;
	homa_pcap_close(rt->obs.pcap);
	rt->obs.pcap = NULL;
}
