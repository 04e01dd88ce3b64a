/* SPDX-License-Identifier: MIT */
/**
 * @file test_forged.c
 * Hostile input against one engine (no I/O): floods of forged DATA that
 * announce huge messages from many fake ports and ids, messages shredded
 * into tiny holes, and forged control packets for RPCs that do not exist.
 * Memory is measured through counting alloc hooks (fuzz/fuzz_alloc.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fuzz_alloc.h"
#include "homa/engine.h"
#include "homa/wire.h"

/** Slack of the rx cap documented in docs/HARDENING.md (one 64 KiB chunk). */
#define RX_SLACK (64u * 1024)

/** One engine under attack, with its allocator. */
struct victim {
	struct fz_alloc fa;
	struct homa_alloc hooks;
	struct homa_settings s;
	homa_engine *e;
	homa_addr addr;
	uint64_t now;
	uint8_t pkt[2048];
};

/** victim_init() - A serving engine at 10.0.0.1:100 with an rx cap of @rx_cap bytes. */
static void victim_init(struct victim *v, uint64_t rx_cap)
{
	memset(v, 0, sizeof(*v));
	fz_alloc_init(&v->fa, &v->hooks);
	homa_settings_default(&v->s);
	v->s.max_rx_buffered = rx_cap;
	v->addr = homa_addr_ipv4(0x0a000001);
	v->now = 1000000000ull;
	assert_int_equal(homa_engine_new(&v->e, &v->s, &v->addr, 100, &v->hooks, v->now), 0);
	homa_engine_set_server(v->e, true);
}

/** victim_free() - Free the engine; every allocated byte must come back. */
static void victim_free(struct victim *v)
{
	struct homa_event ev;

	while (homa_engine_next_event(v->e, &ev))
		homa_engine_msg_release(v->e, ev.msg);
	homa_engine_free(v->e);
	assert_int_equal(v->fa.allocs, v->fa.frees);
	assert_int_equal(v->fa.live_bytes, 0);
}

/** forge() - Encode @p and give it to the victim as if from @src. Return: input's result. */
static int forge(struct victim *v, const homa_addr *src, struct homa_pkt *p)
{
	int n = homa_wire_encode(p, v->pkt, sizeof(v->pkt));

	assert_true(n > 0);
	return homa_engine_input(v->e, src, v->pkt, (size_t)n, v->now);
}

/** forge_data() - A DATA packet of @n bytes at @off of a @len-byte message. */
static int forge_data(struct victim *v, const homa_addr *src, uint16_t sport, uint64_t id,
		      uint32_t len, uint32_t off, uint32_t n)
{
	static uint8_t payload[1500];
	struct homa_pkt p;

	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_DATA;
	p.sport = sport;
	p.dport = 100;
	p.sender_id = id;
	p.u.data.message_length = len;
	p.u.data.incoming = 40000;
	p.u.data.offset = off;
	p.u.data.payload = payload;
	p.u.data.payload_len = n;
	return forge(v, src, &p);
}

/** drain() - Throw away everything the victim wants to send. Return: bytes it sent. */
static uint64_t drain(struct victim *v)
{
	static uint8_t buf[70000];
	struct homa_tx tx;
	uint64_t bytes = 0;
	int n;

	while ((n = homa_engine_output(v->e, v->now, buf, sizeof(buf), &tx)) > 0)
		bytes += (uint64_t)n;
	return bytes;
}

/** advance() - Move the victim's clock by @ns, running every timer tick on the way. */
static void advance(struct victim *v, uint64_t ns)
{
	uint64_t end = v->now + ns;

	while (v->now < end) {
		uint64_t d = homa_engine_next_deadline(v->e);

		v->now = d > v->now && d < end ? d : (d <= v->now ? v->now : end);
		homa_engine_on_timer(v->e, v->now);
		drain(v);
		if (d > end || d == UINT64_MAX)
			v->now = end;
	}
}

/**
 * data_flood__stays_under_rx_cap: 20000 forged DATA packets from 1000
 * ports of 10 hosts, each announcing a 64 MiB message. Buffered bytes stay
 * under the cap plus one chunk, all engine memory stays within a small
 * multiple of it, and the excess is dropped and counted as "memory".
 */
static void data_flood__stays_under_rx_cap(void **state)
{
	struct victim v;
	struct homa_stats st;
	uint64_t peak_rx = 0;
	int i;

	victim_init(&v, 4u << 20);
	for (i = 0; i < 20000; i++) {
		homa_addr src = homa_addr_ipv4(0x0b000000 + (uint32_t)(i % 10));

		forge_data(&v, &src, (uint16_t)(1000 + i % 1000), 2u * (uint64_t)(i + 1),
			   64u << 20, 0, 1400);
		homa_engine_stats(v.e, &st);
		if (st.rx_buffered_bytes > peak_rx)
			peak_rx = st.rx_buffered_bytes;
		if (i % 64 == 0)
			drain(&v);
	}
	homa_engine_stats(v.e, &st);
	assert_true(peak_rx <= v.s.max_rx_buffered + RX_SLACK);
	assert_true(v.fa.peak_bytes <= 2 * v.s.max_rx_buffered);
	assert_true(st.drops[HOMA_DROP_MEMORY] > 0);
	victim_free(&v);
}

