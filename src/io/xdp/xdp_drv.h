/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_drv.h
 * Pieces of the XDP driver shared by its files: the interface checks done
 * before anything is created, error reporting, and the embedded program.
 */
#ifndef HOMA_IO_XDP_DRV_H
#define HOMA_IO_XDP_DRV_H

#include <stdint.h>

#include "driver.h"

/** The compiled XDP program (homa_xdp.bpf.c), embedded by the build. */
extern const unsigned char homa_xdp_bpf_obj[];
extern const unsigned long homa_xdp_bpf_obj_len;

/** What the driver learns about its interface before opening it. */
struct homa_xdp_link {
	int ifindex;
	uint8_t mac[6];
	uint32_t queues;   /**< receive queues to serve */
	uint32_t mtu;      /**< the interface's MTU */
};

/**
 * homa_xdp_link_check() - Check @cfg for the XDP driver and read its
 * interface: an IPv4 bind address, an interface name that exists, an
 * Ethernet link whose MTU carries cfg->max_packet plus the IP and UDP
 * headers, frames that fit a UMEM frame, and the queues to use
 * (cfg->queues, or all the receive queues the interface reports).
 * Return: 0; HOMA_EINVAL (no or unknown interface, packets too big for
 * its MTU or a frame, more queues than it has); HOMA_ENOTSUP (IPv6, not
 * Ethernet). A message on stderr says which.
 */
int homa_xdp_link_check(const struct homa_driver_config *cfg, struct homa_xdp_link *out);

/**
 * homa_xdp_errno() - Report that @what failed on @ifname with errno @e on
 * stderr, and map it: EPERM/EACCES HOMA_EPERM (the message names
 * CAP_NET_ADMIN and CAP_BPF), EBUSY/EEXIST HOMA_EADDRINUSE (another XDP
 * program or socket holds the interface), EOPNOTSUPP HOMA_ENOTSUP (no
 * native XDP in the interface's driver), ENOMEM HOMA_ENOMEM, else HOMA_EIO.
 */
int homa_xdp_errno(const char *what, const char *ifname, int e);

/**
 * homa_xdp_umem_locks() - Times the XDP driver @drv (opened by
 * homa_xdp_open()) took the shared UMEM lock of its queues, counting
 * those the process's other sockets on the same queues took (for tests:
 * the lock operations per received or sent batch). Call it from the
 * thread that drives @drv.
 */
uint64_t homa_xdp_umem_locks(const struct homa_driver *drv);

#endif /* HOMA_IO_XDP_DRV_H */
