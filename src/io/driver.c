/* SPDX-License-Identifier: MIT */
/**
 * @file driver.c
 * Choosing a driver at run time.
 */
#include <stdio.h>
#include <sys/socket.h>

#include "driver.h"

/** homa_driver_open() - See driver.h. */
int homa_driver_open(int kind, const struct homa_driver_config *cfg,
		     struct homa_driver **out)
{
	if (!cfg || !out || cfg->batch < 1 || cfg->batch > 1024 ||
	    cfg->max_packet < 64 || cfg->max_packet > 65535 ||
	    (cfg->bind.ss_family != AF_INET && cfg->bind.ss_family != AF_INET6))
		return HOMA_EINVAL;
	int err;

	switch (kind) {
	case HOMA_IO_UDP:
		err = homa_udp_open(cfg, out);
		break;
	case HOMA_IO_RAW:
		err = homa_raw_open(cfg, out);
		break;
	case HOMA_IO_XDP:
		err = homa_xdp_open(cfg, out);
		break;
	default:
		return HOMA_EINVAL;
	}
	if (!err)
		(*out)->rx_fd2 = -1;
	return err;
}

/** homa_driver_fast_prio() - See driver.h. */
uint8_t homa_driver_fast_prio(const struct homa_settings *st)
{
	uint32_t np = st->num_priorities > 8 ? 8 : st->num_priorities;
	uint32_t nu = st->num_unsched_priorities < np ? st->num_unsched_priorities : np;

	if (np < 2)
		return 0;
	if (nu < 2)
		return (uint8_t)(np - 1);
	return (uint8_t)(np - nu + 1);
}

/** homa_driver_refresh() - See driver.h. */
void homa_driver_refresh(struct homa_driver *d)
{
	if (d && d->ops->refresh)
		d->ops->refresh(d);
}

#ifndef HOMA_HAVE_XDP
/** homa_xdp_open() - See driver.h: this build has no XDP driver. */
int homa_xdp_open(const struct homa_driver_config *cfg, struct homa_driver **out)
{
	(void)cfg;
	(void)out;
	fprintf(stderr, "homa: this build has no XDP driver (built without libxdp-dev, "
		"libbpf-dev and clang; see docs/XDP.md)\n");
	return HOMA_ENOTSUP;
}
#endif

/** homa_driver_close() - See driver.h. */
void homa_driver_close(struct homa_driver *d)
{
	if (d)
		d->ops->close(d);
}

/** homa_driver_set_bufs() - See driver.h. */
void homa_driver_set_bufs(int fd, uint32_t rcvbuf)
{
	int v = rcvbuf ? (int)rcvbuf : HOMA_DRIVER_RCVBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	v = HOMA_DRIVER_SOCKBUF;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}
