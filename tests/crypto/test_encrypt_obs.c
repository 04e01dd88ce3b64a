/* SPDX-License-Identifier: MIT */
/**
 * @file test_encrypt_obs.c
 * An encrypted socket's PSP counters on /metrics and in homa-stat
 * (src/runtime/encrypt_obs.c): every documented family is present and
 * passes the strict exposition checker; a sealed-then-corrupted packet,
 * a replay, a truncated packet, an unknown SPI and clear text show up
 * under their reasons in the scrape and in homa-stat's changes; the PSP
 * port's path (steered by the kernel, or the receiver) and its drops by
 * reason appear for sockets with a PSP port (root).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/encrypt.h"
#include "homa/homa.h"
#include "http_get.h"
#include "prom_check.h"
#include "rt_helpers.h"
#include "rt_util.h"

/** An encrypted socket (and its echo thread) and its metrics port. */
struct ep {
	struct crypto_echo e;
	uint16_t mport;
};

/**
 * ep_open() - Open an encrypted socket on 127.0.0.1 with a metrics
 * listener (@mport) and PSP port @udp_port (0: none); a @server gets an
 * echo thread. Fails the test on any error.
 */
static void ep_open(struct ep *e, bool server, uint16_t mport, uint16_t udp_port)
{
	struct homa_encrypt_opts eo;
	struct homa_open_opts o;
	struct homa_settings st;

	crypto_opts_init(&o, &eo, &st, "127.0.0.1", server);
	o.metrics_port = mport;
	eo.udp_port = udp_port;
	assert_int_equal(crypto_ep_open(&e->e, &o, server), 0);
	e->mport = mport;
}

/** ep_close() - Close @e and join its thread. */
static void ep_close(struct ep *e)
{
	crypto_echo_stop(&e->e);
}

/** scrape() - @e's /metrics text, checked by the strict parser (caller frees the response). */
static char *scrape(const struct ep *e, const char **body)
{
	char *resp = rt_scrape(e->mport), err[160];

	*body = http_body(resp);
	assert_non_null(*body);
	if (prom_check(*body, err, sizeof(err)) != 0)
		fail_msg("exposition: %s", err);
	return resp;
}

/** value() - The sample @name{endpoint="@e's port"@more} of @text; fails if absent. */
static double value(const char *text, const struct ep *e, const char *name, const char *more)
{
	char labels[160];
	double v;

	snprintf(labels, sizeof(labels), "{endpoint=\"%d\"%s}", e->e.port, more);
	if (prom_value(text, name, labels, &v) != 0)
		fail_msg("missing %s%s", name, labels);
	return v;
}

/** rejected() - homa_psp_rejected_packets_total of @e for @reason in @text. */
static double rejected(const char *text, const struct ep *e, const char *reason)
{
	char more[64];

	snprintf(more, sizeof(more), ",reason=\"%s\"", reason);
	return value(text, e, "homa_psp_rejected_packets_total", more);
}

/** stat_run() - Run homa-stat with @args; its stdout (caller frees); asserts exit 0. */
static char *stat_run(const char *args)
{
	char cmd[512], chunk[4096], *buf = NULL;
	size_t len = 0, n;
	FILE *p, *out = open_memstream(&buf, &len);

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", HOMA_STAT_BIN, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, out);
	assert_int_equal(pclose(p), 0);
	fclose(out);
	return buf;
}

/**
 * stat_change() - The change homa-stat's report @out gives for series
 * @key (the third column); fails the test if the series is not there.
 */
static double stat_change(const char *out, const char *key)
{
	const char *l = strstr(out, key);
	double v = 0, d = 0;

	if (!l || sscanf(l + strlen(key), " %lf %lf", &v, &d) != 2)
		fail_msg("homa-stat lacks %s:\n%s", key, out);
	return d;
}

/** wait_rejected() - Wait (up to 20 s) until @e rejected @n packets in all. */
static void wait_rejected(const struct ep *e, uint64_t n)
{
	struct homa_psp_stats st;
	uint64_t sum = 0;

	for (int i = 0; i < 2000; i++) {
		assert_int_equal(homa_encrypt_stats(e->e.s, &st), 0);
		sum = 0;
		for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++)
			sum += st.rejected[r];
		if (sum >= n)
			break;
		usleep(10000);
	}
	assert_int_equal(sum, n);
}

