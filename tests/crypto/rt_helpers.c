/* SPDX-License-Identifier: MIT */
/**
 * @file rt_helpers.c
 * Helpers of the crypto tests on the real stack (rt_helpers.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "homa/encrypt.h"
#include "rt_helpers.h"

/** crypto_dst_at() - See rt_helpers.h. */
struct sockaddr_storage crypto_dst_at(const char *host, int port)
{
	struct sockaddr_storage sa;
	socklen_t len;

	assert_int_equal(homa_sockaddr_parse(host, (uint16_t)port, &sa, &len), 0);
	return sa;
}

/** crypto_now_ms() - See rt_helpers.h. */
uint64_t crypto_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/** crypto_dst() - See rt_helpers.h. */
struct sockaddr_storage crypto_dst(int port)
{
	return crypto_dst_at("127.0.0.1", port);
}

/** crypto_rpc() - See rt_helpers.h. */
int crypto_rpc(homa_socket *c, int port, size_t len)
{
	return crypto_rpc_at(c, "127.0.0.1", port, len);
}

/** crypto_rpc_at() - See rt_helpers.h. */
int crypto_rpc_at(homa_socket *c, const char *host, int port, size_t len)
{
	static uint8_t out[300000];
	struct sockaddr_storage sa = crypto_dst_at(host, port);
	uint64_t id;
	int err;

	if (len > sizeof(out))
		return HOMA_EINVAL;
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(i * 31 + len);
	err = homa_send(c, (struct sockaddr *)&sa, out, len, 0, &id);
	if (err)
		return err;
	return crypto_await_echo(c, id, out, len);
}

/** crypto_await_echo() - See rt_helpers.h. */
int crypto_await_echo(homa_socket *c, uint64_t id, const uint8_t *out, size_t len)
{
	struct homa_message m;
	uint8_t *in;
	int err;

	err = homa_recv(c, HOMA_RECV_RESPONSE, id, 30000000000ll, &m);
	if (err)
		return err;
	err = m.error;
	in = err ? NULL : malloc(len ? len : 1);
	if (!err && !in)
		err = HOMA_ENOMEM;
	if (!err && (m.length != len || homa_message_copy(&m, 0, in, len) != len ||
		     memcmp(in, out, len)))
		err = HOMA_EPROTO;
	free(in);
	homa_message_release(&m);
	return err;
}

/** crypto_associate() - See rt_helpers.h. */
void crypto_associate(homa_socket *from, homa_socket *to, int to_port)
{
	crypto_associate_at(from, to, "127.0.0.1", to_port);
}

/** crypto_associate_at() - See rt_helpers.h. */
void crypto_associate_at(homa_socket *from, homa_socket *to, const char *host, int to_port)
{
	struct sockaddr_storage sa = crypto_dst_at(host, to_port);
	uint8_t key[32];
	uint32_t spi;

	assert_int_equal(homa_encrypt_rx_issue(to, &spi, key), 0);
	assert_int_equal(homa_encrypt_tx_add(from, (struct sockaddr *)&sa, spi, key, 0), 0);
}

/** crypto_free_udp_port() - See rt_helpers.h. */
uint16_t crypto_free_udp_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/** crypto_opts_init() - See rt_helpers.h. */
void crypto_opts_init(struct homa_open_opts *o, struct homa_encrypt_opts *eo,
		      struct homa_settings *st, const char *host, bool server)
{
	homa_open_opts_default(o);
	homa_encrypt_opts_default(eo);
	homa_settings_default(st);
	st->timeout_ticks = 3000;  /* loaded CI machines */
	o->settings = st;
	o->bind_addr = host;
	o->server = server;
	o->encrypt = eo;
}

/** crypto_open() - See rt_helpers.h. */
homa_socket *crypto_open(bool enc, bool server)
{
	struct homa_encrypt_opts eo;
	struct homa_open_opts o;
	struct homa_settings st;
	homa_socket *s = NULL;

	crypto_opts_init(&o, &eo, &st, "127.0.0.1", server);
	if (!enc)
		o.encrypt = NULL;
	assert_int_equal(homa_open(&s, &o), 0);
	return s;
}

