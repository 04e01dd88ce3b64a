/* SPDX-License-Identifier: MIT */
/**
 * @file batch.c
 * sendmmsg()/recvmmsg() batching with DSCP marks and UDP segmentation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

/** homa_io_sender_init() - See batch.h. */
int homa_io_sender_init(struct homa_io_sender *s, int fd, int family,
			uint32_t batch, bool gso, bool zero_port)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->family = family;
	s->gso = gso;
	s->zero_port = zero_port;
	s->batch = batch;
	s->msgs = calloc(batch, sizeof(*s->msgs));
	s->iovs = calloc(2 * (size_t)batch, sizeof(*s->iovs));
	s->first = calloc(batch, sizeof(*s->first));
	s->npkts = calloc(batch, sizeof(*s->npkts));
	s->names = calloc(batch, sizeof(*s->names));
	s->ctl = calloc(batch, HOMA_IO_TX_CTL);
	if (!s->msgs || !s->iovs || !s->first || !s->npkts || !s->names || !s->ctl) {
		homa_io_sender_free(s);
		return HOMA_ENOMEM;
	}
	return 0;
}

/** homa_io_sender_free() - See batch.h. */
void homa_io_sender_free(struct homa_io_sender *s)
{
	free(s->msgs);
	free(s->iovs);
	free(s->first);
	free(s->npkts);
	free(s->names);
	free(s->ctl);
	s->msgs = NULL;
	s->iovs = NULL;
	s->first = NULL;
	s->npkts = NULL;
	s->names = NULL;
	s->ctl = NULL;
}

/**
 * same_flow() - True if @b may share a UDP_SEGMENT send with @a: same
 * destination, port, priority and flow.
 */
static bool same_flow(const struct homa_io_tx *a, const struct homa_io_tx *b)
{
	return a->dport == b->dport && a->priority == b->priority && a->flow == b->flow &&
	       homa_addr_equal(&a->dst, &b->dst);
}

/** pkt_len() - Bytes of packet @p on the wire (data and ext). */
static size_t pkt_len(const struct homa_io_tx *p)
{
	return p->len + p->ext_len;
}

/**
 * run_length() - How many packets from @p[0] on (at most @n) form one
 * UDP_SEGMENT send: same flow, all as long as the first except possibly
 * the last, which may be shorter; within the kernel's limits.
 */
static int run_length(const struct homa_io_tx *p, int n)
{
	size_t total = pkt_len(&p[0]);
	int k = 1;

	while (k < n && k < HOMA_IO_GSO_MAX_SEGS && same_flow(&p[0], &p[k]) &&
	       pkt_len(&p[k]) <= pkt_len(&p[0]) &&
	       total + pkt_len(&p[k]) <= HOMA_IO_GSO_MAX_BYTES) {
		total += pkt_len(&p[k]);
		k++;
		if (pkt_len(&p[k - 1]) < pkt_len(&p[0]))
			break;
	}
	return k;
}

/**
 * fill_ctl() - Write the DSCP mark and, for a run of @segs > 1 packets,
 * the UDP_SEGMENT size into @m's control buffer @ctl. IPv4 destinations
 * get IP_TOS even from IPv6 sockets (mapped peers): the kernel ignores
 * IPV6_TCLASS on packets it sends as IPv4.
 */
static void fill_ctl(struct msghdr *m, char *ctl, const struct homa_io_tx *p, int segs)
{
	struct cmsghdr *c;
	size_t used = 0;

	m->msg_control = ctl;
	m->msg_controllen = HOMA_IO_TX_CTL;
	c = CMSG_FIRSTHDR(m);
	if (p->priority) {
		int tos = (int)p->priority << HOMA_IO_TOS_SHIFT;
		bool v4 = homa_addr_is_ipv4(&p->dst);

		c->cmsg_level = v4 ? IPPROTO_IP : IPPROTO_IPV6;
		c->cmsg_type = v4 ? IP_TOS : IPV6_TCLASS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &tos, sizeof(tos));
		used += CMSG_SPACE(sizeof(int));
		c = CMSG_NXTHDR(m, c);
	}
	if (segs > 1) {
		uint16_t gso = (uint16_t)pkt_len(p);

		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
		memcpy(CMSG_DATA(c), &gso, sizeof(gso));
		used += CMSG_SPACE(sizeof(uint16_t));
	}
	m->msg_controllen = used;
	if (!used)
		m->msg_control = NULL;
}

/**
 * add_iovs() - Describe packet @p in @iov: its data, then its ext if any.
 * Return: entries used (1 or 2).
 */
