/* SPDX-License-Identifier: MIT */
/**
 * @file test_lend.c
 * Zero-copy receive (src/core/lend.c, homa_engine_input_lend()): the
 * server engine receives every packet in its own heap buffer, lent; the
 * engine keeps the buffers of new in-order payload, the message reads
 * from them, and each kept buffer comes back exactly once, when the
 * message is released or the engine freed. Buffers are freed on release,
 * so a read after it is a use after free (ASan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "internal.h"

/** Two engines, the server receiving through lent buffers. */
struct lendfix {
	homa_engine *e[2];           /**< 0 client, 1 server */
	homa_addr addr[2];
	uint64_t now;
	int kept, released;          /**< buffers the server kept / gave back */
	int data_seen;               /**< client DATA packets so far */
	int drop_data;               /**< drop the client's DATA packet of this index once (-1: none) */
	bool copy_after_drop;        /**< after the drop, lend nothing (a driver out of frames) */
	struct homa_rx_lend lend;
};

/** give_back() - The lend's release: count and free the buffer. */
static void give_back(void *ctx, uint8_t *buf)
{
	struct lendfix *f = ctx;

	f->released++;
	free(buf);
}

/** fix_init() - Client and server engines with default settings. */
static void fix_init(struct lendfix *f)
{
	memset(f, 0, sizeof(*f));
	f->drop_data = -1;
	for (int i = 0; i < 2; i++) {
		f->addr[i] = homa_addr_ipv4(0x0a000001 + (uint32_t)i);
		assert_int_equal(homa_engine_new(&f->e[i], NULL, &f->addr[i],
						 (uint16_t)(4000 + i), NULL, 0), 0);
	}
	homa_engine_set_server(f->e[1], true);
	f->lend.release = give_back;
	f->lend.ctx = f;
}

/** deliver() - Hand one client packet to the server in a buffer of its own, lent. */
static void deliver(struct lendfix *f, const uint8_t *pkt, size_t len)
{
	uint8_t *buf = malloc(len);
	bool kept = true;
	bool lend = !(f->copy_after_drop && f->drop_data < 0);

	memcpy(buf, pkt, len);
	homa_engine_input_lend(f->e[1], &f->addr[0], buf, len, f->now,
			       lend ? &f->lend : NULL, &kept);
	if (!lend)
		assert_false(kept);
	if (kept) {
		f->kept++;
		return;
	}
	memset(buf, 0xee, len);  /* not kept: the engine must hold no pointer into it */
	free(buf);
}

/** pump() - Move packets both ways (client DATA possibly dropped once). Return: moved. */
static int pump(struct lendfix *f)
{
	struct th_pkt p;
	int moved = 0;

	for (bool any = true; any;) {
		any = false;
		if (th_take(f->e[0], f->now, &p) > 0) {
			any = true;
			moved++;
			if (p.ok && p.k.type == HOMA_PKT_DATA && f->data_seen++ == f->drop_data)
				f->drop_data = -1;
			else
				deliver(f, p.buf, (size_t)p.len);
		}
		if (th_take(f->e[1], f->now, &p) > 0) {
			any = true;
			moved++;
			homa_engine_input(f->e[0], &f->addr[1], p.buf, (size_t)p.len, f->now);
		}
	}
	return moved;
}

/** run() - Pump and run timers until quiet or 2 s of simulated time. */
static void run(struct lendfix *f)
{
	uint64_t end = f->now + 2000000000ull;

	for (;;) {
		uint64_t d0, d1, next;

		pump(f);
		d0 = homa_engine_next_deadline(f->e[0]);
		d1 = homa_engine_next_deadline(f->e[1]);
		next = d0 < d1 ? d0 : d1;
		if (next == UINT64_MAX || next > end)
			return;
		if (next > f->now)
			f->now = next;
		homa_engine_on_timer(f->e[0], f->now);
		homa_engine_on_timer(f->e[1], f->now);
	}
}

/** send_request() - Client sends th_pattern(@len, @len) to the server. */
static void send_request(struct lendfix *f, size_t len)
{
	uint8_t *src = malloc(len ? len : 1);
	struct homa_iov iov = {src, len};
	uint64_t id;

	th_pattern(src, len, (uint32_t)len);
	assert_int_equal(homa_engine_send_request(f->e[0], &f->addr[1], 4001, &iov, 1, 0,
						  f->now, &id), 0);
	free(src);
}

/** take_request() - The server's request event; its message checked byte for byte. */
static homa_msg *take_request(struct lendfix *f, size_t len)
{
	struct homa_event ev;

	assert_true(homa_engine_next_event(f->e[1], &ev));
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	assert_int_equal(homa_msg_length(ev.msg), len);
	assert_true(th_check_pattern(ev.msg, (uint32_t)len));
	return ev.msg;
}

