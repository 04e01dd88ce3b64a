/* SPDX-License-Identifier: MIT */
/**
 * @file test_scan.c
 * Tests of scan.c and the timer's parking (timer.c): a tick skips server
 * RPCs whose request went silent until their next RESEND turn, yet
 * every RESEND and timeout comes on the tick it came before; a packet
 * unparks a request; a slot array that cannot grow leaves the ticks
 * walking the list until it can; holes are compacted.
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

static uint8_t payload[1400];

/** Allocation hooks that refuse blocks of one size while told to. */
struct picky {
	size_t refuse;     /**< size to refuse (0: none) */
	uint64_t refused;
};

/** picky_alloc() - malloc, except @size == refuse. */
static void *picky_alloc(void *ctx, size_t size)
{
	struct picky *p = ctx;

	if (p->refuse && size == p->refuse) {
		p->refused++;
		return NULL;
	}
	return malloc(size);
}

/** picky_free() - free. */
static void picky_free(void *ctx, void *ptr, size_t size)
{
	(void)ctx;
	(void)size;
	free(ptr);
}

/**
 * server() - A serving engine at 10.0.0.2:4001 (allocation hooks @ha, NULL
 * for malloc) whose strangers may open as many requests as a proven host
 * (the tests forge up to 64 from one host).
 */
static homa_engine *server(struct homa_alloc *ha)
{
	homa_addr me = homa_addr_ipv4(0x0a000002);
	struct homa_settings s;
	homa_engine *e;

	homa_settings_default(&s);
	s.max_stranger_partial_msgs = s.max_peer_partial_msgs;
	assert_int_equal(homa_engine_new(&e, &s, &me, 4001, ha, 0), 0);
	homa_engine_set_server(e, true);
	return e;
}

/**
 * forge() - Give @e the first packet of a 100,000-byte request, id @id,
 * from host 11.0.0.@host port @sport at @now; @offset picks the packet.
 */
static void forge(homa_engine *e, uint32_t host, uint16_t sport, uint64_t id, uint32_t offset,
		  uint64_t now)
{
	homa_addr src = homa_addr_ipv4(0x0b000000 + host);
	struct th_data d = {.sport = sport, .dport = 4001, .sender_id = id, .length = 100000,
			    .incoming = 20000, .offset = offset, .payload = payload,
			    .payload_len = sizeof(payload)};

	assert_int_equal(th_data_in(e, &src, &d, now), 0);
}

/** forge_many() - @n first packets of requests from @hosts hosts in turn, ports 1000 on, at time 1. */
static void forge_many(homa_engine *e, uint32_t n, uint32_t hosts)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		forge(e, 1 + i % hosts, (uint16_t)(1000 + i), 2 * (uint64_t)i + 2, 0, 1);
}

/** resends() - Take every packet @e has to send at @now. Return: the RESENDs among them. */
static int resends(homa_engine *e, uint64_t now)
{
	return th_drain_count(e, now, HOMA_PKT_RESEND);
}

/** tick() - Run @e's timer for tick @t (ticks are tick_ns apart from 0). Return: RESENDs sent. */
static int tick(homa_engine *e, uint64_t t)
{
	uint64_t now = t * e->s.tick_ns + 1;

	homa_engine_on_timer(e, now);
	return resends(e, now);
}

/**
 * homa_scan_walk__skips_parked_requests() - 256 forged requests from 256
 * hosts, silent after their first packet: the first tick visits all of
 * them, the ticks before their first RESEND turn visit none, the turn
 * visits all again (RESENDs to as many strangers as may get a reply, the
 * rest count an unanswered turn), and the ticks up to the next turn none.
 */
static void homa_scan_walk__skips_parked_requests(void **state)
{
	homa_engine *e = server(NULL);
	uint32_t first = e->s.resend_ticks, every = e->s.resend_interval;
	uint64_t t, before;

	(void)state;
	forge_many(e, 256, 256);
	resends(e, 1);
	for (t = 1; t <= first + every; t++) {
		before = e->timer_visits;
		assert_int_equal(tick(e, t), t % every == first % every ? HOMA_STRANGER_REPLIES : 0);
		if (t == 1 || t == first)
			assert_int_equal(e->timer_visits - before, 256);
		else if (t != first + every)
			assert_int_equal(e->timer_visits - before, 0);
	}
	assert_int_equal(e->scan.broken_count, 0);
	homa_engine_free(e);
}

/**
 * homa_scan_walk__skips_requests_behind_their_peer() - 64 silent requests
 * from one host: their RESENDs fall due together and the host gets one
 * per tick, in scan order; the ticks skip the requests waiting behind
 * that one (each tick visits the one served and those whose next turn
 * falls due), yet every request gets its RESEND, each exactly once.
 */
static void homa_scan_walk__skips_requests_behind_their_peer(void **state)
{
	homa_engine *e = server(NULL);
	uint32_t first = e->s.resend_ticks;
	uint64_t t, before, visits = 0;
	int sent = 0;

	(void)state;
	forge_many(e, 64, 1);
	resends(e, 1);
	for (t = 1; t < first; t++)
		assert_int_equal(tick(e, t), 0);
	for (t = first; t < first + 64; t++) {
		before = e->timer_visits;
		assert_int_equal(tick(e, t), 1);
		sent++;
		if (t > first)
			visits += e->timer_visits - before;
	}
	assert_int_equal(sent, 64);
	/* without the skips: 64 visits a tick; with them the one served, and
	 * every resend_interval ticks the ones served resend_interval ago */
	assert_true(visits < 63 * 3);
	homa_engine_free(e);
}

