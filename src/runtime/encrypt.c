/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt.c
 * Encrypted sockets (include/homa/encrypt.h): the socket's PSP state
 * plugged into the engine's packet hooks, the TLS 1.3 key-exchange
 * service of server sockets, the client's exchange before its first
 * packet to a destination (and again at half the association's
 * lifetime), master-key rotation by time, and the capture of encrypted
 * packets as clear text (with the "encrypted" flag).
 *
 * Locking: the PSP state is used by the hooks under rt->lock, so every
 * other use takes rt->lock too. Exchanges of one socket are serialized
 * by kx_lock (taken before, never while holding, rt->lock).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"

/** homa_encrypt_opts_default() - See encrypt.h. */
void homa_encrypt_opts_default(struct homa_encrypt_opts *e)
{
	memset(e, 0, sizeof(*e));
	e->version = HOMA_PSP_AES_GCM_128;
	e->kx_timeout_ms = 3000;
}

/** homa_rt_enc_maybe_rotate() - See enc.h. */
void homa_rt_enc_maybe_rotate(struct rt_enc *x, uint64_t now)
{
	if (!x->rotate_ns || now < x->next_rotate)
		return;
	homa_psp_rx_rotate(x->psp, NULL);
	x->next_rotate = now + x->rotate_ns;
}

/** homa_rt_enc_lifetime() - See enc.h. */
uint64_t homa_rt_enc_lifetime(const struct rt_enc *x, uint64_t now)
{
	if (!x->rotate_ns)
		return UINT64_MAX;
	return x->next_rotate + x->rotate_ns - now;
}

/**
 * keep_clear() - With capture on, copy the @len-byte clear packet at @pkt
 * to x->cap_buf (allocated on first use, rt->pkt_cap bytes) for
 * homa_rt_enc_capture_tx(). Return: true if copied.
 */
static bool keep_clear(struct rt_enc *x, const uint8_t *pkt, size_t len)
{
	x->cap_len = 0;
	if (!x->rt->obs.pcap || len > x->rt->pkt_cap)
		return false;
	if (!x->cap_buf)
		x->cap_buf = malloc(x->rt->pkt_cap);
	if (!x->cap_buf)
		return false;
	memcpy(x->cap_buf, pkt, len);
	return true;
}

/** hook_seal() - The engine's seal_to hook: PSP's (and the clear text kept for a capture). */
static int hook_seal(void *ctx, const homa_addr *dst, uint8_t *pkt, size_t hdr_len, size_t len,
		     size_t cap)
{
	struct rt_enc *x = ctx;
	bool kept = keep_clear(x, pkt, len);
	int r = x->inner.seal_to(x->psp, dst, pkt, hdr_len, len, cap);

	if (kept && r >= 0)
		x->cap_len = len;
	return r;
}

/**
 * hook_open() - The engine's open hook: PSP's, a clock look every 256
 * packets, and the opened packet to the capture (with the priority
 * homa_rt_enc_rx_note() gave).
 */
static int hook_open(void *ctx, const homa_addr *src, uint8_t *pkt, size_t len)
{
	struct rt_enc *x = ctx;
	int r;

	if (x->rotate_ns && (++x->ticks & 255) == 0)
		homa_rt_enc_maybe_rotate(x, homa_rt_now());
	r = x->inner.open(x->psp, src, pkt, len);
	if (r >= 0 && x->rt->obs.pcap)
		homa_rt_obs_packet(x->rt, HOMA_PCAP_RX, 0, pkt, (size_t)r, src, x->rx_priority, true);
	return r;
}

/** homa_rt_enc_capture_tx() - See rt.h. */
void homa_rt_enc_capture_tx(struct homa_rt *rt, const struct homa_tx *tx)
{
	struct rt_enc *x = rt->enc;

	if (!x || !x->cap_len)
		return;
	homa_rt_obs_packet(rt, HOMA_PCAP_TX, 0, x->cap_buf, x->cap_len, &tx->dst, tx->priority,
			   true);
	x->cap_len = 0;
}

/** homa_rt_enc_rx_note() - See rt.h. */
void homa_rt_enc_rx_note(struct homa_rt *rt, uint8_t priority)
{
	if (rt->enc)
		rt->enc->rx_priority = priority;
}

/**
 * answer() - Key-exchange service callback (its thread): install the
 * client's SPI and key for the responses, issue ours.
 * Return: 0, HOMA_ENOTSUP (other PSP version), HOMA_EINVAL, or the
 * errors of issuing and installing.
 */
