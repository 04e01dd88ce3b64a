/* SPDX-License-Identifier: MIT */
/**
 * @file test_rt_metrics.c
 * Metrics of real sockets: a known traffic pattern (RPCs of known sizes,
 * injected malformed packets, and in a private network namespace
 * injected loss), then the counters scraped from /metrics must add up;
 * and the transport layer's series (homa_transport_*).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/homa.h"
#include "homa/obs.h"
#include "homa/wire.h"
#include "http_get.h"
#include "prom_check.h"
#include "rt_util.h"

#define NRPCS 20

/** inject() - Send @len raw bytes as one UDP datagram to 127.0.0.1:@port. */
static void inject(uint16_t from, uint16_t port, const uint8_t *b, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons(from)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(sendto(fd, b, len, 0, (struct sockaddr *)&sa, sizeof(sa)), (ssize_t)len);
	close(fd);
}

/** homa_hdr() - A common header of @type from @sport to @dport in @b (64 bytes zeroed). */
static void homa_hdr(uint8_t *b, uint8_t type, uint16_t sport, uint16_t dport, uint64_t id)
{
	int i;

	memset(b, 0, 64);
	b[0] = (uint8_t)(sport >> 8), b[1] = (uint8_t)sport;
	b[2] = (uint8_t)(dport >> 8), b[3] = (uint8_t)dport;
	b[11] = type;
	b[12] = type == HOMA_PKT_DATA ? 0xe0 : 0x50;
	for (i = 0; i < 8; i++)
		b[20 + i] = (uint8_t)(id >> (56 - 8 * i));
}

/** inject_malformed() - 3 truncated, 2 bad type, 1 bad GRANT priority, 2 packets for no RPC. */
static void inject_malformed(uint16_t port)
{
	uint8_t b[64];
	int i;

	homa_hdr(b, HOMA_PKT_GRANT, 40999, port, 12345);
	for (i = 0; i < 3; i++)
		inject(40999, port, b, 10 + (size_t)i);           /* truncated */
	homa_hdr(b, 0x1f, 40999, port, 12345);
	inject(40999, port, b, 28);                               /* bad type */
	homa_hdr(b, 0x05, 40999, port, 12345);
	inject(40999, port, b, 40);                               /* bad type */
	homa_hdr(b, HOMA_PKT_GRANT, 40999, port, 12345);
	b[32] = 9;
	inject(40999, port, b, HOMA_GRANT_LEN);                   /* priority 9: bad field */
	b[32] = 1;
	inject(40999, port, b, HOMA_GRANT_LEN);                   /* no such RPC */
	homa_hdr(b, HOMA_PKT_RESEND, 40999, port, 777);
	inject(40999, port, b, HOMA_RESEND_LEN);                  /* no such RPC */
}

/** drops_total() - Sum of an engine's drop counters. */
static uint64_t drops_total(homa_socket *s)
{
	struct homa_stats st;
	uint64_t t = 0;
	int i;

	homa_socket_stats(s, &st);
	for (i = 0; i < HOMA_DROP_REASONS; i++)
		t += st.drops[i];
	return t;
}

/** sum_received() - Sum of homa_packets_received_total of @ep over all types. */
static double sum_received(const char *text, uint16_t ep)
{
	char more[64];
	double t = 0;
	int i;

	for (i = 0; i < HOMA_PKT_TYPES; i++) {
		snprintf(more, sizeof(more), ",type=\"%s\"",
			 homa_wire_type_name((uint8_t)(HOMA_PKT_FIRST + i)));
		t += rt_metric(text, "homa_packets_received_total", ep, more);
	}
	return t;
}

/** rx_prio() - homa_packets_received_by_priority_total of @ep at @p in @t. */
static double rx_prio(const char *t, uint16_t ep, int p)
{
	char more[32];

	snprintf(more, sizeof(more), ",priority=\"%d\"", p);
	return rt_metric(t, "homa_packets_received_by_priority_total", ep, more);
}

/** tx_prio() - homa_packets_sent_by_priority_total of @ep at @p in @t. */
static double tx_prio(const char *t, uint16_t ep, int p)
{
	char more[32];

	snprintf(more, sizeof(more), ",priority=\"%d\"", p);
	return rt_metric(t, "homa_packets_sent_by_priority_total", ep, more);
}

