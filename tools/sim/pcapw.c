/* SPDX-License-Identifier: MIT */
/**
 * @file pcapw.c
 * --pcap: the first packets hosts emit, as a pcap file (nanosecond
 * timestamps, magic 0xa1b23c4d, linktype 101 = raw IP). Each record is
 * an IPv4 header (protocol 146, DSCP = Homa priority in its 3 high bits,
 * i.e. TOS = priority << 5, addresses of the simulated hosts, header
 * checksum) followed by the Homa packet. The timestamp is the simulated
 * emission time. The file is written by hand: a 24-byte global header and
 * a 16-byte header per record, in host byte order as pcap allows.
 */
#include <string.h>

#include "sim.h"

/** pcap global header fields. */
#define PCAP_MAGIC_NS 0xa1b23c4du
#define LINKTYPE_RAW 101
#define IPPROTO_HOMA 146

/** put16() - Big-endian 16-bit store into a header. */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** put32() - Big-endian 32-bit store into a header. */
static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/** ip_checksum() - Internet checksum of a 20-byte IPv4 header. */
static uint16_t ip_checksum(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/**
 * sim_pcap_open() - Create @path and write the global header; packets are
 * then captured by the run's observer. Return: 0 or HOMA_EIO.
 */
int sim_pcap_open(struct sim_run *r, const char *path)
{
	uint32_t g[6] = {PCAP_MAGIC_NS, 2u | (4u << 16), 0, 0, 65535, LINKTYPE_RAW};

	r->pcap = fopen(path, "wb");
	if (!r->pcap) {
		fprintf(stderr, "homa-sim: cannot create %s\n", path);
		return HOMA_EIO;
	}
	r->pcap_left = r->o->pcap_count;
	if (fwrite(g, sizeof(g), 1, r->pcap) != 1)
		return HOMA_EIO;
	return 0;
}

/** sim_pcap_packet() - Append @pkt, emitted at @now, to the capture. */
void sim_pcap_packet(struct sim_run *r, const struct homa_sim_pkt *pkt, uint64_t now)
{
	uint32_t rec[4];
	uint8_t ip[20];
	homa_addr a;

	memset(ip, 0, sizeof(ip));
	ip[0] = 0x45;
	ip[1] = (uint8_t)(pkt->prio << 5);
	put16(ip + 2, (uint16_t)(20 + pkt->len));
	put16(ip + 4, (uint16_t)pkt->uid);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = IPPROTO_HOMA;
	a = homa_sim_host_addr(pkt->src);
	put32(ip + 12, homa_addr_get_ipv4(&a));
	a = homa_sim_host_addr(pkt->dst);
	put32(ip + 16, homa_addr_get_ipv4(&a));
	put16(ip + 10, ip_checksum(ip));
	rec[0] = (uint32_t)(now / 1000000000ull);
	rec[1] = (uint32_t)(now % 1000000000ull);
	rec[2] = rec[3] = 20 + pkt->len;
	if (fwrite(rec, sizeof(rec), 1, r->pcap) != 1 || fwrite(ip, 20, 1, r->pcap) != 1 ||
	    fwrite(pkt->data, pkt->len, 1, r->pcap) != 1)
		r->pcap_left = 1;
	r->pcap_left--;
}
