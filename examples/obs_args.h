/* SPDX-License-Identifier: MIT */
/**
 * @file obs_args.h
 * The two observability flags every example takes (docs/OBSERVABILITY.md):
 *
 *   --pcap FILE        write every Homa packet the socket sends and receives,
 *                      with its priority, to FILE (open it with
 *                      tshark -X lua_script:tools/wireshark/homa.lua -r FILE)
 *   --metrics-port N   serve the socket's counters as Prometheus text on
 *                      http://127.0.0.1:N/metrics (read it with homa-stat -p N)
 *
 * Both only fill struct homa_open_opts fields (pcap_path, metrics_port);
 * the runtime does the rest.
 */
#ifndef HOMA_EXAMPLES_OBS_ARGS_H
#define HOMA_EXAMPLES_OBS_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_args.h"
#include "homa/homa.h"

/** The two flags in a usage line. */
#define EXAMPLE_OBS_USAGE "[--pcap FILE] [--metrics-port N] " EXAMPLE_DRIVER_USAGE

/** The help text of the two flags, printed under an example's usage line. */
#define EXAMPLE_OBS_HELP \
	"  --pcap FILE        capture every Homa packet sent and received (pcap; read it\n" \
	"                     with tshark -X lua_script:tools/wireshark/homa.lua -r FILE)\n" \
	"  --metrics-port N   Prometheus counters on http://127.0.0.1:N/metrics\n" \
	"                     (read them with homa-stat -p N)\n" \
	"  --driver D         udp (default), raw (IP protocol 146) or xdp (AF_XDP,\n" \
	"                     with --ifname IF; docs/XDP.md)\n"

/**
 * example_obs_arg() - Handle argv[*i] if it is --driver or --ifname (see
 * example_driver_arg()), --pcap or --metrics-port
 * (store its value, argv[*i + 1], in @o and step *i over it) or --help
 * (print @usage and exit with status 0). A missing or bad value prints a
 * message and exits with status 2.
 * Return: 1 if the flag was taken, 0 if argv[*i] is another one.
 */
static inline int example_obs_arg(int argc, char **argv, int *i, struct homa_open_opts *o,
				  const char *usage)
{
	const char *f = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : "";
	char *end;
	long port;

	if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
		fputs(usage, stdout);
		exit(0);
	}
	if (example_driver_arg(argc, argv, i, o))
		return 1;
	if (strcmp(f, "--pcap") && strcmp(f, "--metrics-port"))
		return 0;
	port = strtol(v, &end, 10);
	if (!*v || (f[2] == 'm' && (*end || port < 1 || port > 65535))) {
		fprintf(stderr, "%s wants %s, got '%s'\n%s", f,
			f[2] == 'p' ? "a file name" : "a TCP port (1..65535)", v, usage);
		exit(2);
	}
	if (f[2] == 'p')
		o->pcap_path = v;
	else
		o->metrics_port = (uint16_t)port;
	++*i;
	return 1;
}

#endif
