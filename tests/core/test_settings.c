/* SPDX-License-Identifier: MIT */
/**
 * @file test_settings.c
 * homa_settings_default/validate, and settings applied to a running
 * engine with homa_engine_set_settings().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

/** homa_settings_default__validates() - Defaults are usable and match GUIDE section 4. */
static void homa_settings_default__validates(void **state)
{
	struct homa_settings s;
	const char *why = "x";

	memset(&s, 0x5a, sizeof(s));
	homa_settings_default(&s);
	assert_int_equal(homa_settings_validate(&s, &why), 0);
	assert_null(why);
	assert_int_equal(homa_settings_validate(&s, NULL), 0);
	assert_int_equal(s.size, sizeof(s));
	assert_int_equal(s.unsched_bytes, 40000);
	assert_int_equal(s.max_incoming, 400000);
	assert_int_equal(s.max_overcommit, 8);
	assert_int_equal(s.grant_fifo_fraction, 50);
	assert_int_equal(s.fifo_grant_increment, 0);
	assert_int_equal(s.pacer_fifo_fraction, 50);
	assert_int_equal(s.max_nic_queue_ns, 5000);
	assert_int_equal(s.max_pacer_slack_ns, 1000000);
	assert_int_equal(s.grant_step, 0);
	assert_int_equal(s.grant_silence_rtts, 4);
	assert_int_equal(s.grant_short_window, 0);
	assert_int_equal(s.max_stranger_partial_msgs, 16);
	assert_int_equal(s.num_priorities, 8);
	assert_int_equal(s.unsched_cutoffs[7], 200);
	assert_int_equal(s.unsched_cutoffs[6], 2800);
	assert_int_equal(s.unsched_cutoffs[5], 15000);
	assert_int_equal(s.unsched_cutoffs[4], 0xffffffffu);
	assert_int_equal(s.tick_ns, 1000000);
	assert_int_equal(s.resend_ticks, 5);
	assert_int_equal(s.resend_interval, 5);
	assert_int_equal(s.timeout_ticks, 100);
	assert_int_equal(s.request_ack_ticks, 2);
	assert_true(s.max_message >= 64u << 20);
}

/** One bad setting: how to break a default struct and the field the error must name. */
struct bad_case {
	const char *field;
	void (*apply)(struct homa_settings *s);
};

#define BAD(name, stmt) \
	static void bad_##name(struct homa_settings *s) { stmt; }
BAD(size_small, s->size = HOMA_SETTINGS_SIZE_MIN - 4)
BAD(size_big, s->size = sizeof(*s) + 4)
BAD(size_old_version, s->size = 5) /* what a versioned struct held there */
BAD(link, s->link_mbps = 0)
BAD(mtu_small, s->mtu = HOMA_DATA_HDR_LEN + 10)
BAD(mtu_big, s->mtu = 70000)
BAD(unsched, s->unsched_bytes = 0)
BAD(max_incoming, s->max_incoming = 100)
BAD(overcommit0, s->max_overcommit = 0)
BAD(overcommit_big, s->max_overcommit = 65)
BAD(grant_fifo, s->grant_fifo_fraction = 501)
BAD(pacer_fifo, s->pacer_fifo_fraction = 1000)
BAD(prio0, s->num_priorities = 0)
BAD(prio9, s->num_priorities = 9)
BAD(unsched_prio0, s->num_unsched_priorities = 0)
BAD(unsched_prio_big, { s->num_priorities = 4; s->num_unsched_priorities = 5; })
BAD(cutoffs_order, s->unsched_cutoffs[7] = 20000)
BAD(cutoffs_no_max, s->unsched_cutoffs[4] = 1000000)
BAD(cutoffs_levels, { s->num_priorities = 4; })
BAD(tick, s->tick_ns = 0)
BAD(resend_ticks, s->resend_ticks = 0)
BAD(resend_interval, s->resend_interval = 0)
BAD(timeout, s->timeout_ticks = s->resend_ticks)
BAD(ack_ticks, s->request_ack_ticks = 0)
BAD(max_message0, s->max_message = 0)
BAD(max_message_big, s->max_message = 0x100000000ull)
BAD(rx_cap, s->max_rx_buffered = s->mtu)
BAD(tx_cap, s->max_tx_buffered = 10)
BAD(max_rpcs, s->max_rpcs = 0)
BAD(ctl_queue, s->max_control_queue = 3)
BAD(silence, s->grant_silence_rtts = 1000001)
BAD(compat, s->compat = HOMA_COMPAT_OFF + 1)
BAD(restarts, s->max_restarts = 1001)

