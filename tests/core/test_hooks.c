/* SPDX-License-Identifier: MIT */
/**
 * @file test_hooks.c
 * The encryption seam (struct homa_packet_hooks): a seal hook that appends
 * a 16-byte tag and an open hook that checks and strips it. RPCs complete
 * through it, every packet on the wire is sealed, DATA payload shrinks by
 * the overhead, and tampered packets are dropped as HOMA_DROP_VERIFY.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define TAG 16

/** The engine's default tick (settings.tick_ns). */
#define TICK_NS 1000000ull

/** Hook context: a key and counters. */
struct tagger {
	uint64_t key;
	uint64_t sealed, opened, rejected;
};

/** tag_of() - 16-byte keyed checksum of @len bytes (two FNV-1a-style lanes). */
static void tag_of(uint64_t key, const uint8_t *p, size_t len, uint8_t *out)
{
	uint64_t a = 0xcbf29ce484222325ull ^ key, b = 0x84222325cbf29ce4ull + key;
	size_t i;

	for (i = 0; i < len; i++) {
		a = (a ^ p[i]) * 0x100000001b3ull;
		b = (b + p[i]) * 0xff51afd7ed558ccdull;
	}
	memcpy(out, &a, 8);
	memcpy(out + 8, &b, 8);
}

/** seal() - Append the tag. Return: new length, or -1 if it does not fit. */
static int seal(void *ctx, uint8_t *pkt, size_t hdr_len, size_t len, size_t cap)
{
	struct tagger *t = ctx;

	if (len + TAG > cap || hdr_len > len)
		return -1;
	tag_of(t->key, pkt, len, pkt + len);
	t->sealed++;
	return (int)(len + TAG);
}

/** open_pkt() - Check and strip the tag. Return: length without it, or -1. */
static int open_pkt(void *ctx, const homa_addr *src, uint8_t *pkt, size_t len)
{
	struct tagger *t = ctx;
	uint8_t want[TAG];

	if (len < TAG) {
		t->rejected++;
		return -1;
	}
	tag_of(t->key, pkt, len - TAG, want);
	if (memcmp(want, pkt + len - TAG, TAG) != 0) {
		t->rejected++;
		return -1;
	}
	t->opened++;
	return (int)(len - TAG);
}

/** hooks_for() - Hooks using @t. */
static struct homa_packet_hooks hooks_for(struct tagger *t)
{
	struct homa_packet_hooks h = {seal, open_pkt, TAG, t, NULL};

	return h;
}

/** Wire check: counts packets whose tag verifies. */
struct wire_check {
	uint64_t key;
	uint64_t good, bad;
	size_t max_len;
};

/** check_wire() - Filter that drops nothing and verifies every packet's tag. */
static bool check_wire(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct wire_check *w = ctx;
	uint8_t want[TAG];

	tag_of(w->key, pkt, len - TAG, want);
	if (len >= TAG + HOMA_COMMON_LEN && memcmp(want, pkt + len - TAG, TAG) == 0)
		w->good++;
	else
		w->bad++;
	if (len > w->max_len)
		w->max_len = len;
	return false;
}

/** send() - Client sends @len pattern bytes seeded @seed. Return: the id. */
static uint64_t send(struct th_pair *p, size_t len, uint32_t seed)
{
	static uint8_t buf[200000];
	struct homa_iov iov = {buf, len};
	uint64_t id;

	th_pattern(buf, len, seed);
	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, seed,
						  p->now, &id), 0);
	return id;
}

/**
 * homa_packet_hooks__rpcs_complete_sealed() - Echo RPCs of 1 B to 200 kB
 * complete bit-exact with both engines sealing and opening; every packet
 * on the wire (DATA and control) carries a valid tag and none exceeds the
 * MTU; all were opened, none rejected.
 */
