/* SPDX-License-Identifier: MIT */
/**
 * @file test_rxcopy.c
 * Payload copies left to the caller (src/core/rxcopy.c,
 * homa_engine_defer_copies()): the server engine lists its copies instead
 * of doing them; the test keeps each packet buffer until it did them.
 * A message with copies pending is not delivered, not read as it arrives
 * and not freed; a message freed meanwhile is freed once they are done
 * (a write into freed memory, or a leak, shows under ASan).
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

/** Most packets (and copies) one fixture holds back. */
#define MOST 512

/** Two engines, the server deferring its copies. */
struct fix {
	homa_engine *e[2];           /**< 0 client, 1 server */
	homa_addr addr[2];
	uint64_t now;
	struct homa_rx_copy copies[MOST];
	uint32_t ncopies;
	uint8_t *bufs[MOST];         /**< packet buffers the server read, kept until copied */
	int nbufs;
	int data_limit;              /**< client DATA packets handed over at most (-1: all) */
	int data_seen;
};

/** fix_init() - Client and server engines; the server lists copies in f->copies (@cap). */
static void fix_init(struct fix *f, uint32_t cap)
{
	memset(f, 0, sizeof(*f));
	f->data_limit = -1;
	for (int i = 0; i < 2; i++) {
		f->addr[i] = homa_addr_ipv4(0x0a000001 + (uint32_t)i);
		assert_int_equal(homa_engine_new(&f->e[i], NULL, &f->addr[i],
						 (uint16_t)(4000 + i), NULL, 0), 0);
	}
	homa_engine_set_server(f->e[1], true);
	assert_int_equal(homa_engine_defer_copies(f->e[1], f->copies, cap, &f->ncopies), 0);
}

/** pump() - Move packets both ways until quiet; the server's buffers are kept. */
static void pump(struct fix *f)
{
	struct th_pkt p;

	for (bool any = true; any;) {
		any = false;
		if (th_take(f->e[0], f->now, &p) > 0) {
			any = true;
			if (p.ok && p.k.type == HOMA_PKT_DATA && f->data_limit >= 0 &&
			    f->data_seen++ >= f->data_limit)
				continue;
			assert_true(f->nbufs < MOST);
			f->bufs[f->nbufs] = malloc((size_t)p.len);
			memcpy(f->bufs[f->nbufs], p.buf, (size_t)p.len);
			homa_engine_input(f->e[1], &f->addr[0], f->bufs[f->nbufs], (size_t)p.len, f->now);
			f->nbufs++;
		}
		if (th_take(f->e[1], f->now, &p) > 0) {
			any = true;
			homa_engine_input(f->e[0], &f->addr[1], p.buf, (size_t)p.len, f->now);
		}
	}
}

/** copy_all() - Do the listed copies, report them done, free the packet buffers. */
static void copy_all(struct fix *f)
{
	for (uint32_t i = 0; i < f->ncopies; i++)
		memcpy(f->copies[i].dst, f->copies[i].src, f->copies[i].len);
	homa_engine_copies_done(f->e[1], f->copies, f->ncopies);
	f->ncopies = 0;
	for (int i = 0; i < f->nbufs; i++)
		free(f->bufs[i]);
	f->nbufs = 0;
}

/** fix_free() - Free both engines. */
static void fix_free(struct fix *f)
{
	homa_engine_free(f->e[0]);
	homa_engine_free(f->e[1]);
}

/** send_request() - Client sends th_pattern(@len, @len). */
static void send_request(struct fix *f, size_t len)
{
	uint8_t *src = malloc(len);
	struct homa_iov iov = {src, len};
	uint64_t id;

	th_pattern(src, len, (uint32_t)len);
	assert_int_equal(homa_engine_send_request(f->e[0], &f->addr[1], 4001, &iov, 1, 0,
						  f->now, &id), 0);
	free(src);
}

/**
 * defer_copies__delivered_once_copied() - A 5,000-byte request arrives
 * whole, but while its copies are listed and not done the engine hands
 * out no event; once they are done the request comes out intact. The
 * engine counted the bytes as copied in all the same.
 */
