/* SPDX-License-Identifier: MIT */
/**
 * @file test_evict.c
 * Tests of evict.c: when the rx budget is full, a packet of a shorter
 * message evicts incomplete requests with more bytes left instead of
 * being dropped. Module-level cases on one engine, then a client and an
 * echo server on the ideal wire while forged DATA announcing long
 * messages floods the server from many ports, ids and hosts (including
 * the client's own address): genuine RPCs keep completing bit-exact,
 * exactly once, and the server never passes its cap.
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

#define MIB (1u << 20)
#define CAP (2 * MIB)
#define SLACK HOMA_CHUNK     /* a packet may straddle two new chunks */
#define STEP 10000ull        /* ns of simulated time between flood bursts */
#define FORGED_PER_STEP 8    /* about 9 Gbit/s of forged 1400-byte packets */
#define MAXRPC 64

static uint8_t payload[1400];

/** forge() - Give @e one forged DATA at offset 0 of a @len-byte message from @src:@sport. */
static int forge(homa_engine *e, const homa_addr *src, uint16_t sport, uint64_t id,
		 uint32_t len, uint64_t now)
{
	struct th_data d = {.sport = sport, .dport = 4001, .sender_id = id & ~1ull, .length = len,
			    .incoming = 40000, .payload = payload, .payload_len = sizeof(payload)};

	return th_data_in(e, src, &d, now);
}

/* ---- module level: one server engine, packets forged by hand ---- */

/**
 * server() - A serving engine at 10.0.0.2:4001 with rx cap @cap, whose
 * strangers may open as many requests as a proven host (fill() forges
 * from one host until the cap, not the host's limit, refuses).
 */
static homa_engine *server(uint64_t cap)
{
	homa_addr me = homa_addr_ipv4(0x0a000002);
	struct homa_settings s;
	homa_engine *e;

	homa_settings_default(&s);
	s.max_rx_buffered = cap;
	s.max_stranger_partial_msgs = s.max_peer_partial_msgs;
	assert_int_equal(homa_engine_new(&e, &s, &me, 4001, NULL, 0), 0);
	homa_engine_set_server(e, true);
	return e;
}

/** fill() - Forge first packets of @len-byte messages until the cap refuses one. Return: count. */
static int fill(homa_engine *e, uint32_t len, uint32_t host)
{
	homa_addr src = homa_addr_ipv4(host);
	struct homa_stats st;
	int n = 0;

	for (;;) {
		forge(e, &src, (uint16_t)(1000 + n), 2 * (uint64_t)n + 2, len, 1);
		homa_engine_stats(e, &st);
		if (st.drops[HOMA_DROP_MEMORY])
			return n;
		n++;
	}
}

/**
 * homa_evict_room__shorter_evicts_longer() - With the budget full of
 * 64 MiB requests, a 100 KB request gets in by evicting one of them; a
 * request as long as the buffered ones is dropped instead.
 */
static void homa_evict_room__shorter_evicts_longer(void **state)
{
	homa_engine *e = server(CAP);
	homa_addr g = homa_addr_ipv4(0x0a000009);
	struct homa_stats st;
	int n = fill(e, 64 * MIB, 0x0b000001);

	(void)state;
	assert_true(n > 10);
	homa_engine_stats(e, &st);
	assert_int_equal(st.msgs_evicted, 0);
	assert_int_equal(forge(e, &g, 7000, 100, 64 * MIB, 1), HOMA_INPUT_DROPPED + HOMA_DROP_MEMORY);
	assert_int_equal(forge(e, &g, 7000, 102, 100000, 1), 0);
	homa_engine_stats(e, &st);
	assert_true(st.msgs_evicted >= 1);
	assert_int_equal(st.evicted_bytes, st.msgs_evicted * sizeof(payload));
	assert_true(st.rx_buffered_bytes <= CAP);
	assert_int_equal(st.active_rpcs, (uint64_t)n - st.msgs_evicted + 1);
	homa_engine_free(e);
}

/**
 * homa_evict_room__responses_never_evicted() - A client engine whose rx
 * budget is full of a long response refuses a short request rather than
 * evicting the response (only requests are evictable).
 */