static const struct bad_case bad_cases[] = {
	{"size", bad_size_small},
	{"size", bad_size_big},
	{"size", bad_size_old_version},
	{"link_mbps", bad_link},
	{"mtu", bad_mtu_small},
	{"mtu", bad_mtu_big},
	{"unsched_bytes", bad_unsched},
	{"max_incoming", bad_max_incoming},
	{"max_overcommit", bad_overcommit0},
	{"max_overcommit", bad_overcommit_big},
	{"fifo_fraction", bad_grant_fifo},
	{"fifo_fraction", bad_pacer_fifo},
	{"num_priorities", bad_prio0},
	{"num_priorities", bad_prio9},
	{"num_unsched_priorities", bad_unsched_prio0},
	{"num_unsched_priorities", bad_unsched_prio_big},
	{"unsched_cutoffs", bad_cutoffs_order},
	{"unsched_cutoffs", bad_cutoffs_no_max},
	{"unsched_cutoffs", bad_cutoffs_levels},
	{"tick_ns", bad_tick},
	{"resend_ticks", bad_resend_ticks},
	{"resend_interval", bad_resend_interval},
	{"timeout_ticks", bad_timeout},
	{"request_ack_ticks", bad_ack_ticks},
	{"max_message", bad_max_message0},
	{"max_message", bad_max_message_big},
	{"max_rx_buffered", bad_rx_cap},
	{"max_tx_buffered", bad_tx_cap},
	{"max_rpcs", bad_max_rpcs},
	{"max_control_queue", bad_ctl_queue},
	{"grant_silence_rtts", bad_silence},
	{"compat", bad_compat},
	{"max_restarts", bad_restarts},
};

/**
 * homa_settings_validate__each_bad_field() - Every nonsense value is
 * refused with HOMA_EINVAL and a `why` naming the field; homa_engine_new
 * refuses it too.
 */
static void homa_settings_validate__each_bad_field(void **state)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct homa_settings s;
		const char *why = NULL;
		homa_engine *e = NULL;

		homa_settings_default(&s);
		bad_cases[i].apply(&s);
		assert_int_equal(homa_settings_validate(&s, &why), HOMA_EINVAL);
		assert_non_null(why);
		if (!strstr(why, bad_cases[i].field))
			fail_msg("case %zu: why \"%s\" does not name %s", i, why, bad_cases[i].field);
		assert_int_equal(homa_engine_new(&e, &s, &a, 1, NULL, 0), HOMA_EINVAL);
		assert_null(e);
	}
}

/** homa_settings_validate__null() - A NULL struct is refused with a reason. */
static void homa_settings_validate__null(void **state)
{
	const char *why = NULL;

	assert_int_equal(homa_settings_validate(NULL, &why), HOMA_EINVAL);
	assert_non_null(why);
}

/** homa_settings_validate__edges_accepted() - Extreme but sensible values pass. */
static void homa_settings_validate__edges_accepted(void **state)
{
	struct homa_settings s;

	homa_settings_default(&s);
	s.num_priorities = 1;
	s.num_unsched_priorities = 1;
	memset(s.unsched_cutoffs, 0, sizeof(s.unsched_cutoffs));
	s.unsched_cutoffs[0] = 0xffffffffu;
	s.max_overcommit = 64;
	s.grant_fifo_fraction = 500;
	s.pacer_fifo_fraction = 0;
	s.max_message = 0xffffffffull;
	s.mtu = HOMA_DATA_HDR_LEN + 64;
	s.max_control_queue = 16;
	s.grant_silence_rtts = 1000000;
	assert_int_equal(homa_settings_validate(&s, NULL), 0);
	s.grant_silence_rtts = 0;
	assert_int_equal(homa_settings_validate(&s, NULL), 0);
}

/**
 * run_with_unsched() - Send a @len-byte request on a fresh pair whose
 * engines were switched at run time to an unscheduled window of @unsched.
 * @incoming: receives the `incoming` field of the first DATA packet.
 * Return: GRANT packets the server sent for the request.
 */