/**
 * check_priorities() - Received packets by priority (driver, from the
 * DSCP): in @b0 (after the RPCs, before the injection) each side received
 * at each priority what the other sent at it, and the counts add up to the
 * packets the driver read; by @t the @injected malformed datagrams (plain
 * UDP, TOS 0) were added at @sp's priority 0 and nothing else arrived.
 */
static void check_priorities(const char *b0, const char *t, uint16_t cp, uint16_t sp,
			     int injected)
{
	double rc = 0, rs = 0, high = 0;
	int p;

	for (p = 0; p < HOMA_MAX_PRIORITIES; p++) {
		double c = rx_prio(b0, cp, p), s = rx_prio(b0, sp, p);

		if (c != tx_prio(b0, sp, p) || s != tx_prio(b0, cp, p))
			fail_msg("priority %d: client received %.0f of %.0f, server %.0f of %.0f",
				 p, c, tx_prio(b0, sp, p), s, tx_prio(b0, cp, p));
		assert_true(rx_prio(t, cp, p) == c);
		assert_true(rx_prio(t, sp, p) == s + (p ? 0 : injected));
		rc += c;
		rs += s;
		high += p ? c + s : 0;
	}
	assert_true(rc == rt_metric(b0, "homa_io_rx_packets_total", cp, ""));
	assert_true(rs == rt_metric(b0, "homa_io_rx_packets_total", sp, ""));
	assert_true(high > 0); /* control packets travel at the top priority */
}

/** drop_delta() - Increase of drops for @reason at @ep between @b0 and @t. */
static double drop_delta(const char *b0, const char *t, uint16_t ep, const char *reason)
{
	char more[64];

	snprintf(more, sizeof(more), ",reason=\"%s\"", reason);
	return rt_metric(t, "homa_packets_dropped_total", ep, more) -
	       rt_metric(b0, "homa_packets_dropped_total", ep, more);
}

/**
 * check_counts() - The counters of the known pattern, from one scrape of
 * both sockets (@t), and the drops the injection added since @b0 (a
 * scrape after the RPCs: a loaded machine may add protocol-level drops of
 * late packets during the RPCs, which are not what this test counts).
 */
static void check_counts(const char *b0, const char *t, uint16_t cp, uint16_t sp,
			 const struct homa_settings *st)
{
	double drops_decode;

	assert_true(rt_metric(t, "homa_client_rpcs_started_total", cp, "") == NRPCS);
	assert_true(rt_metric(t, "homa_client_rpcs_completed_total", cp, "") == NRPCS);
	assert_true(rt_metric(t, "homa_server_requests_received_total", sp, "") == NRPCS);
	assert_true(rt_metric(t, "homa_server_replies_sent_total", sp, "") == NRPCS);
	assert_true(drop_delta(b0, t, sp, "truncated") == 3);
	assert_true(drop_delta(b0, t, sp, "bad_type") == 2);
	assert_true(drop_delta(b0, t, sp, "bad_field") == 1);
	assert_true(drop_delta(b0, t, sp, "unknown_rpc") == 2);
	assert_true(rt_metric(t, "homa_packets_dropped_total", cp, ",reason=\"truncated\"") == 0);
	/* 1000-byte requests: all in [512, 1024) */
	assert_true(rt_metric(t, "homa_rx_message_size_bytes_bucket", sp, ",le=\"511\"") == 0);
	assert_true(rt_metric(t, "homa_rx_message_size_bytes_bucket", sp, ",le=\"1023\"") == NRPCS);
	assert_true(rt_metric(t, "homa_rx_message_size_bytes_count", sp, "") == NRPCS);
	/* 3000-byte responses: [2048, 4096) */
	assert_true(rt_metric(t, "homa_rx_message_size_bytes_bucket", cp, ",le=\"2047\"") == 0);
	assert_true(rt_metric(t, "homa_rx_message_size_bytes_bucket", cp, ",le=\"4095\"") == NRPCS);
	assert_true(rt_metric(t, "homa_client_rpc_latency_seconds_count", cp, "") == NRPCS);
	assert_true(rt_metric(t, "homa_client_rpc_latency_seconds_count", sp, "") == 0);
	/* what one side sent as DATA, the other received (loopback, no loss) */
	assert_true(rt_metric(t, "homa_packets_sent_total", cp, ",type=\"DATA\"") ==
		    rt_metric(t, "homa_packets_received_total", sp, ",type=\"DATA\""));
	assert_true(rt_metric(t, "homa_packets_sent_total", sp, ",type=\"DATA\"") ==
		    rt_metric(t, "homa_packets_received_total", cp, ",type=\"DATA\""));
	/*
	 * Every datagram the driver read was either counted as received or
	 * dropped while decoding (truncated, bad type, and the one bad
	 * field: the real traffic decodes cleanly).
	 */
	drops_decode = rt_metric(t, "homa_packets_dropped_total", sp, ",reason=\"truncated\"") +
		       rt_metric(t, "homa_packets_dropped_total", sp, ",reason=\"bad_type\"") + 1;
	assert_true(rt_metric(t, "homa_io_rx_packets_total", sp, "") ==
		    sum_received(t, sp) + drops_decode);
	assert_true(rt_metric(t, "homa_io_rx_packets_total", cp, "") == sum_received(t, cp));
	check_priorities(b0, t, cp, sp, 8);
	/* buffer-pool use: the gauge and its cap */
	assert_true(rt_metric(t, "homa_rx_buffer_limit_bytes", sp, "") == st->max_rx_buffered);
	assert_true(rt_metric(t, "homa_tx_buffer_limit_bytes", cp, "") == st->max_tx_buffered);
	assert_true(rt_metric(t, "homa_rx_buffered_bytes", sp, "") <= st->max_rx_buffered);
}

