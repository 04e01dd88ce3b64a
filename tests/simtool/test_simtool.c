/* SPDX-License-Identifier: MIT */
/** @file test_simtool.c Tests of homa-sim's pieces: options, fabric sizing, ideal reference. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "homa/wire.h"
#include "args.h"
#include "sim.h"


/** Defaults are the SIGCOMM 2018 fabric; presets and values parse. */
static void opts_parse__defaults_and_presets(void **state)
{
	static const char *const none[] = {NULL};
	static const char *const p25[] = {"--preset", "25", "--load", "0.5", "--mode",
					  "start_msg", "--messages", "100", NULL};
	struct sim_opts o;

	(void)state;
	assert_int_equal(parse(&o, none), 0);
	assert_int_equal(o.hosts, 144);
	assert_int_equal(o.racks, 9);
	assert_true(o.host_gbps == 10 && o.core_gbps == 40);
	assert_true(o.switch_delay_ns == 250 && o.host_delay_ns == 1500);
	assert_false(o.start_msg);
	assert_int_equal(parse(&o, p25), 0);
	assert_true(o.host_gbps == 25 && o.core_gbps == 100);
	assert_true(o.load == 0.5 && o.start_msg && o.messages == 100);
}

/** Bad values and unknown options are refused. */
static void opts_parse__rejects_bad_input(void **state)
{
	static const char *const bad[][4] = {
		{"--load", "0", NULL}, {"--load", "abc", NULL}, {"--mode", "fast", NULL},
		{"--hosts", "1", NULL}, {"--preset", "40", NULL}, {"--bogus", "1", NULL},
		{"--messages", NULL}, {"--hosts", "4", "--racks", "5"},
		{"--seed", "-3", NULL},
	};
	struct sim_opts o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *w[5] = {bad[i][0], bad[i][1], bad[i][2], bad[i][3], NULL};

		assert_int_equal(parse(&o, w), -1);
	}
}

/**
 * opts_parse__getopt_long_forms() - "--name=value", unambiguous prefixes,
 * -h and --help are accepted; an ambiguous prefix and a stray argument
 * are refused.
 */
static void opts_parse__getopt_long_forms(void **state)
{
	static const char *const eq[] = {"--load=0.5", "--hosts=16", "--racks", "2",
					 "--mess", "100", "--json", NULL};
	static const char *const help[] = {"-h", NULL};
	static const char *const help2[] = {"--load", "0.5", "--help", NULL};
	static const char *const ambiguous[] = {"--max", "5", NULL};
	static const char *const stray[] = {"--load", "0.5", "extra", NULL};
	struct sim_opts o;

	(void)state;
	assert_int_equal(parse(&o, eq), 0);
	assert_true(o.load == 0.5 && o.hosts == 16 && o.racks == 2);
	assert_true(o.messages == 100 && o.json);
	assert_int_equal(parse(&o, help), 1);
	assert_int_equal(parse(&o, help2), 1);
	assert_int_equal(parse(&o, ambiguous), -1);
	assert_int_equal(parse(&o, stray), -1);
	assert_int_equal(parse(&o, eq), 0); /* a second scan starts afresh */
	assert_true(o.load == 0.5 && o.hosts == 16);
}

/** Patterns set the message count. */
static void opts_parse__patterns_count_messages(void **state)
{
	static const char *const inc[] = {"--pattern", "incast", "--hosts", "10", "--racks",
					  "2", NULL};
	static const char *const a2a[] = {"--pattern", "alltoall", "--hosts", "10",
					  "--racks", "2", NULL};
	struct sim_opts o;

	(void)state;
	assert_int_equal(parse(&o, inc), 0);
	assert_int_equal(o.senders, 9);
	assert_true(o.messages == 9);
	assert_int_equal(parse(&o, a2a), 0);
	assert_true(o.messages == 90);
}

