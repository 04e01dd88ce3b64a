/* SPDX-License-Identifier: MIT */
/**
 * @file fake_tp.c
 * A hand-written TCP-transport server for the tests (fake_tp.h).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_tp.h"

/** fake_tp_listen() - See fake_tp.h. */
void fake_tp_listen(struct fake_tp *f)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);

	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 8), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &len), 0);
	f->port = ntohs(a.sin_port);
}

/** fake_tp_close() - See fake_tp.h. */
void fake_tp_close(struct fake_tp *f)
{
	close(f->lfd);
}

/** fake_tp_ready() - See fake_tp.h. */
int fake_tp_ready(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

/** read_all() - Read exactly @len bytes from @fd into @b (NULL: drop them). */
static void read_all(int fd, uint8_t *b, size_t len)
{
	uint8_t tmp[4096];

	while (len) {
		size_t want = b ? len : (len < sizeof(tmp) ? len : sizeof(tmp));
		ssize_t n = read(fd, b ? b : tmp, want);

		assert_true(n > 0);
		if (b)
			b += n;
		len -= (size_t)n;
	}
}

/** fake_tp_accept() - See fake_tp.h. */
int fake_tp_accept(struct fake_tp *f)
{
	uint8_t pre[12];
	int one = 1, fd = accept(f->lfd, NULL, NULL);

	assert_true(fd >= 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	read_all(fd, pre, sizeof(pre));
	assert_memory_equal(pre, "HOMATCP1", 8);
	return fd;
}

/** fake_tp_request() - See fake_tp.h. */
uint64_t fake_tp_request(int fd)
{
	uint8_t h[16];
	uint64_t id = 0;
	uint32_t len = 0;

	read_all(fd, h, sizeof(h));
	assert_int_equal(h[4], 1); /* a request frame */
	for (int i = 0; i < 4; i++)
		len = len << 8 | h[i];
	for (int i = 0; i < 8; i++)
		id = id << 8 | h[8 + i];
	read_all(fd, NULL, len);
	return id;
}

/** fake_tp_byte() - See fake_tp.h. */
uint8_t fake_tp_byte(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/** write_all() - Write @len bytes of @b to @fd. */
static void write_all(int fd, const uint8_t *b, size_t len)
{
	while (len) {
		ssize_t n = write(fd, b, len);

		assert_true(n > 0);
		b += n;
		len -= (size_t)n;
	}
}

/**
 * send_frame() - On @fd, send bytes [@from, @to) of a frame of @type with
 * @len payload bytes for RPC @id, preceded by its header when @from is 0.
 */
static void send_frame(int fd, uint8_t type, uint64_t id, uint32_t len, size_t from, size_t to)
{
	uint8_t *b = malloc(16 + to - from), *p = b;

	assert_non_null(b);
	if (from == 0) {
		memset(p, 0, 16);
		for (int i = 0; i < 4; i++)
			p[i] = (uint8_t)(len >> (24 - 8 * i));
		p[4] = type;
		p[5] = 1; /* version */
		for (int i = 0; i < 8; i++)
			p[8 + i] = (uint8_t)(id >> (56 - 8 * i));
		p += 16;
	}
	for (size_t i = from; i < to; i++)
		*p++ = fake_tp_byte(i);
	write_all(fd, b, (size_t)(p - b));
	free(b);
}

/** fake_tp_respond() - See fake_tp.h. */
void fake_tp_respond(int fd, uint64_t id, uint32_t len, size_t from, size_t to)
{
	send_frame(fd, 2, id, len, from, to);
}

/** fake_tp_connect() - See fake_tp.h. */
int fake_tp_connect(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint8_t pre[12] = "HOMATCP1";
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pre[8] = 0x30; /* client Homa port 12345, then 2 zero bytes */
	pre[9] = 0x39;
	write_all(fd, pre, sizeof(pre));
	return fd;
}

/** fake_tp_send_request() - See fake_tp.h. */
void fake_tp_send_request(int fd, uint64_t id, uint32_t len, size_t from, size_t to)
{
	send_frame(fd, 1, id, len, from, to);
}

/** fake_tp_response() - See fake_tp.h. */
uint64_t fake_tp_response(int fd, uint32_t *len)
{
	uint8_t h[16];
	uint64_t id = 0;

	*len = 0;
	read_all(fd, h, sizeof(h));
	assert_int_equal(h[4], 2); /* a response frame */
	for (int i = 0; i < 4; i++)
		*len = *len << 8 | h[i];
	for (int i = 0; i < 8; i++)
		id = id << 8 | h[8 + i];
	read_all(fd, NULL, *len);
	return id;
}
