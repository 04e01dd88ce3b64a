/* SPDX-License-Identifier: MIT */
/**
 * @file frame.h
 * Length-prefixed framing over a non-blocking TCP socket, used by both
 * ends of the TCP arm. Every message is a 16-byte header (big-endian u32
 * payload length, u32 aux, u64 tag) followed by the payload. Requests
 * carry the wanted response length in aux; responses echo the tag.
 * Payload bytes are zeros from bench_payload(); received payload is
 * read and discarded. With a TLS session (tls.h) the same bytes travel
 * as TLS 1.3 records.
 */
#ifndef HOMA_BENCH_FRAME_H
#define HOMA_BENCH_FRAME_H

#include <stddef.h>
#include <stdint.h>

/** Bytes of the frame header. */
#define FRAME_HDR 16

/** A queued outgoing message. */
struct frame_out {
	uint8_t hdr[FRAME_HDR];
	uint32_t len;
};

/** One framed connection. Owns @fd and its queue. */
struct frame_conn {
	int fd;
	struct frame_out *q; /**< ring of queued messages */
	size_t qcap, qhead, qlen;
	size_t sent;         /**< bytes of the head message already written */
	uint8_t hbuf[FRAME_HDR];
	size_t hgot;         /**< header bytes of the incoming message read */
	uint32_t body_left;  /**< payload bytes of the incoming message to skip */
	uint32_t in_len, in_aux;
	uint64_t in_tag;
	uint32_t inflight;   /**< client: RPCs outstanding on this connection */
	int epoll_out;       /**< EPOLLOUT currently requested */
	void *tls;           /**< TLS session over @fd (owned), or NULL: plain TCP */
};

/** Called for each complete incoming message. */
typedef void (*frame_cb)(void *arg, struct frame_conn *c, uint32_t len, uint32_t aux,
			 uint64_t tag);

/** frame_init() - Set up @c around connected non-blocking @fd. */
void frame_init(struct frame_conn *c, int fd);

/** frame_free() - Free the TLS session, close the socket and free the queue. */
void frame_free(struct frame_conn *c);

/** frame_push() - Queue a message. Return: 0 or HOMA_ENOMEM. */
int frame_push(struct frame_conn *c, uint32_t len, uint32_t aux, uint64_t tag);

/**
 * frame_flush() - Write queued messages until done or the socket is full.
 * Return: 0 when the queue is empty, 1 when bytes remain (wait for
 * EPOLLOUT), HOMA_EIO on a socket error.
 */
int frame_flush(struct frame_conn *c);

/**
 * frame_read() - Read everything available and call @cb per complete
 * message. Return: 0 (would block), HOMA_ESHUTDOWN (peer closed),
 * HOMA_EPROTO (payload length over BENCH_MAX_MSG), HOMA_EIO.
 */
int frame_read(struct frame_conn *c, frame_cb cb, void *arg);

#endif