static void homa_evict_room__responses_never_evicted(void **state)
{
	static uint8_t req[100];
	struct homa_iov iov = {req, sizeof(req)};
	homa_engine *e = server(256 * 1024);
	homa_addr srv = homa_addr_ipv4(0x0a000005), other = homa_addr_ipv4(0x0a000006);
	struct homa_stats st;
	uint64_t id;
	uint32_t off;

	(void)state;
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, 0, 1, &id), 0);
	/* the response: 64 MiB, bytes at the start of four chunks */
	for (off = 0; off < 4 * HOMA_CHUNK; off += HOMA_CHUNK) {
		struct th_data d = {.sport = 4001, .dport = 4001, .sender_id = id | 1,
				    .length = 64 * MIB, .incoming = 64 * MIB, .offset = off,
				    .payload = payload, .payload_len = sizeof(payload)};

		th_data_in(e, &srv, &d, 1);
	}
	homa_engine_stats(e, &st);
	assert_true(st.rx_buffered_bytes + HOMA_CHUNK > 256 * 1024);
	assert_int_equal(forge(e, &other, 5000, 10, 2000, 1), HOMA_INPUT_DROPPED + HOMA_DROP_MEMORY);
	homa_engine_stats(e, &st);
	assert_int_equal(st.msgs_evicted, 0);
	assert_int_equal(st.active_rpcs, 1);
	homa_engine_free(e);
}

/** resends() - RESEND packets @e sends now. */
static int resends(homa_engine *e, uint64_t now)
{
	return th_drain_count(e, now, HOMA_PKT_RESEND);
}

/**
 * homa_evict_stale__first_packets_freed_under_pressure() - Forged first
 * packets that fill the budget are freed resend_ticks ticks later (not
 * timeout_ticks), counted as stale; without memory pressure the same
 * silent request is asked for its bytes (RESEND) and kept.
 */
static void homa_evict_stale__first_packets_freed_under_pressure(void **state)
{
	homa_engine *e = server(CAP);
	homa_addr src = homa_addr_ipv4(0x0b000001);
	struct homa_settings s;
	struct homa_stats st;
	uint64_t now = 1, t;
	int n = fill(e, 64 * MIB, 0x0b000001);

	(void)state;
	homa_settings_default(&s);
	for (t = 0; t <= s.resend_ticks + 1; t++) {
		now += s.tick_ns;
		homa_engine_on_timer(e, now);
	}
	homa_engine_stats(e, &st);
	assert_int_equal(st.stale_evicted, (uint64_t)n);
	assert_int_equal(st.msgs_evicted, (uint64_t)n);
	assert_int_equal(st.active_rpcs, 0);
	homa_engine_free(e);

	e = server(256 * MIB); /* no pressure */
	forge(e, &src, 1000, 2, 64 * MIB, 1);
	now = 1;
	for (t = 0; t <= s.resend_ticks + 1; t++) {
		now += s.tick_ns;
		homa_engine_on_timer(e, now);
	}
	homa_engine_stats(e, &st);
	assert_int_equal(st.stale_evicted, 0);
	assert_int_equal(st.active_rpcs, 1);
	assert_int_equal(resends(e, now), 1);
	homa_engine_free(e);
}

/* ---- a client and an echo server under a forged flood ---- */

/** One genuine RPC of the flood scenarios. */
struct grpc {
	uint64_t id;
	uint32_t len;
	uint64_t start, end;
	int ends;          /**< outcomes seen (must end up 1) */
	bool ok;           /**< response bit-exact */
};

/** A flood scenario: the net, the genuine RPCs and what was observed. */
struct scen {
	struct th_net net;
	struct grpc r[MAXRPC];
	int nr;
	uint64_t rng;
	uint32_t forged_len;    /**< message length the forged packets announce */
	uint64_t peak_rx;       /**< server's highest rx_buffered_bytes */
};

/** scen_init() - Client 'c' and echo server 's' with rx cap CAP on the server. */
static void scen_init(struct scen *sc, uint32_t forged_len)
{
	struct homa_settings s;

	memset(sc, 0, sizeof(*sc));
	homa_settings_default(&s);
	s.max_rx_buffered = CAP;
	th_net_init(&sc->net, "cs", &s);
	sc->net.logging = false;
	sc->net.echo[1] = true;
	homa_engine_set_server(sc->net.e[1], true);
	sc->rng = 88172645463325252ull;
	sc->forged_len = forged_len;
}

/** start() - Start a genuine RPC of @len bytes (request and echoed response). */
static void start(struct scen *sc, uint32_t len)
{
	struct grpc *g = &sc->r[sc->nr];
	uint8_t *buf = malloc(len);
	struct homa_iov iov = {buf, len};

	assert_true(sc->nr < MAXRPC);
	th_pattern(buf, len, (uint32_t)sc->nr);
	g->len = len;
	g->start = sc->net.now;
	assert_int_equal(homa_engine_send_request(sc->net.e[0], &sc->net.addr[1], sc->net.port[1],
						  &iov, 1, (uint64_t)sc->nr, sc->net.now, &g->id), 0);
	sc->nr++;
	free(buf);
}