static void homa_packet_hooks__rpcs_complete_sealed(void **state)
{
	static const size_t sizes[] = {1, 1400, 1401, 5000, 200000};
	struct tagger t[2] = {{.key = 42}, {.key = 42}};
	struct homa_packet_hooks h[2] = {hooks_for(&t[0]), hooks_for(&t[1])};
	struct wire_check w = {.key = 42};
	struct th_pair p;
	size_t i;

	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h[0]);
	homa_engine_set_hooks(p.e[1], &h[1]);
	p.echo = true;
	p.logging = false;
	p.filter = check_wire;
	p.filter_ctx = &w;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t id = send(&p, sizes[i], (uint32_t)i + 3);

		th_pair_run(&p, 1000000000);
		assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, (uint32_t)i + 3, id, sizes[i]));
	}
	assert_int_equal(w.bad, 0);
	assert_int_equal(w.good, p.npkts);
	assert_int_equal(w.max_len, 1472);
	assert_int_equal(t[0].sealed + t[1].sealed, p.npkts);
	assert_int_equal(t[0].opened + t[1].opened, p.npkts);
	assert_int_equal(t[0].rejected + t[1].rejected, 0);
	th_pair_free(&p);
}

/**
 * homa_packet_hooks__payload_shrinks_by_overhead() - A full DATA packet is
 * still 1472 bytes on the wire, but carries 1416 - 16 = 1400 payload bytes;
 * control packets grow by the tag (CUTOFFS 62 + 16).
 */
static void homa_packet_hooks__payload_shrinks_by_overhead(void **state)
{
	struct tagger t[2] = {{.key = 7}, {.key = 7}};
	struct homa_packet_hooks h[2] = {hooks_for(&t[0]), hooks_for(&t[1])};
	struct homa_pkt k;
	struct th_pkt d, c;
	struct th_pair p;

	th_pair_init(&p, NULL);
	send(&p, 3000, 1);
	assert_true(th_take(p.e[0], 0, &d) > 0 && d.ok);
	assert_int_equal(d.k.u.data.payload_len, 1416); /* no hooks yet */
	homa_engine_set_hooks(p.e[0], &h[0]);
	homa_engine_set_hooks(p.e[1], &h[1]);
	assert_int_equal(th_take(p.e[0], 0, &d), 1472);
	assert_int_equal(open_pkt(&t[1], &p.addr[0], d.buf, 1472), 1456);
	assert_int_equal(homa_wire_decode(d.buf, 1456, &k), 0);
	assert_int_equal(k.type, HOMA_PKT_DATA);
	assert_int_equal(k.u.data.offset, 1416);
	assert_int_equal(k.u.data.payload_len, 1400);
	assert_int_equal(th_take(p.e[0], 0, &d), 3000 - 2816 + HOMA_DATA_HDR_LEN + TAG);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], d.buf, (size_t)d.len, 0), 0);
	assert_int_equal(th_take(p.e[1], 0, &c), HOMA_CUTOFFS_LEN + TAG);
	assert_int_equal(homa_engine_input(p.e[0], &p.addr[1], c.buf, (size_t)c.len, 0), 0);
	homa_engine_set_hooks(p.e[0], NULL);
	homa_engine_set_hooks(p.e[1], NULL);
	th_pair_free(&p);
}

/**
 * homa_packet_hooks__tampered_packets_dropped() - A DATA packet with one
 * payload bit flipped, one with a changed tag, one with a changed header
 * and one shorter than a tag are each rejected and counted as
 * HOMA_DROP_VERIFY; the RPC still completes bit-exact by retransmission.
 */