/**
 * hole_flood__gap_lists_within_cap: messages shredded into 1-byte pieces
 * every other byte (the worst case for the hole list). All memory the
 * engine holds must stay within the rx cap plus slack: hole lists count
 * against the budget like message bytes do.
 */
static void hole_flood__gap_lists_within_cap(void **state)
{
	homa_addr src = homa_addr_ipv4(0x0b000001);
	struct victim v;
	uint32_t m, off;

	victim_init(&v, 1u << 20);
	for (m = 0; m < 64; m++)
		for (off = 0; off < 65536; off += 2)
			forge_data(&v, &src, 2000, 2u * (m + 1), 1u << 20, m * 65536 % (1u << 20) + off, 1);
	drain(&v);
	print_message("hole flood: peak %llu bytes held, rx cap %llu\n",
		      (unsigned long long)v.fa.peak_bytes, (unsigned long long)v.s.max_rx_buffered);
	assert_true(v.fa.peak_bytes <= v.s.max_rx_buffered + RX_SLACK + 256 * 1024);
	victim_free(&v);
}

/** forge_ctl() - A control packet of @type about RPC @id from @src:@sport. */
static int forge_ctl(struct victim *v, const homa_addr *src, uint16_t sport, uint8_t type,
		     uint64_t id)
{
	struct homa_pkt p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.sport = sport;
	p.dport = 100;
	p.sender_id = id;
	if (type == HOMA_PKT_GRANT)
		p.u.grant.offset = 100000;
	if (type == HOMA_PKT_RESEND) {
		p.u.resend.offset = 0;
		p.u.resend.length = HOMA_RESEND_ALL;
	}
	if (type == HOMA_PKT_ACK) {
		p.u.ack.num_acks = 5;
		p.u.ack.acks[0].client_id = id;
		p.u.ack.acks[0].server_port = 100;
	}
	return forge(v, src, &p);
}

/**
 * forged_control__ignored_and_counted: GRANT, RESEND, ACK, RPC_UNKNOWN and
 * BUSY for RPCs that do not exist are dropped as unknown_rpc, create no
 * RPC and leave no peer behind.
 */
static void forged_control__ignored_and_counted(void **state)
{
	static const uint8_t types[] = {HOMA_PKT_GRANT, HOMA_PKT_RESEND, HOMA_PKT_ACK,
					HOMA_PKT_RPC_UNKNOWN, HOMA_PKT_BUSY};
	struct victim v;
	struct homa_stats st;
	unsigned i, t;

	victim_init(&v, 4u << 20);
	for (t = 0; t < sizeof(types); t++)
		for (i = 0; i < 1000; i++) {
			homa_addr src = homa_addr_ipv4(0x0c000000 + i);

			assert_int_equal(forge_ctl(&v, &src, (uint16_t)(3000 + i), types[t], 2u * i + 2),
					 HOMA_INPUT_DROPPED + HOMA_DROP_UNKNOWN_RPC);
		}
	drain(&v);
	homa_engine_stats(v.e, &st);
	assert_int_equal(st.drops[HOMA_DROP_UNKNOWN_RPC], 5000);
	assert_int_equal(st.active_rpcs, 0);
	assert_true(st.peers <= 1024); /* idle peers are cached a while, bounded */
	assert_int_equal(st.rx_buffered_bytes, 0);
	advance(&v, (v.s.timeout_ticks + 2) * v.s.tick_ns);
	homa_engine_stats(v.e, &st);
	assert_int_equal(st.peers, 0);
	victim_free(&v);
}

/**
 * forged_resend__unknown_replies_rate_limited: 1000 forged RESENDs from one
 * host within one tick get at most 4 RPC_UNKNOWN replies; the rest are
 * counted as suppressed. Reply bytes stay far below request bytes.
 */
static void forged_resend__unknown_replies_rate_limited(void **state)
{
	homa_addr src = homa_addr_ipv4(0x0d000001);
	struct victim v;
	struct homa_stats st;
	uint64_t out;
	int i;

	victim_init(&v, 4u << 20);
	for (i = 0; i < 1000; i++)
		forge_ctl(&v, &src, (uint16_t)(4000 + i), HOMA_PKT_RESEND, 2u * (uint64_t)i + 2);
	out = drain(&v);
	homa_engine_stats(v.e, &st);
	assert_true(st.pkts_sent[HOMA_PKT_RPC_UNKNOWN - HOMA_PKT_FIRST] <= 4);
	assert_int_equal(st.unknown_replies_suppressed + st.pkts_sent[HOMA_PKT_RPC_UNKNOWN - HOMA_PKT_FIRST], 1000);
	assert_true(out <= 4 * HOMA_CONTROL_LEN);
	victim_free(&v);
}

/** main() - Run the hostile-input tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(data_flood__stays_under_rx_cap),
		cmocka_unit_test(hole_flood__gap_lists_within_cap),
		cmocka_unit_test(forged_control__ignored_and_counted),
		cmocka_unit_test(forged_resend__unknown_replies_rate_limited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