/** send_to() - Send @len bytes of @p as one datagram to 127.0.0.1:@port. */
static void send_to(int port, const uint8_t *p, size_t len)
{
	struct sockaddr_storage sa = crypto_dst(port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(sendto(fd, p, len, 0, (struct sockaddr *)&sa, sizeof(struct sockaddr_in)),
			 (ssize_t)len);
	close(fd);
}

/**
 * encrypt_obs__drops_scraped() - After one honest RPC, an attacker with
 * a valid SPI sends a sealed BUSY with one ICV bit flipped, the packet
 * itself (accepted), it again (replay), 30 bytes of it (truncated), one
 * with an SPI never issued and its clear text. The scrape shows each
 * under its reason (exactly 1), the sealed/opened counts, associations
 * and the own-port path; homa-stat's second call shows the changes.
 */
static void encrypt_obs__drops_scraped(void **state)
{
	struct ep s, c;
	uint8_t pkt[100] = {0}, sealed[100], key[32];
	homa_addr srv = homa_addr_ipv4(0x7f000001);
	char args[256], *resp, *out, line[200];
	const char *text;
	homa_psp *atk;
	uint32_t spi;

	(void)state;
	ep_open(&s, true, rt_free_tcp_port(), 0);
	ep_open(&c, false, 0, 0);
	crypto_associate(c.e.s, s.e.s, s.e.port);
	crypto_associate(s.e.s, c.e.s, c.e.port);
	assert_int_equal(crypto_rpc(c.e.s, s.e.port, 5000), 0);
	resp = scrape(&s, &text);
	assert_true(value(text, &s, "homa_psp_sealed_packets_total", "") >= 1);
	assert_true(value(text, &s, "homa_psp_opened_packets_total", "") >= 4);
	assert_true(value(text, &s, "homa_psp_rx_associations", "") >= 1);
	assert_int_equal(value(text, &s, "homa_psp_tx_associations", ""), 1);
	assert_int_equal(value(text, &s, "homa_psp_rotations_total", ""), 0);
	assert_int_equal(value(text, &s, "homa_psp_seal_drops_total", ",reason=\"no_assoc\""), 0);
	assert_int_equal(value(text, &s, "homa_psp_seal_drops_total", ",reason=\"error\""), 0);
	assert_int_equal(value(text, &s, "homa_psp_key_exchanges_total", ",result=\"done\""), 0);
	assert_int_equal(value(text, &s, "homa_psp_key_exchanges_total", ",result=\"refused\""), 0);
	assert_int_equal(value(text, &s, "homa_psp_path", ",path=\"own_port\""), 1);
	assert_int_equal(value(text, &s, "homa_psp_path", ",path=\"steered\""), 0);
	for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++)
		assert_int_equal(rejected(text, &s, homa_psp_reject_name(r)), 0);
	free(resp);
	snprintf(args, sizeof(args), "-p %u -s /tmp/homa-encobs-%d.st", s.mport, (int)getpid());
	free(stat_run(args));  /* first call: the state file */

	assert_int_equal(homa_psp_new(&atk, 0, NULL), 0);
	assert_int_equal(homa_encrypt_rx_issue(s.e.s, &spi, key), 0);
	assert_int_equal(homa_psp_tx_add(atk, &srv, (uint16_t)s.e.port, spi, key, 0), 0);
	pkt[0] = 0x30, pkt[1] = 0x39;  /* BUSY for an RPC the server does not know */
	pkt[2] = (uint8_t)(s.e.port >> 8), pkt[3] = (uint8_t)s.e.port;
	pkt[11] = 0x14, pkt[12] = 5 << 4, pkt[27] = 8;
	memcpy(sealed, pkt, 28);
	assert_int_equal(homa_psp_seal(atk, &srv, sealed, 28, sizeof(sealed)), 60);
	memcpy(pkt, sealed, 60);
	pkt[59] ^= 0x10;                 /* the ICV: auth */
	send_to(s.e.port, pkt, 60);
	wait_rejected(&s, 1);
	send_to(s.e.port, sealed, 60);     /* accepted */
	send_to(s.e.port, sealed, 60);     /* replay */
	send_to(s.e.port, sealed, 30);     /* truncated */
	memcpy(pkt, sealed, 60);
	pkt[7] ^= 0x55;                  /* an SPI never issued */
	pkt[15] ^= 0x77;
	send_to(s.e.port, pkt, 60);
	send_to(s.e.port, sealed + 16, 28); /* the clear packet: not PSP */
	wait_rejected(&s, 5);
	resp = scrape(&s, &text);
	assert_int_equal(rejected(text, &s, "auth"), 1);
	assert_int_equal(rejected(text, &s, "replay"), 1);
	assert_int_equal(rejected(text, &s, "truncated"), 1);
	assert_int_equal(rejected(text, &s, "unknown_spi"), 1);
	assert_int_equal(rejected(text, &s, "not_psp"), 1);
	assert_int_equal(rejected(text, &s, "expired_spi"), 0);
	free(resp);
	out = stat_run(args);
	assert_non_null(strstr(out, "# changes over the last"));
	for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++) {
		snprintf(line, sizeof(line),
			 "homa_psp_rejected_packets_total{endpoint=\"%d\",reason=\"%s\"}", s.e.port,
			 homa_psp_reject_name(r));
		if (r == HOMA_PSP_REJ_AUTH || r == HOMA_PSP_REJ_REPLAY ||
		    r == HOMA_PSP_REJ_TRUNCATED || r == HOMA_PSP_REJ_UNKNOWN_SPI ||
		    r == HOMA_PSP_REJ_NOT_PSP)
			assert_int_equal(stat_change(out, line), 1);
		else
			assert_null(strstr(out, line));  /* unchanged: not shown */
	}
	free(out);
	snprintf(args, sizeof(args), "/tmp/homa-encobs-%d.st", (int)getpid());
	unlink(args);
	homa_psp_free(atk);
	assert_int_equal(crypto_rpc(c.e.s, s.e.port, 200000), 0);
	ep_close(&c);
	ep_close(&s);
}