static void homa_packet_hooks__tampered_packets_dropped(void **state)
{
	struct tagger t[2] = {{.key = 9}, {.key = 9}};
	struct homa_packet_hooks h[2] = {hooks_for(&t[0]), hooks_for(&t[1])};
	struct homa_stats st;
	struct th_pkt d;
	struct th_pair p;
	uint8_t copy[1472];
	int r;

	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h[0]);
	homa_engine_set_hooks(p.e[1], &h[1]);
	p.echo = true;
	p.logging = false;
	send(&p, 5000, 8);
	assert_int_equal(th_take(p.e[0], 0, &d), 1472);
	memcpy(copy, d.buf, sizeof(copy));
	copy[500] ^= 0x10;
	r = homa_engine_input(p.e[1], &p.addr[0], copy, sizeof(copy), 0);
	assert_int_equal(r, HOMA_INPUT_DROPPED + HOMA_DROP_VERIFY);
	memcpy(copy, d.buf, sizeof(copy));
	copy[1471] ^= 1;
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], copy, sizeof(copy), 0),
			 HOMA_INPUT_DROPPED + HOMA_DROP_VERIFY);
	memcpy(copy, d.buf, sizeof(copy));
	copy[31] ^= 0x40; /* message_length */
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], copy, sizeof(copy), 0),
			 HOMA_INPUT_DROPPED + HOMA_DROP_VERIFY);
	assert_int_equal(homa_engine_input(p.e[1], &p.addr[0], copy, 10, 0),
			 HOMA_INPUT_DROPPED + HOMA_DROP_VERIFY);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.drops[HOMA_DROP_VERIFY], 4);
	assert_int_equal(st.active_rpcs, 0); /* nothing reached the protocol */
	assert_int_equal(t[1].rejected, 4);
	th_pair_run(&p, 1000000000);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 8, 0, TH_ANY_LEN));
	homa_engine_stats(p.e[0], &st);
	assert_true(st.retransmitted_bytes >= 1400);
	th_pair_free(&p);
}

/**
 * homa_packet_hooks__key_mismatch() - Engines with different keys cannot
 * talk: every packet is rejected and the client's RPC times out.
 */
static void homa_packet_hooks__key_mismatch(void **state)
{
	struct tagger t[2] = {{.key = 1}, {.key = 2}};
	struct homa_packet_hooks h[2] = {hooks_for(&t[0]), hooks_for(&t[1])};
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;

	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h[0]);
	homa_engine_set_hooks(p.e[1], &h[1]);
	p.echo = true;
	p.logging = false;
	send(&p, 100, 1);
	th_pair_run(&p, 300000000);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_int_equal(ev.error, HOMA_ETIMEDOUT);
	homa_engine_stats(p.e[1], &st);
	assert_true(st.drops[HOMA_DROP_VERIFY] >= 1);
	assert_int_equal(st.server_requests_received, 0);
	assert_int_equal(t[0].opened + t[1].opened, 0);
	th_pair_free(&p);
}

/**
 * Seal context that refuses some packets: every @every-th one (0: none
 * by count), and every packet of RPC @refuse_id (0: none by RPC).
 */
struct moody {
	struct tagger t;
	uint64_t calls, refused;
	uint64_t every, refuse_id;
};

/** moody_seal() - Seal, but refuse the packets @ctx names (they are then not sent). */
static int moody_seal(void *ctx, uint8_t *pkt, size_t hdr_len, size_t len, size_t cap)
{
	struct moody *m = ctx;
	struct homa_pkt h;
	bool no = m->every && ++m->calls % m->every == 0;

	if (!no && m->refuse_id)
		no = homa_wire_decode(pkt, len, &h) == 0 && h.sender_id == m->refuse_id;
	if (no) {
		m->refused++;
		return -1;
	}
	return seal(&m->t, pkt, hdr_len, len, cap);
}

/** moody_open() - Open with the inner tagger. */
static int moody_open(void *ctx, const homa_addr *src, uint8_t *pkt, size_t len)
{
	return open_pkt(&((struct moody *)ctx)->t, src, pkt, len);
}

/**
 * homa_packet_hooks__seal_refusals() - A seal hook that refuses packets
 * (they are not sent) behaves like loss: the RPC completes bit-exact by
 * retransmission, and the pacer's statistics stay sane.
 */
static void homa_packet_hooks__seal_refusals(void **state)
{
	struct moody m[2] = {{.t = {.key = 5}, .every = 5}, {.t = {.key = 5}, .every = 5}};
	struct homa_packet_hooks h[2] = {{moody_seal, moody_open, TAG, &m[0], NULL},
					 {moody_seal, moody_open, TAG, &m[1], NULL}};
	struct homa_stats st;
	struct th_pair p;
	int i;

	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h[0]);
	homa_engine_set_hooks(p.e[1], &h[1]);
	p.echo = true;
	p.logging = false;
	send(&p, 60000, 4);
	th_pair_run(&p, 1000000000);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 4, 0, TH_ANY_LEN));
	assert_true(m[0].refused > 0 && m[1].refused > 0);
	for (i = 0; i < 2; i++) {
		homa_engine_stats(p.e[i], &st);
		assert_true(st.pacer_throttled_ns < 1000000000ull);
		assert_int_equal(st.drops[HOMA_DROP_VERIFY], 0);
	}
	th_pair_free(&p);
}

