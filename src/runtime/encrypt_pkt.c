/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt_pkt.c
 * The packets of encrypted sockets, sealed and opened outside the socket
 * lock. The engine only reserves HOMA_PSP_OVERHEAD bytes in each packet
 * and sees clear text: the sending thread (rt->tx_lock held, rt->lock
 * not) seals each batch it drained, and the receiving thread opens each
 * batch before taking rt->lock to hand it to the engine. The PSP state
 * has its own lock (x->mu), held only for the table look-ups, counters
 * and AES-GCM of one batch, so application threads keep using the engine
 * meanwhile.
 */
#include <sched.h>
#include <string.h>

#include "enc.h"

/**
 * Bytes a thread seals between two offers of its CPU (homa_rt_enc_yield()):
 * about 75 us of AES-GCM at OpenSSL's 3.4 GB/s here, against a
 * sched_yield() of about 1 us when nothing else is runnable.
 */
#define HOMA_RT_SEAL_YIELD_BYTES (256u * 1024u)

/**
 * A yield that lasted longer gave the CPU to a thread that used a whole
 * time slice (the scheduler's base slice is 0.7 ms and up), not to one
 * woken for a short message; the yielding thread then stops yielding for
 * HOMA_RT_SEAL_YIELD_BACKOFF_NS, so beside a busy loop on its CPU it
 * gives away one slice per backoff, not nearly all of its share.
 */
#define HOMA_RT_SEAL_YIELD_LONG_NS 500000ull
/** ... for this long (see above). */
#define HOMA_RT_SEAL_YIELD_BACKOFF_NS 50000000ull

/** Bytes the calling thread sealed since it last yielded its CPU. */
static __thread size_t sealed_since_yield;
/** Until when (homa_rt_now()) the calling thread does not yield. */
static __thread uint64_t seal_yield_quiet_until;

/** homa_rt_enc_seal() - See rt.h. */
int homa_rt_enc_seal(struct homa_rt *rt, struct homa_io_tx *pkts, const struct homa_iov *more,
		     int n)
{
	struct rt_enc *x = rt->enc;
	int kept = 0;

	if (!x)
		return n;
	pthread_mutex_lock(&x->mu);
	for (int i = 0; i < n; i++) {
		struct homa_io_tx p = pkts[i];
		struct homa_iov ext[2] = {{p.ext, p.ext_len}, {NULL, 0}};
		/* the batch's buffers are the runtime's own (tx_bufs); a payload
		 * the engine left where it is (a zero-copy send's buffers, the
		 * engine's copy of the message: ext, then more[i]) is encrypted
		 * from there into the buffer, after the header: no copy first */
		int r;

		if (more)
			ext[1] = more[i];
		r = homa_psp_seal_extv(x->psp, &p.dst, rt->tx_bufs + (p.data - rt->tx_bufs), p.len,
				       ext, 2, rt->pkt_cap);

		if (r < 0)
			continue;  /* counted by PSP: seal_no_assoc, seal_errors */
		sealed_since_yield += (size_t)r;
		p.len = (size_t)r;
		p.ext = NULL;
		p.ext_len = 0;
		p.flow = 0;
		if (x->udp_port) {
			/* the PSP port: the kernel (or the receiver) picks the socket by
			 * Homa port, once per coalesced send, so never coalesce two */
			p.flow = p.dport;
			p.dport = x->udp_port;
		}
		pkts[kept++] = p;
	}
	pthread_mutex_unlock(&x->mu);
	return kept;
}

/** homa_rt_enc_yield() - See rt.h. */
void homa_rt_enc_yield(struct homa_rt *rt)
{
	uint64_t before, after;

	if (!rt->enc || sealed_since_yield < HOMA_RT_SEAL_YIELD_BYTES)
		return;
	sealed_since_yield = 0;
	before = homa_rt_now();
	if (before < seal_yield_quiet_until)
		return;
	rt->seal_yields++;
	sched_yield();
	after = homa_rt_now();
	if (after - before > HOMA_RT_SEAL_YIELD_LONG_NS)
		seal_yield_quiet_until = after + HOMA_RT_SEAL_YIELD_BACKOFF_NS;
}

/** homa_rt_enc_open_rx() - See rt.h. */
int homa_rt_enc_open_rx(struct homa_rt *rt, struct homa_io_rx *rx, int n, int *rejected)
{
	struct rt_enc *x = rt->enc;
	int kept = 0;

	*rejected = 0;
	if (!x)
		return n;
	pthread_mutex_lock(&x->mu);
	if (x->rotate_ns)
		homa_rt_enc_maybe_rotate(x, homa_rt_now());
	for (int i = 0; i < n; i++) {
		uint8_t *homa = rx[i].data;
		/* the engine takes the Homa packet where it travelled, after the
		 * PSP header: no pass moving every byte back. A buffer the engine
		 * may keep and the driver knows by its start (an XDP frame) is moved. */
		int r = rx[i].lendable && rt->drv->lend_by_start
				? homa_psp_open(x->psp, rx[i].data, rx[i].len)
				       : homa_psp_open_view(x->psp, rx[i].data, rx[i].len, &homa);

		if (r < 0) {  /* counted by PSP, by reason */
			homa_rt_obs_drop(rt, &rx[i].src, HOMA_INPUT_DROPPED + HOMA_DROP_VERIFY);
			continue;
		}
		rx[kept] = rx[i];
		rx[kept].data = homa;
		rx[kept++].len = (size_t)r;
	}
	pthread_mutex_unlock(&x->mu);
	*rejected = n - kept;
	return kept;
}

/** homa_rt_enc_unquote() - See rt.h. */
void homa_rt_enc_unquote(const struct homa_rt *rt, struct homa_io_unreach *u)
{
	if (!rt->enc || u->len < HOMA_PSP_HDR_LEN || u->len > sizeof(u->quoted) ||
	    u->quoted[0] != HOMA_PSP_NEXT_HDR || u->quoted[1] != 1)
		return;
	u->len -= HOMA_PSP_HDR_LEN;
	memmove(u->quoted, u->quoted + HOMA_PSP_HDR_LEN, u->len);
}
