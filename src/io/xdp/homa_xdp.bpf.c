/* SPDX-License-Identifier: MIT */
/**
 * @file homa_xdp.bpf.c
 * The XDP program of the AF_XDP driver (compiled with clang -target bpf
 * and embedded in the library). It redirects Homa packets addressed to
 * this socket to the AF_XDP socket of the queue they arrived on and passes
 * everything else (ARP, TCP, other UDP ports, IPv6, fragments) to the
 * kernel unchanged.
 *
 * A Homa packet is IPv4, not a fragment, and either UDP to the configured
 * port (UDP format) or IP protocol 146 whose Homa destination port is the
 * configured one (raw format). The configuration lives in the one-entry
 * array homa_cfg, written by the driver before it attaches the program.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/** IP protocol number of Homa. */
#define HOMA_PROTO 146

/** What the driver tells the program (same layout as struct xdp_cfg in xdp.c). */
struct homa_xdp_cfg {
	__u16 port;   /**< Homa port, host byte order */
	__u8 raw;     /**< 1: IP protocol 146; 0: UDP */
	__u8 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} homa_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct homa_xdp_cfg);
} homa_cfg SEC(".maps");

/** homa_dport() - The destination port of the Homa packet in @ctx, or 0. */
static __always_inline __u16 homa_dport(struct xdp_md *ctx, const struct homa_xdp_cfg *c)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	__u8 *l4;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return 0;
	if (ip->ihl < 5 || (ip->frag_off & bpf_htons(0x3fff)))
		return 0;
	l4 = (__u8 *)ip + ip->ihl * 4;
	if (l4 + 4 > (__u8 *)end)
		return 0;
	if (c->raw ? ip->protocol != HOMA_PROTO : ip->protocol != IPPROTO_UDP)
		return 0;
	/* both formats: destination port at bytes 2..3 of the L4 header */
	return (__u16)((l4[2] << 8) | l4[3]);
}

/** homa_xdp() - Redirect this socket's Homa packets; pass the rest. */
SEC("xdp")
int homa_xdp(struct xdp_md *ctx)
{
	__u32 zero = 0;
	const struct homa_xdp_cfg *c = bpf_map_lookup_elem(&homa_cfg, &zero);

	if (!c || !c->port || homa_dport(ctx, c) != c->port)
		return XDP_PASS;
	return bpf_redirect_map(&homa_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual MIT/GPL";
