/* SPDX-License-Identifier: MIT */
/**
 * @file homa_xdp.bpf.c
 * The XDP program of the AF_XDP driver (compiled with clang -target bpf
 * and embedded in the library). It redirects each Homa packet to the
 * AF_XDP socket of its destination port and format on the queue it
 * arrived on, and passes everything else (ARP, neighbour discovery, TCP,
 * ports without a socket, fragments, IPv6 packets with extension headers)
 * to the kernel unchanged.
 *
 * A Homa packet is IPv4 (not a fragment) or IPv6 (no extension header),
 * and either UDP (UDP format) or IP protocol 146 (raw format); both carry
 * the destination port at bytes 2-3 of the L4 header. The drivers of one process share the program (see
 * xdp_share.h): each adds {port, format, queue} -> XSKMAP slot entries to
 * homa_ports and its sockets to homa_xsks.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/** IP protocol number of Homa. */
#define HOMA_PROTO 146

/** Key of homa_ports (same layout as struct port_key in xdp_share.c). */
struct homa_xdp_key {
	__u16 port;   /**< Homa destination port, host byte order */
	__u8 raw;     /**< 1: IP protocol 146; 0: UDP */
	__u8 pad;
	__u32 queue;  /**< receive queue */
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} homa_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct homa_xdp_key);
	__type(value, __u32);
} homa_ports SEC(".maps");

/**
 * homa_key() - Fill @k's port and format from the packet in @ctx.
 * Return: 1 if it may be a Homa packet, else 0.
 */
static __always_inline int homa_key(struct xdp_md *ctx, struct homa_xdp_key *k)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct ipv6hdr *ip6 = data + sizeof(*eth);
	__u8 *l4, proto;

	if ((void *)(eth + 1) > end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		if ((void *)(ip6 + 1) > end)
			return 0;
		proto = ip6->nexthdr;  /* an extension header is not Homa's: passed */
		l4 = (__u8 *)(ip6 + 1);
	} else {
		if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
			return 0;
		if (ip->ihl < 5 || (ip->frag_off & bpf_htons(0x3fff)))
			return 0;
		proto = ip->protocol;
		l4 = (__u8 *)ip + ip->ihl * 4;
	}
	if (l4 + 4 > (__u8 *)end)
		return 0;
	if (proto == HOMA_PROTO)
		k->raw = 1;
	else if (proto != IPPROTO_UDP)
		return 0;
	k->port = (__u16)((l4[2] << 8) | l4[3]);
	return 1;
}

/** homa_xdp() - Redirect packets of ports with a socket; pass the rest. */
SEC("xdp")
int homa_xdp(struct xdp_md *ctx)
{
	struct homa_xdp_key k = {0};
	__u32 *slot;

	if (!homa_key(ctx, &k))
		return XDP_PASS;
	k.queue = ctx->rx_queue_index;
	slot = bpf_map_lookup_elem(&homa_ports, &k);
	if (!slot)
		return XDP_PASS;
	return bpf_redirect_map(&homa_xsks, *slot, XDP_PASS);
}

char _license[] SEC("license") = "Dual MIT/GPL";
