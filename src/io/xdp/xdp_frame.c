/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_frame.c
 * Building and checking the Ethernet/IPv4/UDP and Ethernet/IPv6/UDP frames
 * of the AF_XDP driver (see xdp_frame.h).
 */
#include <arpa/inet.h>
#include <string.h>

#include "batch.h"
#include "homa/wire.h"
#include "xdp_frame.h"

/** IPv4 "don't fragment" flag; the more-fragments flag and offset bits. */
#define IP_DF_BIT 0x4000
#define IP_FRAG_BITS 0x3fff
/** Ethernet types of IPv4 and IPv6. */
#define ETH_IP4 0x0800
#define ETH_IP6 0x86dd
/** Bytes of the IPv6 header (no extension headers are sent or taken). */
#define IP6_HLEN 40

/** put16() - Store @v big-endian at @p. */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** get16() - Load a big-endian 16-bit value from @p. */
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/** fold64() - Fold the 64-bit one's complement sum @s to 16 bits. */
static uint16_t fold64(uint64_t s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/**
 * sum16() - Add @len bytes at @p as big-endian 16-bit words to @sum.
 * The one's complement sum does not depend on byte order (RFC 1071,
 * section 2), so the bytes are summed in the host's order and the folded
 * result is turned to network order at the end. 32-bit words go into four
 * independent 64-bit sums, 16 bytes per step: a word's carries pile up in
 * the upper half instead of being added back one by one (exact while @len
 * is below 16 GiB), so no step waits on the one before it and compilers
 * can use vector adds. The sums are folded once at the end.
 */
static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s;
	uint32_t w[4];
	uint16_t h = 0;
	size_t i = 0;

	for (; i + 16 <= len; i += 16) {
		memcpy(w, p + i, 16);
		s0 += w[0];
		s1 += w[1];
		s2 += w[2];
		s3 += w[3];
	}
	s = s0 + s1 + s2 + s3;
	for (; i + 4 <= len; i += 4) {
		memcpy(w, p + i, 4);
		s += w[0];
	}
	for (; i + 2 <= len; i += 2) {
		memcpy(&h, p + i, 2);
		s += h;
	}
	if (len & 1) {  /* the last byte is the high byte of a word padded with 0 */
		uint8_t last[2] = {p[len - 1], 0};

		memcpy(&h, last, 2);
		s += h;
	}
	s = (uint64_t)ntohs(fold64(s)) + sum;
	return (uint32_t)((s & 0xffffffff) + (s >> 32));
}