/** rt_metrics__known_pattern_adds_up() - Two sockets, one listener, counters consistent. */
static void rt_metrics__known_pattern_adds_up(void **state)
{
	struct homa_open_opts so, co;
	struct homa_settings st;
	struct rt_server srv;
	homa_socket *c;
	uint16_t mport = rt_free_tcp_port(), cport;
	char *t, *b0, ep[32];
	uint64_t base;
	int i;

	homa_settings_default(&st);
	st.max_rx_buffered = 96u << 20;  /* not the defaults: the caps must be the settings' */
	st.max_tx_buffered = 48u << 20;
	homa_open_opts_default(&so);
	so.settings = &st;
	so.metrics_port = mport;
	assert_int_equal(rt_server_start(&srv, &so), 0);
	homa_open_opts_default(&co);
	co.settings = &st;
	co.bind_addr = "127.0.0.1";
	co.metrics_port = mport;       /* shares the server's listener */
	assert_int_equal(homa_open(&c, &co), 0);
	cport = (uint16_t)homa_local_port(c);
	for (i = 0; i < NRPCS; i++)
		assert_int_equal(rt_rpc(c, srv.port, 1000, 3000), 0);
	assert_int_equal(rt_quiesce(c, srv.s, 10000), 0);
	b0 = rt_scrape(mport);
	base = drops_total(srv.s);
	inject_malformed(srv.port);
	for (i = 0; i < 500 && drops_total(srv.s) < base + 8; i++)
		usleep(10000);
	assert_int_equal(rt_quiesce(c, srv.s, 10000), 0);
	t = rt_scrape(mport);
	check_counts(b0, t, cport, srv.port, &st);
	free(t);
	free(b0);
	assert_int_equal(homa_close(c), 0);
	t = rt_scrape(mport);                              /* the client left the listener */
	snprintf(ep, sizeof(ep), "{endpoint=\"%u\"}", cport);
	assert_null(strstr(t, ep));
	snprintf(ep, sizeof(ep), "{endpoint=\"%u\"}", srv.port);
	assert_non_null(strstr(t, ep));
	free(t);
	rt_server_stop(&srv);
	assert_null(http_exchange(mport, "GET /metrics HTTP/1.1\r\n\r\n", 26));
}

/** no_series() - True if @t has no sample of family @name for endpoint @ep. */
static bool no_series(const char *t, const char *name, uint16_t ep)
{
	char want[160];

	snprintf(want, sizeof(want), "%s{endpoint=\"%u\"", name, ep);
	return strstr(t, want) == NULL;
}

