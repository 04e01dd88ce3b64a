/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_route.c
 * Route and neighbour look-ups over rtnetlink for the AF_XDP driver (see
 * xdp_route.h).
 */
#include <errno.h>
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

/** homa_xdp_route_open() - See xdp_route.h. */
int homa_xdp_route_open(struct homa_xdp_route *r, int ifindex, const uint8_t mac[6],
			uint32_t bound_ip)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};

	memset(r, 0, sizeof(*r));
	r->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (r->nl < 0)
		return HOMA_EIO;
	setsockopt(r->nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r->ifindex = ifindex;
	memcpy(r->mac, mac, 6);
	r->bound_ip = bound_ip;
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

/**
 * get_route() - Ask the kernel how it reaches @dst: the next hop (the
 * gateway or @dst itself) and the preferred source address.
 * Return: 0, or HOMA_ENOTSUP (no unicast route through our interface).
 */
static int get_route(struct homa_xdp_route *r, uint32_t dst, uint32_t *hop, uint32_t *src)
{
	struct nl_req q = {.h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)),
				 .nlmsg_type = RTM_GETROUTE, .nlmsg_flags = NLM_F_REQUEST},
			   .rt = {.rtm_family = AF_INET, .rtm_dst_len = 32}};
	char buf[NL_BUF];
	int err, oif = 0;
	struct nlmsghdr *h;

	add_attr(&q, RTA_DST, &dst, 4);
	h = transact(r, &q, buf, &err);
	if (!h || h->nlmsg_type != RTM_NEWROUTE)
		return HOMA_ENOTSUP;
	struct rtmsg *rt = NLMSG_DATA(h);
	int len = (int)RTM_PAYLOAD(h);

	if (rt->rtm_type != RTN_UNICAST)
		return HOMA_ENOTSUP;  /* local, broadcast, unreachable, ... */
	*hop = dst;
	*src = 0;
	for (struct rtattr *a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) >= 4)
			memcpy(&oif, RTA_DATA(a), 4);
		else if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) >= 4)
			memcpy(hop, RTA_DATA(a), 4);
		else if (a->rta_type == RTA_PREFSRC && RTA_PAYLOAD(a) >= 4)
			memcpy(src, RTA_DATA(a), 4);
	}
	return oif == r->ifindex && *src ? 0 : HOMA_ENOTSUP;
}

/**
 * get_neigh() - The link address of next hop @hop from the neighbour
 * table. Return: 0, or HOMA_EAGAIN (no usable entry yet).
 */
static int get_neigh(struct homa_xdp_route *r, uint32_t hop, uint8_t mac[6])
{
	struct nl_req q = {.h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
				 .nlmsg_type = RTM_GETNEIGH, .nlmsg_flags = NLM_F_REQUEST},
			   .nd = {.ndm_family = AF_INET, .ndm_ifindex = r->ifindex}};
	char buf[NL_BUF];
	int err;
	struct nlmsghdr *h;

	add_attr(&q, NDA_DST, &hop, 4);
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
 * resolve() - Have the kernel resolve next hop @hop: RTM_NEWNEIGH with
 * NTF_USE creates the entry if needed and starts a probe, as a packet the
 * kernel itself sent would. Failures are left to the next attempt.
 */
static void resolve(struct homa_xdp_route *r, uint32_t hop)
{
	struct nl_req q = {.h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
				 .nlmsg_type = RTM_NEWNEIGH,
				 .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE},
			   .nd = {.ndm_family = AF_INET, .ndm_ifindex = r->ifindex,
				  .ndm_state = NUD_NONE, .ndm_flags = NTF_USE}};
	char buf[NL_BUF];
	int err;

	add_attr(&q, NDA_DST, &hop, 4);
	transact(r, &q, buf, &err);
	r->misses++;
}

/** fill() - Read the tables for slot @s (destination already set). */
static void fill(struct homa_xdp_route *r, struct homa_xdp_route_slot *s)
{
	uint32_t hop, src;

	r->lookups++;
	s->ok = get_route(r, s->dst, &hop, &src);
	if (s->ok)
		return;
	s->ok = get_neigh(r, hop, s->path.dst_mac);
	if (s->ok) {
		resolve(r, hop);
		return;
	}
	memcpy(s->path.src_mac, r->mac, 6);
	s->path.src_ip = r->bound_ip ? r->bound_ip : src;
	s->path.dst_ip = s->dst;
}

/** homa_xdp_route_get() - See xdp_route.h. */
const struct homa_xdp_path *homa_xdp_route_get(struct homa_xdp_route *r, uint32_t dst,
					       uint64_t now_ns, int *err)
{
	struct homa_xdp_route_slot *s = &r->slot[(dst ^ (dst >> 16)) % HOMA_XDP_ROUTE_SLOTS];
	uint64_t ttl = s->ok ? HOMA_XDP_ROUTE_RETRY_NS : HOMA_XDP_ROUTE_TTL_NS;

	if (s->dst != dst || now_ns - s->checked_ns >= ttl) {
		s->dst = dst;
		s->checked_ns = now_ns;
		fill(r, s);
	}
	*err = s->ok;
	if (s->ok)
		return NULL;
	s->path.ip_id = next_id(r, s->path.src_ip, dst);
	return &s->path;
}
