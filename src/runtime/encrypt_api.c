/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt_api.c
 * The socket calls of include/homa/encrypt.h: installing associations,
 * issuing SPIs, rotating, exchanging keys now, counters.
 */
#include "enc.h"

/**
 * enc_get() - Take a reference on @s and check it is encrypted.
 * Return: 0 with *@rtp set (release with homa_rt_put()); HOMA_EINVAL;
 * HOMA_ESHUTDOWN; HOMA_ENOTSUP (not encrypted; no reference kept).
 */
static int enc_get(homa_socket *s, struct homa_rt **rtp)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;

	if (!s)
		return HOMA_EINVAL;
	if (!rt)
		return HOMA_ESHUTDOWN;
	if (!rt->enc) {
		homa_rt_put(rt);
		return HOMA_ENOTSUP;
	}
	*rtp = rt;
	return 0;
}

/**
 * enc_get_dst() - enc_get(), and @dst as an address and Homa port.
 * Return: as enc_get(); HOMA_EINVAL for a bad @dst (no reference kept).
 */
static int enc_get_dst(homa_socket *s, const struct sockaddr *dst, struct homa_rt **rtp,
		       homa_addr *addr, uint16_t *port)
{
	int err = enc_get(s, rtp);

	if (!err && homa_io_addr_from_sockaddr(dst, addr, port)) {
		homa_rt_put(*rtp);
		err = HOMA_EINVAL;
	}
	return err;
}

/** homa_encrypt_tx_add() - See encrypt.h. */
int homa_encrypt_tx_add(homa_socket *s, const struct sockaddr *dst, uint32_t spi,
			const uint8_t *key, int version)
{
	struct homa_rt *rt;
	homa_addr addr;
	uint16_t port;
	int err = key ? enc_get_dst(s, dst, &rt, &addr, &port) : HOMA_EINVAL;

	if (err)
		return err;
	homa_rt_lock(rt);
	err = homa_psp_tx_add(rt->enc->psp, &addr, port, spi, key, version);
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return err;
}

/** homa_encrypt_tx_remove() - See encrypt.h. */
int homa_encrypt_tx_remove(homa_socket *s, const struct sockaddr *dst)
{
	struct homa_rt *rt;
	homa_addr addr;
	uint16_t port;
	int err = enc_get_dst(s, dst, &rt, &addr, &port);

	if (err)
		return err;
	homa_rt_lock(rt);
	err = homa_psp_tx_remove(rt->enc->psp, &addr, port);
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return err;
}

/** homa_encrypt_rx_issue() - See encrypt.h. */
int homa_encrypt_rx_issue(homa_socket *s, uint32_t *spi, uint8_t *key)
{
	struct homa_rt *rt;
	int err = enc_get(s, &rt);

	if (err)
		return err;
	homa_rt_lock(rt);
	err = homa_psp_rx_issue(rt->enc->psp, spi, key);
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return err;
}

/** homa_encrypt_rotate() - See encrypt.h. */
int homa_encrypt_rotate(homa_socket *s, const uint8_t *key)
{
	struct homa_rt *rt;
	int err = enc_get(s, &rt);

	if (err)
		return err;
	homa_rt_lock(rt);
	err = homa_psp_rx_rotate(rt->enc->psp, key);
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return err;
}

/** homa_encrypt_connect() - See encrypt.h. */
int homa_encrypt_connect(homa_socket *s, const struct sockaddr *dst)
{
	struct homa_rt *rt;
	homa_addr addr;
	uint16_t port;
	int err = enc_get_dst(s, dst, &rt, &addr, &port);

	if (err)
		return err;
	if (!port)
		err = HOMA_EINVAL;
	else if (!rt->enc->files[0])
		err = HOMA_ENOTSUP;
	else
		err = homa_rt_enc_ready(rt, &addr, port);
	homa_rt_put(rt);
	return err;
}

/** homa_encrypt_stats() - See encrypt.h. */
int homa_encrypt_stats(homa_socket *s, struct homa_psp_stats *out)
{
	struct homa_rt *rt;
	int err = out ? enc_get(s, &rt) : HOMA_EINVAL;

	if (err)
		return err;
	homa_rt_lock(rt);
	homa_psp_get_stats(rt->enc->psp, out);
	out->kx_done = rt->enc->kx_done;
	out->kx_failed = rt->enc->kx_failed;
	homa_rt_unlock(rt);
	homa_kx_server_counts(rt->enc->srv, &out->kx_served, &out->kx_refused);
	homa_rt_put(rt);
	return 0;
}
