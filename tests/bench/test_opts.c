/* SPDX-License-Identifier: MIT */
/* Tests for tools/bench/opts.c: the flags the testbed codes against. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "homa/homa.h"
#include "bench.h"
#include "opts.h"

/** parse() - bench_opts_parse() over a NULL-terminated list. */
static int parse(struct bench_opts *o, const char **args)
{
	int n = 0;

	while (args[n])
		n++;
	return bench_opts_parse(n, (char **)args, o);
}

/** The testbed's client command line parses into the right fields. */
static void bench_opts_parse__testbed_client(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "client", "--transport", "tcp", "--servers",
			    "10.0.0.2:4000,10.0.0.3:4000", "--workload", "w4", "--load-gbps",
			    "0.8", "--link-gbps", "1", "--duration", "10", "--json", "out.json",
			    "--cc", "bbr", "--driver", "raw", "--baseline", "b.txt", NULL };

	assert_int_equal(parse(&o, a), 0);
	assert_string_equal(o.mode, "client");
	assert_int_equal(o.transport, BENCH_TR_TCP);
	assert_string_equal(o.servers, "10.0.0.2:4000,10.0.0.3:4000");
	assert_string_equal(o.workload, "w4");
	assert_true(o.load_gbps == 0.8 && o.link_gbps == 1 && o.duration == 10);
	assert_string_equal(o.json, "out.json");
	assert_string_equal(o.cc, "bbr");
	assert_int_equal(o.driver, HOMA_DRIVER_RAW);
	assert_string_equal(o.baseline, "b.txt");
}

/** The server line, and defaults. */
static void bench_opts_parse__server_defaults(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "server", "--transport", "homa", "--port", "4100",
			    "--threads", "2", NULL };

	assert_int_equal(parse(&o, a), 0);
	assert_int_equal(o.port, 4100);
	assert_true(o.port_set);
	assert_int_equal(o.threads, 2);
	assert_int_equal(o.driver, HOMA_DRIVER_UDP);
	assert_true(o.polled);
	assert_int_equal(o.response, 100);
	assert_true(o.duration == 5);
}

/** The Homa settings flags land in their fields; unset ones keep the
 * engine-default markers; out-of-range values are refused. */
static void bench_opts_parse__homa_settings(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "server", "--homa-nic-queue-us", "500",
			    "--homa-pacer-slack-us", "0", "--homa-tick-us", "4000",
			    "--homa-grant-step", "2832", "--homa-grant-silence-rtts", "0", "--homa-resend-ticks", "40",
			    "--homa-max-overcommit", "4", "--homa-short-window", "200000",
			    "--homa-rcvbuf", "65536", NULL };
	const char *b[] = { "homa-bench", "server", NULL };
	const char *bad[] = { "homa-bench", "server", "--homa-tick-us", "0", NULL };
	const char *bad_resend[] = { "homa-bench", "server", "--homa-resend-ticks", "1001", NULL };

	assert_int_equal(parse(&o, a), 0);
	assert_true(o.homa.nicq_us == 500);
	assert_true(o.homa.slack_us == 0);
	assert_true(o.homa.tick_us == 4000);
	assert_int_equal(o.homa.grant_step, 2832);
	assert_int_equal(o.homa.silence_rtts, 0);
	assert_int_equal(o.homa.resend_ticks, 40);
	assert_int_equal(o.homa.overcommit, 4);
	assert_int_equal(o.homa.short_window, 200000);
	assert_int_equal(o.homa.rcvbuf, 65536);
	assert_int_equal(parse(&o, b), 0);
	assert_int_equal(o.homa.overcommit, 0);
	assert_int_equal(o.homa.short_window, -1);
	assert_true(o.homa.nicq_us == 0 && o.homa.slack_us == -1 && o.homa.tick_us == 0);
	assert_int_equal(o.homa.grant_step, 0);
	assert_int_equal(o.homa.silence_rtts, -1);
	assert_int_equal(o.homa.resend_ticks, 0);
	assert_int_equal(parse(&o, bad), HOMA_EINVAL);
	assert_int_equal(parse(&o, bad_resend), HOMA_EINVAL);
	const char *bad_oc[] = { "homa-bench", "server", "--homa-max-overcommit", "65", NULL };
	assert_int_equal(parse(&o, bad_oc), HOMA_EINVAL);
}