/** flood() - FORGED_PER_STEP forged first packets from random ports, ids and hosts. */
static void flood(struct scen *sc)
{
	int i;

	for (i = 0; i < FORGED_PER_STEP; i++) {
		homa_addr src;

		sc->rng ^= sc->rng << 13, sc->rng ^= sc->rng >> 7, sc->rng ^= sc->rng << 17;
		/* a quarter from the genuine client's own address */
		src = (sc->rng & 3) ? homa_addr_ipv4(0x0b000000u + (uint32_t)(sc->rng >> 8) % 64)
				    : sc->net.addr[0];
		forge(sc->net.e[1], &src, (uint16_t)(1024 + (sc->rng >> 20) % 60000),
		      sc->rng >> 24, sc->forged_len, sc->net.now);
	}
}

/** collect() - Record the client's outcomes; check each response. */
static void collect(struct scen *sc)
{
	struct homa_event ev;

	while (homa_engine_next_event(sc->net.e[0], &ev)) {
		struct grpc *g = &sc->r[ev.cookie];

		assert_true(ev.cookie < (uint64_t)sc->nr);
		g->ends++;
		g->end = sc->net.now;
		if (ev.type == HOMA_EV_RESPONSE) {
			g->ok = homa_msg_length(ev.msg) == g->len &&
				th_check_pattern(ev.msg, (uint32_t)ev.cookie);
			homa_engine_msg_release(sc->net.e[0], ev.msg);
		}
	}
}

/** step() - One STEP of simulated time: flood (if @flooding), move packets, run timers. */
static void step(struct scen *sc, bool flooding)
{
	uint64_t end = sc->net.now + STEP;
	struct homa_stats st;

	if (flooding)
		flood(sc);
	homa_engine_stats(sc->net.e[1], &st);
	if (st.rx_buffered_bytes > sc->peak_rx)
		sc->peak_rx = st.rx_buffered_bytes;
	th_net_run(&sc->net, STEP);
	if (sc->net.now < end)
		sc->net.now = end;
	collect(sc);
	homa_engine_stats(sc->net.e[1], &st);
	if (st.rx_buffered_bytes > sc->peak_rx)
		sc->peak_rx = st.rx_buffered_bytes;
}

/**
 * run_mix() - 1 ms of warm-up, then 20 ms in which a short (100 B) and a
 * medium (200 KB) genuine RPC alternate every 0.5 ms (34 in all, the last
 * 3 ms without new ones), with or without the forged flood.
 * Return: steps in which the server's budget was within two chunks of its cap.
 */
static uint64_t run_mix(struct scen *sc, bool flooding)
{
	struct homa_stats st;
	uint64_t full = 0;
	int i;

	for (i = 0; i < 100; i++)
		step(sc, flooding);
	for (i = 0; i < 2000; i++) {
		if (i % 50 == 0 && i < 1700)
			start(sc, (i / 50) % 2 ? 200000 : 100);
		step(sc, flooding);
		homa_engine_stats(sc->net.e[1], &st);
		full += st.rx_buffered_bytes + 2 * SLACK > CAP;
	}
	return full;
}

/** mean_us() - Mean latency of the RPCs of @len bytes that ended, in simulated us. */
static double mean_us(const struct scen *sc, uint32_t len)
{
	double sum = 0;
	int i, n = 0;

	for (i = 0; i < sc->nr; i++) {
		if (sc->r[i].len == len && sc->r[i].ends) {
			sum += (double)(sc->r[i].end - sc->r[i].start);
			n++;
		}
	}
	return n ? sum / n / 1e3 : 0;
}

/**
 * homa_evict__genuine_rpcs_complete_during_flood() - 20 ms of forged first
 * packets announcing 64 MiB messages (about 9 Gbit/s) keep the server's
 * budget at its cap; meanwhile short (100 B) and medium (200 KB, needs
 * grants) genuine RPCs, one every 0.5 ms, all complete bit-exact exactly
 * once before the flood ends, and the server never passes its cap.
 * Without eviction every genuine request would be dropped as `memory`.
 * Mean latencies with and without the flood are printed.
 */
