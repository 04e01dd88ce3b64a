/* SPDX-License-Identifier: MIT */
/**
 * @file driver_args.h
 * The driver options every example takes (through example_obs_opt()):
 *
 *   --driver udp|raw|xdp   how packets reach the network (raw: IP protocol
 *                          146, needs CAP_NET_RAW; xdp: AF_XDP kernel
 *                          bypass, needs --ifname, CAP_NET_ADMIN and
 *                          CAP_BPF; docs/XDP.md)
 *   --ifname IF            the interface of the XDP driver
 *   --transport homa|tcp|auto  what carries the RPCs (homa_transport(3);
 *                          tcp and auto need the UDP driver)
 *
 * They only fill struct homa_open_opts fields (driver, ifname, transport).
 */
#ifndef HOMA_EXAMPLES_DRIVER_ARGS_H
#define HOMA_EXAMPLES_DRIVER_ARGS_H

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "homa/homa.h"

/** The driver options in a usage line. */
#define EXAMPLE_DRIVER_USAGE "[--driver udp|raw|xdp] [--ifname IF] [--transport homa|tcp|auto]"

/** getopt_long() values of the driver options (above every character). */
enum { EXAMPLE_OPT_DRIVER = 0x100, EXAMPLE_OPT_IFNAME, EXAMPLE_OPT_TRANSPORT };

/** The driver options' entries of a struct option table. */
#define EXAMPLE_DRIVER_OPTIONS                                              \
	{ "driver", required_argument, NULL, EXAMPLE_OPT_DRIVER },          \
	{ "ifname", required_argument, NULL, EXAMPLE_OPT_IFNAME },          \
	{ "transport", required_argument, NULL, EXAMPLE_OPT_TRANSPORT }

/**
 * example_transport_opt() - Store --transport's value @arg in @o; an
 * unknown one prints why and exits with status 2.
 */
static inline void example_transport_opt(const char *arg, struct homa_open_opts *o,
					 const char *usage)
{
	if (!strcmp(arg, "homa"))
		o->transport = HOMA_TRANSPORT_HOMA;
	else if (!strcmp(arg, "tcp"))
		o->transport = HOMA_TRANSPORT_TCP;
	else if (!strcmp(arg, "auto"))
		o->transport = HOMA_TRANSPORT_AUTO;
	else {
		fprintf(stderr, "--transport: bad value '%s' (homa, tcp or auto)\n", arg);
		example_usage_error(usage);
	}
}

/**
 * example_driver_opt() - Take getopt_long()'s option @c with value @arg
 * if it is --driver, --ifname or --transport: store it in @o. An unknown
 * driver or transport (or an empty interface name) prints why and exits
 * with status 2.
 * Return: 1 if @c was a driver option, else 0.
 */
static inline int example_driver_opt(int c, const char *arg, struct homa_open_opts *o,
				     const char *usage)
{
	if (c == EXAMPLE_OPT_TRANSPORT) {
		example_transport_opt(arg, o, usage);
		return 1;
	}
	if (c != EXAMPLE_OPT_DRIVER && c != EXAMPLE_OPT_IFNAME)
		return 0;
	if (c == EXAMPLE_OPT_IFNAME && *arg)
		o->ifname = arg;
	else if (c == EXAMPLE_OPT_DRIVER && !strcmp(arg, "udp"))
		o->driver = HOMA_DRIVER_UDP;
	else if (c == EXAMPLE_OPT_DRIVER && !strcmp(arg, "raw"))
		o->driver = HOMA_DRIVER_RAW;
	else if (c == EXAMPLE_OPT_DRIVER && !strcmp(arg, "xdp"))
		o->driver = HOMA_DRIVER_XDP;
	else {
		fprintf(stderr, "--%s: bad value '%s' (--driver udp|raw|xdp, --ifname IF)\n",
			c == EXAMPLE_OPT_DRIVER ? "driver" : "ifname", arg);
		example_usage_error(usage);
	}
	return 1;
}

#endif