static int run_with_unsched(uint32_t len, uint32_t unsched, uint32_t *incoming)
{
	static uint8_t buf[30000];
	struct homa_settings s;
	struct homa_iov iov = {buf, len};
	struct th_pair p;
	struct th_pkt first;
	struct homa_stats st;
	uint64_t id;
	int n;

	th_pair_init(&p, NULL);
	homa_settings_default(&s);
	s.unsched_bytes = unsched;
	assert_int_equal(homa_engine_set_settings(p.e[0], &s), 0);
	assert_int_equal(homa_engine_set_settings(p.e[1], &s), 0);
	assert_int_equal(homa_engine_settings(p.e[0])->unsched_bytes, unsched);
	th_pattern(buf, len, 3);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 1, 0, &id), 0);
	assert_true(th_take(p.e[0], 0, &first) > 0 && first.ok);
	assert_int_equal(first.k.type, HOMA_PKT_DATA);
	*incoming = first.k.u.data.incoming;
	homa_engine_input(p.e[1], &p.addr[0], first.buf, (size_t)first.len, 0);
	th_pair_run(&p, 100000000);
	n = th_count(p.log, "s>c GRANT");
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.server_requests_received, 1);
	assert_int_equal(th_count(p.log, "c>s DATA"), 21); /* + the first one taken by hand */
	th_pair_free(&p);
	return n;
}

/**
 * homa_engine_set_settings__unsched_bytes_at_run_time() - With 40000
 * unscheduled bytes a 30000-byte request announces all of it as incoming
 * and needs no GRANT; after lowering unsched_bytes to 5000 at run time
 * the first DATA announces 5000 and the rest comes in response to GRANTs.
 */
static void homa_engine_set_settings__unsched_bytes_at_run_time(void **state)
{
	uint32_t incoming;

	assert_int_equal(run_with_unsched(30000, 40000, &incoming), 0);
	assert_int_equal(incoming, 30000);
	assert_true(run_with_unsched(30000, 5000, &incoming) >= 5); /* 25000 bytes in 2-packet steps */
	assert_int_equal(incoming, 5000);
}

/** homa_engine_set_settings__rejects_bad_keeps_old() - A bad struct leaves the engine's settings as they were. */
static void homa_engine_set_settings__rejects_bad_keeps_old(void **state)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	struct homa_settings s, before;
	homa_engine *e;
	size_t i;

	assert_int_equal(homa_engine_new(&e, NULL, &a, 7, NULL, 0), 0);
	homa_settings_default(&s);
	s.unsched_bytes = 12345;
	assert_int_equal(homa_engine_set_settings(e, &s), 0);
	before = *homa_engine_settings(e);
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct homa_settings bad = before;

		bad_cases[i].apply(&bad);
		assert_int_equal(homa_engine_set_settings(e, &bad), HOMA_EINVAL);
		assert_memory_equal(homa_engine_settings(e), &before, sizeof(before));
	}
	assert_int_equal(homa_engine_set_settings(e, NULL), HOMA_EINVAL);
	assert_int_equal(homa_engine_set_settings(NULL, &s), HOMA_EINVAL);
	assert_int_equal(homa_engine_settings(e)->unsched_bytes, 12345);
	homa_engine_free(e);
}

/** homa_engine_set_settings__cutoffs_bump_version() - New static cutoffs take effect with a new version. */
static void homa_engine_set_settings__cutoffs_bump_version(void **state)
{
	homa_addr a = homa_addr_ipv4(0x0a000001);
	struct homa_settings s;
	struct homa_stats st;
	homa_engine *e;

	assert_int_equal(homa_engine_new(&e, NULL, &a, 7, NULL, 0), 0);
	homa_engine_stats(e, &st);
	assert_int_equal(st.cutoffs_version, 1);
	homa_settings_default(&s);
	assert_int_equal(homa_engine_set_settings(e, &s), 0);
	homa_engine_stats(e, &st);
	assert_int_equal(st.cutoffs_version, 1); /* same cutoffs: no change */
	s.unsched_cutoffs[7] = 100;
	assert_int_equal(homa_engine_set_settings(e, &s), 0);
	homa_engine_stats(e, &st);
	assert_int_equal(st.cutoffs_version, 2);
	homa_engine_free(e);
}

