/* SPDX-License-Identifier: MIT */
/**
 * @file http_conn.c
 * One connection of the /metrics listener: read the request head, parse
 * the request line, build the response (200 with the metrics text, 404,
 * 405, 400, 431 or 500), write it, close.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_int.h"

/** set_response() - Build c->resp from a status line and a body. Return: 0 or -1 (no memory). */
static int set_response(struct homa_http_conn *c, const char *status,
			const char *ctype, const char *extra_hdr,
			const char *body, size_t body_len, bool head_only)
{
	char hdr[384];
	int n;

	n = snprintf(hdr, sizeof(hdr),
		     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "%sConnection: close\r\n\r\n",
		     status, ctype, body_len, extra_hdr);
	if (n < 0 || (size_t)n >= sizeof(hdr))
		return -1;
	if (head_only)
		body_len = 0;
	c->resp = malloc((size_t)n + body_len);
	if (!c->resp)
		return -1;
	memcpy(c->resp, hdr, (size_t)n);
	if (body_len)
		memcpy(c->resp + n, body, body_len);
	c->resp_len = (size_t)n + body_len;
	c->resp_off = 0;
	return 0;
}

/** error_response() - A short text/plain response with status @status. */
static int error_response(struct homa_http_conn *c, const char *status,
			  const char *extra_hdr)
{
	char body[96];
	int n = snprintf(body, sizeof(body), "%s\n", status);

	return set_response(c, status, "text/plain; charset=utf-8", extra_hdr,
			    body, (size_t)n, false);
}

/**
 * fill_body() - Call the callback, growing the buffer on HOMA_ENOSPC.
 * Return: body length, or a negative error.
 */
static int fill_body(struct homa_http_body *b)
{
	for (;;) {
		int n;

		if (!b->buf) {
			b->cap = 64 * 1024;
			b->buf = malloc(b->cap);
			if (!b->buf)
				return HOMA_ENOMEM;
		}
		n = b->fill(b->arg, b->buf, b->cap);
		if (n >= 0 && (size_t)n <= b->cap)
			return n;
		if (n != HOMA_ENOSPC || b->cap >= HOMA_HTTP_MAX_BODY)
			return n >= 0 ? HOMA_EINVAL : n;
		free(b->buf);
		b->buf = NULL;
		b->cap *= 2;
		b->buf = malloc(b->cap);
		if (!b->buf)
			return HOMA_ENOMEM;
	}
}

/** metrics_response() - The 200 response, or 500 if the callback fails. */
static int metrics_response(struct homa_http_conn *c, struct homa_http_body *b,
			    bool head_only)
{
	int n = fill_body(b);

	if (n < 0)
		return error_response(c, "500 Internal Server Error", "");
	return set_response(c, "200 OK", HOMA_METRICS_CONTENT_TYPE, "", b->buf,
			    (size_t)n, head_only);
}

/**
 * respond() - Parse the request line in c->req (NUL-terminated, complete
 * head) and build the response. Return: 0, or -1 if out of memory.
 */
static int respond(struct homa_http_conn *c, struct homa_http_body *b)
{
	char method[16], target[256], version[16];
	char *q;

	if (sscanf(c->req, "%15s %255s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7) || target[0] != '/')
		return error_response(c, "400 Bad Request", "");
	q = strchr(target, '?');
	if (q)
		*q = '\0';
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return error_response(c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n");
	if (strcmp(target, "/metrics"))
		return error_response(c, "404 Not Found", "");
	return metrics_response(c, b, !strcmp(method, "HEAD"));
}

/** head_complete() - True once the blank line ending the request head is in. */
static bool head_complete(const char *req)
{
	return strstr(req, "\r\n\r\n") || strstr(req, "\n\n");
}

/** homa_http_conn_read() - See http_int.h. */
int homa_http_conn_read(struct homa_http_conn *c, size_t max_request,
			struct homa_http_body *body)
{
	ssize_t n = recv(c->fd, c->req + c->req_len, max_request - c->req_len, 0);

	if (n < 0)
		return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
	if (n == 0)
		return -1;
	c->req_len += (size_t)n;
	c->req[c->req_len] = '\0';
	if (memchr(c->req, '\0', c->req_len)) {
		if (error_response(c, "400 Bad Request", ""))
			return -1;
		return 1;
	}
	if (head_complete(c->req)) {
		if (respond(c, body))
			return -1;
		return 1;
	}
	if (c->req_len >= max_request) {
		if (error_response(c, "431 Request Header Fields Too Large", ""))
			return -1;
		return 1;
	}
	return 0;
}

/** homa_http_conn_write() - See http_int.h. */
int homa_http_conn_write(struct homa_http_conn *c)
{
	while (c->resp_off < c->resp_len) {
		ssize_t n = send(c->fd, c->resp + c->resp_off,
				 c->resp_len - c->resp_off, MSG_NOSIGNAL);

		if (n < 0)
			return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
		c->resp_off += (size_t)n;
	}
	shutdown(c->fd, SHUT_WR);
	return 1;
}

/** homa_http_conn_drain() - See http_int.h. */
int homa_http_conn_drain(struct homa_http_conn *c)
{
	char sink[1024];
	ssize_t n;

	do {
		n = recv(c->fd, sink, sizeof(sink), 0);
	} while (n > 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	return -1;
}

/** homa_http_conn_close() - See http_int.h. */
void homa_http_conn_close(struct homa_http_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->req);
	free(c->resp);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}