static size_t add_iovs(struct iovec *iov, const struct homa_io_tx *p)
{
	iov[0].iov_base = (void *)p->data;
	iov[0].iov_len = p->len;
	if (!p->ext_len)
		return 1;
	iov[1].iov_base = (void *)p->ext;
	iov[1].iov_len = p->ext_len;
	return 2;
}

/**
 * build() - Describe up to @s->batch packets of @p (of @n) as messages.
 * @nmsg: receives the number of messages built.
 * Return: packets consumed.
 */
static int build(struct homa_io_sender *s, const struct homa_io_tx *p, int n,
		 int *nmsg, struct homa_io_counters *c)
{
	int used = 0, m = 0;
	size_t niov = 0;

	while (used < n && used < (int)s->batch) {
		int room = (int)s->batch - used;
		int segs = s->gso ? run_length(p + used, n - used < room ? n - used : room) : 1;
		struct msghdr *h = &s->msgs[m].msg_hdr;
		int len = homa_io_addr_to_sockaddr(s->family, &p[used].dst,
						   s->zero_port ? 0 : p[used].dport,
						   &s->names[m]);

		if (len < 0) {
			homa_io_count(&c->tx_errors, 1);
			used++;
			continue;
		}
		memset(h, 0, sizeof(*h));
		h->msg_name = &s->names[m];
		h->msg_namelen = (socklen_t)len;
		h->msg_iov = &s->iovs[niov];
		h->msg_iovlen = 0;
		for (int i = 0; i < segs; i++)
			h->msg_iovlen += add_iovs(&s->iovs[niov + h->msg_iovlen], &p[used + i]);
		niov += h->msg_iovlen;
		s->first[m] = used;
		s->npkts[m] = segs;
		fill_ctl(h, s->ctl + (size_t)m * HOMA_IO_TX_CTL, &p[used], segs);
		used += segs;
		m++;
	}
	*nmsg = m;
	return used;
}

/**
 * count_sent() - Count message @m of @npkts packets (sent) in @c's
 * packet, byte and GSO counters.
 */
static void count_sent(const struct msghdr *m, int npkts, struct homa_io_counters *c)
{
	for (size_t i = 0; i < m->msg_iovlen; i++)
		homa_io_count(&c->tx_bytes, m->msg_iov[i].iov_len);
	homa_io_count(&c->tx_packets, (uint64_t)npkts);
	if (npkts > 1)
		homa_io_count(&c->tx_gso_batches, 1);
}

/**
 * send_msgs() - sendmmsg() @nmsg built messages, skipping messages the
 * kernel rejects (counted in tx_errors). Never waits: a full send buffer
 * (EAGAIN, ENOBUFS) ends the call and counts in tx_full. A failure on a
 * pending ICMP report (ECONNREFUSED) is recorded in s->error and the
 * message is sent once more.
 * Return: messages consumed (sent or rejected; fewer than @nmsg when the
 * buffer filled), or HOMA_EIO.
 */
static int send_msgs(struct homa_io_sender *s, int nmsg,
		     struct homa_io_counters *c)
{
	bool retried = false;
	int done = 0;

	while (done < nmsg) {
		int r = sendmmsg(s->fd, s->msgs + done, (unsigned)(nmsg - done), MSG_DONTWAIT);

		homa_io_count(&c->tx_calls, 1);
		if (r > 0)
			retried = false;
		if (r > 0) {
			for (int i = done; i < done + r; i++)
				count_sent(&s->msgs[i].msg_hdr, s->npkts[i], c);
			done += r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
			homa_io_count(&c->tx_full, 1);
			return done;
		}
		if (r < 0 && (errno == EBADF || errno == ENOTSOCK))
			return HOMA_EIO;
		if (r < 0 && errno == ECONNREFUSED && !retried) {
			/* a pending ICMP report (IP_RECVERR), not about this
			 * message: the call consumed it; send the message again */
			s->error = errno;
			retried = true;
			continue;
		}
		homa_io_count(&c->tx_errors, (uint64_t)s->npkts[done]);
		done++;
	}
	return done;
}

/** homa_io_sender_send() - See batch.h. */
int homa_io_sender_send(struct homa_io_sender *s, const struct homa_io_tx *pkts,
			int n, struct homa_io_counters *c)
{
	int taken = 0;

	while (taken < n) {
		int nmsg = 0;
		int used = build(s, pkts + taken, n - taken, &nmsg, c);
		int done = nmsg ? send_msgs(s, nmsg, c) : 0;

		if (done < 0)
			return done;
		if (done < nmsg)  /* buffer full: the first unsent message's first packet */
			return taken + s->first[done];
		taken += used;
	}
	return taken;
}