/** Engine settings follow the fabric: link rate, unsched_bytes = rate x RTT. */
static void fabric_build__sizes_settings(void **state)
{
	static const char *const none[] = {NULL};
	struct sim_fabric f;
	struct sim_opts o;
	uint64_t rtt_bytes;

	(void)state;
	assert_int_equal(parse(&o, none), 0);
	assert_int_equal(sim_fabric_build(&f, &o, NULL, NULL), 0);
	assert_true(f.settings.link_mbps == 10000);
	assert_int_equal(f.payload, f.settings.mtu - HOMA_DATA_HDR_LEN);
	rtt_bytes = f.rtt_ns * 10000 / 8000;
	assert_true(f.settings.unsched_bytes >= rtt_bytes);
	assert_true(f.settings.unsched_bytes < rtt_bytes + f.payload);
	assert_int_equal(f.settings.unsched_bytes % f.payload, 0);
	assert_int_equal(f.settings.max_overcommit, SIM_OVERCOMMIT);
	assert_int_equal(SIM_OVERCOMMIT, 16);
	assert_int_equal(f.settings.max_incoming, 16 * f.settings.unsched_bytes);
	assert_int_equal(f.settings.fifo_grant_increment, 0); /* the engine's: one window */
	/* a one-packet message within a rack beats one across racks by 2 hops */
	assert_true(sim_best_ns(&f, &o, 100, 0, 1) < sim_best_ns(&f, &o, 100, 0, 20));
	assert_true(sim_wire_bytes(&f, &o, 100) == 100 + HOMA_DATA_HDR_LEN + 66);
	assert_true(sim_wire_bytes(&f, &o, 2 * f.payload + 1) ==
		    2 * f.payload + 1 + 3 * (HOMA_DATA_HDR_LEN + 66));
	sim_fabric_free(&f);
}

/** The engine overrides reach the settings: --overcommit, --tick-us, --grant-step,
 * --fifo-increment, --grant-silence-rtts, --no-grant-silence and --max-tx-buffered. */
static void fabric_build__engine_overrides(void **state)
{
	static const char *const args[] = {"--hosts", "4", "--racks", "1", "--overcommit", "3",
					   "--tick-us", "10000", "--grant-step", "2000",
					   "--fifo-increment", "7000", "--grant-silence-rtts", "9",
					   "--max-tx-buffered", "5000000000", NULL};
	static const char *const off[] = {"--hosts", "4", "--racks", "1", "--no-grant-silence", NULL};
	static const char *const bad[] = {"--tick-us", "0", NULL};
	static const char *const bad_step[] = {"--grant-step", "0", NULL};
	static const char *const bad_tx[] = {"--max-tx-buffered", "1000", NULL};
	struct sim_fabric f;
	struct sim_opts o;

	(void)state;
	assert_int_equal(parse(&o, args), 0);
	assert_int_equal(sim_fabric_build(&f, &o, NULL, NULL), 0);
	assert_int_equal(f.settings.max_overcommit, 3);
	assert_true(f.settings.tick_ns == 10000000);
	assert_int_equal(f.settings.grant_step, 2000);
	assert_int_equal(f.settings.fifo_grant_increment, 7000);
	assert_int_equal(f.settings.max_incoming, 3 * f.settings.unsched_bytes);
	assert_int_equal(f.settings.grant_silence_rtts, 9);
	assert_true(f.settings.max_tx_buffered == 5000000000ull);
	sim_fabric_free(&f);
	assert_int_equal(parse(&o, off), 0);
	assert_int_equal(sim_fabric_build(&f, &o, NULL, NULL), 0);
	assert_int_equal(f.settings.grant_silence_rtts, 0);
	sim_fabric_free(&f);
	assert_int_not_equal(parse(&o, bad), 0);
	assert_int_not_equal(parse(&o, bad_step), 0);
	assert_int_not_equal(parse(&o, bad_tx), 0);
}

static struct sim_opts iopts;
static struct sim_msg imsgs[4];

/** ideal_run() - A run of 4 hosts in one rack at 10 Gbit/s with @n messages. */
static void ideal_run(struct sim_run *r, int n)
{
	static const char *const w[] = {"--hosts", "4", "--racks", "1", NULL};
	int i;

	assert_int_equal(parse(&iopts, w), 0);
	memset(r, 0, sizeof(*r));
	r->o = &iopts;
	r->fab.payload = 1416;
	r->fab.ls.cfg.host_mbps = 10000;
	r->fab.ls.cfg.racks = 1;
	r->fab.ls.per_rack = 4;
	r->fab.ls.hosts = 4;
	r->msgs = imsgs;
	r->nmsgs = (uint64_t)n;
	r->win_start = UINT64_MAX;
	for (i = 0; i < n; i++) {
		imsgs[i].done_ns = 1;
		imsgs[i].best_ns = sim_best_ns(&r->fab, &iopts, imsgs[i].size, imsgs[i].src,
					       imsgs[i].dst);
	}
}

/** wire_ns() - Time of @size bytes of message on a 10 Gbit/s link (fluid). */
static double wire_ns(struct sim_run *r, uint32_t size)
{
	return (double)sim_wire_bytes(&r->fab, &iopts, size) * 8000.0 / 10000.0;
}