/**
 * homa_scan_wake__request_keeps_its_schedule() - One forged request that
 * stays silent: RESENDs at resend_ticks and every resend_interval after,
 * and it is freed at timeout_ticks (its probes unanswered), while the
 * ticks in between skip it; afterwards the slots hold no holes.
 */
static void homa_scan_wake__request_keeps_its_schedule(void **state)
{
	homa_engine *e = server(NULL);
	uint32_t first = e->s.resend_ticks, every = e->s.resend_interval;
	uint64_t t, freed = 0, visits = 0;
	struct homa_stats st;
	int n;

	(void)state;
	forge(e, 1, 1000, 2, 0, 1);
	resends(e, 1);
	for (t = 1; t <= e->s.timeout_ticks + 10 && !freed; t++) {
		uint64_t before = e->timer_visits;

		n = tick(e, t);
		visits += e->timer_visits - before;
		homa_engine_stats(e, &st);
		if (!st.active_rpcs) {
			freed = t;
			break;
		}
		assert_int_equal(n, t >= first && (t - first) % every == 0);
	}
	assert_int_equal(freed, e->s.timeout_ticks);
	/* tick 1, every turn, and the tick that timed it out */
	assert_int_equal(visits, 1 + (e->s.timeout_ticks - first) / every + 1);
	assert_int_equal(e->scan.len, e->scan.holes);
	homa_engine_free(e);
}

/**
 * homa_rpc_heard__unparks_request() - A parked request whose second
 * packet arrives at tick 3 is due again: its first RESEND comes
 * resend_ticks after that packet, not at resend_ticks.
 */
static void homa_rpc_heard__unparks_request(void **state)
{
	homa_engine *e = server(NULL);
	uint32_t first = e->s.resend_ticks;
	uint64_t t;

	(void)state;
	forge(e, 1, 1000, 2, 0, 1);
	resends(e, 1);
	for (t = 1; t <= 3; t++)
		assert_int_equal(tick(e, t), 0);
	forge(e, 1, 1000, 2, sizeof(payload), 3 * e->s.tick_ns + 2);
	resends(e, 3 * e->s.tick_ns + 2);
	for (t = 4; t < 3 + first; t++)
		assert_int_equal(tick(e, t), 0);
	assert_int_equal(tick(e, 3 + first), 1);
	homa_engine_free(e);
}

/**
 * homa_scan__slots_that_cannot_grow() - With 64 slots full and the next
 * size refused, the 65th request breaks the scan: ticks then visit every
 * RPC (the list) and still send the RESENDs on time; once allocation
 * works again the next tick rebuilds the slots, the one after parks the
 * requests, and quiet ticks skip them again.
 */
static void homa_scan__slots_that_cannot_grow(void **state)
{
	struct picky pk = {.refuse = 128 * sizeof(struct homa_scan_slot)};
	struct homa_alloc ha = {picky_alloc, picky_free, &pk};
	homa_engine *e = server(&ha);
	uint32_t first = e->s.resend_ticks, every = e->s.resend_interval;
	uint64_t t, before;

	(void)state;
	forge_many(e, 70, 70);
	resends(e, 1);
	assert_true(e->scan.broken);
	assert_true(pk.refused > 0);
	for (t = 1; t <= first; t++) {
		before = e->timer_visits;
		assert_int_equal(tick(e, t), t == first ? HOMA_STRANGER_REPLIES : 0);
		assert_int_equal(e->timer_visits - before, 70); /* the list: every RPC */
	}
	pk.refuse = 0;
	assert_int_equal(tick(e, first + 1), 0); /* walks the list, then rebuilds */
	assert_false(e->scan.broken);
	assert_int_equal(tick(e, first + 2), 0); /* visits all, parks them */
	before = e->timer_visits;
	for (t = first + 3; t < first + every; t++)
		assert_int_equal(tick(e, t), 0);
	assert_int_equal(e->timer_visits - before, 0);
	assert_int_equal(tick(e, first + every), HOMA_STRANGER_REPLIES);
	assert_int_equal(e->scan.broken_count, 1);
	homa_engine_free(e);
}

/**
 * homa_scan_del__holes_compacted() - 299 forged requests time out while
 * a later one lives on: the slots shrink back to about the one left.
 */
static void homa_scan_del__holes_compacted(void **state)
{
	homa_engine *e = server(NULL);
	uint64_t t;

	(void)state;
	forge_many(e, 299, 8);
	for (t = 1; t < 40; t++)
		tick(e, t);
	/* a late one, heard long after the rest */
	forge(e, 9, 999, 2, 0, 40 * e->s.tick_ns);
	for (t = 40; e->rpcs.count > 1; t++)
		tick(e, t);
	assert_int_equal(e->rpcs.count, 1);
	assert_true(e->scan.len < 32);
	assert_int_equal(e->scan.len - e->scan.holes, 1);
	homa_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_scan_walk__skips_parked_requests),
		cmocka_unit_test(homa_scan_walk__skips_requests_behind_their_peer),
		cmocka_unit_test(homa_scan_wake__request_keeps_its_schedule),
		cmocka_unit_test(homa_rpc_heard__unparks_request),
		cmocka_unit_test(homa_scan__slots_that_cannot_grow),
		cmocka_unit_test(homa_scan_del__holes_compacted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