/** server_stats() - The server engine's counters. */
static struct homa_stats server_stats(struct lendfix *f)
{
	struct homa_stats st;

	homa_engine_stats(f->e[1], &st);
	return st;
}

/** In order: every DATA payload stays in its buffer; all come back on release. */
static void in_order__kept_until_release(void **state)
{
	struct lendfix f;
	const size_t len = 200000;
	homa_msg *m;

	(void)state;
	fix_init(&f);
	send_request(&f, len);
	run(&f);
	m = take_request(&f, len);
	assert_true(f.kept >= (int)(len / 1500));
	assert_int_equal(f.released, 0);
	assert_int_equal(server_stats(&f).payload_lent_in, len);
	assert_int_equal(server_stats(&f).payload_copied_in, 0);
	homa_engine_msg_release(f.e[1], m);
	assert_int_equal(f.released, f.kept);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
}

/** A lost packet comes back as a retransmission into a hole: copied beside lent pieces. */
static void hole__retransmission_copied(void **state)
{
	struct lendfix f;
	const size_t len = 30000;
	homa_msg *m;
	const uint8_t *p;

	(void)state;
	fix_init(&f);
	f.drop_data = 3;
	send_request(&f, len);
	run(&f);
	m = take_request(&f, len);
	assert_true(server_stats(&f).payload_lent_in > 0);
	assert_true(server_stats(&f).payload_copied_in > 0);
	assert_int_equal(server_stats(&f).payload_lent_in + server_stats(&f).payload_copied_in,
			 len);
	/* a segment never runs from a chunk into a lent piece */
	for (size_t off = 0, n; off < len; off += n) {
		n = homa_msg_segment(m, off, &p);
		assert_true(n > 0 && n <= len - off);
	}
	homa_engine_msg_release(f.e[1], m);
	assert_int_equal(f.released, f.kept);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
}

/** After a drop the driver lends nothing more: the rest is copied, the message exact. */
static void lender_stops__rest_copied(void **state)
{
	struct lendfix f;
	const size_t len = 60000;
	homa_msg *m;

	(void)state;
	fix_init(&f);
	f.drop_data = 5;
	f.copy_after_drop = true;
	send_request(&f, len);
	run(&f);
	m = take_request(&f, len);
	assert_int_equal(server_stats(&f).payload_lent_in + server_stats(&f).payload_copied_in,
			 len);
	assert_true(server_stats(&f).payload_copied_in >= len / 2);
	homa_engine_msg_release(f.e[1], m);
	assert_int_equal(f.released, f.kept);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
}

/** A message never released: freeing the engine gives its buffers back. */
static void engine_free__gives_back(void **state)
{
	struct lendfix f;

	(void)state;
	fix_init(&f);
	send_request(&f, 50000);
	run(&f);
	(void)take_request(&f, 50000);
	assert_true(f.kept > 0);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
	assert_int_equal(f.released, f.kept);
}

/** A duplicate of a kept packet is not kept again. */
static void duplicate__not_kept(void **state)
{
	struct lendfix f;
	struct th_pkt p;
	uint8_t *a, *b;
	bool kept = false;

	(void)state;
	fix_init(&f);
	send_request(&f, 1000);
	assert_true(th_take(f.e[0], f.now, &p) > 0);
	a = malloc((size_t)p.len);
	b = malloc((size_t)p.len);
	memcpy(a, p.buf, (size_t)p.len);
	memcpy(b, p.buf, (size_t)p.len);
	assert_int_equal(homa_engine_input_lend(f.e[1], &f.addr[0], a, (size_t)p.len, f.now,
						&f.lend, &kept), 0);
	assert_true(kept);
	homa_engine_input_lend(f.e[1], &f.addr[0], b, (size_t)p.len, f.now, &f.lend, &kept);
	assert_false(kept);
	free(b);
	assert_true(th_take_msg(f.e[1], HOMA_EV_REQUEST, 1000, 0, TH_ANY_LEN));
	assert_int_equal(f.released, 1);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
}

/**
 * three_packets() - Set up @f, have its client send a 4000-byte request
 * and take its three DATA packets into @p, none delivered yet.
 */
static void three_packets(struct lendfix *f, struct th_pkt p[3])
{
	fix_init(f);
	send_request(f, 4000);
	for (int i = 0; i < 3; i++) {
		assert_true(th_take(f->e[0], f->now, &p[i]) > 0);
		assert_true(p[i].ok && p[i].k.type == HOMA_PKT_DATA);
	}
}

/**
 * lend_one() - Hand packet @p to the server in a buffer of its own, lent
 * by @l. Return: whether the engine kept it (if not, the buffer is
 * scribbled on and freed: the engine must hold no pointer into it).
 */
