/* SPDX-License-Identifier: MIT */
/**
 * @file test_xdp_frame.c
 * The XDP driver's frames (src/io/xdp/xdp_frame.c): headers as the kernel
 * writes them for the UDP and raw drivers, and every way a received frame
 * can be wrong.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "xdp_frame.h"

/** A path 10.0.0.1 -> 10.0.0.2 with recognisable MACs. */
static const struct homa_xdp_path path = {
	.dst_mac = {2, 0, 0, 0, 0, 2}, .src_mac = {2, 0, 0, 0, 0, 1},
	.src_ip = 0x0100000a, .dst_ip = 0x0200000a, /* network order on little-endian */
	.ip_id = 0x1234,
};

/** A path fd00::1 -> fd00:0:0:1::2 with flow label 0x8abcd. */
static const struct homa_xdp_path path6 = {
	.dst_mac = {2, 0, 0, 0, 0, 2}, .src_mac = {2, 0, 0, 0, 0, 1}, .v6 = true,
	.src6 = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	.dst6 = {0xfd, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2},
	.flow = 0x8abcd,
};

/** build_on() - A frame along @p carrying 100 bytes to port 4000 at priority 5. */
static size_t build_on(const struct homa_xdp_path *p, uint8_t *f, size_t cap, bool raw,
		       uint8_t *payload)
{
	struct homa_io_tx tx = {.data = payload, .len = 100, .dport = 4000, .priority = 5};

	for (int i = 0; i < 100; i++)
		payload[i] = (uint8_t)(i * 7);
	payload[2] = 4000 >> 8; /* a Homa header's destination port (raw format) */
	payload[3] = 4000 & 0xff;
	return homa_xdp_frame_build(f, cap, p, 3000, &tx, raw);
}

/** build() - build_on() the IPv4 path. */
static size_t build(uint8_t *f, size_t cap, bool raw, uint8_t *payload)
{
	return build_on(&path, f, cap, raw, payload);
}

/** The UDP frame's header bytes are those Linux sends for an unconnected UDP socket. */
static void udp_headers(void **state)
{
	uint8_t f[256], pl[100];
	size_t n = build(f, sizeof(f), false, pl);
	static const uint8_t ip[12] = {0x45, 5 << 5, 0, 128, 0x12, 0x34, 0x40, 0, 64, 17};

	(void)state;
	assert_int_equal(n, 142);
	assert_memory_equal(f, path.dst_mac, 6);
	assert_memory_equal(f + 6, path.src_mac, 6);
	assert_int_equal(f[12] << 8 | f[13], 0x0800);
	assert_memory_equal(f + 14, ip, 10);          /* version..protocol, the path's id */
	assert_int_equal(homa_xdp_csum(f + 14, 20, 0), 0); /* header checksum valid */
	assert_int_equal(f[34] << 8 | f[35], 3000);
	assert_int_equal(f[36] << 8 | f[37], 4000);
	assert_int_equal(f[38] << 8 | f[39], 108);
	assert_memory_equal(f + 42, pl, 100);
}

/**
 * A packet whose payload stays in the message's memory (ext, zero-copy
 * sends) makes the same frame, checksum included, as the whole packet.
 */
static void ext_payload(void **state)
{
	for (int raw = 0; raw < 2; raw++) {
		uint8_t whole[256], split[256], pl[100];
		size_t n = build(whole, sizeof(whole), raw, pl);
		struct homa_io_tx tx = {.data = pl, .len = 30, .ext = pl + 30, .ext_len = 70,
					.dport = 4000, .priority = 5};

		(void)state;
		memset(split, 0xee, sizeof(split));
		assert_int_equal(homa_xdp_frame_build(split, sizeof(split), &path, 3000, &tx, raw), n);
		assert_memory_equal(split, whole, n);
		/* the ext bytes count against the frame's room too */
		assert_int_equal(homa_xdp_frame_build(split, n - 1, &path, 3000, &tx, raw), 0);
	}
}

/**
 * A packet built where its frame carries it (data right behind the
 * headers' room, homa_driver_ops.tx_bufs) gets the same frame as a copied
 * one, checksums included, with and without ext bytes.
 */
static void in_place(void **state)
{
	for (int raw = 0; raw < 2; raw++) {
		size_t h = raw ? HOMA_XDP_RAW_HLEN : HOMA_XDP_UDP_HLEN;
		uint8_t copied[256], placed[256], pl[100];
		size_t n = build(copied, sizeof(copied), raw, pl);
		struct homa_io_tx tx = {.data = placed + h, .len = 30, .ext = pl + 30, .ext_len = 70,
					.dport = 4000, .priority = 5};

		(void)state;
		memset(placed, 0xee, sizeof(placed));
		memcpy(placed + h, pl, 30);
		assert_int_equal(homa_xdp_frame_build(placed, sizeof(placed), &path, 3000, &tx, raw), n);
		assert_memory_equal(placed, copied, n);
		tx.len = 100;
		tx.ext_len = 0;
		memcpy(placed + h, pl, 100);
		assert_int_equal(homa_xdp_frame_build(placed, sizeof(placed), &path, 3000, &tx, raw), n);
		assert_memory_equal(placed, copied, n);
	}
}