/**
 * homa_engine_output__seal_refusal_not_throttling() - A packet the seal
 * hook refuses makes homa_engine_output() return 0, but that is not the
 * pacer holding data back: pacer_throttled_ns stays 0 while the modelled
 * NIC queue is below its limit. The message waits for the next tick (no
 * deadline before it), which sends the refused packet.
 */
static void homa_engine_output__seal_refusal_not_throttling(void **state)
{
	struct moody m = {.t = {.key = 5}, .every = 5};
	struct homa_packet_hooks h = {moody_seal, moody_open, TAG, &m, NULL};
	struct homa_stats st;
	struct th_pkt k;
	struct th_pair p;
	int i;

	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h);
	send(&p, 20000, 1);
	for (i = 0; i < 4; i++)
		assert_int_equal(th_take(p.e[0], 0, &k), 1472);
	assert_int_equal(th_take(p.e[0], 0, &k), 0); /* the fifth is refused */
	assert_int_equal(m.refused, 1);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.pacer_throttled_ns, 0);
	assert_int_equal(th_take(p.e[0], 0, &k), 0);
	assert_true(homa_engine_next_deadline(p.e[0]) >= TICK_NS);
	homa_engine_on_timer(p.e[0], TICK_NS);
	assert_int_equal(th_take(p.e[0], TICK_NS, &k), 1472);
	th_pair_free(&p);
}

/**
 * homa_packet_hooks__refused_forever_times_out() - A client whose seal
 * hook refuses every packet sends nothing, and its RPC still fails with
 * HOMA_ETIMEDOUT after timeout_ticks (100 ms) rather than waiting for
 * ever: a refusal lets the RPC's silence count, as loss does.
 */
static void homa_packet_hooks__refused_forever_times_out(void **state)
{
	struct moody m = {.t = {.key = 5}, .every = 1};
	struct homa_packet_hooks h = {moody_seal, moody_open, TAG, &m, NULL};
	struct homa_event ev;
	struct th_pair p;
	uint64_t id;

	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h);
	id = send(&p, 1000, 1);
	th_pair_run(&p, 300000000ull);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_int_equal(ev.error, HOMA_ETIMEDOUT);
	assert_int_equal(ev.id, id);
	assert_true(p.now <= 200000000ull);
	assert_true(m.refused > 0);
	assert_int_equal(p.npkts, 0);
	th_pair_free(&p);
}

/**
 * homa_packet_hooks__refused_message_holds_no_other() - The seal hook
 * refuses every packet of the shorter of two requests (first in SRPT
 * order): the longer one's packets go meanwhile and its RPC completes
 * within a few ticks, while the refused one keeps being offered once per
 * tick until it times out.
 */
static void homa_packet_hooks__refused_message_holds_no_other(void **state)
{
	struct moody k[2] = {{.t = {.key = 5}}, {.t = {.key = 5}}};
	struct homa_packet_hooks h[2] = {{moody_seal, moody_open, TAG, &k[0], NULL},
					 {moody_seal, moody_open, TAG, &k[1], NULL}};
	struct homa_event ev;
	struct th_pair p;
	uint64_t a, b, tries;

	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h[0]);
	homa_engine_set_hooks(p.e[1], &h[1]);
	p.echo = true;
	p.logging = false;
	a = send(&p, 500, 1);
	k[0].refuse_id = a;
	b = send(&p, 30000, 2);
	th_pair_run(&p, 5 * TICK_NS);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 2, b, TH_ANY_LEN));
	tries = k[0].refused;
	assert_true(tries >= 1 && tries <= 10); /* about one per tick, not one per call */
	th_pair_run(&p, 300 * TICK_NS);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.id, a);
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_int_equal(ev.error, HOMA_ETIMEDOUT);
	th_pair_free(&p);
}

