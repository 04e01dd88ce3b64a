/* SPDX-License-Identifier: MIT */
/**
 * @file obs_args.h
 * The options every example takes besides its own: the two observability
 * options (docs/OBSERVABILITY.md), the driver options (driver_args.h) and
 * -h / --help:
 *
 *   --pcap FILE        write every Homa packet the socket sends and receives,
 *                      with its priority, to FILE (open it with
 *                      tshark -X lua_script:tools/wireshark/homa.lua -r FILE)
 *   --metrics-port N   serve the socket's counters as Prometheus text on
 *                      http://127.0.0.1:N/metrics (read it with homa-stat -p N)
 *
 * They only fill struct homa_open_opts fields (pcap_path, metrics_port,
 * driver, ifname); the runtime does the rest.
 */
#ifndef HOMA_EXAMPLES_OBS_ARGS_H
#define HOMA_EXAMPLES_OBS_ARGS_H

#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "driver_args.h"
#include "homa/homa.h"

/** The common options in a usage line. */
#define EXAMPLE_OBS_USAGE "[--pcap FILE] [--metrics-port N] " EXAMPLE_DRIVER_USAGE " [-h]"

/** The help text of the common options, printed under an example's usage line. */
#define EXAMPLE_OBS_HELP \
	"  --pcap FILE        capture every Homa packet sent and received (pcap; read it\n" \
	"                     with tshark -X lua_script:tools/wireshark/homa.lua -r FILE)\n" \
	"  --metrics-port N   Prometheus counters on http://127.0.0.1:N/metrics\n" \
	"                     (read them with homa-stat -p N)\n" \
	"  --driver D         udp (default), raw (IP protocol 146) or xdp (AF_XDP,\n" \
	"                     with --ifname IF; docs/XDP.md)\n" \
	"  --transport T      homa (default), tcp (kernel TCP, same API) or auto\n" \
	"                     (Homa per peer, TCP where Homa gets no answer)\n" \
	"  -h, --help         this text\n" \
	"Options take their value as --name VALUE or --name=VALUE.\n"

/** getopt_long() values of the observability options. */
enum { EXAMPLE_OPT_PCAP = 0x110, EXAMPLE_OPT_METRICS_PORT };

/** The common options' entries of a struct option table (-h is "h" in
 *  the short options). */
#define EXAMPLE_OBS_OPTIONS                                                  \
	{ "pcap", required_argument, NULL, EXAMPLE_OPT_PCAP },              \
	{ "metrics-port", required_argument, NULL, EXAMPLE_OPT_METRICS_PORT }, \
	{ "help", no_argument, NULL, 'h' },                                  \
	EXAMPLE_DRIVER_OPTIONS

/**
 * example_obs_opt() - The last case of an example's getopt_long() loop:
 * take option @c (value @arg) if it is a common one, storing it in @o;
 * -h / --help prints @usage on stdout and exits 0. Anything else is an
 * option getopt_long() did not know (it printed why) or lacks a value:
 * @usage goes to stderr and the program exits with status 2, as it does
 * for a bad value.
 */
static inline void example_obs_opt(int c, const char *arg, struct homa_open_opts *o,
				   const char *usage)
{
	if (c == 'h') {
		fputs(usage, stdout);
		exit(0);
	}
	if (example_driver_opt(c, arg, o, usage))
		return;
	if (c == EXAMPLE_OPT_PCAP && *arg)
		o->pcap_path = arg;
	else if (c == EXAMPLE_OPT_METRICS_PORT)
		o->metrics_port = (uint16_t)example_long("metrics-port", arg, 1, 65535, usage);
	else if (c == EXAMPLE_OPT_PCAP)
		fprintf(stderr, "--pcap wants a file name\n"), example_usage_error(usage);
	else
		example_usage_error(usage);
}

#endif
