/* SPDX-License-Identifier: MIT */
/**
 * @file http_int.h
 * The /metrics listener's connection handling (private to homa_obs).
 */
#ifndef HOMA_OBS_HTTP_INT_H
#define HOMA_OBS_HTTP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "homa/obs.h"

/** Largest metrics text the listener will ask the callback for. */
#define HOMA_HTTP_MAX_BODY (64u << 20)

/** Phases of a connection. */
enum homa_http_phase {
	HOMA_HTTP_READING = 0,  /**< reading the request head */
	HOMA_HTTP_WRITING = 1,  /**< sending the response */
	HOMA_HTTP_DRAINING = 2, /**< response sent and write side shut: discard input until EOF */
};

/**
 * One client connection: read a request, write the response, then drain
 * (so that closing never resets a connection whose response is in flight).
 */
struct homa_http_conn {
	int fd;              /**< -1 when the slot is free */
	int phase;           /**< enum homa_http_phase */
	char *req;           /**< request head being read (max_request + 1 bytes) */
	size_t req_len;
	char *resp;          /**< response being written (NULL while reading) */
	size_t resp_len;
	size_t resp_off;
	int64_t deadline_ms; /**< close the connection if still open then */
};

/** Callback and scratch buffer used to produce response bodies. */
struct homa_http_body {
	homa_metrics_fill_fn fill;
	void *arg;
	char *buf;           /**< reused between requests, grows on HOMA_ENOSPC */
	size_t cap;
};

/**
 * homa_http_conn_read() - Read what is available on @c; once the request
 * head is complete (or too long, or garbled) build the response in
 * c->resp. Return: 1 if a response is ready, 0 to keep reading, -1 to
 * close the connection (peer closed or a socket error).
 */
int homa_http_conn_read(struct homa_http_conn *c, size_t max_request,
			struct homa_http_body *body);

/**
 * homa_http_conn_write() - Write more of c->resp; when all of it is sent,
 * shut down the write side. Return: 1 when done, 0 to wait for the
 * socket, -1 on a socket error.
 */
int homa_http_conn_write(struct homa_http_conn *c);

/**
 * homa_http_conn_drain() - Discard input after the response. Return: 0 to
 * keep waiting, -1 once the peer has closed (or on error): close it then.
 */
int homa_http_conn_drain(struct homa_http_conn *c);

/** homa_http_conn_close() - Close the socket and free the buffers; marks the slot free. */
void homa_http_conn_close(struct homa_http_conn *c);

#endif /* HOMA_OBS_HTTP_INT_H */