/**
 * port_path() - Sockets with a fresh PSP port (steered unless
 * HOMA_PSP_STEER=off): an RPC through it, then 2 clear-text Homa packets
 * naming the server sent to the port. The scrape shows @path as the
 * path, 1 there and 0 for the others, and the 2 drops as not_psp.
 * The port's /dev/shm record (psp_steer.c) is removed afterwards.
 */
static void port_path(const char *path)
{
	struct stat ns;
	char rec[96];
	static const char *const paths[] = {"steered", "receiver", "own_port"};
	uint16_t pp = crypto_free_udp_port();
	uint8_t clear[100] = {0};
	char more[64], *resp;
	const char *text;
	struct ep s, c;
	double v = 0;

	ep_open(&s, true, rt_free_tcp_port(), pp);
	ep_open(&c, false, 0, pp);
	crypto_associate(c.e.s, s.e.s, s.e.port);
	crypto_associate(s.e.s, c.e.s, c.e.port);
	assert_int_equal(crypto_rpc(c.e.s, s.e.port, 5000), 0);
	clear[0] = 40000 >> 8, clear[1] = 40000 & 0xff;  /* common header: to the server */
	clear[2] = (uint8_t)(s.e.port >> 8), clear[3] = (uint8_t)s.e.port;
	send_to(pp, clear, sizeof(clear));
	send_to(pp, clear, sizeof(clear));
	for (int i = 0; i < 300 && v < 2; i++) {
		usleep(10000);
		resp = scrape(&s, &text);
		v = value(text, &s, "homa_psp_port_drops_total", ",reason=\"not_psp\"");
		free(resp);
	}
	resp = scrape(&s, &text);
	for (size_t i = 0; i < 3; i++) {
		snprintf(more, sizeof(more), ",path=\"%s\"", paths[i]);
		assert_int_equal(value(text, &s, "homa_psp_path", more), !strcmp(paths[i], path));
	}
	assert_int_equal(value(text, &s, "homa_psp_port_drops_total", ",reason=\"not_psp\""), 2);
	assert_int_equal(value(text, &s, "homa_psp_port_drops_total", ",reason=\"truncated\""), 0);
	assert_int_equal(value(text, &s, "homa_psp_port_drops_total", ",reason=\"no_port\""), 0);
	assert_int_equal(value(text, &s, "homa_psp_port_drops_total", ",reason=\"send_error\""), 0);
	v = value(text, &s, "homa_psp_port_forwarded_packets_total", "");
	assert_true(!strcmp(path, "steered") ? v == 0 : v > 0);
	free(resp);
	ep_close(&c);
	ep_close(&s);
	if (stat("/proc/self/ns/net", &ns) < 0)
		ns.st_ino = 0;
	snprintf(rec, sizeof(rec), "/dev/shm/homa-psp-steer-%lu-%u", (unsigned long)ns.st_ino, pp);
	unlink(rec);
}

/** encrypt_obs__steered() - The kernel steers the PSP port (root). */
static void encrypt_obs__steered(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	unsetenv("HOMA_PSP_STEER");
	port_path("steered");
}

/** encrypt_obs__receiver() - HOMA_PSP_STEER=off: the process's receiver forwards (root). */
static void encrypt_obs__receiver(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	setenv("HOMA_PSP_STEER", "off", 1);
	port_path("receiver");
	unsetenv("HOMA_PSP_STEER");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encrypt_obs__drops_scraped),
		cmocka_unit_test(encrypt_obs__steered),
		cmocka_unit_test(encrypt_obs__receiver),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
