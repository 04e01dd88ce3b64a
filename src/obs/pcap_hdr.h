/* SPDX-License-Identifier: MIT */
/**
 * @file pcap_hdr.h
 * IPv4/IPv6 and UDP headers placed before each captured Homa packet
 * (private to homa_obs).
 */
#ifndef HOMA_OBS_PCAP_HDR_H
#define HOMA_OBS_PCAP_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa/obs.h"

/** Longest header prefix: IPv6 (40) + UDP (8). */
#define HOMA_PCAP_MAX_PREFIX 48

/**
 * homa_pcap_build_prefix() - Write the IP header (and the UDP header for
 * HOMA_PCAP_UDP) for packet @p into @out, with checksums over the whole
 * packet. @ip_id is the IPv4 identification to use. When @cut is true
 * (the record will be cut by snaplen, so nobody can verify the UDP
 * checksum) an IPv4 UDP checksum is left 0, "not computed"; IPv6 requires
 * one, so it is always computed.
 * Return: bytes written, or HOMA_EINVAL (mixed families, unknown
 * transport, UDP packet shorter than 4 bytes, too long for one IP packet).
 */
int homa_pcap_build_prefix(const struct homa_pcap_pkt *p, uint16_t ip_id, bool cut,
			   uint8_t out[HOMA_PCAP_MAX_PREFIX]);

#endif /* HOMA_OBS_PCAP_HDR_H */
