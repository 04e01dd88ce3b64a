/* SPDX-License-Identifier: MIT */
/**
 * @file test_pacer.c
 * The pacer's slack for late output calls (src/core/pacer.c). At 50 Mbit/s
 * a full packet (1472 + 66 framing bytes) takes 246080 ns, so the backlog
 * bound is its floor of four packets (984320 ns) and the pacer wants to be
 * called when one packet is left. The first output burst of a long message
 * is five packets and leaves the pacer waiting for 984320 ns.
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

#define PKT_NS 246080ull
#define FIRST_DUE (4 * PKT_NS)

static uint8_t big[400000];

/**
 * slow_engine_q() - A client at 50 Mbit/s with @max_slack and a backlog
 * bound of @nicq_ns (max_nic_queue_ns), a 400 KB request queued at 0.
 */
static homa_engine *slow_engine_q(uint32_t max_slack, uint32_t nicq_ns)
{
	homa_addr a = homa_addr_ipv4(0x0a000001), srv = homa_addr_ipv4(0x0a000002);
	struct homa_iov iov = {big, sizeof(big)};
	struct homa_settings s;
	homa_engine *e;
	uint64_t id;

	homa_settings_default(&s);
	s.link_mbps = 50;
	s.max_pacer_slack_ns = max_slack;
	s.max_nic_queue_ns = nicq_ns;
	s.unsched_bytes = sizeof(big); /* no grants needed: the pacer alone gates */
	assert_int_equal(homa_engine_new(&e, &s, &a, 4000, NULL, 0), 0);
	assert_int_equal(homa_engine_send_request(e, &srv, 4001, &iov, 1, sizeof(big), 0, &id), 0);
	return e;
}

/** slow_engine() - slow_engine_q() with the default bound (four packets at 50 Mbit/s). */
static homa_engine *slow_engine(uint32_t max_slack)
{
	struct homa_settings s;

	homa_settings_default(&s);
	return slow_engine_q(max_slack, s.max_nic_queue_ns);
}

/** burst() - Take every DATA packet @e lets out at @now. Return: how many. */
static int burst(homa_engine *e, uint64_t now)
{
	struct th_pkt k;
	int n = 0;

	while (th_take(e, now, &k) > 0) {
		assert_true(k.ok);
		assert_int_equal(k.k.type, HOMA_PKT_DATA);
		n++;
	}
	return n;
}

/** slack_of() - The pacer_slack_ns gauge of @e. */
static uint64_t slack_of(homa_engine *e)
{
	struct homa_stats st;

	homa_engine_stats(e, &st);
	return st.pacer_slack_ns;
}

/**
 * homa_pacer_note_call__late_call_sends_more() - A call 1 ms after the
 * deadline finds the link idle. With slack the pacer learns the lateness:
 * this call fills the bound plus 1 ms (9 packets: 8 x 246080 <= 1984320)
 * and the next deadline comes 1 ms earlier than the backlog mark. With
 * max_pacer_slack_ns = 0 the same call fills the four-packet bound only.
 */
static void homa_pacer_note_call__late_call_sends_more(void **state)
{
	homa_engine *on = slow_engine(1000000), *off = slow_engine(0);
	uint64_t late = FIRST_DUE + 1000000;

	assert_int_equal(burst(on, 0), 5);
	assert_int_equal(burst(off, 0), 5);
	assert_int_equal(homa_pacer_deadline(on), FIRST_DUE);
	assert_int_equal(burst(on, late), 9);
	assert_int_equal(burst(off, late), 5);
	assert_int_equal(slack_of(on), 1000000);
	assert_int_equal(slack_of(off), 0);
	assert_int_equal(homa_pacer_deadline(on), late + 9 * PKT_NS - PKT_NS - 1000000);
	assert_int_equal(homa_pacer_deadline(off), late + 5 * PKT_NS - PKT_NS);
	homa_engine_free(on);
	homa_engine_free(off);
}