/** Context of seal_to_dst(): the tagger and the destinations seen. */
struct dst_seen {
	struct tagger t;
	homa_addr last;
	uint64_t calls;
};

/** seal_to_dst() - seal_to hook: remember the destination, then seal(). */
static int seal_to_dst(void *ctx, const homa_addr *dst, uint8_t *pkt, size_t hdr_len,
		       size_t len, size_t cap)
{
	struct dst_seen *d = ctx;

	d->last = *dst;
	d->calls++;
	return seal(&d->t, pkt, hdr_len, len, cap);
}

/**
 * homa_packet_hooks__seal_to_gets_destination() - With seal_to set, it
 * replaces seal() for DATA and control packets alike and is told each
 * packet's destination host (keys are chosen per destination).
 */
static void homa_packet_hooks__seal_to_gets_destination(void **state)
{
	struct dst_seen d[2] = {{.t = {.key = 9}}, {.t = {.key = 9}}};
	struct homa_packet_hooks h[2];
	struct th_pair p;

	for (int i = 0; i < 2; i++)
		h[i] = (struct homa_packet_hooks){.seal = NULL, .open = open_pkt, .overhead = TAG,
						  .ctx = &d[i], .seal_to = seal_to_dst};
	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h[0]);
	homa_engine_set_hooks(p.e[1], &h[1]);
	p.echo = true;
	p.logging = false;
	send(&p, 5000, 4);
	th_pair_run(&p, 1000000000);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 4, 0, TH_ANY_LEN));
	assert_int_equal(d[0].calls + d[1].calls, p.npkts);
	assert_true(d[0].calls > 0 && d[1].calls > 0);
	assert_true(homa_addr_equal(&d[0].last, &p.addr[1]));
	assert_true(homa_addr_equal(&d[1].last, &p.addr[0]));
	th_pair_free(&p);
}

/**
 * homa_engine_output__refused_packet_not_skipped() - The sender advances
 * a message only after the seal hook accepted its packet: the packet the
 * hook refused (the third, then the eighth) is the next one built, so the DATA that leaves
 * covers consecutive offsets from 0 with no hole to recover by RESEND.
 */
static void homa_engine_output__refused_packet_not_skipped(void **state)
{
	struct moody m = {.t = {.key = 5}, .calls = 2, .every = 5};
	struct homa_packet_hooks h = {moody_seal, moody_open, TAG, &m, NULL};
	uint32_t want = 0;
	struct homa_pkt k;
	struct th_pkt t;
	struct th_pair p;

	th_pair_init(&p, NULL);
	homa_engine_set_hooks(p.e[0], &h);
	send(&p, 10000, 1);
	for (uint64_t now = 0; now < 20 * TICK_NS && want < 10000;) {
		int len = th_take(p.e[0], now, &t);

		if (len <= 0) {
			now += TICK_NS; /* a refused message waits for the next tick */
			homa_engine_on_timer(p.e[0], now);
			continue;
		}
		assert_int_equal(homa_wire_decode(t.buf, (size_t)len - TAG, &k), 0);
		assert_int_equal(k.type, HOMA_PKT_DATA);
		assert_int_equal(k.u.data.offset, want);
		want += k.u.data.payload_len;
	}
	assert_true(m.refused >= 1);
	assert_int_equal(want, 10000);
	th_pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_packet_hooks__rpcs_complete_sealed),
		cmocka_unit_test(homa_packet_hooks__payload_shrinks_by_overhead),
		cmocka_unit_test(homa_packet_hooks__tampered_packets_dropped),
		cmocka_unit_test(homa_packet_hooks__key_mismatch),
		cmocka_unit_test(homa_packet_hooks__seal_refusals),
		cmocka_unit_test(homa_engine_output__seal_refusal_not_throttling),
		cmocka_unit_test(homa_packet_hooks__refused_forever_times_out),
		cmocka_unit_test(homa_packet_hooks__refused_message_holds_no_other),
		cmocka_unit_test(homa_packet_hooks__seal_to_gets_destination),
		cmocka_unit_test(homa_engine_output__refused_packet_not_skipped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
