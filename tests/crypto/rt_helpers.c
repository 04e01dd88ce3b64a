/* SPDX-License-Identifier: MIT */
/**
 * @file rt_helpers.c
 * Helpers of the crypto tests on the real stack (rt_helpers.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

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
	static uint8_t out[300000], in[300000];
	struct sockaddr_storage sa = crypto_dst_at(host, port);
	struct homa_message m;
	uint64_t id;
	int err;

	if (len > sizeof(out))
		return HOMA_EINVAL;
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(i * 31 + len);
	err = homa_send(c, (struct sockaddr *)&sa, out, len, 0, &id);
	if (err)
		return err;
	err = homa_recv(c, HOMA_RECV_RESPONSE, id, 30000000000ll, &m);
	if (err)
		return err;
	err = m.error;
	if (!err && (m.length != len || homa_message_copy(&m, 0, in, len) != len ||
		     memcmp(in, out, len)))
		err = HOMA_EPROTO;
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