static bool lend_one(struct lendfix *f, const struct th_pkt *p, const struct homa_rx_lend *l)
{
	uint8_t *buf = malloc((size_t)p->len);
	bool kept = false;

	memcpy(buf, p->buf, (size_t)p->len);
	assert_int_equal(homa_engine_input_lend(f->e[1], &f->addr[0], buf, (size_t)p->len,
						f->now, l, &kept), 0);
	if (!kept) {
		memset(buf, 0xee, (size_t)p->len);
		free(buf);
	}
	return kept;
}

/** give_back_other() - A second lender's release: counted apart, the buffer freed. */
static void give_back_other(void *ctx, uint8_t *buf)
{
	(*(int *)ctx)++;
	free(buf);
}

/**
 * two_lenders__each_buffer_to_its_own() - A message holding a buffer of
 * one lender keeps none of another's (it has one release for all its
 * pieces): that payload is copied, and each kept buffer goes back to the
 * lender it came from.
 */
static void two_lenders__each_buffer_to_its_own(void **state)
{
	struct lendfix f;
	int other_released = 0;
	struct homa_rx_lend other = {give_back_other, &other_released};
	struct th_pkt p[3];
	homa_msg *m;

	(void)state;
	three_packets(&f, p);
	assert_true(lend_one(&f, &p[0], &f.lend));
	assert_false(lend_one(&f, &p[1], &other));
	assert_true(lend_one(&f, &p[2], &f.lend));
	m = take_request(&f, 4000);
	homa_engine_msg_release(f.e[1], m);
	assert_int_equal(f.released, 2);
	assert_int_equal(other_released, 0);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
}

/**
 * out_of_order__earlier_bytes_copied() - A message's lent pieces stay in
 * offset order: once a later packet's buffer is kept, the earlier
 * packets that arrive after it are copied, and the message reads exact.
 */
static void out_of_order__earlier_bytes_copied(void **state)
{
	struct lendfix f;
	struct th_pkt p[3];
	homa_msg *m;

	(void)state;
	three_packets(&f, p);
	assert_true(lend_one(&f, &p[2], &f.lend));
	assert_false(lend_one(&f, &p[0], &f.lend));
	assert_false(lend_one(&f, &p[1], &f.lend));
	m = take_request(&f, 4000);
	assert_int_equal(server_stats(&f).payload_copied_in, p[0].k.u.data.payload_len +
			 p[1].k.u.data.payload_len);
	homa_engine_msg_release(f.e[1], m);
	assert_int_equal(f.released, 1);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
}

/** rx_alloc_malloc() - homa_engine_set_rx_alloc() hook: malloc, counted. */
static void *rx_alloc_malloc(void *ctx, size_t size)
{
	(*(int *)ctx)++;
	return malloc(size);
}

/** rx_alloc_free() - Its free. */
static void rx_alloc_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	(void)size;
	free(p);
}

/** An engine receiving into application-allocated pieces lends nothing. */
static void rx_alloc__never_lent(void **state)
{
	struct lendfix f;
	int pieces = 0;
	struct homa_alloc a = {rx_alloc_malloc, rx_alloc_free, &pieces};
	homa_msg *m;

	(void)state;
	fix_init(&f);
	assert_int_equal(homa_engine_set_rx_alloc(f.e[1], &a), 0);
	send_request(&f, 100000);
	run(&f);
	m = take_request(&f, 100000);
	assert_int_equal(f.kept, 0);
	assert_int_equal(pieces, 2);
	assert_int_equal(server_stats(&f).payload_lent_in, 0);
	homa_engine_msg_release(f.e[1], m);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
}

/** Bad arguments: NULL @kept, a lend without release. */
static void bad_args__einval(void **state)
{
	struct lendfix f;
	struct homa_rx_lend bad = {NULL, NULL};
	uint8_t buf[64] = {0};
	bool kept;

	(void)state;
	fix_init(&f);
	assert_int_equal(homa_engine_input_lend(f.e[1], &f.addr[0], buf, sizeof(buf), 0,
						&f.lend, NULL), HOMA_EINVAL);
	assert_int_equal(homa_engine_input_lend(f.e[1], &f.addr[0], buf, sizeof(buf), 0,
						&bad, &kept), HOMA_EINVAL);
	assert_int_equal(homa_engine_input_lend(NULL, &f.addr[0], buf, sizeof(buf), 0,
						&f.lend, &kept), HOMA_EINVAL);
	homa_engine_free(f.e[0]);
	homa_engine_free(f.e[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order__kept_until_release),
		cmocka_unit_test(hole__retransmission_copied),
		cmocka_unit_test(lender_stops__rest_copied),
		cmocka_unit_test(engine_free__gives_back),
		cmocka_unit_test(duplicate__not_kept),
		cmocka_unit_test(two_lenders__each_buffer_to_its_own),
		cmocka_unit_test(out_of_order__earlier_bytes_copied),
		cmocka_unit_test(rx_alloc__never_lent),
		cmocka_unit_test(bad_args__einval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