/** The knobs reach the engine settings; a longer RESEND interval keeps
 * the engine's 20 intervals before the RPC timeout, a shorter one keeps
 * its timeout. */
static void bench_homa_settings__resend_scales_timeout(void **state)
{
	struct bench_homa_knobs k = { .slack_us = -1, .silence_rtts = -1 };
	struct homa_settings def, st;

	homa_settings_default(&def);
	bench_homa_settings(&k, &st);
	assert_int_equal(st.resend_ticks, def.resend_ticks);
	assert_int_equal(st.timeout_ticks, def.timeout_ticks);
	assert_int_equal(st.grant_silence_rtts, def.grant_silence_rtts);
	assert_int_equal(st.max_overcommit, def.max_overcommit);
	k.overcommit = 4;
	bench_homa_settings(&k, &st);
	assert_int_equal(st.max_overcommit, 4);
	k.overcommit = 0;
	k.resend_ticks = 40;
	k.tick_us = 10000;
	bench_homa_settings(&k, &st);
	assert_int_equal(st.resend_ticks, 40);
	assert_int_equal(st.resend_interval, 40);
	assert_int_equal(st.timeout_ticks, 40 * (def.timeout_ticks / def.resend_interval));
	assert_true(st.tick_ns == 10000000);
	assert_int_equal(homa_settings_validate(&st, NULL), 0);
	k.resend_ticks = 2;
	bench_homa_settings(&k, &st);
	assert_int_equal(st.resend_interval, 2);
	assert_int_equal(st.timeout_ticks, def.timeout_ticks);
}

/** compare takes --json as a flag and defaults to 3 s. */
static void bench_opts_parse__compare_json_flag(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "compare", "--scenario", "rtt", "--json", NULL };

	assert_int_equal(parse(&o, a), 0);
	assert_true(o.json_stdout);
	assert_string_equal(o.scenario, "rtt");
	assert_true(o.duration == 3);
	const char *b[] = { "homa-bench", "compare", "--threaded", "--rounds", "3", NULL };
	assert_int_equal(parse(&o, b), 0);
	assert_false(o.polled);
	assert_int_equal(o.rounds, 3);
	assert_false(o.json_stdout);
}

/** Unknown modes, flags, values and conflicting loads are refused. */
static void bench_opts_parse__rejects(void **state)
{
	struct bench_opts o;
	const char *a1[] = { "homa-bench", "fly", NULL };
	const char *a2[] = { "homa-bench", "client", "--bogus", "1", NULL };
	const char *a3[] = { "homa-bench", "client", "--transport", "quic", NULL };
	const char *a4[] = { "homa-bench", "client", "--rate", "10", "--outstanding", "2", NULL };
	const char *a5[] = { "homa-bench", "client", "--port", "70000", NULL };
	const char *a6[] = { "homa-bench", "client", "--duration", NULL };
	const char *a7[] = { "homa-bench", "compare", "--scenario", "fast", NULL };

	assert_int_equal(parse(&o, a1), HOMA_EINVAL);
	assert_int_equal(parse(&o, a2), HOMA_EINVAL);
	assert_int_equal(parse(&o, a3), HOMA_EINVAL);
	assert_int_equal(parse(&o, a4), HOMA_EINVAL);
	assert_int_equal(parse(&o, a5), HOMA_EINVAL);
	assert_int_equal(parse(&o, a6), HOMA_EINVAL);
	assert_int_equal(parse(&o, a7), HOMA_EINVAL);
}

/**
 * bench_opts_parse__getopt_long_forms() - --name=value, unambiguous
 * prefixes and -h are accepted; ambiguous prefixes, values missing at the
 * end and stray arguments are refused.
 */
