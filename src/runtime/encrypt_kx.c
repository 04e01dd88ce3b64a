/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt_kx.c
 * The client's side of the key exchange: before the first packet to a
 * destination, and again at half the shorter lifetime of the two SPIs
 * exchanged, ask the destination's TLS service for its SPI and key and
 * give ours for its responses.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "enc.h"

/** dest_find() - Under x->mu: @addr:@port's refresh entry, or NULL. */
static struct enc_dest *dest_find(struct rt_enc *x, const homa_addr *addr, uint16_t port)
{
	for (struct enc_dest *d = x->dests; d; d = d->next)
		if (d->port == port && homa_addr_equal(&d->addr, addr))
			return d;
	return NULL;
}

/** need_exchange() - Under x->mu: no association yet, or its renewal is due. */
static bool need_exchange(struct rt_enc *x, const homa_addr *addr, uint16_t port, uint64_t now)
{
	struct enc_dest *d = dest_find(x, addr, port);

	if (!homa_psp_tx_has(x->psp, addr, port))
		return true;
	return d && now >= d->refresh_at;
}

/**
 * install() - Under x->mu: the server's answer @resp becomes the
 * association to @addr:@port, renewed at half of the shorter lifetime
 * after @now; it expires one lifetime after @asked, when the request
 * left (the server counted its lifetime from later, so this is never
 * after its SPI's end). Return: 0, HOMA_ENOMEM or homa_psp_tx_add()'s error.
 */
static int install(struct rt_enc *x, const homa_addr *addr, uint16_t port,
		   const struct homa_kx_msg *resp, uint64_t own_life, uint64_t asked, uint64_t now)
{
	struct enc_dest *d = dest_find(x, addr, port);
	uint64_t life = resp->lifetime_ns < own_life ? resp->lifetime_ns : own_life;
	int err;

	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return HOMA_ENOMEM;
		d->addr = *addr;
		d->port = port;
		d->next = x->dests;
		x->dests = d;
	}
	d->refresh_at = life == UINT64_MAX ? UINT64_MAX : now + life / 2;
	d->expires_at = life == UINT64_MAX ? UINT64_MAX : asked + life;
	err = homa_psp_tx_add(x->psp, addr, port, resp->spi, resp->key, resp->version);
	x->kx_done += !err;
	return err;
}

/**
 * exchange() - Ask @addr's service (port kx_port, or @port's number) for
 * an SPI and key and give ours. Call with kx_lock held, rt->lock and x->mu not.
 * Return: 0 or the errors of homa_kx_request(); HOMA_ENOTSUP if the
 * peer uses another PSP version.
 */
static int exchange(struct rt_enc *x, const homa_addr *addr, uint16_t port)
{
	struct homa_kx_msg req = {0}, resp = {0};
	struct homa_kx_files f = homa_rt_enc_files(x);
	struct sockaddr_storage sa;
	uint64_t now = homa_rt_now(), own_life;
	int len = homa_io_addr_to_sockaddr(x->rt->drv->family, addr,
					   x->kx_port ? x->kx_port : port, &sa);
	int err;

	if (len < 0)
		return len;
	pthread_mutex_lock(&x->mu);
	homa_rt_enc_maybe_rotate(x, now);
	err = homa_psp_rx_issue(x->psp, &req.spi, req.key);
	req.version = (uint8_t)homa_psp_version(x->psp);
	req.port = x->port;
	own_life = homa_rt_enc_lifetime(x, now);
	req.lifetime_ns = own_life;
	pthread_mutex_unlock(&x->mu);
	if (!err)
		err = homa_kx_request(&f, (struct sockaddr *)&sa, (socklen_t)len, x->timeout_ms,
				      &req, &resp);
	if (!err && resp.version != req.version)
		err = HOMA_ENOTSUP;
	pthread_mutex_lock(&x->mu);
	if (!err)
		err = install(x, addr, port, &resp, own_life, now, homa_rt_now());
	if (err)
		x->kx_failed++;
	pthread_mutex_unlock(&x->mu);
	OPENSSL_cleanse(&req, sizeof(req));
	OPENSSL_cleanse(&resp, sizeof(resp));
	return err;
}

/**
 * expired() - Under x->mu: has the association to @addr:@port, from a
 * key exchange, outlived the lifetime announced with it at @now?
 */
static bool expired(struct rt_enc *x, const homa_addr *addr, uint16_t port, uint64_t now)
{
	struct enc_dest *d = dest_find(x, addr, port);

	return d && now >= d->expires_at;
}

/** homa_rt_enc_ready() - See rt.h. */
int homa_rt_enc_ready(struct homa_rt *rt, const homa_addr *addr, uint16_t port)
{
	struct rt_enc *x = rt->enc;
	bool need, has;
	int err;

	if (!x)
		return 0;
	pthread_mutex_lock(&x->mu);
	need = need_exchange(x, addr, port, homa_rt_now());
	has = homa_psp_tx_has(x->psp, addr, port);
	pthread_mutex_unlock(&x->mu);
	if (!need)
		return 0;
	if (!x->files[0])
		return has ? 0 : HOMA_ENOASSOC;
	pthread_mutex_lock(&x->kx_lock);
	pthread_mutex_lock(&x->mu);  /* another thread may have just done it */
	need = need_exchange(x, addr, port, homa_rt_now());
	pthread_mutex_unlock(&x->mu);
	err = need ? exchange(x, addr, port) : 0;
	pthread_mutex_unlock(&x->kx_lock);
	if (!err || !has)
		return err;
	/* a failed renewal keeps the association it was to replace, until
	 * the receiver rotates its SPI out: then the packets would be dropped */
	pthread_mutex_lock(&x->mu);
	err = expired(x, addr, port, homa_rt_now()) ? HOMA_EKEYEXPIRED : 0;
	pthread_mutex_unlock(&x->mu);
	return err;
}

/** homa_rt_enc_can_reply() - See rt.h. */
int homa_rt_enc_can_reply(struct homa_rt *rt, uint64_t id)
{
	struct rt_enc *x = rt->enc;
	homa_addr addr;
	uint16_t port;
	bool has;

	if (!x || homa_engine_rpc_peer(rt->engine, id, &addr, &port))
		return 0;
	pthread_mutex_lock(&x->mu);
	has = homa_psp_tx_has(x->psp, &addr, port);
	pthread_mutex_unlock(&x->mu);
	return has ? 0 : HOMA_ENOASSOC;
}
