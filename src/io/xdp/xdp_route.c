/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_route.c
 * Route and neighbour look-ups over rtnetlink for the AF_XDP driver (see
 * xdp_route.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "xdp_route.h"

/** Neighbour states whose link address may be used. */
#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)
/** Room for one request or reply. */
#define NL_BUF 4096

/** A request: header, family message, attributes. */
struct nl_req {
	struct nlmsghdr h;
	union {
		struct rtmsg rt;
		struct ndmsg nd;
	};
	char attrs[64];
};

/**
 * seed_ids() - Random starting values for @r's IPv4 id counters and a
 * random key for their hash (from getrandom(); should the kernel refuse,
 * the clock stands in: the ids then are only less unpredictable).
 */
static void seed_ids(struct homa_xdp_route *r)
{
	struct timespec ts;

	if (getrandom(&r->id_key, sizeof(r->id_key), GRND_NONBLOCK) == sizeof(r->id_key) &&
	    getrandom(r->ids, sizeof(r->ids), GRND_NONBLOCK) == sizeof(r->ids))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r->id_key = (uint32_t)ts.tv_nsec * 2654435761u;
	for (unsigned i = 0; i < HOMA_XDP_ID_BUCKETS; i++)
		r->ids[i] = (uint16_t)((r->id_key + i) * 40503u >> 8);
}

/**
 * next_id() - The IPv4 id of the next packet from @src to @dst (network
 * order): the counter of their bucket, advanced by one.
 */
static uint16_t next_id(struct homa_xdp_route *r, uint32_t src, uint32_t dst)
{
	uint32_t h = (src ^ r->id_key) * 2654435761u;

	h = (h ^ dst ^ (h >> 15)) * 2246822519u;
	return r->ids[(h >> 24) % HOMA_XDP_ID_BUCKETS]++;
}

/**
 * flow_label() - The IPv6 flow label of the flow from @r's port to
 * @dst:@dport of path @p: a keyed hash of addresses and ports, 20 bits,
 * never 0, as Linux labels a UDP socket's datagrams.
 */
static uint32_t flow_label(const struct homa_xdp_route *r, const struct homa_xdp_path *p,
			   uint16_t dport)
{
	uint32_t h = r->id_key ^ ((uint32_t)r->sport << 16 | dport);

	for (int i = 0; i < 16; i += 4) {
		uint32_t a, b;

		memcpy(&a, p->src6 + i, 4);
		memcpy(&b, p->dst6 + i, 4);
		h = (h ^ a) * 2654435761u;
		h = (h ^ b ^ (h >> 15)) * 2246822519u;
	}
	h = (h ^ (h >> 13)) & 0xfffffu;
	return h ? h : 1;
}

/** homa_xdp_route_open() - See xdp_route.h. */
int homa_xdp_route_open(struct homa_xdp_route *r, int ifindex, const uint8_t mac[6],
			const struct sockaddr_storage *bind, uint16_t sport)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};

	memset(r, 0, sizeof(*r));
	r->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (r->nl < 0)
		return HOMA_EIO;
	setsockopt(r->nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r->ifindex = ifindex;
	memcpy(r->mac, mac, 6);
	r->sport = sport;
	if (bind->ss_family == AF_INET6) {
		const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)bind;

		r->bound6_set = !IN6_IS_ADDR_UNSPECIFIED(&b6->sin6_addr);
		memcpy(r->bound6, &b6->sin6_addr, 16);
		r->v6_ok = true;
		r->v4_ok = !r->bound6_set;  /* "::" is dual-stack, as the UDP driver's socket */
	} else {
		r->bound_ip = ((const struct sockaddr_in *)bind)->sin_addr.s_addr;
		r->v4_ok = true;
	}
	seed_ids(r);
	return 0;
}

/** homa_xdp_route_close() - See xdp_route.h. */
void homa_xdp_route_close(struct homa_xdp_route *r)
{
	if (r->nl >= 0)
		close(r->nl);
	r->nl = -1;
}