/**
 * near() - True if @a is within @tol ns of @b. The fluid reference counts
 * exact bytes; the unloaded time rounds each packet's serialization up to
 * a whole ns, so they differ by up to a ns per packet.
 */
static bool near(uint64_t a, uint64_t b, uint64_t tol)
{
	return a + tol >= b && a <= b + tol;
}

/** An unloaded message gets ideal slowdown 1. */
static void ideal__unloaded_is_best(void **state)
{
	struct sim_run r;

	(void)state;
	imsgs[0] = (struct sim_msg){.start_ns = 1000, .size = 5000, .src = 0, .dst = 1};
	ideal_run(&r, 1);
	assert_int_equal(sim_ideal(&r), 0);
	assert_true(near(imsgs[0].ideal_ns, imsgs[0].best_ns, 6));
}

/** Two messages into one receiver: the shorter goes first, then the longer. */
static void ideal__srpt_at_a_shared_receiver(void **state)
{
	struct sim_run r;
	double t_short, t_long;

	(void)state;
	imsgs[0] = (struct sim_msg){.start_ns = 0, .size = 100000, .src = 0, .dst = 2};
	imsgs[1] = (struct sim_msg){.start_ns = 0, .size = 10000, .src = 1, .dst = 2};
	ideal_run(&r, 2);
	assert_int_equal(sim_ideal(&r), 0);
	t_short = wire_ns(&r, 10000);
	t_long = wire_ns(&r, 100000) + t_short;
	assert_true(near(imsgs[1].ideal_ns, imsgs[1].best_ns, 10));
	/* the long one waited exactly the short one's transfer */
	assert_true(near(imsgs[0].ideal_ns, imsgs[0].best_ns + (uint64_t)t_short, 90));
	assert_true(t_long > t_short);
}

/** Disjoint pairs run in parallel; a late short arrival preempts a long one. */
static void ideal__parallel_and_preemption(void **state)
{
	struct sim_run r;
	double t_short;

	(void)state;
	imsgs[0] = (struct sim_msg){.start_ns = 0, .size = 100000, .src = 0, .dst = 1};
	imsgs[1] = (struct sim_msg){.start_ns = 0, .size = 100000, .src = 2, .dst = 3};
	imsgs[2] = (struct sim_msg){.start_ns = 5000, .size = 1000, .src = 3, .dst = 1};
	ideal_run(&r, 3);
	assert_int_equal(sim_ideal(&r), 0);
	t_short = wire_ns(&r, 1000);
	assert_true(near(imsgs[1].ideal_ns, imsgs[1].best_ns, 90));
	assert_true(near(imsgs[2].ideal_ns, imsgs[2].best_ns, 3));
	/* host 1's link went to the short message for its whole transfer */
	assert_true(near(imsgs[0].ideal_ns, imsgs[0].best_ns + (uint64_t)t_short, 90));
}

/** The largest backlog of one sender: two messages queued at once on host 0,
 * not host 1's single one nor a later one from host 0 after both left. */
static void ideal__largest_sender_backlog(void **state)
{
	struct sim_run r;
	double both;

	(void)state;
	imsgs[0] = (struct sim_msg){.start_ns = 0, .size = 100000, .src = 0, .dst = 1};
	imsgs[1] = (struct sim_msg){.start_ns = 0, .size = 50000, .src = 0, .dst = 2};
	imsgs[2] = (struct sim_msg){.start_ns = 0, .size = 120000, .src = 1, .dst = 3};
	imsgs[3] = (struct sim_msg){.start_ns = 10000000, .size = 1000, .src = 0, .dst = 1};
	ideal_run(&r, 4);
	assert_int_equal(sim_ideal(&r), 0);
	both = (double)(sim_wire_bytes(&r.fab, &iopts, 100000) + sim_wire_bytes(&r.fab, &iopts, 50000));
	assert_true(r.ideal_max_sender_bytes > both - 0.5 && r.ideal_max_sender_bytes < both + 0.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opts_parse__defaults_and_presets),
		cmocka_unit_test(opts_parse__rejects_bad_input),
		cmocka_unit_test(opts_parse__getopt_long_forms),
		cmocka_unit_test(opts_parse__patterns_count_messages),
		cmocka_unit_test(fabric_build__sizes_settings),
		cmocka_unit_test(fabric_build__engine_overrides),
		cmocka_unit_test(ideal__unloaded_is_best),
		cmocka_unit_test(ideal__srpt_at_a_shared_receiver),
		cmocka_unit_test(ideal__parallel_and_preemption),
		cmocka_unit_test(ideal__largest_sender_backlog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