static void defer_copies__delivered_once_copied(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct fix f;

	(void)state;
	fix_init(&f, MOST);
	send_request(&f, 5000);
	pump(&f);
	assert_true(f.ncopies >= 4);
	assert_int_equal(homa_engine_next_event(f.e[1], &ev), 0);
	copy_all(&f);
	assert_int_equal(homa_engine_next_event(f.e[1], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	assert_true(th_check_pattern(ev.msg, 5000));
	homa_engine_stats(f.e[1], &st);
	assert_int_equal(st.payload_copied_in, 5000);
	homa_engine_msg_release(f.e[1], ev.msg);
	fix_free(&f);
}

/**
 * defer_copies__later_events_pass() - A request whose copies are pending
 * does not hold back a later one whose copies are done.
 */
static void defer_copies__later_events_pass(void **state)
{
	struct homa_event ev;
	struct homa_rx_copy first[MOST];
	uint32_t nfirst;
	struct fix f;

	(void)state;
	fix_init(&f, MOST);
	send_request(&f, 3000);
	pump(&f);
	nfirst = f.ncopies;
	memcpy(first, f.copies, nfirst * sizeof(*first));
	for (uint32_t i = 0; i < nfirst; i++)
		memcpy(first[i].dst, first[i].src, first[i].len);
	f.ncopies = 0;  /* the first request's copies stay unreported */
	send_request(&f, 2000);
	pump(&f);
	for (uint32_t i = 0; i < f.ncopies; i++)
		memcpy(f.copies[i].dst, f.copies[i].src, f.copies[i].len);
	homa_engine_copies_done(f.e[1], f.copies, f.ncopies);
	f.ncopies = 0;
	assert_true(th_take_msg(f.e[1], HOMA_EV_REQUEST, 2000, 0, TH_ANY_LEN));
	assert_int_equal(homa_engine_next_event(f.e[1], &ev), 0);
	homa_engine_copies_done(f.e[1], first, nfirst);
	assert_true(th_take_msg(f.e[1], HOMA_EV_REQUEST, 3000, 0, TH_ANY_LEN));
	copy_all(&f);
	fix_free(&f);
}

/**
 * defer_copies__progress_counts_copied_bytes() - While the first packets
 * of a request are listed and not copied, homa_engine_rx_progress() says
 * 0 bytes are there; once copied, it counts them.
 */
static void defer_copies__progress_counts_copied_bytes(void **state)
{
	struct homa_rpc *rpc;
	struct fix f;
	int64_t got;

	(void)state;
	fix_init(&f, MOST);
	f.data_limit = 2;
	send_request(&f, 100000);
	pump(&f);
	rpc = homa_container_of(f.e[1]->all_rpcs.next, struct homa_rpc, all_link);
	assert_true(f.ncopies >= 2);
	assert_int_equal(homa_engine_rx_progress(f.e[1], rpc->handle, NULL), 0);
	copy_all(&f);
	got = homa_engine_rx_progress(f.e[1], rpc->handle, NULL);
	assert_true(got > 0);
	assert_int_equal(got, rpc->in.recv_end);
	fix_free(&f);
}

/**
 * defer_copies__freed_while_copying() - A partly received request is
 * aborted while its copies are pending: its memory stays until they are
 * done (the copies write into it), then it is freed.
 */
static void defer_copies__freed_while_copying(void **state)
{
	struct homa_rpc *rpc;
	struct homa_msg *m;
	struct fix f;

	(void)state;
	fix_init(&f, MOST);
	f.data_limit = 3;
	send_request(&f, 100000);
	pump(&f);
	rpc = homa_container_of(f.e[1]->all_rpcs.next, struct homa_rpc, all_link);
	m = rpc->in.msg;
	assert_true(m->copying > 0);
	assert_int_equal(homa_engine_abort(f.e[1], rpc->handle, f.now), 0);
	assert_true(m->orphan);  /* marked, not freed: ASan would flag the copies below */
	copy_all(&f);           /* frees it; a leak otherwise shows under ASan */
	assert_true(homa_list_empty(&f.e[1]->all_rpcs));
	fix_free(&f);
}

/**
 * defer_copies__full_list_copies_nothing() - With room for one copy, the
 * engine copies none of the other packets' payload itself (the caller may
 * hold its lock): it counts the pieces refused and the packets dropped,
 * the request stays incomplete once the one listed copy is done, and the
 * client's resends, one listed copy per round, complete it intact.
 */
static void defer_copies__full_list_copies_nothing(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct fix f;
	int rounds = 0, got = 0;

	(void)state;
	fix_init(&f, 1);
	send_request(&f, 5000);
	pump(&f);
	assert_int_equal(f.ncopies, 1);
	homa_engine_stats(f.e[1], &st);
	assert_true(st.rx_copies_refused >= 1);
	assert_int_equal(st.drops[HOMA_DROP_MEMORY], st.rx_copies_refused);
	copy_all(&f);
	assert_int_equal(homa_engine_next_event(f.e[1], &ev), 0);
	while (got != 1 && rounds++ < 1000) {
		f.now += 1000000;
		homa_engine_on_timer(f.e[0], f.now);
		homa_engine_on_timer(f.e[1], f.now);
		pump(&f);
		copy_all(&f);
		got = homa_engine_next_event(f.e[1], &ev);
	}
	assert_int_equal(got, 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	assert_true(th_check_pattern(ev.msg, 5000));
	homa_engine_msg_release(f.e[1], ev.msg);
	fix_free(&f);
}

/** defer_copies__bad_args() - NULL engine, an empty list, NULL count: HOMA_EINVAL. */
static void defer_copies__bad_args(void **state)
{
	struct homa_rx_copy c[1];
	uint32_t n = 0;
	struct fix f;

	(void)state;
	fix_init(&f, MOST);
	assert_int_equal(homa_engine_defer_copies(NULL, c, 1, &n), HOMA_EINVAL);
	assert_int_equal(homa_engine_defer_copies(f.e[1], c, 0, &n), HOMA_EINVAL);
	assert_int_equal(homa_engine_defer_copies(f.e[1], c, 1, NULL), HOMA_EINVAL);
	assert_int_equal(homa_engine_defer_copies(f.e[1], NULL, 0, NULL), 0);
	homa_engine_copies_done(NULL, c, 1);
	homa_engine_copies_done(f.e[1], NULL, 1);
	fix_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defer_copies__delivered_once_copied),
		cmocka_unit_test(defer_copies__later_events_pass),
		cmocka_unit_test(defer_copies__progress_counts_copied_bytes),
		cmocka_unit_test(defer_copies__freed_while_copying),
		cmocka_unit_test(defer_copies__full_list_copies_nothing),
		cmocka_unit_test(defer_copies__bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