/** A frame built is parsed back to the same packet, source and priority. */
static void round_trip(void **state)
{
	for (int raw = 0; raw < 2; raw++) {
		uint8_t f[256], pl[100];
		size_t n = build(f, sizeof(f), raw, pl);
		struct homa_io_rx rx;

		(void)state;
		assert_int_equal(homa_xdp_frame_parse(f, n, raw, 4000, &rx), HOMA_XDP_OK);
		assert_int_equal(rx.len, 100);
		assert_memory_equal(rx.data, pl, 100);
		assert_int_equal(rx.priority, 5);
		assert_int_equal(homa_addr_get_ipv4(&rx.src), 0x0a000001);
		assert_int_equal(f[23], raw ? 146 : 17);
		assert_int_equal(homa_xdp_frame_parse(f, n, raw, 4001, &rx), HOMA_XDP_OTHER_PORT);
		assert_int_equal(homa_xdp_frame_parse(f, n, !raw, 4000, &rx), HOMA_XDP_OTHER_PORT);
	}
}

/** Truncations, fragments, bad lengths and corrupted bytes are refused, never read past. */
static void bad_frames(void **state)
{
	uint8_t f[256], g[256], pl[100];
	size_t n = build(f, sizeof(f), false, pl);
	struct homa_io_rx rx;

	(void)state;
	for (size_t len = 0; len < n; len++)
		assert_int_not_equal(homa_xdp_frame_parse(f, len, false, 4000, &rx), HOMA_XDP_OK);
	memcpy(g, f, n);
	g[14 + 6] |= 0x20;                             /* more fragments */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_HEADER);
	memcpy(g, f, n);
	g[14] = 0x44;                                  /* IHL 16 bytes */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_HEADER);
	memcpy(g, f, n);
	g[14 + 8] = 1;                                 /* TTL changed: header checksum wrong */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_CSUM);
	memcpy(g, f, n);
	g[60] ^= 1;                                    /* payload bit flipped: UDP checksum */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_CSUM);
	memcpy(g, f, n);
	g[38] = 0xff;                                  /* UDP length past the IP length */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_HEADER);
	memcpy(g, f, n);
	g[12] = 0x86;                                  /* IPv6 ethertype */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_HEADER);
}

/**
 * A packet that does not fit the frame's capacity is not built; one that
 * fits exactly is (UDP: 14 + 20 + 8 + 100 bytes, raw: 14 + 20 + 100). The
 * buffer is larger than every capacity passed, so a build that ignored the
 * capacity would be caught by the return value, not by memory corruption.
 */
static void too_big(void **state)
{
	uint8_t f[256], pl[100];

	(void)state;
	assert_int_equal(build(f, 141, false, pl), 0);
	assert_int_equal(build(f, 142, false, pl), 142);
	assert_int_equal(build(f, 133, true, pl), 0);
	assert_int_equal(build(f, 134, true, pl), 134);
}

/** ref_csum() - RFC 1071 two bytes at a time, the definition homa_xdp_csum() must match. */
static uint16_t ref_csum(const uint8_t *p, size_t len, uint32_t sum)
{
	uint64_t s = sum;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/**
 * The word-at-a-time checksum equals the definition for every length
 * (odd ones too; each length of a full frame's payload, 1400-1600), every
 * alignment, starting sum and for data that carries on every add (all 0xff)
 * or never (all 0).
 */
static void csum_matches_definition(void **state)
{
	static uint8_t buf[4096 + 8];
	static const uint32_t sums[] = {0, 1, 0xffff, 0x1fffe, 0xfffffff0u};
	uint32_t x = 12345;

	(void)state;
	for (int fillc = 0; fillc < 3; fillc++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = fillc == 0 ? (uint8_t)(x >> 16) : fillc == 1 ? 0xff : 0;
		}
		for (size_t len = 0; len <= 4096;
		     len += len < 80 || (len >= 1400 && len < 1600) ? 1 : 97)
			for (size_t off = 0; off < 8; off++)
				for (size_t k = 0; k < sizeof(sums) / sizeof(sums[0]); k++)
					assert_int_equal(homa_xdp_csum(buf + off, len, sums[k]),
							 ref_csum(buf + off, len, sums[k]));
	}
}

/**
 * The IPv6 UDP frame's header bytes are those Linux sends for an IPv6 UDP
 * socket with IPV6_TCLASS = priority << 5: version 6, the traffic class,
 * the path's flow label, payload length, next header 17, hop limit 64,
 * the addresses, and a UDP checksum over the IPv6 pseudo-header that
 * RFC 1071's definition confirms.
 */