/**
 * homa_pacer_note_call__on_time_calls_decay() - After one late call, calls
 * that come exactly at each deadline shrink the slack by an eighth each:
 * below 1e6 x (7/8)^20 + 20 after 20 of them, never rising on the way.
 */
static void homa_pacer_note_call__on_time_calls_decay(void **state)
{
	homa_engine *e = slow_engine(1000000);
	uint64_t prev;
	int i;

	burst(e, 0);
	burst(e, FIRST_DUE + 1000000);
	prev = slack_of(e);
	for (i = 0; i < 20; i++) {
		uint64_t now = homa_pacer_deadline(e);

		assert_true(burst(e, now) > 0);
		assert_true(slack_of(e) < prev);
		prev = slack_of(e);
	}
	assert_true(prev < 70000);
	homa_engine_free(e);
}

/**
 * homa_pacer_note_call__capped_and_early_calls_ignored() - Calls before
 * the deadline learn nothing: before the backlog is within the bound
 * (246080 ns) nothing goes, 1 ns before the deadline three packets do
 * (the fourth would take the backlog past the bound). A call 5 ms late
 * raises the slack to max_pacer_slack_ns (300 us) and no further.
 */
static void homa_pacer_note_call__capped_and_early_calls_ignored(void **state)
{
	homa_engine *e = slow_engine(300000);

	burst(e, 0);
	assert_int_equal(burst(e, PKT_NS - 1), 0);
	assert_int_equal(burst(e, FIRST_DUE - 1), 3);
	assert_int_equal(slack_of(e), 0);
	assert_true(burst(e, FIRST_DUE + 5000000) > 3);
	assert_int_equal(slack_of(e), 300000);
	homa_engine_free(e);
}

/**
 * homa_pacer_configure__long_bound_refills_several() - With a bound of
 * five packets (max_nic_queue_ns = 5 x 246080) the first burst is six
 * packets (each goes while the backlog is at most the bound). The pacer
 * wants to be called when one packet is left, not as soon as there is
 * room for one: each on-time call then sends five packets, and the
 * engine does not ask for output before that deadline.
 */
static void homa_pacer_configure__long_bound_refills_several(void **state)
{
	homa_engine *e = slow_engine_q(0, (uint32_t)(5 * PKT_NS));
	uint64_t due = 5 * PKT_NS;
	int i;

	assert_int_equal(burst(e, 0), 6);
	for (i = 0; i < 4; i++) {
		assert_int_equal(homa_pacer_deadline(e), due);
		assert_false(homa_engine_want_output(e, due - 1));
		assert_int_equal(burst(e, due), 5);
		due += 5 * PKT_NS;
	}
	homa_engine_free(e);
}

/**
 * homa_pacer_configure__slow_link_floor_sends_four() - At 50 Mbit/s with
 * the default max_nic_queue_ns (5 us, a fiftieth of a packet) the bound is
 * the floor of four packets: after the first burst of five, each call at
 * the deadline sends four packets, so a process pacing a long message
 * wakes once per four packets of link time.
 */
static void homa_pacer_configure__slow_link_floor_sends_four(void **state)
{
	homa_engine *e = slow_engine(0);
	uint64_t due = FIRST_DUE;
	int i;

	assert_int_equal(burst(e, 0), 5);
	for (i = 0; i < 4; i++) {
		assert_int_equal(homa_pacer_deadline(e), due);
		assert_int_equal(burst(e, due), 4);
		due += 4 * PKT_NS;
	}
	homa_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_pacer_note_call__late_call_sends_more),
		cmocka_unit_test(homa_pacer_note_call__on_time_calls_decay),
		cmocka_unit_test(homa_pacer_note_call__capped_and_early_calls_ignored),
		cmocka_unit_test(homa_pacer_configure__long_bound_refills_several),
		cmocka_unit_test(homa_pacer_configure__slow_link_floor_sends_four),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
