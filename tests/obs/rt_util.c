/* SPDX-License-Identifier: MIT */
/**
 * @file rt_util.c
 * Real-traffic helpers for the runtime observability tests.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "http_get.h"
#include "prom_check.h"
#include "rt_util.h"

/** fill_pattern() - Byte i of a message is (i * 31 + seed) & 0xff. */
static void fill_pattern(uint8_t *b, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 31 + seed);
}

/** serve() - The server thread: reply to requests until the socket closes. */
static void *serve(void *arg)
{
	struct rt_server *srv = arg;

	for (;;) {
		struct homa_message m;
		uint8_t hdr[4] = {0};
		uint8_t *resp;
		size_t len;

		if (homa_recv(srv->s, HOMA_RECV_REQUEST, 0, -1, &m))
			break;
		homa_message_copy(&m, 0, hdr, sizeof(hdr));
		len = ((size_t)hdr[0] << 24) | ((size_t)hdr[1] << 16) | ((size_t)hdr[2] << 8) | hdr[3];
		resp = malloc(len ? len : 1);
		fill_pattern(resp, len, 7);
		homa_reply_buf(srv->s, m.id, resp, len);
		free(resp);
		homa_message_release(&m);
		srv->served++;
	}
	return NULL;
}

/** rt_settings() - See rt_util.h. */
void rt_settings(struct homa_settings *st)
{
	homa_settings_default(st);
	st->timeout_ticks = RT_TIMEOUT_TICKS;
}

/** rt_server_start() - See rt_util.h. */
int rt_server_start(struct rt_server *srv, struct homa_open_opts *o)
{
	int err;

	memset(srv, 0, sizeof(*srv));
	if (!o->bind_addr)
		o->bind_addr = "127.0.0.1";
	o->server = true;
	err = homa_open(&srv->s, o);
	if (err) {
		srv->s = NULL;
		return err;
	}
	srv->port = (uint16_t)homa_local_port(srv->s);
	if (pthread_create(&srv->thread, NULL, serve, srv)) {
		homa_close(srv->s);
		srv->s = NULL;
		return HOMA_EIO;
	}
	return 0;
}

/** rt_server_stop() - See rt_util.h. */
void rt_server_stop(struct rt_server *srv)
{
	if (!srv->s)
		return;
	homa_close(srv->s);
	pthread_join(srv->thread, NULL);
	srv->s = NULL;
}

/** check_response() - True if @m holds @len bytes of the server's pattern. */
static int check_response(const struct homa_message *m, size_t len)
{
	uint8_t *got, *want;
	int ok;

	if (m->length != len)
		return 0;
	got = malloc(len ? len : 1);
	want = malloc(len ? len : 1);
	homa_message_copy(m, 0, got, len);
	fill_pattern(want, len, 7);
	ok = !memcmp(got, want, len);
	free(got);
	free(want);
	return ok;
}

/** rt_rpc() - See rt_util.h. */
int rt_rpc(homa_socket *c, uint16_t server_port, size_t req_len, size_t resp_len)
{
	return rt_rpc_addr(c, "127.0.0.1", server_port, req_len, resp_len);
}

/** rt_rpc_addr() - See rt_util.h. */
int rt_rpc_addr(homa_socket *c, const char *addr, uint16_t server_port, size_t req_len,
		size_t resp_len)
{
	struct sockaddr_storage sa;
	struct homa_message m;
	socklen_t sl;
	uint8_t *req = malloc(req_len < 4 ? 4 : req_len);
	uint64_t id;
	int err;

	fill_pattern(req, req_len, 3);
	req[0] = (uint8_t)(resp_len >> 24);
	req[1] = (uint8_t)(resp_len >> 16);
	req[2] = (uint8_t)(resp_len >> 8);
	req[3] = (uint8_t)resp_len;
	homa_sockaddr_parse(addr, server_port, &sa, &sl);
	err = homa_send(c, (struct sockaddr *)&sa, req, req_len, 0, &id);
	free(req);
	if (err)
		return err;
	err = homa_recv(c, HOMA_RECV_RESPONSE, id, 10000000000ll, &m);
	if (err)
		return err;
	err = check_response(&m, resp_len) ? 0 : HOMA_EPROTO;
	homa_message_release(&m);
	return err;
}

/** sent_total() - Packets the engine of @s has sent so far. */
static uint64_t sent_total(homa_socket *s)
{
	struct homa_stats st;
	uint64_t t = 0;
	int i;

	if (homa_socket_stats(s, &st))
		return 0;
	for (i = 0; i < HOMA_PKT_TYPES; i++)
		t += st.pkts_sent[i];
	return t;
}

/** now_ms() - The monotonic clock in milliseconds. */
static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/** rt_quiesce() - See rt_util.h. */
int rt_quiesce(homa_socket *a, homa_socket *b, int max_ms)
{
	int64_t start = now_ms(), since = start, t;
	uint64_t last = sent_total(a) + sent_total(b);

	do {
		uint64_t sent;

		usleep(20000);
		t = now_ms();
		sent = sent_total(a) + sent_total(b);
		if (sent != last) {
			last = sent;
			since = t;
		} else if (t - since >= 100) {
			return 0;
		}
	} while (t - start < max_ms);
	return -1;
}

/** rt_free_tcp_port() - See rt_util.h. */
uint16_t rt_free_tcp_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	close(fd);
	return ntohs(sa.sin_port);
}

/** rt_scrape() - See rt_util.h. */
char *rt_scrape(uint16_t port)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\n\r\n";
	char *r = http_exchange(port, req, sizeof(req) - 1), err[256];

	assert_non_null(r);
	assert_int_equal(http_status(r), 200);
	if (prom_check(http_body(r), err, sizeof(err)))
		fail_msg("invalid exposition: %s", err);
	return r;
}

/** rt_metric() - See rt_util.h. */
double rt_metric(const char *text, const char *name, uint16_t ep, const char *more)
{
	char labels[128];
	double v;

	snprintf(labels, sizeof(labels), "{endpoint=\"%u\"%s}", ep, more);
	if (prom_value(text, name, labels, &v))
		fail_msg("no %s%s", name, labels);
	return v;
}
