/* SPDX-License-Identifier: MIT */
/**
 * @file http_get.c
 * Blocking loopback HTTP client for the tests.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "http_get.h"

/** connect_loopback() - A connected TCP socket, or -1. */
static int connect_loopback(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {.tv_sec = 10};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/** http_exchange() - See http_get.h. */
char *http_exchange(uint16_t port, const char *req, size_t len)
{
	size_t cap = 4096, n = 0;
	char *buf;
	ssize_t r;
	int fd = connect_loopback(port);

	if (fd < 0)
		return NULL;
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	buf = malloc(cap);
	while ((r = recv(fd, buf + n, cap - n - 1, 0)) > 0) {
		n += (size_t)r;
		if (cap - n < 1024) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/** http_status() - See http_get.h. */
int http_status(const char *resp)
{
	int code;

	if (!resp || sscanf(resp, "HTTP/1.1 %d", &code) != 1)
		return -1;
	return code;
}

/** http_body() - See http_get.h. */
const char *http_body(const char *resp)
{
	const char *p = resp ? strstr(resp, "\r\n\r\n") : NULL;

	return p ? p + 4 : NULL;
}