static void bench_opts_parse__getopt_long_forms(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "client", "--port=4100", "--dur", "7",
			    "--servers=127.0.0.1:4000", "--thr", "--json=x.json", NULL };
	const char *b[] = { "homa-bench", "client", "--thread", NULL };   /* threads? threaded? */
	const char *c[] = { "homa-bench", "server", "--port", NULL };
	const char *d[] = { "homa-bench", "server", "stray", NULL };
	const char *e[] = { "homa-bench", "server", "-h", NULL };
	const char *f[] = { "homa-bench", "compare", "--json", "--rounds=2", NULL };

	(void)state;
	assert_int_equal(parse(&o, a), HOMA_EINVAL); /* --thr: threads or threaded */
	a[6] = "--threaded";
	assert_int_equal(parse(&o, a), 0);
	assert_int_equal(o.port, 4100);
	assert_true(o.duration == 7);
	assert_string_equal(o.servers, "127.0.0.1:4000");
	assert_false(o.polled);
	assert_string_equal(o.json, "x.json");
	assert_int_equal(parse(&o, b), HOMA_EINVAL);
	assert_int_equal(parse(&o, c), HOMA_EINVAL);
	assert_int_equal(parse(&o, d), HOMA_EINVAL);
	assert_int_equal(parse(&o, e), 1);
	assert_int_equal(parse(&o, f), 0);
	assert_true(o.json_stdout);
	assert_int_equal(o.rounds, 2);
}

/** --homa-transport picks the API's transport for the Homa arm; others are refused. */
static void bench_opts_parse__homa_transport(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "compare", "--homa-transport", "tcp", NULL };
	const char *b[] = { "homa-bench", "client", "--homa-transport=auto", NULL };
	const char *c[] = { "homa-bench", "client", "--homa-transport", "sctp", NULL };

	(void)state;
	assert_int_equal(parse(&o, a), 0);
	assert_int_equal(o.homa_transport, HOMA_TRANSPORT_TCP);
	assert_int_equal(parse(&o, b), 0);
	assert_int_equal(o.homa_transport, HOMA_TRANSPORT_AUTO);
	assert_int_equal(parse(&o, c), HOMA_EINVAL);
}

/** --homa-transport all: compare runs the API over each transport; other modes refuse it. */
static void bench_opts_parse__homa_transport_all(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "compare", "--homa-transport", "all", NULL };
	const char *b[] = { "homa-bench", "client", "--homa-transport", "all", NULL };
	const char *c[] = { "homa-bench", "compare", "--scenario", "collective",
			    "--homa-transport", "all", NULL };

	(void)state;
	assert_int_equal(parse(&o, a), 0);
	assert_true(o.homa_transport_all);
	assert_int_equal(o.homa_transport, HOMA_TRANSPORT_HOMA);
	assert_int_equal(parse(&o, b), HOMA_EINVAL);
	assert_int_equal(parse(&o, c), HOMA_EINVAL);
}

/** --driver xdp takes its interface from --ifname, and is refused without one. */
static void bench_opts_parse__xdp_driver(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "server", "--driver", "xdp", "--ifname", "veth1", NULL };
	const char *b[] = { "homa-bench", "server", "--driver", "xdp", NULL };

	(void)state;
	assert_int_equal(parse(&o, a), 0);
	assert_int_equal(o.driver, HOMA_DRIVER_XDP);
	assert_string_equal(o.ifname, "veth1");
	assert_int_equal(parse(&o, b), HOMA_EINVAL);
}

/** --homa-offload 0 turns the UDP driver's offloads off; on by default; only 0 or 1. */
static void bench_opts_parse__homa_offload(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "client", "--homa-offload", "0", NULL };
	const char *b[] = { "homa-bench", "server", "--homa-offload", "1", NULL };
	const char *c[] = { "homa-bench", "server", NULL };
	const char *d[] = { "homa-bench", "server", "--homa-offload", "2", NULL };

	(void)state;
	assert_int_equal(parse(&o, a), 0);
	assert_true(o.homa.no_offload);
	assert_int_equal(parse(&o, b), 0);
	assert_false(o.homa.no_offload);
	assert_int_equal(parse(&o, c), 0);
	assert_false(o.homa.no_offload);
	assert_int_equal(parse(&o, d), HOMA_EINVAL);
}