static void udp6_headers(void **state)
{
	uint8_t f[256], pl[100], ph[40 + 108];
	size_t n = build_on(&path6, f, sizeof(f), false, pl);
	static const uint8_t ip[8] = {0x60 | (5 << 5) >> 4, ((5 << 5) & 0xf) << 4 | 0x8,
				      0xab, 0xcd, 0, 108, 17, 64};

	(void)state;
	assert_int_equal(n, 14 + 40 + 8 + 100);
	assert_int_equal(f[12] << 8 | f[13], 0x86dd);
	assert_memory_equal(f + 14, ip, 8);
	assert_memory_equal(f + 22, path6.src6, 16);
	assert_memory_equal(f + 38, path6.dst6, 16);
	assert_int_equal(f[54] << 8 | f[55], 3000);
	assert_int_equal(f[56] << 8 | f[57], 4000);
	assert_int_equal(f[58] << 8 | f[59], 108);
	assert_memory_equal(f + 62, pl, 100);
	/* pseudo-header (addresses, length, next header) then the datagram */
	memcpy(ph, f + 22, 32);
	memset(ph + 32, 0, 8);
	ph[34] = 0;
	ph[35] = 108;
	ph[39] = 17;
	memcpy(ph + 40, f + 54, 108);
	assert_int_equal(ref_csum(ph, sizeof(ph), 0), 0);
	assert_int_not_equal(f[60] << 8 | f[61], 0);
	/* raw format: next header 146, the Homa packet right behind */
	n = build_on(&path6, f, sizeof(f), true, pl);
	assert_int_equal(n, 14 + 40 + 100);
	assert_int_equal(f[20], 146);
	assert_int_equal(f[18] << 8 | f[19], 100);
	assert_memory_equal(f + 54, pl, 100);
}

/** An IPv6 frame built is parsed back to the same packet, IPv6 source and priority. */
static void round_trip6(void **state)
{
	for (int raw = 0; raw < 2; raw++) {
		uint8_t f[256], pl[100];
		size_t n = build_on(&path6, f, sizeof(f), raw, pl);
		struct homa_io_rx rx;

		(void)state;
		assert_int_equal(homa_xdp_frame_parse(f, n, raw, 4000, &rx), HOMA_XDP_OK);
		assert_int_equal(rx.len, 100);
		assert_memory_equal(rx.data, pl, 100);
		assert_int_equal(rx.priority, 5);
		assert_false(homa_addr_is_ipv4(&rx.src));
		assert_memory_equal(rx.src.b, path6.src6, 16);
		assert_int_equal(homa_xdp_frame_parse(f, n, raw, 4001, &rx), HOMA_XDP_OTHER_PORT);
		assert_int_equal(homa_xdp_frame_parse(f, n, !raw, 4000, &rx), HOMA_XDP_OTHER_PORT);
	}
}

/**
 * IPv6 frames: truncations, a payload length past the frame, a UDP
 * datagram without checksum (not allowed over IPv6), a flipped payload
 * bit, an extension header and an IPv4-mapped source are refused.
 */
static void bad_frames6(void **state)
{
	uint8_t f[256], g[256], pl[100];
	size_t n = build_on(&path6, f, sizeof(f), false, pl);
	struct homa_io_rx rx;

	(void)state;
	for (size_t len = 0; len < n; len++)
		assert_int_not_equal(homa_xdp_frame_parse(f, len, false, 4000, &rx), HOMA_XDP_OK);
	memcpy(g, f, n);
	g[19] = 109;                                   /* payload length past the frame */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_HEADER);
	memcpy(g, f, n);
	g[60] = g[61] = 0;                             /* no UDP checksum */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_CSUM);
	memcpy(g, f, n);
	g[100] ^= 1;                                   /* payload bit flipped */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_CSUM);
	memcpy(g, f, n);
	g[20] = 0;                                     /* hop-by-hop options header */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_OTHER_PORT);
	memcpy(g, f, n);
	g[14] = 0x40;                                  /* version 4 under the IPv6 type */
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_HEADER);
	memcpy(g, f, n);
	memset(g + 22, 0, 10);                         /* source ::ffff:0.0.0.1 */
	g[32] = g[33] = 0xff;
	assert_int_equal(homa_xdp_frame_parse(g, n, false, 4000, &rx), HOMA_XDP_BAD_HEADER);
}

/** main() - Run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_headers),
		cmocka_unit_test(csum_matches_definition),
		cmocka_unit_test(round_trip),
		cmocka_unit_test(ext_payload),
		cmocka_unit_test(in_place),
		cmocka_unit_test(bad_frames),
		cmocka_unit_test(too_big),
		cmocka_unit_test(udp6_headers),
		cmocka_unit_test(round_trip6),
		cmocka_unit_test(bad_frames6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
