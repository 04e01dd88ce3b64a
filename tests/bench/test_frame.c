/* SPDX-License-Identifier: MIT */
/* Tests for tools/bench/frame.c: framing over a socketpair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "frame.h"
#include "homa/errors.h"

/** What the callback saw. */
struct seen {
	int n;
	uint32_t len[8], aux[8];
	uint64_t tag[8];
};

/** record() - frame_cb that stores each message. */
static void record(void *arg, struct frame_conn *c, uint32_t len, uint32_t aux, uint64_t tag)
{
	struct seen *s = arg;

	if (s->n < 8) {
		s->len[s->n] = len;
		s->aux[s->n] = aux;
		s->tag[s->n] = tag;
	}
	s->n++;
}

/** pair() - Two non-blocking connected stream sockets as frame_conns. */
static void pair(struct frame_conn *a, struct frame_conn *b)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (int i = 0; i < 2; i++)
		fcntl(sv[i], F_SETFL, O_NONBLOCK);
	frame_init(a, sv[0]);
	frame_init(b, sv[1]);
}

/** Several messages, one empty, arrive whole and in order. */
static void frame_read__messages_in_order(void **state)
{
	struct frame_conn a, b;
	struct seen s = { 0 };

	pair(&a, &b);
	assert_int_equal(frame_push(&a, 100, 7, 1), 0);
	assert_int_equal(frame_push(&a, 0, 8, 2), 0);
	assert_int_equal(frame_push(&a, 3000, 9, 0x123456789abcULL), 0);
	assert_int_equal(frame_flush(&a), 0);
	assert_int_equal(frame_read(&b, record, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.len[0], 100);
	assert_int_equal(s.aux[1], 8);
	assert_int_equal(s.len[1], 0);
	assert_int_equal(s.tag[2], 0x123456789abcULL);
	frame_free(&a);
	frame_free(&b);
}

/** A message larger than the socket buffer goes out in pieces. */
static void frame_flush__partial_writes(void **state)
{
	struct frame_conn a, b;
	struct seen s = { 0 };
	int small = 4096;

	pair(&a, &b);
	setsockopt(a.fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	assert_int_equal(frame_push(&a, 2000000, 1, 42), 0);
	int rc = frame_flush(&a);
	assert_int_equal(rc, 1);
	for (int i = 0; i < 100000 && s.n == 0; i++) {
		assert_int_equal(frame_read(&b, record, &s), 0);
		assert_true(frame_flush(&a) >= 0);
	}
	assert_int_equal(s.n, 1);
	assert_int_equal(s.len[0], 2000000);
	assert_int_equal(s.tag[0], 42);
	assert_int_equal(frame_flush(&a), 0);
	frame_free(&a);
	frame_free(&b);
}

/** Many queued messages grow the ring without losing order. */
static void frame_push__ring_grows(void **state)
{
	struct frame_conn a, b;
	struct seen s = { 0 };

	pair(&a, &b);
	for (int i = 0; i < 100; i++)
		assert_int_equal(frame_push(&a, 10, 0, (uint64_t)i), 0);
	assert_int_equal(frame_flush(&a), 0);
	assert_int_equal(frame_read(&b, record, &s), 0);
	assert_int_equal(s.n, 100);
	assert_int_equal(s.tag[7], 7);
	frame_free(&a);
	frame_free(&b);
}

/** A header with an absurd length is a protocol error; EOF is shutdown. */
static void frame_read__bad_length_and_eof(void **state)
{
	struct frame_conn a, b;
	struct seen s = { 0 };
	uint8_t bad[FRAME_HDR] = { 0xff, 0xff, 0xff, 0xff };

	pair(&a, &b);
	assert_int_equal(write(a.fd, bad, sizeof(bad)), (ssize_t)sizeof(bad));
	assert_int_equal(frame_read(&b, record, &s), HOMA_EPROTO);
	close(a.fd);
	a.fd = -1;
	struct frame_conn c, d;
	pair(&c, &d);
	close(c.fd);
	c.fd = -1;
	assert_int_equal(frame_read(&d, record, &s), HOMA_ESHUTDOWN);
	frame_free(&a);
	frame_free(&b);
	frame_free(&c);
	frame_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frame_read__messages_in_order),
		cmocka_unit_test(frame_flush__partial_writes),
		cmocka_unit_test(frame_push__ring_grows),
		cmocka_unit_test(frame_read__bad_length_and_eof),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