static void homa_evict__genuine_rpcs_complete_during_flood(void **state)
{
	struct scen *sc = calloc(1, sizeof(*sc));
	struct homa_stats st;
	double quiet_s, quiet_m;
	uint64_t full;
	int i;

	(void)state;
	scen_init(sc, 64 * MIB - 1);
	run_mix(sc, false);
	quiet_s = mean_us(sc, 100), quiet_m = mean_us(sc, 200000);
	th_net_free(&sc->net);
	scen_init(sc, 64 * MIB - 1);
	full = run_mix(sc, true);
	for (i = 0; i < sc->nr; i++) {
		if (sc->r[i].ends != 1)
			print_message("rpc %d len %u: %d ends\n", i, sc->r[i].len, sc->r[i].ends);
	}
	for (i = 0; i < sc->nr; i++) {
		assert_int_equal(sc->r[i].ends, 1);
		assert_true(sc->r[i].ok);
	}
	homa_engine_stats(sc->net.e[1], &st);
	print_message("flood: %d genuine RPCs done, server peak rx %llu (cap %u), evicted %llu "
		      "(stale %llu), dropped for memory %llu, at cap %llu of 2000 steps\n", sc->nr,
		      (unsigned long long)sc->peak_rx, CAP, (unsigned long long)st.msgs_evicted,
		      (unsigned long long)st.stale_evicted,
		      (unsigned long long)st.drops[HOMA_DROP_MEMORY], (unsigned long long)full);
	print_message("mean latency (simulated): 100 B %.1f us flood / %.1f us quiet, "
		      "200 KB %.1f us flood / %.1f us quiet\n", mean_us(sc, 100), quiet_s,
		      mean_us(sc, 200000), quiet_m);
	assert_int_equal(sc->nr, 34);
	assert_int_equal(st.server_requests_received, 34); /* each ran once */
	assert_true(sc->peak_rx <= CAP + SLACK);
	assert_true(st.drops[HOMA_DROP_MEMORY] > 1000);
	assert_true(st.msgs_evicted > 0);
	assert_true(full > 1000); /* the budget stayed at the cap during the flood */
	th_net_free(&sc->net);
	free(sc);
}

/**
 * homa_evict__long_request_evicted_completes_once() - A 1.5 MB genuine
 * request is under way when forged 1 MB messages flood the server: being
 * longer, it is evicted (its client restarts it after RPC_UNKNOWN) while
 * short genuine RPCs keep completing; after the flood the long request
 * completes bit-exact, runs exactly once, and nothing is left behind.
 */
static void homa_evict__long_request_evicted_completes_once(void **state)
{
	struct scen *sc = calloc(1, sizeof(*sc));
	struct homa_stats ss, cs;
	int i;

	(void)state;
	scen_init(sc, 1000000);
	start(sc, 1500000);
	for (i = 0; i < 5; i++)
		step(sc, false); /* 50 us: part of the long request is in */
	for (i = 0; i < 1000; i++) {
		if (i % 50 == 10 && i < 800)
			start(sc, 100);
		step(sc, true);
	}
	for (i = 1; i < sc->nr; i++) {
		assert_int_equal(sc->r[i].ends, 1);
		assert_true(sc->r[i].ok);
	}
	assert_int_equal(sc->r[0].ends, 0); /* still waiting: it is longer than the flood */
	homa_engine_stats(sc->net.e[1], &ss);
	assert_true(ss.msgs_evicted > 0);
	for (i = 0; i < 3000 && !sc->r[0].ends; i++)
		step(sc, false);
	th_net_run(&sc->net, 1000000000ull);
	collect(sc);
	assert_int_equal(sc->r[0].ends, 1);
	assert_true(sc->r[0].ok);
	homa_engine_stats(sc->net.e[0], &cs);
	homa_engine_stats(sc->net.e[1], &ss);
	assert_int_equal(ss.server_requests_received, (uint64_t)sc->nr); /* each ran once */
	print_message("long request: done after %.1f ms, client restarts %llu, server evicted %llu "
		      "(stale %llu)\n", (double)(sc->r[0].end - sc->r[0].start) / 1e6,
		      (unsigned long long)cs.rpc_restarts, (unsigned long long)ss.msgs_evicted,
		      (unsigned long long)ss.stale_evicted);
	assert_true(cs.rpc_restarts >= 1);
	assert_int_equal(cs.active_rpcs, 0);
	assert_true(sc->peak_rx <= CAP + SLACK);
	th_net_free(&sc->net);
	free(sc);
}

/** main() - Run the eviction tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_evict_room__shorter_evicts_longer),
		cmocka_unit_test(homa_evict_room__responses_never_evicted),
		cmocka_unit_test(homa_evict_stale__first_packets_freed_under_pressure),
		cmocka_unit_test(homa_evict__genuine_rpcs_complete_during_flood),
		cmocka_unit_test(homa_evict__long_request_evicted_completes_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
