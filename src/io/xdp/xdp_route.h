/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_route.h
 * Where AF_XDP packets go: the next hop's link address and our source
 * address, read from the kernel's own route and neighbour tables over
 * rtnetlink, with a small per-destination cache. A missing neighbour
 * entry is resolved by the kernel (an RTM_NEWNEIGH request with NTF_USE,
 * which starts ARP exactly as a kernel send would); the driver never
 * writes ARP itself.
 *
 * IPv6 works the same way (AF_INET6 routes and neighbours; the kernel's
 * neighbour discovery resolves). IPv6 packets carry a flow label as
 * Linux's automatic flow labels (net.ipv6.auto_flowlabels = 1, the
 * default) give a UDP socket's datagrams: a keyed hash of the addresses
 * and ports, 20 bits, constant per flow (the values differ from the
 * kernel's, whose key is secret).
 *
 * IPv4 ids are chosen as Linux chooses them for the datagrams of the UDP
 * and raw drivers (DF set, but fragmentation allowed, so the kernel takes
 * the id from its hashed generator): a 16-bit counter per bucket of a
 * keyed hash of the source and destination addresses, starting at a
 * random value and advanced by one per packet. Receivers never reassemble
 * DF packets, so the id only has to look like the kernel's.
 */
#ifndef HOMA_IO_XDP_ROUTE_H
#define HOMA_IO_XDP_ROUTE_H

#include <stdint.h>
#include <sys/socket.h>

#include "homa/engine.h"
#include "xdp_frame.h"

/** Destinations remembered. */
#define HOMA_XDP_ROUTE_SLOTS 64
/** How long a resolved destination is trusted before the tables are read again (ns). */
#define HOMA_XDP_ROUTE_TTL_NS 1000000000ull
/** How long an unresolved destination waits before asking again (ns). */
#define HOMA_XDP_ROUTE_RETRY_NS 5000000ull

/** IPv4 id counters (a power of two). */
#define HOMA_XDP_ID_BUCKETS 256

/** One remembered destination. */
struct homa_xdp_route_slot {
	homa_addr dst;            /**< IPv4-mapped or IPv6 */
	bool used;                /**< false = empty */
	uint64_t checked_ns;      /**< when the tables were last read for it */
	int ok;                   /**< 0 = path valid, else the last error */
	struct homa_xdp_path path;
};

/** The resolver of one driver; used by the sending thread only. */
struct homa_xdp_route {
	int nl;                   /**< NETLINK_ROUTE socket */
	uint32_t seq;
	int ifindex;
	uint8_t mac[6];           /**< the interface's own address */
	uint32_t bound_ip;        /**< network order; 0 = take the route's source */
	uint8_t bound6[16];       /**< IPv6 source when bound6_set */
	bool bound6_set;          /**< bound to an IPv6 address (not the wildcard) */
	bool v4_ok, v6_ok;        /**< families the bind address allows */
	uint16_t sport;           /**< our port (the flow label's hash) */
	uint64_t lookups, misses; /**< table reads; neighbour resolutions started */
	struct homa_xdp_route_slot slot[HOMA_XDP_ROUTE_SLOTS];
	uint32_t id_key;          /**< random key of the id buckets' hash */
	uint16_t ids[HOMA_XDP_ID_BUCKETS]; /**< next IPv4 id of each bucket */
};

/**
 * homa_xdp_route_open() - Open the rtnetlink socket for interface
 * @ifindex with link address @mac, for a socket bound to @bind (IPv4 or
 * IPv6; its address is the source of every packet unless it is the
 * wildcard; an IPv4 bind reaches IPv4 peers only, an IPv6 address IPv6
 * peers only, "::" both) on port @sport.
 * Return: 0 or HOMA_EIO.
 */
int homa_xdp_route_open(struct homa_xdp_route *r, int ifindex, const uint8_t mac[6],
			const struct sockaddr_storage *bind, uint16_t sport);

/** homa_xdp_route_close() - Close what homa_xdp_route_open() opened. */
void homa_xdp_route_close(struct homa_xdp_route *r);

/**
 * homa_xdp_route_get() - The path to @dst (IPv4-mapped or IPv6), port
 * @dport, at time @now_ns, from the cache or the kernel's tables.
 * Each call is for one packet: the path's ip_id is that packet's IPv4 id
 * (the next one of the destination's bucket); an IPv6 path's flow label
 * is the flow's.
 * Return: the path (owned by @r, valid until the next call), or NULL when
 * there is none yet: a family the bind address excludes, no route, a
 * route through another interface or to this host (@err = HOMA_ENOTSUP),
 * or a neighbour still being resolved (@err = HOMA_EAGAIN; the kernel was
 * asked to resolve it).
 */
const struct homa_xdp_path *homa_xdp_route_get(struct homa_xdp_route *r, const homa_addr *dst,
					       uint16_t dport, uint64_t now_ns, int *err);

#endif /* HOMA_IO_XDP_ROUTE_H */