/** --homa-spin 1 makes the Homa arm busy-poll; off by default; only 0 or 1. */
static void bench_opts_parse__homa_spin(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "client", "--homa-spin", "1", NULL };
	const char *b[] = { "homa-bench", "server", NULL };
	const char *c[] = { "homa-bench", "server", "--homa-spin", "-1", NULL };

	(void)state;
	assert_int_equal(parse(&o, a), 0);
	assert_true(o.homa.spin);
	assert_false(o.homa.no_offload);
	assert_int_equal(parse(&o, b), 0);
	assert_false(o.homa.spin);
	assert_int_equal(parse(&o, c), HOMA_EINVAL);
}

/** --pcap and --metrics-port reach the options of server, client and calibrate. */
static void bench_opts_parse__observability_flags(void **state)
{
	struct bench_opts o;
	const char *a[] = { "homa-bench", "server", "--pcap", "/tmp/s.pcap", "--metrics-port",
			    "9464", NULL };
	const char *b[] = { "homa-bench", "client", "--servers", "127.0.0.1:4000",
			    "--metrics-port", "65535", "--pcap", "c.pcap", NULL };
	const char *c[] = { "homa-bench", "calibrate", "--pcap", "k.pcap", NULL };

	assert_int_equal(parse(&o, a), 0);
	assert_string_equal(o.pcap, "/tmp/s.pcap");
	assert_int_equal(o.metrics_port, 9464);
	assert_int_equal(parse(&o, b), 0);
	assert_string_equal(o.pcap, "c.pcap");
	assert_int_equal(o.metrics_port, 65535);
	assert_int_equal(parse(&o, c), 0);
	assert_string_equal(o.pcap, "k.pcap");
	assert_int_equal(o.metrics_port, 0);
	const char *d[] = { "homa-bench", "server", NULL };
	assert_int_equal(parse(&o, d), 0);
	assert_null(o.pcap);
	assert_int_equal(o.metrics_port, 0);

	char *help = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&help, &len);

	bench_usage(f);
	fclose(f);
	assert_non_null(strstr(help, "--pcap FILE"));
	assert_non_null(strstr(help, "--metrics-port N"));
	free(help);
}

/** Bad ports, an empty file name, other transports and compare/demo are refused. */
static void bench_opts_parse__observability_rejects(void **state)
{
	struct bench_opts o;
	const char *bad[][6] = {
		{ "homa-bench", "server", "--metrics-port", "0", NULL },
		{ "homa-bench", "server", "--metrics-port", "65536", NULL },
		{ "homa-bench", "server", "--metrics-port", "80x", NULL },
		{ "homa-bench", "server", "--pcap", "", NULL },
		{ "homa-bench", "server", "--pcap", NULL },
		{ "homa-bench", "server", "--transport", "tcp", "--pcap", "f" },
		{ "homa-bench", "client", "--metrics-port", "9000", "--transport", "udp" },
		{ "homa-bench", "compare", "--pcap", "f", NULL },
		{ "homa-bench", "demo", "--metrics-port", "9000", NULL },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int n = 0;

		while (n < 6 && bad[i][n])
			n++;
		if (bench_opts_parse(n, (char **)bad[i], &o) != HOMA_EINVAL)
			fail_msg("case %zu accepted", i);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bench_opts_parse__testbed_client),
		cmocka_unit_test(bench_opts_parse__server_defaults),
		cmocka_unit_test(bench_opts_parse__homa_settings),
		cmocka_unit_test(bench_homa_settings__resend_scales_timeout),
		cmocka_unit_test(bench_opts_parse__compare_json_flag),
		cmocka_unit_test(bench_opts_parse__rejects),
		cmocka_unit_test(bench_opts_parse__observability_flags),
		cmocka_unit_test(bench_opts_parse__getopt_long_forms),
		cmocka_unit_test(bench_opts_parse__xdp_driver),
		cmocka_unit_test(bench_opts_parse__homa_offload),
		cmocka_unit_test(bench_opts_parse__homa_spin),
		cmocka_unit_test(bench_opts_parse__homa_transport),
		cmocka_unit_test(bench_opts_parse__homa_transport_all),
		cmocka_unit_test(bench_opts_parse__observability_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