/** add_attr() - Append attribute @type with @len bytes of @data to @q. */
static void add_attr(struct nl_req *q, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)q + NLMSG_ALIGN(q->h.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	q->h.nlmsg_len = NLMSG_ALIGN(q->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/**
 * transact() - Send @q and read the answer to it into @buf.
 * Return: the reply's header (type NLMSG_ERROR with error 0 for an ack),
 * or NULL with @err set to the kernel's negative errno (or -EIO).
 */
static struct nlmsghdr *transact(struct homa_xdp_route *r, struct nl_req *q,
				 char *buf, int *err)
{
	q->h.nlmsg_seq = ++r->seq;
	*err = -EIO;
	if (send(r->nl, q, q->h.nlmsg_len, 0) < 0)
		return NULL;
	for (;;) {
		ssize_t n = recv(r->nl, buf, NL_BUF, 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n < 0)
			return NULL;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != r->seq)
				continue;  /* a late answer to an earlier request */
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				*err = e->error;
				return e->error ? NULL : h;
			}
			*err = 0;
			return h;
		}
	}
}

/** link_local6() - Whether the IPv6 address @a is link-local (fe80::/10). */
static bool link_local6(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

/**
 * get_route() - Ask the kernel how it reaches @dst (@alen = 4 bytes of an
 * IPv4 or 16 of an IPv6 address): the next hop @hop (the gateway or @dst
 * itself) and the preferred source address @src (@alen bytes each). A
 * link-local IPv6 @dst is looked up in the scope of our interface (every
 * interface has a route to fe80::/64; the driver's is the only link it
 * sends on).
 * Return: 0, or HOMA_ENOTSUP (no unicast route through our interface).
 */
static int get_route(struct homa_xdp_route *r, const uint8_t *dst, size_t alen,
		     uint8_t *hop, uint8_t *src)
{
	static const uint8_t zero[16];
	struct nl_req q = {.h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)),
				 .nlmsg_type = RTM_GETROUTE, .nlmsg_flags = NLM_F_REQUEST},
			   .rt = {.rtm_family = alen == 4 ? AF_INET : AF_INET6,
				  .rtm_dst_len = (unsigned char)(alen * 8)}};
	char buf[NL_BUF];
	int err, oif = 0;
	struct nlmsghdr *h;

	add_attr(&q, RTA_DST, dst, alen);
	if (alen == 16 && link_local6(dst))
		add_attr(&q, RTA_OIF, &r->ifindex, sizeof(r->ifindex));
	h = transact(r, &q, buf, &err);
	if (!h || h->nlmsg_type != RTM_NEWROUTE)
		return HOMA_ENOTSUP;
	struct rtmsg *rt = NLMSG_DATA(h);
	int len = (int)RTM_PAYLOAD(h);

	if (rt->rtm_type != RTN_UNICAST)
		return HOMA_ENOTSUP;  /* local, broadcast, unreachable, ... */
	memcpy(hop, dst, alen);
	memset(src, 0, alen);
	for (struct rtattr *a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) >= 4)
			memcpy(&oif, RTA_DATA(a), 4);
		else if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == alen)
			memcpy(hop, RTA_DATA(a), alen);
		else if (a->rta_type == RTA_PREFSRC && RTA_PAYLOAD(a) == alen)
			memcpy(src, RTA_DATA(a), alen);
	}
	return oif == r->ifindex && memcmp(src, zero, alen) ? 0 : HOMA_ENOTSUP;
}

/**
 * get_neigh() - The link address of next hop @hop (@alen bytes: IPv4 or
 * IPv6) from the neighbour table. Return: 0, or HOMA_EAGAIN (no usable
 * entry yet).
 */
static int get_neigh(struct homa_xdp_route *r, const uint8_t *hop, size_t alen, uint8_t mac[6])
{
	struct nl_req q = {.h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
				 .nlmsg_type = RTM_GETNEIGH, .nlmsg_flags = NLM_F_REQUEST},
			   .nd = {.ndm_family = alen == 4 ? AF_INET : AF_INET6,
				  .ndm_ifindex = r->ifindex}};
	char buf[NL_BUF];
	int err;
	struct nlmsghdr *h;

	add_attr(&q, NDA_DST, hop, alen);
	h = transact(r, &q, buf, &err);
	if (!h || h->nlmsg_type != RTM_NEWNEIGH)
		return HOMA_EAGAIN;
	struct ndmsg *nd = NLMSG_DATA(h);
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));

	if (!(nd->ndm_state & NUD_USABLE))
		return HOMA_EAGAIN;
	for (struct rtattr *a = (struct rtattr *)(nd + 1); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			return 0;
		}
	return HOMA_EAGAIN;
}