static int answer(void *ctx, const struct sockaddr *peer, const struct homa_kx_msg *req,
		  struct homa_kx_msg *resp)
{
	struct rt_enc *x = ctx;
	homa_addr addr;
	uint16_t ignored;
	uint64_t now = homa_rt_now();
	int err;

	if (homa_io_addr_from_sockaddr(peer, &addr, &ignored) || req->port == 0)
		return HOMA_EINVAL;
	if (req->version != homa_psp_version(x->psp))
		return HOMA_ENOTSUP;
	homa_rt_lock(x->rt);
	homa_rt_enc_maybe_rotate(x, now);
	err = homa_psp_tx_add(x->psp, &addr, req->port, req->spi, req->key, req->version);
	if (!err)
		err = homa_psp_rx_issue(x->psp, &resp->spi, resp->key);
	resp->version = (uint8_t)homa_psp_version(x->psp);
	resp->port = x->port;
	resp->lifetime_ns = homa_rt_enc_lifetime(x, now);
	homa_rt_unlock(x->rt);
	return err;
}

/** copy_files() - Copy the three file names of @e. Return: 0, HOMA_EINVAL (some missing), HOMA_ENOMEM. */
static int copy_files(struct rt_enc *x, const struct homa_encrypt_opts *e)
{
	const char *f[3] = {e->cert_file, e->key_file, e->ca_file};
	int given = !!f[0] + !!f[1] + !!f[2];

	if (given != 0 && given != 3)
		return HOMA_EINVAL;
	for (int i = 0; i < given; i++) {
		x->files[i] = strdup(f[i]);
		if (!x->files[i])
			return HOMA_ENOMEM;
	}
	return 0;
}

/** homa_rt_enc_files() - See enc.h. */
struct homa_kx_files homa_rt_enc_files(const struct rt_enc *x)
{
	return (struct homa_kx_files){x->files[0], x->files[1], x->files[2]};
}

/**
 * start_service() - Server sockets with certificates: the TLS service on
 * the socket's address, TCP port kx_port (0: the Homa port's number).
 */
static int start_service(struct rt_enc *x, const struct sockaddr_storage *bind_sa,
			 socklen_t len)
{
	struct sockaddr_storage sa = *bind_sa;
	struct homa_kx_files f = homa_rt_enc_files(x);
	uint16_t port = x->kx_port ? x->kx_port : x->port;

	if (sa.ss_family == AF_INET)
		((struct sockaddr_in *)&sa)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&sa)->sin6_port = htons(port);
	return homa_kx_server_start(&x->srv, &f, (struct sockaddr *)&sa, len, x->timeout_ms,
				    answer, x);
}

/** homa_rt_enc_open() - See rt.h. */
int homa_rt_enc_open(struct homa_rt *rt, const struct homa_open_opts *o,
		     const struct sockaddr_storage *bind_sa, socklen_t len)
{
	const struct homa_encrypt_opts *e = o->encrypt;
	struct rt_enc *x;
	int err;

	if (!e)
		return 0;
	x = calloc(1, sizeof(*x));
	if (!x)
		return HOMA_ENOMEM;
	rt->enc = x;
	x->rt = rt;
	pthread_mutex_init(&x->kx_lock, NULL);
	x->port = rt->drv->port;
	x->kx_port = e->kx_port;
	x->timeout_ms = e->kx_timeout_ms ? e->kx_timeout_ms : 3000;
	x->rotate_ns = e->rotate_ns;
	x->next_rotate = homa_rt_now() + e->rotate_ns;
	err = copy_files(x, e);
	if (!err)
		err = homa_psp_new(&x->psp, e->version, e->master_keys);
	if (err)
		return err;
	x->inner = homa_psp_hooks(x->psp);
	x->hooks = x->inner;
	x->hooks.ctx = x;
	x->hooks.seal_to = hook_seal;
	x->hooks.open = hook_open;
	homa_engine_set_hooks(rt->engine, &x->hooks);
	if (o->server && x->files[0])
		return start_service(x, bind_sa, len);
	return 0;
}

/** homa_rt_enc_close() - See rt.h. */
void homa_rt_enc_close(struct homa_rt *rt)
{
	struct rt_enc *x = rt->enc;

	if (!x)
		return;
	homa_kx_server_stop(x->srv);
	if (rt->engine)
		homa_engine_set_hooks(rt->engine, NULL);
	homa_psp_free(x->psp);
	while (x->dests) {
		struct enc_dest *d = x->dests;

		x->dests = d->next;
		free(d);
	}
	for (int i = 0; i < 3; i++)
		free(x->files[i]);
	free(x->cap_buf);
	pthread_mutex_destroy(&x->kx_lock);
	free(x);
	rt->enc = NULL;
}