/**
 * homa_settings_import__reads_only_size_bytes() - A program's struct is
 * read up to its size field and no further (an exact-size heap copy: the
 * sanitizer builds catch a byte read past it); what it set is kept and
 * dst->size is the library's.
 */
static void homa_settings_import__reads_only_size_bytes(void **state)
{
	struct homa_settings s, out;
	struct homa_settings *prog;

	homa_settings_default(&s);
	s.unsched_bytes = 12345;
	s.max_done_rpcs = 5000;
	s.size = HOMA_SETTINGS_SIZE_MIN;
	prog = malloc(HOMA_SETTINGS_SIZE_MIN);
	assert_non_null(prog);
	memcpy(prog, &s, HOMA_SETTINGS_SIZE_MIN);
	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(homa_settings_import(&out, prog), 0);
	assert_int_equal(out.size, sizeof(out));
	assert_int_equal(out.unsched_bytes, 12345);
	assert_int_equal(out.max_done_rpcs, 5000);
	assert_int_equal(homa_settings_validate(prog, NULL), 0);
	free(prog);
}

/**
 * homa_settings_import__stranger_limit_defaults() - A program built when
 * the struct ended at pad1 (before max_stranger_partial_msgs) gets that
 * field's default, and its own fields are kept.
 */
static void homa_settings_import__stranger_limit_defaults(void **state)
{
	const size_t old_size = offsetof(struct homa_settings, pad1) + sizeof(uint32_t);
	struct homa_settings s, out;

	(void)state;
	homa_settings_default(&s);
	s.max_peer_partial_msgs = 9;
	s.max_stranger_partial_msgs = 0;  /* past old_size: never read */
	s.size = (uint32_t)old_size;
	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(homa_settings_import(&out, &s), 0);
	assert_int_equal(out.max_peer_partial_msgs, 9);
	assert_int_equal(out.max_stranger_partial_msgs, 16);
	assert_int_equal(homa_settings_validate(&out, NULL), 0);
}

/**
 * homa_settings_import__size_checked() - Sizes outside
 * HOMA_SETTINGS_SIZE_MIN .. sizeof are HOMA_EINVAL and leave dst alone;
 * NULL arguments too. The engine and homa_engine_set_settings() refuse
 * them the same way.
 */
static void homa_settings_import__size_checked(void **state)
{
	struct homa_settings s, out;
	homa_addr a = homa_addr_ipv4(0x0a000001);
	homa_engine *e = NULL;

	homa_settings_default(&s);
	memset(&out, 0x5a, sizeof(out));
	s.size = sizeof(s) + 1;
	assert_int_equal(homa_settings_import(&out, &s), HOMA_EINVAL);
	s.size = HOMA_SETTINGS_SIZE_MIN - 1;
	assert_int_equal(homa_settings_import(&out, &s), HOMA_EINVAL);
	s.size = 0;
	assert_int_equal(homa_settings_import(&out, &s), HOMA_EINVAL);
	assert_int_equal(out.size, 0x5a5a5a5au);
	assert_int_equal(homa_engine_new(&e, &s, &a, 99, NULL, 0), HOMA_EINVAL);
	assert_null(e);
	assert_int_equal(homa_settings_import(NULL, &s), HOMA_EINVAL);
	assert_int_equal(homa_settings_import(&out, NULL), HOMA_EINVAL);
	s.size = sizeof(s);
	assert_int_equal(homa_engine_new(&e, &s, &a, 99, NULL, 0), 0);
	s.size = sizeof(s) + 8;
	assert_int_equal(homa_engine_set_settings(e, &s), HOMA_EINVAL);
	homa_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_settings_default__validates),
		cmocka_unit_test(homa_settings_validate__each_bad_field),
		cmocka_unit_test(homa_settings_validate__null),
		cmocka_unit_test(homa_settings_import__reads_only_size_bytes),
		cmocka_unit_test(homa_settings_import__stranger_limit_defaults),
		cmocka_unit_test(homa_settings_import__size_checked),
		cmocka_unit_test(homa_settings_validate__edges_accepted),
		cmocka_unit_test(homa_engine_set_settings__unsched_bytes_at_run_time),
		cmocka_unit_test(homa_engine_set_settings__rejects_bad_keeps_old),
		cmocka_unit_test(homa_engine_set_settings__cutoffs_bump_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
