/* SPDX-License-Identifier: MIT */
/**
 * @file stat_fetch.c
 * A tiny HTTP/1.1 client: one GET, read to EOF, return the body of a 200.
 */
#define _GNU_SOURCE
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "stat.h"

#define MAX_RESPONSE (256u << 20)

/** connect_to() - A connected TCP socket to @host:@port, or -1 (message in @err). */
static int connect_to(const char *host, const char *port, int timeout_ms,
		      char *err, size_t errcap)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
	int fd = -1, r = getaddrinfo(host, port, &hints, &res);

	if (r) {
		snprintf(err, errcap, "%s:%s: %s", host, port, gai_strerror(r));
		return -1;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			snprintf(err, errcap, "connect %s:%s: %m", host, port);
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

/** read_all() - Read until EOF. Return: malloc'd NUL-terminated data, or NULL. */
static char *read_all(int fd, size_t *len, char *err, size_t errcap)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r = 0;

	while (buf && (r = recv(fd, buf + n, cap - n - 1, 0)) > 0) {
		n += (size_t)r;
		if (cap - n > 1)
			continue;
		if (cap >= MAX_RESPONSE) {
			snprintf(err, errcap, "response larger than %u bytes", MAX_RESPONSE);
			r = -1;
			break;
		}
		nb = realloc(buf, cap * 2);
		if (!nb) {
			snprintf(err, errcap, "out of memory");
			r = -1;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (!buf || r < 0) {
		if (r < 0 && !err[0])
			snprintf(err, errcap, "read: %m");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/** extract_body() - Check the status and length; move the body to the front. Return: 0 or -1. */
static int extract_body(char *resp, size_t len, char *err, size_t errcap)
{
	char *body = strstr(resp, "\r\n\r\n");
	const char *cl;
	int status = 0;

	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1 || !body) {
		snprintf(err, errcap, "not an HTTP response");
		return -1;
	}
	if (status != 200) {
		snprintf(err, errcap, "HTTP status %d", status);
		return -1;
	}
	*body = '\0';
	cl = strcasestr(resp, "\r\nContent-Length:");
	body += 4;
	len -= (size_t)(body - resp);
	if (cl && strtoul(cl + 17, NULL, 10) != len) {
		snprintf(err, errcap, "response cut short (%zu bytes of %lu)", len,
			 strtoul(cl + 17, NULL, 10));
		return -1;
	}
	memmove(resp, body, len + 1);
	return 0;
}

/** stat_fetch() - See stat.h. */
char *stat_fetch(const char *host, const char *port, const char *path, int timeout_ms,
		 char *err, size_t errcap)
{
	char req[512];
	size_t len = 0;
	char *resp;
	int n, fd;

	err[0] = '\0';
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: homa-stat\r\n"
		     "Accept: text/plain\r\nConnection: close\r\n\r\n",
		     path, strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port);
	if (n < 0 || (size_t)n >= sizeof(req)) {
		snprintf(err, errcap, "request too long");
		return NULL;
	}
	fd = connect_to(host, port, timeout_ms, err, errcap);
	if (fd < 0)
		return NULL;
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		snprintf(err, errcap, "send: %m");
		close(fd);
		return NULL;
	}
	resp = read_all(fd, &len, err, errcap);
	close(fd);
	if (resp && extract_body(resp, len, err, errcap)) {
		free(resp);
		return NULL;
	}
	return resp;
}
