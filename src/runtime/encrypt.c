/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt.c
 * Encrypted sockets (include/homa/encrypt.h): the socket's PSP state
 * plugged into the engine's packet hooks, the TLS 1.3 key-exchange
 * service of server sockets, the client's exchange before its first
 * packet to a destination (and again at half the association's
 * lifetime) and master-key rotation by time.
 *
 * Locking: the PSP state, the destinations' renewal times, the exchange
 * counters and the rotation clock are guarded by x->mu, which may be
 * taken while holding rt->lock, never the other way round. Packets are
 * sealed and opened outside rt->lock (encrypt_pkt.c). Exchanges of one
 * socket are serialized by kx_lock (taken before, never while holding,
 * rt->lock or x->mu).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "psp_steer.h"

/** homa_encrypt_opts_default() - See encrypt.h. */
void homa_encrypt_opts_default(struct homa_encrypt_opts *e)
{
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
	e->version = HOMA_PSP_AES_GCM_128;
	e->kx_timeout_ms = 3000;
}

/**
 * later() - @now + @ns, or UINT64_MAX where that does not fit: a period
 * as long as an application may give (rotate_ns up to UINT64_MAX) means
 * "not in this process's life", not a time that wrapped into the past.
 */
static uint64_t later(uint64_t now, uint64_t ns)
{
	return ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
}

/** homa_rt_enc_maybe_rotate() - See enc.h. */
void homa_rt_enc_maybe_rotate(struct rt_enc *x, uint64_t now)
{
	if (!x->rotate_ns || now < x->next_rotate)
		return;
	homa_psp_rx_rotate(x->psp, NULL);
	x->next_rotate = later(now, x->rotate_ns);
}

/** homa_rt_enc_lifetime() - See enc.h. */
uint64_t homa_rt_enc_lifetime(const struct rt_enc *x, uint64_t now)
{
	if (!x->rotate_ns)
		return UINT64_MAX;
	return later(x->next_rotate, x->rotate_ns) - now;
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
	pthread_mutex_lock(&x->mu);
	homa_rt_enc_maybe_rotate(x, now);
	err = homa_psp_tx_add(x->psp, &addr, req->port, req->spi, req->key, req->version);
	if (!err)
		err = homa_psp_rx_issue(x->psp, &resp->spi, resp->key);
	resp->version = (uint8_t)homa_psp_version(x->psp);
	resp->port = x->port;
	resp->lifetime_ns = homa_rt_enc_lifetime(x, now);
	pthread_mutex_unlock(&x->mu);
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

/**
 * steer() - Have the kernel steer this socket's packets on the PSP port
 * to it (psp_steer.c): the driver reads the PSP port's socket too.
 * Return: whether it does; if not, the log says why.
 */
static bool steer(struct rt_enc *x)
{
	struct homa_driver *d = x->rt->drv;
	int fd, err;

	if (homa_rt_psp_steer_off()) {
		HOMA_LOG_INFO("port %u: PSP port %u through the host's receiver (%s=off)", x->port,
			      x->udp_port, PSP_STEER_ENV);
		return false;
	}
	if (!d->ops->add_rx) {
		HOMA_LOG_INFO("port %u: PSP port %u through the host's receiver (driver %s cannot "
			      "read a second socket)", x->port, x->udp_port, d->ops->name);
		return false;
	}
	fd = homa_rt_psp_steer_open(x->udp_port, x->port);
	err = fd < 0 ? fd : d->ops->add_rx(d, fd);
	if (err) {
		HOMA_LOG_INFO("port %u: PSP port %u through the host's receiver: kernel steering "
			      "refused (%s)", x->port, x->udp_port, homa_strerror(err));
		return false;
	}
	HOMA_LOG_INFO("port %u: PSP port %u steered by the kernel (SO_REUSEPORT, BPF)", x->port,
		      x->udp_port);
	return true;
}

/**
 * join_host() - Sockets with a PSP port: kernel steering where it can be
 * had, else the host's receiver serves this socket (IPv4 or IPv6).
 * Return: 0; HOMA_ENOTSUP (the PSP port is the socket's own); the errors
 * of homa_rt_psp_host_join().
 */
static int join_host(struct rt_enc *x)
{
	int err;

	if (x->udp_port == x->port)
		return HOMA_ENOTSUP;
	x->steered = steer(x);
	if (x->steered) {
		homa_rt_psp_host_steered(1, false, x->udp_port);
		return 0;
	}
	err = homa_rt_psp_host_join(x->udp_port, x->port);
	x->host_joined = !err;
	if (!err && !homa_rt_psp_steer_off())
		homa_rt_psp_host_steered(0, true, x->udp_port);
	return err;
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
	pthread_mutex_init(&x->mu, NULL);
	x->port = rt->drv->port;
	x->kx_port = e->kx_port;
	x->timeout_ms = e->kx_timeout_ms ? e->kx_timeout_ms : 3000;
	x->rotate_ns = e->rotate_ns;
	x->next_rotate = later(homa_rt_now(), e->rotate_ns);
	x->udp_port = e->udp_port;
	err = copy_files(x, e);
	if (!err)
		err = homa_psp_new(&x->psp, e->version, e->master_keys);
	if (!err && e->udp_port)
		err = join_host(x);
	if (err)
		return err;
	/* the engine leaves room for PSP; encrypt_pkt.c seals and opens */
	x->hooks = (struct homa_packet_hooks){.overhead = HOMA_PSP_OVERHEAD};
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
	if (x->host_joined)
		homa_rt_psp_host_leave(x->port);
	if (x->steered)
		homa_rt_psp_host_steered(-1, false, x->udp_port);
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
	pthread_mutex_destroy(&x->kx_lock);
	pthread_mutex_destroy(&x->mu);
	free(x);
	rt->enc = NULL;
}