/**
 * resolve() - Have the kernel resolve next hop @hop (@alen bytes):
 * RTM_NEWNEIGH with NTF_USE creates the entry if needed and starts a probe
 * (ARP or neighbour solicitation), as a packet the kernel itself sent
 * would. Failures are left to the next attempt.
 */
static void resolve(struct homa_xdp_route *r, const uint8_t *hop, size_t alen)
{
	struct nl_req q = {.h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
				 .nlmsg_type = RTM_NEWNEIGH,
				 .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE},
			   .nd = {.ndm_family = alen == 4 ? AF_INET : AF_INET6,
				  .ndm_ifindex = r->ifindex, .ndm_state = NUD_NONE,
				  .ndm_flags = NTF_USE}};
	char buf[NL_BUF];
	int err;

	add_attr(&q, NDA_DST, hop, alen);
	transact(r, &q, buf, &err);
	r->misses++;
}

/**
 * fill() - Read the tables for slot @s (destination already set).
 * A family the bind address excludes has no path (HOMA_ENOTSUP).
 */
static void fill(struct homa_xdp_route *r, struct homa_xdp_route_slot *s)
{
	bool v6 = !homa_addr_is_ipv4(&s->dst);
	size_t alen = v6 ? 16 : 4;
	const uint8_t *dst = v6 ? s->dst.b : s->dst.b + 12;
	uint8_t hop[16], src[16];

	r->lookups++;
	s->ok = (v6 ? r->v6_ok : r->v4_ok) ? get_route(r, dst, alen, hop, src) : HOMA_ENOTSUP;
	if (s->ok)
		return;
	s->ok = get_neigh(r, hop, alen, s->path.dst_mac);
	if (s->ok) {
		resolve(r, hop, alen);
		return;
	}
	memcpy(s->path.src_mac, r->mac, 6);
	s->path.v6 = v6;
	if (v6) {
		memcpy(s->path.src6, r->bound6_set ? r->bound6 : src, 16);
		memcpy(s->path.dst6, dst, 16);
	} else {
		memcpy(&s->path.src_ip, src, 4);
		if (r->bound_ip)
			s->path.src_ip = r->bound_ip;
		memcpy(&s->path.dst_ip, dst, 4);
	}
}

/** slot_of() - @dst's slot in @r's cache (a hash of its bytes). */
static struct homa_xdp_route_slot *slot_of(struct homa_xdp_route *r, const homa_addr *dst)
{
	uint32_t h = 0, w;

	for (int i = 0; i < 16; i += 4) {
		memcpy(&w, dst->b + i, 4);
		h = (h ^ w) * 2654435761u;
	}
	return &r->slot[(h ^ (h >> 16)) % HOMA_XDP_ROUTE_SLOTS];
}

/** homa_xdp_route_get() - See xdp_route.h. */
const struct homa_xdp_path *homa_xdp_route_get(struct homa_xdp_route *r, const homa_addr *dst,
					       uint16_t dport, uint64_t now_ns, int *err)
{
	struct homa_xdp_route_slot *s = slot_of(r, dst);
	uint64_t ttl = s->ok ? HOMA_XDP_ROUTE_RETRY_NS : HOMA_XDP_ROUTE_TTL_NS;

	if (!s->used || !homa_addr_equal(&s->dst, dst) || now_ns - s->checked_ns >= ttl) {
		s->dst = *dst;
		s->used = true;
		s->checked_ns = now_ns;
		fill(r, s);
	}
	*err = s->ok;
	if (s->ok)
		return NULL;
	if (s->path.v6)
		s->path.flow = flow_label(r, &s->path, dport);
	else
		s->path.ip_id = next_id(r, s->path.src_ip, s->path.dst_ip);
	return &s->path;
}