/**
 * rt_metrics__transport_series() - A client and a server on the TCP
 * transport sharing one listener: homa_transport_rpcs_total counts the
 * client's RPCs by the transport that carried them,
 * homa_transport_tcp_requests_total the server's requests over TCP, the
 * AUTO switches stay 0; a socket on Homa alone has none of these series.
 */
static void rt_metrics__transport_series(void **state)
{
	struct homa_open_opts so, co, ho;
	struct rt_server srv;
	homa_socket *c, *h;
	uint16_t mport = rt_free_tcp_port(), cport, hport;
	char *t;

	(void)state;
	homa_open_opts_default(&so);
	so.metrics_port = mport;
	so.transport = HOMA_TRANSPORT_TCP;
	assert_int_equal(rt_server_start(&srv, &so), 0);
	homa_open_opts_default(&co);
	co.bind_addr = "127.0.0.1";
	co.metrics_port = mport;
	co.transport = HOMA_TRANSPORT_TCP;
	assert_int_equal(homa_open(&c, &co), 0);
	homa_open_opts_default(&ho);
	ho.bind_addr = "127.0.0.1";
	ho.metrics_port = mport;
	assert_int_equal(homa_open(&h, &ho), 0);
	cport = (uint16_t)homa_local_port(c);
	hport = (uint16_t)homa_local_port(h);
	for (int i = 0; i < 7; i++)
		assert_int_equal(rt_rpc(c, srv.port, 100 + (size_t)i, 200), 0);
	t = rt_scrape(mport);
	assert_true(rt_metric(t, "homa_transport_rpcs_total", cport, ",transport=\"tcp\"") == 7);
	assert_true(rt_metric(t, "homa_transport_rpcs_total", cport, ",transport=\"homa\"") == 0);
	assert_true(rt_metric(t, "homa_transport_tcp_requests_total", srv.port, "") == 7);
	assert_true(rt_metric(t, "homa_transport_tcp_requests_total", cport, "") == 0);
	assert_true(rt_metric(t, "homa_transport_auto_switches_total", cport, ",to=\"tcp\"") == 0);
	assert_true(rt_metric(t, "homa_transport_auto_switches_total", cport, ",to=\"homa\"") == 0);
	assert_true(no_series(t, "homa_transport_rpcs_total", hport));
	assert_true(no_series(t, "homa_transport_tcp_requests_total", hport));
	free(t);
	assert_int_equal(homa_close(h), 0);
	assert_int_equal(homa_close(c), 0);
	rt_server_stop(&srv);
}

/**
 * type_is() - True if @t declares family @name with TYPE @kind.
 */
static bool type_is(const char *t, const char *name, const char *kind)
{
	char want[160];

	snprintf(want, sizeof(want), "# TYPE %s %s\n", name, kind);
	return strstr(t, want) != NULL;
}

/**
 * rt_metrics__driver_levels_are_gauges() - The UDP driver's levels (its
 * receive queues, its known peers, the XDP driver's mode and lent frames)
 * are exported as gauges without the counters' _total suffix, and with
 * their values: after RPCs between a client and a server, the server has
 * 2 receive queues and 1 known peer; the counts beside them stay counters.
 */
static void rt_metrics__driver_levels_are_gauges(void **state)
{
	struct homa_open_opts so, co;
	struct rt_server srv;
	homa_socket *c;
	uint16_t mport = rt_free_tcp_port();
	char *t;

	(void)state;
	homa_open_opts_default(&so);
	so.metrics_port = mport;
	assert_int_equal(rt_server_start(&srv, &so), 0);
	homa_open_opts_default(&co);
	co.bind_addr = "127.0.0.1";
	assert_int_equal(homa_open(&c, &co), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rt_rpc(c, srv.port, 100, 100), 0);
	assert_int_equal(rt_quiesce(c, srv.s, 10000), 0);
	t = rt_scrape(mport);  /* checks the exposition's format too */
	for (const char *const *g = (const char *const[]){"homa_io_rx_queues", "homa_io_rx_known_peers",
		     "homa_io_xdp_zerocopy", "homa_io_xdp_rx_lent", "homa_io_rx_lent_slots",
		     NULL}; *g; g++) {
		char total[96];

		snprintf(total, sizeof(total), "%s_total", *g);
		assert_true(type_is(t, *g, "gauge"));
		assert_null(strstr(t, total));
	}
	assert_true(rt_metric(t, "homa_io_rx_queues", srv.port, "") == 2);
	assert_true(rt_metric(t, "homa_io_rx_known_peers", srv.port, "") == 1);
	assert_true(rt_metric(t, "homa_io_xdp_zerocopy", srv.port, "") == 0);
	assert_true(type_is(t, "homa_io_rx_known_packets_total", "counter"));
	assert_true(rt_metric(t, "homa_io_rx_known_packets_total", srv.port, "") >= 1);
	free(t);
	assert_int_equal(homa_close(c), 0);
	rt_server_stop(&srv);
}

