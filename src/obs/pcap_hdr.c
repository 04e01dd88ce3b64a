/* SPDX-License-Identifier: MIT */
/**
 * @file pcap_hdr.c
 * Synthesized IP and UDP headers for captured packets: what the packet
 * looked like on the wire, with DSCP carrying the Homa priority (TOS or
 * traffic class = priority << 5) and, in its lowest bit (0x04), whether
 * the packet travelled encrypted; valid checksums.
 */
#include <string.h>

#include "pcap_hdr.h"

/** tos() - TOS / traffic class of @p: priority << 5, 0x04 if it travelled encrypted. */
static uint8_t tos(const struct homa_pcap_pkt *p)
{
	return (uint8_t)(p->priority << 5 | (p->encrypted ? HOMA_PCAP_TOS_ENCRYPTED : 0));
}

/** put16() - Store @v big-endian at @p. */
static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/**
 * sum_bytes() - Add @len bytes to the ones' complement sum @sum0 as
 * big-endian 16-bit words (an odd last byte is padded with zero). Adds
 * 32-bit words into a 64-bit accumulator and folds at the end, which
 * gives the same 16-bit result.
 */
static uint32_t sum_bytes(uint32_t sum0, const uint8_t *b, size_t len)
{
	uint64_t sum = sum0;
	size_t i = 0;

	for (; i + 4 <= len; i += 4)
		sum += ((uint32_t)b[i] << 24) | ((uint32_t)b[i + 1] << 16) |
		       ((uint32_t)b[i + 2] << 8) | b[i + 3];
	for (; i + 1 < len; i += 2)
		sum += ((uint32_t)b[i] << 8) | b[i + 1];
	if (i < len)
		sum += (uint32_t)b[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

/** fold() - Ones' complement of a folded sum. */
static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/** udp_header() - UDP header at @u with the checksum over @pseudo_sum and the payload. */
static void udp_header(uint8_t *u, const struct homa_pcap_pkt *p, uint32_t pseudo_sum)
{
	uint16_t ck;

	memcpy(u, p->data, 4); /* Homa sport, dport = UDP ports */
	put16(u + 4, (uint32_t)(8 + p->len));
	put16(u + 6, 0);
	ck = fold(sum_bytes(sum_bytes(pseudo_sum, u, 8), p->data, p->len));
	put16(u + 6, ck ? ck : 0xffff);
}

/** ipv4_prefix() - IPv4 header (+ UDP; checksum 0 if @cut). Return: bytes or HOMA_EINVAL. */
static int ipv4_prefix(const struct homa_pcap_pkt *p, uint16_t id, bool cut, uint8_t *o)
{
	int udp = p->transport == HOMA_PCAP_UDP;
	size_t total = 20 + (udp ? 8 : 0) + p->len;
	uint8_t pseudo[12];

	if (total > 0xffff)
		return HOMA_EINVAL;
	memset(o, 0, 20);
	o[0] = 0x45;
	o[1] = tos(p);
	put16(o + 2, (uint32_t)total);
	put16(o + 4, id);
	put16(o + 6, 0x4000);            /* don't fragment */
	o[8] = 64;
	o[9] = udp ? 17 : HOMA_IPPROTO;
	memcpy(o + 12, p->src.b + 12, 4);
	memcpy(o + 16, p->dst.b + 12, 4);
	put16(o + 10, fold(sum_bytes(0, o, 20)));
	if (!udp)
		return 20;
	if (cut) {
		memcpy(o + 20, p->data, 4);
		put16(o + 24, (uint32_t)(8 + p->len));
		put16(o + 26, 0);
		return 28;
	}
	memcpy(pseudo, o + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = 17;
	put16(pseudo + 10, (uint32_t)(8 + p->len));
	udp_header(o + 20, p, sum_bytes(0, pseudo, 12));
	return 28;
}

/** ipv6_prefix() - IPv6 header (+ UDP). Return: bytes written or HOMA_EINVAL. */
static int ipv6_prefix(const struct homa_pcap_pkt *p, uint8_t *o)
{
	int udp = p->transport == HOMA_PCAP_UDP;
	size_t plen = (udp ? 8 : 0) + p->len;
	uint8_t pseudo[40];
	uint8_t tclass = tos(p);

	if (plen > 0xffff)
		return HOMA_EINVAL;
	memset(o, 0, 40);
	o[0] = (uint8_t)(0x60 | (tclass >> 4));
	o[1] = (uint8_t)(tclass << 4);
	put16(o + 4, (uint32_t)plen);
	o[6] = udp ? 17 : HOMA_IPPROTO;
	o[7] = 64;
	memcpy(o + 8, p->src.b, 16);
	memcpy(o + 24, p->dst.b, 16);
	if (!udp)
		return 40;
	memcpy(pseudo, o + 8, 32);
	memset(pseudo + 32, 0, 8);
	put16(pseudo + 34, (uint32_t)plen);
	pseudo[39] = 17;
	udp_header(o + 40, p, sum_bytes(0, pseudo, 40));
	return 48;
}

/** homa_pcap_build_prefix() - See pcap_hdr.h. */
int homa_pcap_build_prefix(const struct homa_pcap_pkt *p, uint16_t ip_id, bool cut,
			   uint8_t out[HOMA_PCAP_MAX_PREFIX])
{
	bool v4 = homa_addr_is_ipv4(&p->src);

	if (v4 != homa_addr_is_ipv4(&p->dst))
		return HOMA_EINVAL;
	if (p->transport != HOMA_PCAP_UDP && p->transport != HOMA_PCAP_RAW)
		return HOMA_EINVAL;
	if (p->transport == HOMA_PCAP_UDP && p->len < 4)
		return HOMA_EINVAL;
	return v4 ? ipv4_prefix(p, ip_id, cut, out) : ipv6_prefix(p, out);
}