/** homa_io_receiver_init() - See batch.h. */
int homa_io_receiver_init(struct homa_io_receiver *r, int fd, uint32_t batch,
			  size_t buf_size)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->batch = batch;
	r->buf_size = buf_size;
	r->bufs = malloc((size_t)batch * buf_size);
	r->stale = malloc(sizeof(*r->stale));
	r->msgs = calloc(batch, sizeof(*r->msgs));
	r->iovs = calloc(batch, sizeof(*r->iovs));
	r->names = calloc(batch, sizeof(*r->names));
	r->ctl = calloc(batch, HOMA_IO_RX_CTL);
	if (!r->bufs || !r->msgs || !r->iovs || !r->names || !r->ctl || !r->stale) {
		homa_io_receiver_free(r);
		return HOMA_ENOMEM;
	}
	*r->stale = batch;
	return 0;
}

/** homa_io_receiver_use_slots() - See batch.h. */
void homa_io_receiver_use_slots(struct homa_io_receiver *r, uint8_t *const *slots)
{
	free(r->bufs);
	r->bufs = NULL;
	r->slots = slots;
}

/** homa_io_receiver_free() - See batch.h. */
void homa_io_receiver_free(struct homa_io_receiver *r)
{
	free(r->bufs);
	free(r->msgs);
	free(r->iovs);
	free(r->names);
	free(r->ctl);
	free(r->stale);
	memset(r, 0, sizeof(*r));
}

/**
 * set_headers() - Make entries 0..*r->stale-1 of @r's headers whole again
 * (name, iovec, control buffer and their lengths), and point every
 * entry at its slot's current buffer when @r reads into a lend pool's
 * table (other receivers' reads replace the slots they lent).
 */
static void set_headers(struct homa_io_receiver *r)
{
	uint32_t stale = r->stale ? *r->stale : r->batch;

	for (uint32_t i = 0; i < stale; i++) {
		struct msghdr *h = &r->msgs[i].msg_hdr;

		r->iovs[i].iov_base = r->slots ? r->slots[i] : r->bufs + (size_t)i * r->buf_size;
		r->iovs[i].iov_len = r->buf_size;
		h->msg_name = &r->names[i];
		h->msg_namelen = sizeof(r->names[i]);
		h->msg_iov = &r->iovs[i];
		h->msg_iovlen = 1;
		h->msg_control = r->ctl + (size_t)i * HOMA_IO_RX_CTL;
		h->msg_controllen = HOMA_IO_RX_CTL;
		h->msg_flags = 0;
	}
	if (r->slots)
		for (uint32_t i = stale; i < r->batch; i++)
			r->iovs[i].iov_base = r->slots[i];
}

/**
 * note_stale() - The headers of @r's first @n entries may now hold what
 * the kernel wrote (nothing for a receiver without its own arrays).
 */
static void note_stale(struct homa_io_receiver *r, uint32_t n)
{
	if (r->stale)
		*r->stale = n < r->batch ? n : r->batch;
}

/**
 * homa_io_receiver_recv() - See batch.h. A call refused with a pending
 * ICMP report (ECONNREFUSED) read nothing but took the report's socket
 * error; the datagrams behind it are read by one more call at once, so
 * the caller does not take a report for an empty queue and wait again.
 */
int homa_io_receiver_recv(struct homa_io_receiver *r)
{
	set_headers(r);
	note_stale(r, r->batch);  /* until a call says how many it filled */
	for (bool retried = false;;) {
		int n = recvmmsg(r->fd, r->msgs, r->batch, MSG_DONTWAIT, NULL);

		if (n >= 0) {
			/* and the entry whose receive found the queue empty */
			note_stale(r, (uint32_t)n + 1);
			return n;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		r->error = errno;
		if (errno != ECONNREFUSED)
			return HOMA_EIO;
		if (retried)
			return 0;
		/* the call took the pending error, not the datagrams behind it */
		retried = true;
	}
}

/** homa_io_recv_tos_enable() - See batch.h. */
void homa_io_recv_tos_enable(int fd, int family)
{
	int on = 1;

	setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof(on));
}

/**
 * homa_io_cmsg_priority() - See batch.h. IP_TOS data is one byte,
 * IPV6_TCLASS data an int.
 */
uint8_t homa_io_cmsg_priority(struct msghdr *h)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
		    c->cmsg_len >= CMSG_LEN(1))
			return homa_io_tos_priority(*CMSG_DATA(c));
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int tclass;

			memcpy(&tclass, CMSG_DATA(c), sizeof(tclass));
			return homa_io_tos_priority((unsigned int)tclass);
		}
	}
	return 0;
}
