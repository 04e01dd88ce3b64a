/* SPDX-License-Identifier: MIT */
/**
 * @file observe.h
 * The runtime's observability hooks (owned by the obs part): packet
 * capture of everything a socket sends and receives, and the socket's
 * counters on a /metrics listener. Each hook costs one branch when its
 * feature is off.
 */
#ifndef HOMA_RT_OBSERVE_H
#define HOMA_RT_OBSERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "homa/obs.h"

struct homa_rt;
struct homa_open_opts;
struct homa_io_tx;
struct homa_io_rx;

/** Observability state of one socket (embedded in struct homa_rt). */
struct rt_obs {
	homa_pcap *pcap;                 /**< NULL: no capture */
	homa_exporter_member *metrics;   /**< NULL: no metrics listener */
	uint8_t transport;               /**< HOMA_PCAP_UDP or HOMA_PCAP_RAW */
	char endpoint[8];                /**< the Homa port as text: the endpoint label */
};

/**
 * homa_rt_obs_open() - Start what @o asks for (pcap_path, metrics_port)
 * on a socket whose driver and engine exist.
 * Return: 0; HOMA_EIO (capture file), the errors of homa_exporter_join()
 * (HOMA_EADDRINUSE, HOMA_EINVAL for a bad metrics_addr, ...).
 */
int homa_rt_obs_open(struct homa_rt *rt, const struct homa_open_opts *o);

/**
 * homa_rt_obs_packet() - Capture one packet of @len bytes at @data, sent
 * to (HOMA_PCAP_TX) or received from (HOMA_PCAP_RX) @peer at @priority,
 * stamped @ts_ns (0: now); @encrypted: it travelled sealed and @data is
 * its clear text. No-op when capture is off.
 */
void homa_rt_obs_packet(struct homa_rt *rt, uint8_t dir, uint64_t ts_ns, const uint8_t *data,
			size_t len, const homa_addr *peer, uint8_t priority, bool encrypted);

/**
 * homa_rt_obs_tx() - Capture @n packets about to be sent (encrypted
 * sockets: their clear text before sealing, flagged encrypted).
 */
void homa_rt_obs_tx(struct homa_rt *rt, const struct homa_io_tx *pkts, int n);

/**
 * homa_rt_obs_rx() - Capture @n packets just received, before the engine
 * sees them (encrypted sockets: their clear text once opened, flagged
 * encrypted).
 */
void homa_rt_obs_rx(struct homa_rt *rt, const struct homa_io_rx *pkts, int n);

/**
 * homa_rt_obs_drop() - Log a packet the engine dropped (@code is
 * homa_engine_input()'s negative result): malformed packets (truncated,
 * bad type, bad field, bad offset) at warn level, other drops at debug;
 * rate-limited per call site, so a flood costs a few lines.
 */
void homa_rt_obs_drop(struct homa_rt *rt, const homa_addr *src, int code);

/**
 * homa_rt_obs_close() - Leave the metrics listener (waits for a scrape in
 * progress) and close the capture. Call without rt->lock held, before the
 * engine and driver are freed. Safe on a socket that never opened any.
 */
void homa_rt_obs_close(struct homa_rt *rt);

#endif /* HOMA_RT_OBSERVE_H */