/** crypto_echo_loop() - See rt_helpers.h. */
void *crypto_echo_loop(homa_socket *s)
{
	struct homa_message m;
	uint8_t *buf = NULL;
	size_t cap = 0;

	while (homa_recv(s, HOMA_RECV_REQUEST, 0, -1, &m) == 0) {
		size_t n;

		if (m.length > cap) {
			uint8_t *b = realloc(buf, m.length);

			if (!b) {
				homa_message_release(&m);
				continue;  /* no reply: the client's RPC fails, the test with it */
			}
			buf = b;
			cap = m.length;
		}
		n = homa_message_copy(&m, 0, buf, m.length);
		homa_reply_buf(s, m.id, buf, n);
		homa_message_release(&m);
	}
	free(buf);
	return NULL;
}

/** crypto_echo_serve() - See rt_helpers.h. */
void *crypto_echo_serve(void *arg)
{
	struct crypto_echo *e = arg;

	return crypto_echo_loop(e->s);
}

/** crypto_echo_start() - See rt_helpers.h. */
void crypto_echo_start(struct crypto_echo *e, homa_socket *s)
{
	assert_non_null(s);
	e->s = s;
	e->port = homa_local_port(s);
	e->open = true;
	assert_int_equal(pthread_create(&e->thread, NULL, crypto_echo_serve, e), 0);
	e->serving = true;
}

/** crypto_ep_open() - See rt_helpers.h. */
int crypto_ep_open(struct crypto_echo *e, const struct homa_open_opts *o, bool echo)
{
	homa_socket *s = NULL;
	int err;

	memset(e, 0, sizeof(*e));
	err = homa_open(&s, o);
	if (err)
		return err;
	if (echo) {
		crypto_echo_start(e, s);
		return 0;
	}
	e->s = s;
	e->port = homa_local_port(s);
	e->open = true;
	return 0;
}

/** crypto_echo_stop() - See rt_helpers.h. */
void crypto_echo_stop(struct crypto_echo *e)
{
	if (e->open)
		homa_close(e->s);
	if (e->serving)
		pthread_join(e->thread, NULL);
	e->open = false;
	e->serving = false;
}

/** crypto_opened_count() - See rt_helpers.h. */
uint64_t crypto_opened_count(homa_socket *s)
{
	struct homa_psp_stats st;

	return homa_encrypt_stats(s, &st) == 0 ? st.opened : 0;
}

/** crypto_released() - See rt_helpers.h. */
void crypto_released(void *arg)
{
	(*(int *)arg)++;
}

/** crypto_zc_rpc() - See rt_helpers.h. */
int crypto_zc_rpc(homa_socket *c, int port, size_t len)
{
	static uint8_t out[CRYPTO_ZC_MAX];
	struct sockaddr_storage sa = crypto_dst(port);
	struct homa_iov iov = {out, len};
	int rel = 0, err;
	uint64_t id;

	if (len > CRYPTO_ZC_MAX)
		return HOMA_EINVAL;
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(i * 131 + (i >> 9) + len);
	err = homa_request_zc(c, (struct sockaddr *)&sa, &iov, 1, 0, crypto_released, &rel, &id);
	if (err)
		return err;
	return crypto_await_echo(c, id, out, len);
}

/** crypto_open_lo() - See rt_helpers.h. */
void crypto_open_lo(struct crypto_echo *e, bool server, uint32_t unsched, uint32_t grant_step)
{
	struct homa_encrypt_opts eo;
	struct homa_open_opts o;
	struct homa_settings st;

	crypto_opts_init(&o, &eo, &st, "127.0.0.1", server);
	st.mtu = 65000;
	st.unsched_bytes = unsched;
	if (grant_step)
		st.grant_step = grant_step;
	st.link_mbps = 400000;
	assert_int_equal(crypto_ep_open(e, &o, server), 0);
}