/** Messages the log sink received. */
static struct {
	int n, level;
	char last[600];
} logged;

static uint64_t log_now = 1000000000;

/** fixed_clock() - The log's clock in this test: moves only when the test says. */
static uint64_t fixed_clock(void)
{
	return log_now;
}

/** log_sink() - Record what the runtime logs. */
static void log_sink(void *arg, int level, const char *file, int line, const char *msg)
{
	logged.n++;
	logged.level = level;
	snprintf(logged.last, sizeof(logged.last), "%s", msg);
}

/**
 * rt_metrics__malformed_flood_rate_limited() - 100 truncated packets give
 * 10 warnings (the burst), not 100; the next one after the limit lifts
 * reports the 90 it suppressed.
 */
static void rt_metrics__malformed_flood_rate_limited(void **state)
{
	struct homa_open_opts so;
	struct rt_server srv;
	uint8_t b[64] = {0};
	int i;

	homa_log_set_clock(fixed_clock);
	homa_log_set_sink(log_sink, NULL);
	homa_log_set_rate(10, 1);
	homa_open_opts_default(&so);
	assert_int_equal(rt_server_start(&srv, &so), 0);
	for (i = 0; i < 100; i++)
		inject(40998, srv.port, b, 12);
	for (i = 0; i < 500 && drops_total(srv.s) < 100; i++)
		usleep(10000);
	assert_int_equal(drops_total(srv.s), 100);
	assert_int_equal(logged.n, 10);
	assert_int_equal(logged.level, HOMA_LOG_WARN);
	assert_non_null(strstr(logged.last, "malformed packet from 127.0.0.1 (truncated)"));
	log_now += 3000000000ull;
	inject(40998, srv.port, b, 12);
	for (i = 0; i < 500 && logged.n < 11; i++)
		usleep(10000);
	assert_int_equal(logged.n, 11);
	assert_non_null(strstr(logged.last, "(90 similar messages suppressed)"));
	rt_server_stop(&srv);
	homa_log_set_sink(NULL, NULL);
	homa_log_set_clock(NULL);
}

/** threads() - Threads of this process now (entries of /proc/self/task). */
static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/**
 * rt_metrics__off_by_default() - Default options ask for no capture and
 * no listener, and a default socket starts no listener thread: the same
 * socket with metrics_port starts one thread more.
 */
static void rt_metrics__off_by_default(void **state)
{
	struct homa_open_opts o;
	homa_socket *a, *b;
	int t0, t1;

	homa_open_opts_default(&o);
	assert_null(o.pcap_path);
	assert_int_equal(o.metrics_port, 0);
	assert_null(o.metrics_addr);
	o.bind_addr = "127.0.0.1";
	t0 = threads();
	assert_int_equal(homa_open(&a, &o), 0);
	t1 = threads();
	o.metrics_port = rt_free_tcp_port();
	assert_int_equal(homa_open(&b, &o), 0);
	/* the same socket with a listener costs exactly one thread more */
	assert_int_equal(threads() - t1, t1 - t0 + 1);
	assert_int_equal(homa_close(b), 0);
	assert_int_equal(homa_close(a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rt_metrics__malformed_flood_rate_limited),
		cmocka_unit_test(rt_metrics__known_pattern_adds_up),
		cmocka_unit_test(rt_metrics__off_by_default),
		cmocka_unit_test(rt_metrics__transport_series),
		cmocka_unit_test(rt_metrics__driver_levels_are_gauges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
