/* SPDX-License-Identifier: MIT */
/**
 * @file test_rt_loss.c
 * Injected loss, counted twice: the test runs in its own network
 * namespace where an nftables rule drops every 5th DATA packet sent to
 * the server; afterwards the metrics must account for every dropped
 * packet (sent - received = dropped), show the recovery (RESENDs,
 * retransmitted bytes), and every RPC must complete. Needs root (skipped
 * otherwise); touches nothing outside the namespace.
 */
#define _GNU_SOURCE
#include <net/if.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "homa/homa.h"
#include "http_get.h"
#include "rt_util.h"

#define NRPCS 10
#define REQ_LEN 100000

static int in_netns;

/** lo_up() - Bring the namespace's loopback up. Return: 0 or -1. */
static int lo_up(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), r;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	r = ioctl(fd, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	if (!r)
		r = ioctl(fd, SIOCSIFFLAGS, &ifr);
	close(fd);
	return r;
}

/**
 * nft_drop_rule() - On the receive path (input hook, so the sender's
 * system call still succeeds), count every DATA packet to @port (Homa
 * type at UDP payload byte 11) and drop every 5th.
 */
static void nft_drop_rule(uint16_t port)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "nft add table inet homa_loss && "
		 "nft add chain inet homa_loss in '{ type filter hook input priority 0; }' && "
		 "nft add rule inet homa_loss in udp dport %u @th,152,8 0x10 counter && "
		 "nft add rule inet homa_loss in udp dport %u @th,152,8 0x10 "
		 "numgen inc mod 5 0 counter drop", port, port);
	assert_int_equal(system(cmd), 0);
}

/** nft_counts() - DATA packets that reached the input hook, and those dropped. */
static void nft_counts(uint64_t *seen, uint64_t *dropped)
{
	FILE *p = popen("nft list table inet homa_loss", "r");
	char line[512];
	const char *c;
	int k = 0;

	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if ((c = strstr(line, "counter packets ")))
			*(k++ ? dropped : seen) = strtoull(c + 16, NULL, 10);
	pclose(p);
	assert_int_equal(k, 2);
}

/** rt_loss__dropped_packets_accounted() - Sent minus received equals what nft dropped. */
static void rt_loss__dropped_packets_accounted(void **state)
{
	struct homa_open_opts so, co;
	struct homa_settings st;
	struct rt_server srv;
	homa_socket *c;
	uint16_t cport;
	uint64_t seen, dropped;
	char *r;
	const char *t;
	int i;

	if (!in_netns)
		skip();
	/*
	 * This test is about counting, not about timeouts: a loaded machine
	 * can stall a thread for longer than the default 100 ticks.
	 */
	homa_settings_default(&st);
	st.timeout_ticks = 5000;
	homa_open_opts_default(&so);
	so.settings = &st;
	so.offload = false;               /* one datagram per Homa packet */
	so.metrics_port = 9464;           /* a private namespace: any port is free */
	assert_int_equal(rt_server_start(&srv, &so), 0);
	nft_drop_rule(srv.port);
	homa_open_opts_default(&co);
	co.bind_addr = "127.0.0.1";
	co.offload = false;
	co.settings = &st;
	co.metrics_port = 9464;
	assert_int_equal(homa_open(&c, &co), 0);
	cport = (uint16_t)homa_local_port(c);
	for (i = 0; i < NRPCS; i++)
		assert_int_equal(rt_rpc(c, srv.port, REQ_LEN, 100), 0);
	assert_int_equal(rt_quiesce(c, srv.s, 10000), 0);
	nft_counts(&seen, &dropped);
	r = rt_scrape(9464);
	t = http_body(r);
	assert_true(dropped > 0);
	assert_true(rt_metric(t, "homa_packets_sent_total", cport, ",type=\"DATA\"") == (double)seen);
	assert_true(rt_metric(t, "homa_client_rpcs_completed_total", cport, "") == NRPCS);
	assert_true(rt_metric(t, "homa_server_requests_received_total", srv.port, "") == NRPCS);
	if (rt_metric(t, "homa_packets_sent_total", cport, ",type=\"DATA\"") -
	    rt_metric(t, "homa_packets_received_total", srv.port, ",type=\"DATA\"") != (double)dropped)
		fail_msg("DATA sent %.0f, received %.0f, dropped by nft %llu",
			 rt_metric(t, "homa_packets_sent_total", cport, ",type=\"DATA\""),
			 rt_metric(t, "homa_packets_received_total", srv.port, ",type=\"DATA\""),
			 (unsigned long long)dropped);
	assert_true(rt_metric(t, "homa_resends_sent_total", srv.port, "") > 0);
	assert_true(rt_metric(t, "homa_resends_received_total", cport, "") > 0);
	assert_true(rt_metric(t, "homa_retransmitted_bytes_total", cport, "") > 0);
	assert_true(rt_metric(t, "homa_packets_sent_total", srv.port, ",type=\"RESEND\"") ==
		    rt_metric(t, "homa_packets_received_total", cport, ",type=\"RESEND\""));
	assert_true(rt_metric(t, "homa_rx_message_size_bytes_count", srv.port, "") == NRPCS);
	free(r);
	assert_int_equal(homa_close(c), 0);
	rt_server_stop(&srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rt_loss__dropped_packets_accounted),
	};

	/* a private network namespace (root only): loopback and nftables of our own */
	if (geteuid() == 0 && unshare(CLONE_NEWNET) == 0 && lo_up() == 0)
		in_netns = 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
