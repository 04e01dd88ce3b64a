/* SPDX-License-Identifier: MIT */
/**
 * @file psp_steer.h
 * Kernel steering of the PSP port (psp_steer.c): every encrypted socket of
 * the host binds the PSP port too (SO_REUSEPORT), and an SK_REUSEPORT BPF
 * program gives each sealed packet to the socket whose Homa port the
 * clear common header names, so no process forwards it.
 */
#ifndef HOMA_RT_PSP_STEER_H
#define HOMA_RT_PSP_STEER_H

#include <stdbool.h>
#include <stdint.h>

/** Environment variable: "off" (or "0") keeps the host's PSP receiver in use. */
#define PSP_STEER_ENV "HOMA_PSP_STEER"

/** homa_rt_psp_steer_off() - Has PSP_STEER_ENV turned kernel steering off? */
bool homa_rt_psp_steer_off(void);

/**
 * homa_rt_psp_steer_open() - A UDP socket bound to the PSP port @udp_port
 * (IPv6 dual-stack, IPv4 only on a kernel without IPv6) in the host's
 * steering group, entered in the group's map as the socket of Homa port
 * @homa_port. The first socket of the host (of its network namespace)
 * loads the program and creates the map; later ones, in any process,
 * find them through /dev/shm/homa-psp-steer-NETNS-PORT (the program's id,
 * under flock). The caller owns the socket; closing it takes it out of
 * the group and the map.
 * Return: the fd; HOMA_ENOTSUP (turned off by PSP_STEER_ENV, or the
 * kernel lacks the program or map type); HOMA_EPERM (no CAP_BPF /
 * CAP_NET_ADMIN, or no right to bind the port); HOMA_EADDRINUSE (the
 * port is held without SO_REUSEPORT, e.g. by a host's PSP receiver);
 * HOMA_EIO. On any error the caller uses the host's PSP receiver.
 */
int homa_rt_psp_steer_open(uint16_t udp_port, uint16_t homa_port);

/** Reasons the steering program drops a datagram: indexes of its counter map. */
enum psp_steer_reason {
	PSP_STEER_NOT_PSP = 0,   /**< empty, or the PSP next header is not Homa */
	PSP_STEER_TRUNCATED = 1, /**< shorter than PSP header, common header and ICV */
	PSP_STEER_NO_PORT = 2,   /**< no socket of the group has the clear header's Homa port */
	PSP_STEER_REASONS = 3
};

/**
 * homa_rt_psp_steer_drops() - The datagrams the steering program of PSP
 * port @udp_port (this network namespace's group, all processes) has
 * dropped since it was loaded, by reason, into @out (indexed by enum
 * psp_steer_reason).
 * Return: 0; HOMA_ENOTSUP (no record or program: no socket of the host
 * is steered on @udp_port); HOMA_EPERM (no CAP_BPF / CAP_SYS_ADMIN to
 * open it by id); HOMA_EIO.
 */
int homa_rt_psp_steer_drops(uint16_t udp_port, uint64_t out[PSP_STEER_REASONS]);

#endif /* HOMA_RT_PSP_STEER_H */
