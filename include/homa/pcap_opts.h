/* SPDX-License-Identifier: MIT */
/**
 * @file pcap_opts.h
 * Bounds of a packet capture, shared by homa_open() (homa.h, opts.pcap)
 * and homa_pcap_open() (obs.h).
 */
#ifndef HOMA_PCAP_OPTS_H
#define HOMA_PCAP_OPTS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Options of a capture. Zeroed fields take the defaults. */
struct homa_pcap_opts {
	uint64_t max_bytes;    /**< rotate when a file would exceed this (0 = never) */
	uint32_t keep_files;   /**< files kept including the current one (default 4) */
	uint32_t sample_every; /**< write 1 packet in N (default 1 = all) */
	uint32_t snaplen;      /**< bytes kept of each packet, IP header included (default 65535, min 128: every Homa header fits) */
};

#ifdef __cplusplus
}
#endif
#endif /* HOMA_PCAP_OPTS_H */
