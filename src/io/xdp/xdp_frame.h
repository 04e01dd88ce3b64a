/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_frame.h
 * Ethernet frames of the AF_XDP driver: building the Ethernet, IP and
 * UDP headers in front of a Homa packet exactly as the kernel builds them
 * for the UDP and raw drivers (IPv4: DSCP = priority << 5, DF set, the IP
 * id the path carries, TTL 64, full IPv4 and UDP checksums; IPv6: traffic
 * class = priority << 5, the path's flow label, hop limit 64, the UDP
 * checksum), and checking received frames of both families.
 * Pure functions: no system calls, no allocation.
 */
#ifndef HOMA_IO_XDP_FRAME_H
#define HOMA_IO_XDP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.h"

/** Ethernet header bytes. */
#define HOMA_XDP_ETH_HLEN 14
/** Ethernet + IPv4 (no options) + UDP header bytes in front of a Homa packet. */
#define HOMA_XDP_UDP_HLEN 42
/** Ethernet + IPv4 header bytes in front of a raw-format Homa packet. */
#define HOMA_XDP_RAW_HLEN 34
/** Ethernet + IPv6 (no extension headers) + UDP header bytes in front of a Homa packet. */
#define HOMA_XDP_UDP6_HLEN 62
/** Ethernet + IPv6 header bytes in front of a raw-format Homa packet. */
#define HOMA_XDP_RAW6_HLEN 54
/** TTL of the packets sent (Linux's default, net.ipv4.ip_default_ttl). */
#define HOMA_XDP_TTL 64

/** Where one packet goes: the link and IP addresses (network byte order). */
struct homa_xdp_path {
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	bool v6;           /**< IPv6 (src6, dst6, flow) instead of IPv4 (src_ip, dst_ip, ip_id) */
	uint32_t src_ip;   /**< network byte order */
	uint32_t dst_ip;   /**< network byte order */
	uint16_t ip_id;    /**< the IPv4 id of the packet this path was looked up for */
	uint8_t src6[16];
	uint8_t dst6[16];
	uint32_t flow;     /**< IPv6 flow label (20 bits) */
};

/** homa_xdp_hlen() - Header bytes in front of a Homa packet: IPv6 if @v6, raw format if @raw. */
size_t homa_xdp_hlen(bool v6, bool raw);

/** homa_xdp_frame_len() - Bytes of the frame that carries @pkt (headers, data, ext). */
size_t homa_xdp_frame_len(const struct homa_io_tx *pkt, bool v6, bool raw);

/**
 * homa_xdp_frame_build() - Write the frame that carries @pkt along @p into
 * @frame (@cap bytes): headers, then a copy of the Homa packet (its data,
 * then its ext bytes if any). A packet whose data already lies at
 * @frame + the header length (built in place) is not copied.
 * @raw: IP protocol 146 (raw driver format) instead of UDP from @sport.
 * The family is @p's (p->v6): the header length is homa_xdp_hlen(p->v6, @raw).
 * Return: the frame's length, or 0 if it does not fit @cap or the IP
 * length limit (nothing is written then).
 */
size_t homa_xdp_frame_build(uint8_t *frame, size_t cap, const struct homa_xdp_path *p,
			    uint16_t sport, const struct homa_io_tx *pkt, bool raw);

/** Why a received frame was refused (counted, never an error). */
enum homa_xdp_bad {
	HOMA_XDP_OK = 0,
	HOMA_XDP_BAD_HEADER,   /**< not IPv4/IPv6, truncated, options out of range, fragment,
				    an IPv6 extension header or IPv4-mapped IPv6 source */
	HOMA_XDP_BAD_CSUM,     /**< IPv4 or UDP checksum wrong; IPv6 UDP without checksum */
	HOMA_XDP_OTHER_PORT,   /**< valid, but not for this socket's port or format */
};

/**
 * homa_xdp_frame_parse() - Check received frame @frame/@len (a stranger's
 * bytes) and find the Homa packet in it for port @port.
 * @out: on HOMA_XDP_OK, data/len point into @frame, src and priority set.
 * Return: HOMA_XDP_OK or why the frame was refused.
 */
enum homa_xdp_bad homa_xdp_frame_parse(uint8_t *frame, size_t len, bool raw,
				       uint16_t port, struct homa_io_rx *out);

/**
 * homa_xdp_csum() - The Internet checksum (RFC 1071) of @len bytes at @p
 * added to the partial sum @sum, folded and complemented.
 */
uint16_t homa_xdp_csum(const uint8_t *p, size_t len, uint32_t sum);

#endif /* HOMA_IO_XDP_FRAME_H */