/** homa_xdp_csum() - See xdp_frame.h. */
uint16_t homa_xdp_csum(const uint8_t *p, size_t len, uint32_t sum)
{
	uint32_t s = sum16(p, len, sum);

	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/** pseudo_sum() - The partial sum of the IPv4 pseudo-header of @ip. */
static uint32_t pseudo_sum(const uint8_t *ip, uint8_t proto, uint16_t l4_len)
{
	uint8_t ph[12];

	memcpy(ph, ip + 12, 8); /* source and destination addresses */
	ph[8] = 0;
	ph[9] = proto;
	put16(ph + 10, l4_len);
	return sum16(ph, sizeof(ph), 0);
}

/** pseudo6_sum() - The partial sum of the IPv6 pseudo-header of @ip6 (RFC 8200, 8.1). */
static uint32_t pseudo6_sum(const uint8_t *ip6, uint8_t proto, uint16_t l4_len)
{
	uint8_t tail[8] = {0, 0, (uint8_t)(l4_len >> 8), (uint8_t)l4_len, 0, 0, 0, proto};

	return sum16(tail, sizeof(tail), sum16(ip6 + 8, 32, 0));
}

/**
 * write_ip6() - The IPv6 header at @ip for an L4 payload of @l4_len bytes:
 * traffic class = priority << 5 as IPV6_TCLASS gives the UDP driver's,
 * the path's flow label, hop limit 64, no extension headers.
 */
static void write_ip6(uint8_t *ip, const struct homa_xdp_path *p, uint8_t proto,
		      uint8_t priority, uint16_t l4_len)
{
	uint32_t tclass = (uint32_t)((priority & 7) << HOMA_IO_TOS_SHIFT);
	uint32_t w = (6u << 28) | (tclass << 20) | (p->flow & 0xfffff);

	put16(ip, (uint16_t)(w >> 16));
	put16(ip + 2, (uint16_t)w);
	put16(ip + 4, l4_len);
	ip[6] = proto;
	ip[7] = HOMA_XDP_TTL;
	memcpy(ip + 8, p->src6, 16);
	memcpy(ip + 24, p->dst6, 16);
}

/** write_ip() - The IPv4 header at @ip for an L4 payload of @l4_len bytes. */
static void write_ip(uint8_t *ip, const struct homa_xdp_path *p, uint8_t proto,
		     uint8_t priority, uint16_t l4_len)
{
	ip[0] = 0x45;
	ip[1] = (uint8_t)((priority & 7) << HOMA_IO_TOS_SHIFT);
	put16(ip + 2, (uint16_t)(20 + l4_len));
	put16(ip + 4, p->ip_id);   /* per destination, see xdp_route.h */
	put16(ip + 6, IP_DF_BIT);
	ip[8] = HOMA_XDP_TTL;
	ip[9] = proto;
	put16(ip + 10, 0);
	memcpy(ip + 12, &p->src_ip, 4);
	memcpy(ip + 16, &p->dst_ip, 4);
	put16(ip + 10, homa_xdp_csum(ip, 20, 0));
}

/** homa_xdp_hlen() - See xdp_frame.h. */
size_t homa_xdp_hlen(bool v6, bool raw)
{
	if (v6)
		return raw ? HOMA_XDP_RAW6_HLEN : HOMA_XDP_UDP6_HLEN;
	return raw ? HOMA_XDP_RAW_HLEN : HOMA_XDP_UDP_HLEN;
}

/** homa_xdp_frame_len() - See xdp_frame.h. */
size_t homa_xdp_frame_len(const struct homa_io_tx *pkt, bool v6, bool raw)
{
	return homa_xdp_hlen(v6, raw) + pkt->len + pkt->ext_len;
}

/** homa_xdp_frame_build() - See xdp_frame.h. */
size_t homa_xdp_frame_build(uint8_t *frame, size_t cap, const struct homa_xdp_path *p,
			    uint16_t sport, const struct homa_io_tx *pkt, bool raw)
{
	size_t hlen = homa_xdp_hlen(p->v6, raw);
	size_t len = pkt->len + pkt->ext_len;  /* the Homa packet: data, then ext */
	size_t l4_len = len + (raw ? 0 : 8);
	uint8_t *ip = frame + HOMA_XDP_ETH_HLEN, *l4 = frame + hlen - (raw ? 0 : 8);
	uint8_t proto = raw ? HOMA_IPPROTO : IPPROTO_UDP;

	if (homa_xdp_frame_len(pkt, p->v6, raw) > cap || (p->v6 ? 0 : 20) + l4_len > 65535)
		return 0;
	memcpy(frame, p->dst_mac, 6);
	memcpy(frame + 6, p->src_mac, 6);
	put16(frame + 12, p->v6 ? ETH_IP6 : ETH_IP4);
	if (p->v6)
		write_ip6(ip, p, proto, pkt->priority, (uint16_t)l4_len);
	else
		write_ip(ip, p, proto, pkt->priority, (uint16_t)l4_len);
	if (frame + hlen != pkt->data)  /* else built in place (homa_driver_ops.tx_bufs) */
		memcpy(frame + hlen, pkt->data, pkt->len);
	if (pkt->ext_len)
		memcpy(frame + hlen + pkt->len, pkt->ext, pkt->ext_len);
	if (!raw) {
		uint16_t c;

		put16(l4, sport);
		put16(l4 + 2, pkt->dport);
		put16(l4 + 4, (uint16_t)l4_len);
		put16(l4 + 6, 0);
		c = homa_xdp_csum(l4, l4_len, p->v6 ? pseudo6_sum(ip, IPPROTO_UDP, (uint16_t)l4_len)
						       : pseudo_sum(ip, IPPROTO_UDP, (uint16_t)l4_len));
		put16(l4 + 6, c ? c : 0xffff);
	}
	return hlen + len;
}

/**
 * check_ip() - Validate the IPv4 header of @frame/@len.
 * @l4_len: receives the bytes after the IP header that the IP length covers.
 * Return: the IP header length, or 0 if the frame is not a whole,
 * unfragmented IPv4 packet with a correct header checksum (@bad says which).
 */
static size_t check_ip(const uint8_t *frame, size_t len, size_t *l4_len,
		       enum homa_xdp_bad *bad)
{
	const uint8_t *ip = frame + HOMA_XDP_ETH_HLEN;
	size_t ihl, tot;

	*bad = HOMA_XDP_BAD_HEADER;
	if (len < HOMA_XDP_ETH_HLEN + 20 || (ip[0] >> 4) != 4)
		return 0;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	tot = get16(ip + 2);
	if (ihl < 20 || tot < ihl || HOMA_XDP_ETH_HLEN + tot > len ||
	    (get16(ip + 6) & IP_FRAG_BITS))
		return 0;
	*bad = HOMA_XDP_BAD_CSUM;
	if (homa_xdp_csum(ip, ihl, 0) != 0)
		return 0;
	*bad = HOMA_XDP_OK;
	*l4_len = tot - ihl;
	return ihl;
}

/**
 * check_ip6() - Validate the IPv6 header of @frame/@len.
 * @l4_len: receives the payload bytes the IPv6 length covers.
 * Return: the header length (40), or 0 if the frame is not a whole IPv6
 * packet or its source is an IPv4-mapped address (a stranger's disguise
 * of an IPv4 peer; @bad says why).
 */
static size_t check_ip6(const uint8_t *frame, size_t len, size_t *l4_len,
			enum homa_xdp_bad *bad)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	const uint8_t *ip = frame + HOMA_XDP_ETH_HLEN;
	size_t plen;

	*bad = HOMA_XDP_BAD_HEADER;
	if (len < HOMA_XDP_ETH_HLEN + IP6_HLEN || (ip[0] >> 4) != 6)
		return 0;
	plen = get16(ip + 4);
	if (HOMA_XDP_ETH_HLEN + IP6_HLEN + plen > len || !memcmp(ip + 8, mapped, 12))
		return 0;
	*bad = HOMA_XDP_OK;
	*l4_len = plen;
	return IP6_HLEN;
}

