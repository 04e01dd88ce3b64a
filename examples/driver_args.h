/* SPDX-License-Identifier: MIT */
/**
 * @file driver_args.h
 * The driver flags every example takes (through example_obs_arg()):
 *
 *   --driver udp|raw|xdp   how packets reach the network (raw: IP protocol
 *                          146, needs CAP_NET_RAW; xdp: AF_XDP kernel
 *                          bypass, needs --ifname, CAP_NET_ADMIN and
 *                          CAP_BPF; docs/XDP.md)
 *   --ifname IF            the interface of the XDP driver
 *
 * Both only fill struct homa_open_opts fields (driver, ifname).
 */
#ifndef HOMA_EXAMPLES_DRIVER_ARGS_H
#define HOMA_EXAMPLES_DRIVER_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa/homa.h"

/** The driver flags in a usage line. */
#define EXAMPLE_DRIVER_USAGE "[--driver udp|raw|xdp] [--ifname IF]"

/**
 * example_driver_arg() - Handle argv[*i] if it is --driver or --ifname
 * (store argv[*i + 1] in @o and step *i over it). A missing or unknown
 * value prints a message and exits with status 2.
 * Return: 1 if the flag was taken, 0 if argv[*i] is another one.
 */
static inline int example_driver_arg(int argc, char **argv, int *i, struct homa_open_opts *o)
{
	const char *f = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : "";

	if (strcmp(f, "--driver") && strcmp(f, "--ifname"))
		return 0;
	if (!strcmp(f, "--ifname") && *v)
		o->ifname = v;
	else if (!strcmp(v, "udp"))
		o->driver = HOMA_DRIVER_UDP;
	else if (!strcmp(v, "raw"))
		o->driver = HOMA_DRIVER_RAW;
	else if (!strcmp(v, "xdp"))
		o->driver = HOMA_DRIVER_XDP;
	else {
		fprintf(stderr, "%s: bad value '%s' (--driver udp|raw|xdp, --ifname IF)\n", f, v);
		exit(2);
	}
	++*i;
	return 1;
}

#endif
