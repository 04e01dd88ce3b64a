/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt_api.c
 * The socket calls of include/homa/encrypt.h: installing associations,
 * issuing SPIs, rotating, exchanging keys now, counters. Each call is a
 * small operation that enc_call() runs on the socket's PSP state with
 * the checks, the reference and (for most) the PSP state's lock they share.
 */
#include "enc.h"

/** The arguments of one call, and where its results go. */
struct enc_args {
	homa_addr addr;               /**< the destination's address (calls with one) */
	uint16_t port;                /**< and its Homa port */
	uint32_t spi;                 /**< tx_add: the receiver's SPI */
	uint32_t *spi_out;            /**< rx_issue: the SPI issued */
	const uint8_t *key;           /**< tx_add: its key; rotate: a master key or NULL */
	uint8_t *key_out;             /**< rx_issue: the key issued */
	int version;                  /**< tx_add: PSP version */
	struct homa_psp_stats *stats; /**< stats: the counters */
};

/** An operation of enc_call(): 0 or a HOMA_E* code. */
typedef int (*enc_op)(struct homa_rt *rt, struct enc_args *a);

/**
 * enc_call() - Run @op on @s's encryption state: check @s is encrypted,
 * parse @dst into @a (when @dst is given), hold a reference on the
 * runtime, and the PSP state's lock (x->mu) around @op when @lock (@op takes the locks it
 * needs otherwise).
 * Return: what @op returns; HOMA_EINVAL (no @s, or a bad @dst);
 * HOMA_ESHUTDOWN (the socket is closing); HOMA_ENOTSUP (not encrypted).
 */
static int enc_call(homa_socket *s, const struct sockaddr *dst, bool lock, enc_op op,
		    struct enc_args *a)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	int err = 0;

	if (!s)
		return HOMA_EINVAL;
	if (!rt)
		return HOMA_ESHUTDOWN;
	if (!rt->enc)
		err = HOMA_ENOTSUP;
	else if (dst && homa_io_addr_from_sockaddr(dst, &a->addr, &a->port))
		err = HOMA_EINVAL;
	if (!err && lock) {
		pthread_mutex_lock(&rt->enc->mu);
		err = op(rt, a);
		pthread_mutex_unlock(&rt->enc->mu);
	} else if (!err) {
		err = op(rt, a);
	}
	homa_rt_put(rt);
	return err;
}

/** op_tx_add() - homa_encrypt_tx_add() under the lock. */
static int op_tx_add(struct homa_rt *rt, struct enc_args *a)
{
	return homa_psp_tx_add(rt->enc->psp, &a->addr, a->port, a->spi, a->key, a->version);
}

/** homa_encrypt_tx_add() - See encrypt.h. */
int homa_encrypt_tx_add(homa_socket *s, const struct sockaddr *dst, uint32_t spi,
			const uint8_t *key, int version)
{
	struct enc_args a = {.spi = spi, .key = key, .version = version};

	return key && dst ? enc_call(s, dst, true, op_tx_add, &a) : HOMA_EINVAL;
}

/** op_tx_remove() - homa_encrypt_tx_remove() under the lock. */
static int op_tx_remove(struct homa_rt *rt, struct enc_args *a)
{
	return homa_psp_tx_remove(rt->enc->psp, &a->addr, a->port);
}

/** homa_encrypt_tx_remove() - See encrypt.h. */
int homa_encrypt_tx_remove(homa_socket *s, const struct sockaddr *dst)
{
	struct enc_args a = {0};

	return dst ? enc_call(s, dst, true, op_tx_remove, &a) : HOMA_EINVAL;
}

/** op_rx_issue() - homa_encrypt_rx_issue() under the lock. */
static int op_rx_issue(struct homa_rt *rt, struct enc_args *a)
{
	return homa_psp_rx_issue(rt->enc->psp, a->spi_out, a->key_out);
}

/** homa_encrypt_rx_issue() - See encrypt.h. */
int homa_encrypt_rx_issue(homa_socket *s, uint32_t *spi, uint8_t *key)
{
	struct enc_args a = {.spi_out = spi, .key_out = key};

	return enc_call(s, NULL, true, op_rx_issue, &a);
}

/** op_rotate() - homa_encrypt_rotate() under the lock. */
static int op_rotate(struct homa_rt *rt, struct enc_args *a)
{
	return homa_psp_rx_rotate(rt->enc->psp, a->key);
}

/** homa_encrypt_rotate() - See encrypt.h. */
int homa_encrypt_rotate(homa_socket *s, const uint8_t *key)
{
	struct enc_args a = {.key = key};

	return enc_call(s, NULL, true, op_rotate, &a);
}

/** op_connect() - homa_encrypt_connect(): the exchange takes its own locks. */
static int op_connect(struct homa_rt *rt, struct enc_args *a)
{
	if (!a->port)
		return HOMA_EINVAL;
	if (!rt->enc->files[0])
		return HOMA_ENOTSUP;
	return homa_rt_enc_ready(rt, &a->addr, a->port);
}

/** homa_encrypt_connect() - See encrypt.h. */
int homa_encrypt_connect(homa_socket *s, const struct sockaddr *dst)
{
	struct enc_args a = {0};

	return enc_call(s, dst, false, op_connect, &a);
}

/**
 * op_stats() - homa_encrypt_stats(): the PSP counters under x->mu, the
 * service's outside it (the service thread takes x->mu in answers).
 */
static int op_stats(struct homa_rt *rt, struct enc_args *a)
{
	pthread_mutex_lock(&rt->enc->mu);
	homa_psp_get_stats(rt->enc->psp, a->stats);
	a->stats->kx_done = rt->enc->kx_done;
	a->stats->kx_failed = rt->enc->kx_failed;
	pthread_mutex_unlock(&rt->enc->mu);
	homa_kx_server_counts(rt->enc->srv, &a->stats->kx_served, &a->stats->kx_refused);
	return 0;
}

/** homa_encrypt_stats() - See encrypt.h. */
int homa_encrypt_stats(homa_socket *s, struct homa_psp_stats *out)
{
	struct enc_args a = {.stats = out};

	return out ? enc_call(s, NULL, false, op_stats, &a) : HOMA_EINVAL;
}