/**
 * check_udp() - Validate the UDP header at @l4 (@l4_len bytes) of IP
 * packet @ip (IPv6 if @v6) for port @port. An IPv6 datagram must carry a
 * checksum (RFC 8200, 8.1). Return: HOMA_XDP_OK or why not.
 */
static enum homa_xdp_bad check_udp(const uint8_t *ip, bool v6, const uint8_t *l4,
				   size_t l4_len, uint16_t port)
{
	uint32_t ps;

	uint16_t ulen;

	if (l4_len < 8)
		return HOMA_XDP_BAD_HEADER;
	ulen = get16(l4 + 4);
	if (ulen < 8 || ulen > l4_len)
		return HOMA_XDP_BAD_HEADER;
	if (get16(l4 + 2) != port)
		return HOMA_XDP_OTHER_PORT;
	if (!get16(l4 + 6))
		return v6 ? HOMA_XDP_BAD_CSUM : HOMA_XDP_OK;
	ps = v6 ? pseudo6_sum(ip, IPPROTO_UDP, ulen) : pseudo_sum(ip, IPPROTO_UDP, ulen);
	if (homa_xdp_csum(l4, ulen, ps) != 0)
		return HOMA_XDP_BAD_CSUM;
	return HOMA_XDP_OK;
}

/** homa_xdp_frame_parse() - See xdp_frame.h. */
enum homa_xdp_bad homa_xdp_frame_parse(uint8_t *frame, size_t len, bool raw,
				       uint16_t port, struct homa_io_rx *out)
{
	enum homa_xdp_bad bad = HOMA_XDP_BAD_HEADER;
	bool v6 = len >= HOMA_XDP_ETH_HLEN && get16(frame + 12) == ETH_IP6;
	size_t l4_len = 0, ihl = 0;
	uint8_t *ip = frame + HOMA_XDP_ETH_HLEN, *l4;
	uint32_t src;

	if (v6)
		ihl = check_ip6(frame, len, &l4_len, &bad);
	else if (len >= HOMA_XDP_ETH_HLEN && get16(frame + 12) == ETH_IP4)
		ihl = check_ip(frame, len, &l4_len, &bad);
	if (!ihl)
		return bad;
	l4 = ip + ihl;
	if (ip[v6 ? 6 : 9] != (raw ? HOMA_IPPROTO : IPPROTO_UDP))
		return HOMA_XDP_OTHER_PORT;  /* IPv6 extension headers included */
	if (raw) {
		if (l4_len < 4)
			return HOMA_XDP_BAD_HEADER;
		if (get16(l4 + 2) != port)
			return HOMA_XDP_OTHER_PORT;
		out->data = l4;
		out->len = l4_len;
	} else {
		bad = check_udp(ip, v6, l4, l4_len, port);
		if (bad)
			return bad;
		out->data = l4 + 8;
		out->len = (size_t)get16(l4 + 4) - 8;
	}
	if (v6) {
		memcpy(out->src.b, ip + 8, 16);
		out->priority = homa_io_tos_priority((uint8_t)((get16(ip) >> 4) & 0xff));
		return HOMA_XDP_OK;
	}
	memcpy(&src, ip + 12, 4);
	out->src = homa_addr_ipv4(ntohl(src));
	out->priority = homa_io_tos_priority(ip[1]);
	return HOMA_XDP_OK;
}
