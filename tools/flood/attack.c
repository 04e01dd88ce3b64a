/* SPDX-License-Identifier: MIT */
/**
 * @file attack.c
 * The flood: one thread sending forged, well-formed Homa packets with
 * lying fields, round-robin over many UDP sockets (each its own source
 * port, on several 127.0.0.x addresses), as fast as the kernel takes
 * them (no pacing: it uses a whole core) or at a given rate.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flood.h"
#include "homa/errors.h"
#include "homa/wire.h"

/** Packets handed to one sendmmsg() call. */
#define FLOOD_BATCH 32

/** next() - xorshift64 step of *@s. Return: the new value. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/** lying_data() - DATA claiming a long message whose sender says all of it is granted. */
static void lying_data(uint64_t *rng, struct homa_pkt *p, int to_server)
{
	static const uint8_t payload[1400];
	uint32_t n = 64 + (uint32_t)(next(rng) % 1300);
	uint32_t len = n + (uint32_t)(next(rng) % (1000000 - n));

	p->type = HOMA_PKT_DATA;
	p->u.data.message_length = len;
	p->u.data.incoming = len;                  /* "grant me everything" */
	p->u.data.offset = (uint32_t)(next(rng) % (len - n + 1));
	p->u.data.payload = payload;
	p->u.data.payload_len = n;
	p->u.data.retransmit = (uint8_t)(next(rng) & 1);
	p->u.data.ack.client_id = next(rng) & ~1ull; /* frees someone else's RPC, if it could */
	p->u.data.ack.server_port = to_server ? p->dport : (uint16_t)next(rng);
}

/** control() - A control packet of a random type with random, in-range-looking fields. */
static void control(uint64_t *rng, struct homa_pkt *p, int to_server)
{
	static const uint8_t types[] = {HOMA_PKT_GRANT, HOMA_PKT_RESEND, HOMA_PKT_RPC_UNKNOWN,
					HOMA_PKT_BUSY, HOMA_PKT_CUTOFFS, HOMA_PKT_NEED_ACK,
					HOMA_PKT_ACK};
	uint64_t r = next(rng);
	int i;

	p->type = types[r % sizeof(types)];
	r >>= 8;
	switch (p->type) {
	case HOMA_PKT_GRANT:
		p->u.grant.offset = (uint32_t)r;
		p->u.grant.priority = (uint8_t)(r >> 40) & 7;
		break;
	case HOMA_PKT_RESEND:
		p->u.resend.offset = (uint32_t)(r % 1000000);
		p->u.resend.length = (r >> 32) & 1 ? 0xffffffffu : (uint32_t)(r >> 33);
		p->u.resend.priority = (uint8_t)(r >> 20) & 7;
		break;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
			p->u.cutoffs.cutoffs[i] = (uint32_t)(next(rng) % HOMA_CUTOFF_WIRE_MAX);
		p->u.cutoffs.version = (uint16_t)r;
		break;
	case HOMA_PKT_ACK:
		p->u.ack.num_acks = HOMA_MAX_ACKS;
		for (i = 0; i < HOMA_MAX_ACKS; i++) {
			p->u.ack.acks[i].client_id = next(rng) & ~1ull;
			p->u.ack.acks[i].server_port = to_server ? p->dport : (uint16_t)r;
		}
		break;
	default:
		break;
	}
}

/** flood_packet() - See flood.h. */
int flood_packet(uint64_t *rng, const struct flood_attack *a, uint8_t *buf, int *to_server)
{
	struct homa_pkt p;
	uint64_t r = next(rng);

	memset(&p, 0, sizeof(p));
	*to_server = a->data_only || (r & 1);
	p.dport = *to_server ? a->server_port : a->client_port;
	p.sport = (uint16_t)(1024 + (r >> 8) % 64000);
	/* a client's ids are even; a server answers with the id plus one */
	p.sender_id = (next(rng) & ~1ull) | (*to_server ? 0 : 1);
	p.seq = (uint32_t)(r >> 32);
	if (a->data_only || (r >> 1) % 2)
		lying_data(rng, &p, *to_server);
	else
		control(rng, &p, *to_server);
	return homa_wire_encode(&p, buf, 1500);
}

/** open_source() - A UDP socket bound to 127.0.0.@host, any port. Return: fd or -1. */
static int open_source(int host)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(0x7f000000u + (uint32_t)host);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/** send_batch() - Build and send FLOOD_BATCH packets on @fd. */
static void send_batch(struct flood_attack *a, int fd, uint64_t *rng,
		       uint8_t (*bufs)[1500], struct sockaddr_in *dst)
{
	struct mmsghdr m[FLOOD_BATCH];
	struct iovec iov[FLOOD_BATCH];
	int i, to_server, sent;

	memset(m, 0, sizeof(m));
	for (i = 0; i < FLOOD_BATCH; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = (size_t)flood_packet(rng, a, bufs[i], &to_server);
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		m[i].msg_hdr.msg_name = &dst[to_server];
		m[i].msg_hdr.msg_namelen = sizeof(dst[0]);
	}
	sent = sendmmsg(fd, m, FLOOD_BATCH, MSG_DONTWAIT);
	if (sent < 0)
		sent = 0;
	atomic_fetch_add_explicit(&a->sent, (uint64_t)sent, memory_order_relaxed);
	atomic_fetch_add_explicit(&a->refused, (uint64_t)(FLOOD_BATCH - sent),
				  memory_order_relaxed);
}

/** flood_main() - The flooding thread: batches round-robin over the sockets until stopped. */
static void *flood_main(void *arg)
{
	static __thread uint8_t bufs[FLOOD_BATCH][1500];
	struct flood_attack *a = arg;
	struct sockaddr_in dst[2];
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)a->server_port << 16;
	double start = flood_now_us(), sent = 0;
	int k = 0;

	memset(dst, 0, sizeof(dst));
	dst[0].sin_family = dst[1].sin_family = AF_INET;
	dst[0].sin_addr.s_addr = dst[1].sin_addr.s_addr = htonl(0x7f000001u);
	dst[0].sin_port = htons(a->client_port);
	dst[1].sin_port = htons(a->server_port);
	while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
		send_batch(a, a->fds[k], &rng, bufs, dst);
		k = k + 1 < a->nports ? k + 1 : 0;
		sent += FLOOD_BATCH;
		if (a->rate > 0) {
			double ahead_us = start + sent / a->rate * 1e6 - flood_now_us();

			if (ahead_us > 0)
				usleep((useconds_t)ahead_us);
		}
	}
	return NULL;
}

/** flood_attack_start() - See flood.h. */
int flood_attack_start(struct flood_attack *a)
{
	int i;

	atomic_store(&a->stop, 0);
	for (i = 0; i < a->nports; i++) {
		a->fds[i] = open_source(2 + i % a->nhosts);
		if (a->fds[i] < 0) {
			while (i-- > 0)
				close(a->fds[i]);
			return HOMA_EIO;
		}
	}
	if (pthread_create(&a->thread, NULL, flood_main, a)) {
		for (i = 0; i < a->nports; i++)
			close(a->fds[i]);
		return HOMA_ENOMEM;
	}
	return 0;
}

/** flood_attack_stop() - See flood.h. */
void flood_attack_stop(struct flood_attack *a)
{
	int i;

	atomic_store(&a->stop, 1);
	pthread_join(a->thread, NULL);
	for (i = 0; i < a->nports; i++)
		close(a->fds[i]);
}
