/* SPDX-License-Identifier: MIT */
/**
 * @file main.c
 * homa-flood: options, the rounds (each runs the unloaded arm and the
 * flooded arm, order alternating) and the measurements around each arm.
 * See homa-flood(1).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood.h"
#include "util/cpu.h"

/** usage() - Print the options to @f. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: homa-flood [--seconds S] [--rounds N] [--size BYTES] [--ports N]\n"
		"                  [--hosts N] [--threads N] [--timeout-ms MS]\n"
		"                  [--rate PPS] [--rcvbuf BYTES] [--stranger-budget N]\n"
		"                  [--stranger-cpu US] [--data-only]\n"
		"  100 B RPCs between two Homa sockets on loopback, without and with a flood of\n"
		"  forged packets from many ports at full speed; prints both arms side by side.\n"
		"  --seconds S   length of each arm in each round (default 2)\n"
		"  --rounds N    rounds, each running both arms (default 3)\n"
		"  --size BYTES  request and response length (default 100)\n"
		"  --ports N     flood source sockets, 1-%d (default 256)\n"
		"  --hosts N     flood source addresses 127.0.0.2.., 1-200 (default 8)\n"
		"  --threads N   server threads, 1-%d (default 1)\n"
		"  --timeout-ms MS  both sockets' RPC timeout, 1-60000 (default: the library's)\n"
		"  --rate PPS    flood packets per second (default 0: as fast as one core sends)\n"
		"  --rcvbuf BYTES  both sockets' kernel receive buffer, homa_open_opts.rcvbuf_bytes,\n"
		"                0 or 4096-1073741824 (default 0: the library's)\n"
		"  --stranger-budget N  both sockets' homa_open_opts.stranger_budget: strangers'\n"
		"                packets per ms while known peers are active, -1 (no limit) or\n"
		"                1-1000000 (default 0: the library's, 64)\n"
		"  --stranger-cpu US  both sockets' homa_open_opts.stranger_cpu_us: µs of CPU\n"
		"                time per ms strangers may cost while known peers are active,\n"
		"                -1 (no limit) or 1-1000 (default 0: the library's, 100)\n"
		"  --data-only   forge only DATA packets, all aimed at the server\n"
		"Exit status: 0 if every RPC completed, 1 if one failed or hung, 2 bad usage.\n",
		FLOOD_MAX_PORTS, FLOOD_MAX_THREADS);
}

/** parse_num() - @s as a number in [@lo, @hi] into *@out. Return: 0 or -1. */
static int parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/** parse() - Fill @o from the command line. Return: 0, 1 (--help) or -1 (bad usage). */
static int parse(int argc, char **argv, struct flood_opts *o)
{
	static const struct option lo[] = {
		{"seconds", required_argument, NULL, 's'}, {"rounds", required_argument, NULL, 'r'},
		{"size", required_argument, NULL, 'b'},    {"ports", required_argument, NULL, 'p'},
		{"hosts", required_argument, NULL, 'H'},   {"threads", required_argument, NULL, 't'},
		{"timeout-ms", required_argument, NULL, 'T'}, {"rate", required_argument, NULL, 'R'},
		{"rcvbuf", required_argument, NULL, 'B'}, {"data-only", no_argument, NULL, 'D'},
		{"stranger-budget", required_argument, NULL, 'S'},
		{"stranger-cpu", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	double v;
	int c;

	*o = (struct flood_opts){.seconds = 2, .rounds = 3, .size = 100, .ports = 256,
				 .hosts = 8, .threads = 1};
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		const char *what = c == 's' ? "--seconds" : c == 'r' ? "--rounds" : c == 'b' ? "--size"
				 : c == 'p' ? "--ports" : c == 'H' ? "--hosts" : c == 'T' ? "--timeout-ms"
				 : c == 'R' ? "--rate" : c == 'B' ? "--rcvbuf" : c == 'S' ? "--stranger-budget"
				 : c == 'C' ? "--stranger-cpu" : "--threads";
		double hi = c == 's' ? 3600 : c == 'r' ? 1000 : c == 'b' ? 1000000
			  : c == 'p' ? FLOOD_MAX_PORTS : c == 'H' ? 200 : c == 'T' ? 60000
			  : c == 'R' ? 1e9 : c == 'B' ? 1073741824 : c == 'S' ? 1000000
			  : c == 'C' ? 1000 : FLOOD_MAX_THREADS;

		if (c == 'h')
			return 1;
		if (c == '?')
			return -1;
		if (c == 'D') {
			o->data_only = 1;
			continue;
		}
		if (parse_num(optarg, c == 's' ? 0.01 : c == 'b' || c == 'R' || c == 'B' ? 0 : c == 'S' || c == 'C' ? -1 : 1,
			      hi, &v) ||
		    (c == 'B' && v > 0 && v < 4096)) {
			fprintf(stderr, "homa-flood: %s %s: not a number in range\n", what, optarg);
			return -1;
		}
		if (c == 's')
			o->seconds = v;
		else if (c == 'r')
			o->rounds = (int)v;
		else if (c == 'b')
			o->size = (uint32_t)v;
		else if (c == 'p')
			o->ports = (int)v;
		else if (c == 'H')
			o->hosts = (int)v;
		else if (c == 'T')
			o->timeout_ms = (uint32_t)v;
		else if (c == 'R')
			o->rate = v;
		else if (c == 'B')
			o->rcvbuf = (uint32_t)v;
		else if (c == 'S')
			o->stranger_budget = (int32_t)v;
		else if (c == 'C')
			o->stranger_cpu_us = (int32_t)v;
		else
			o->threads = (int)v;
	}
	if (optind < argc) {
		fprintf(stderr, "homa-flood: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

/** A point in time for an arm's differences. */
struct snap {
	double wall_us, proc_us, flood_us;
	struct homa_host_cpu host;
	uint64_t flood_sent, server_rx, client_rx, kdrops;
	struct homa_stats st, cst; /**< the server's and the client's engine */
};

/** take() - Snapshot everything @arm measures; @a is the running flood or NULL. */
static void take(struct snap *s, homa_socket *server, homa_socket *client, struct flood_attack *a)
{
	struct homa_io_stats io;
	struct timespec t;
	clockid_t cid;

	memset(s, 0, sizeof(*s));
	if (a && !pthread_getcpuclockid(a->thread, &cid) && !clock_gettime(cid, &t)) {
		s->flood_us = (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
		s->flood_sent = atomic_load(&a->sent);
	}
	homa_host_cpu_snap(&s->host);
	s->proc_us = (double)homa_cpu_now_us(HOMA_CPU_PROCESS);
	homa_socket_stats(server, &s->st);
	homa_socket_stats(client, &s->cst);
	if (!homa_io_stats(server, &io))
		s->server_rx = io.rx_packets;
	if (!homa_io_stats(client, &io))
		s->client_rx = io.rx_packets;
	s->kdrops = flood_udp_rcvbuf_errors();
	s->wall_us = flood_now_us();
}

/** add() - Add the differences between @s0 and @s1 to @arm. */
static void add(struct flood_arm *arm, const struct snap *s0, const struct snap *s1)
{
	arm->wall_us += s1->wall_us - s0->wall_us;
	arm->proc_cpu_us += s1->proc_us - s0->proc_us;
	arm->flood_cpu_us += s1->flood_us - s0->flood_us;
	arm->busy_us += homa_host_busy_us(&s0->host, &s1->host);
	arm->ncpus = s1->host.ncpus;
	arm->flood_sent += s1->flood_sent - s0->flood_sent;
	arm->server_rx += s1->server_rx - s0->server_rx;
	arm->client_rx += s1->client_rx - s0->client_rx;
	arm->kernel_drops += s1->kdrops - s0->kdrops;
	for (int r = 0; r < HOMA_DROP_REASONS; r++)
		arm->drops[r] += s1->st.drops[r] - s0->st.drops[r];
	for (int t = 0; t < HOMA_PKT_TYPES; t++)
		arm->sent[t] += s1->st.pkts_sent[t] - s0->st.pkts_sent[t] + s1->cst.pkts_sent[t] -
				s0->cst.pkts_sent[t];
}

/** wait_ms() - How long an RPC may go without an outcome: its timeout plus 5 s. */
static uint32_t wait_ms(const struct flood_opts *o)
{
	struct homa_settings st;

	homa_settings_default(&st);
	return 5000 + (o->timeout_ms ? o->timeout_ms
				     : (uint32_t)((uint64_t)st.timeout_ticks * st.tick_ns / 1000000));
}

/**
 * run_arm() - One arm of one round: with @flood, start the flood, let it
 * run 100 ms, then probe; else just probe. Return: 0 or an error.
 */
static int run_arm(const struct flood_opts *o, homa_socket *c, struct flood_server *sv,
		   int flood, struct flood_arm *arm)
{
	static struct flood_attack a;
	struct snap s0, s1;
	int rc;

	if (flood) {
		memset(&a, 0, sizeof(a));
		a.server_port = (uint16_t)homa_local_port(sv->s);
		a.client_port = (uint16_t)homa_local_port(c);
		a.nports = o->ports;
		a.nhosts = o->hosts;
		a.rate = o->rate;
		a.data_only = o->data_only;
		rc = flood_attack_start(&a);
		if (rc)
			return rc;
		usleep(100000);
	}
	take(&s0, sv->s, c, flood ? &a : NULL);
	rc = flood_probe(c, (uint16_t)homa_local_port(sv->s), o->size, o->seconds, wait_ms(o), arm);
	take(&s1, sv->s, c, flood ? &a : NULL);
	if (flood)
		flood_attack_stop(&a);
	add(arm, &s0, &s1);
	return rc;
}

/** main() - Parse, run the rounds, report. */
int main(int argc, char **argv)
{
	struct flood_arm quiet = {0}, loud = {0}, warm = {0};
	struct flood_server sv;
	struct flood_opts o;
	homa_socket *c;
	int rc = parse(argc, argv, &o), i;

	if (rc) {
		usage(rc > 0 ? stdout : stderr);
		return rc > 0 ? 0 : 2;
	}
	rc = flood_server_start(&sv, &o);
	if (!rc && (rc = flood_open(&c, 0, &o)))
		flood_server_stop(&sv);
	if (rc) {
		fprintf(stderr, "homa-flood: cannot open a socket: %s\n", homa_strerror(rc));
		return 1;
	}
	flood_probe(c, (uint16_t)homa_local_port(sv.s), o.size, 0.2, wait_ms(&o), &warm); /* warm-up */
	free(warm.lat_us);
	for (i = 0; !rc && i < o.rounds; i++) {
		rc = run_arm(&o, c, &sv, i % 2, i % 2 ? &loud : &quiet);
		if (!rc)
			rc = run_arm(&o, c, &sv, !(i % 2), i % 2 ? &quiet : &loud);
	}
	homa_close(c);
	flood_server_stop(&sv);
	if (rc) {
		fprintf(stderr, "homa-flood: %s\n", homa_strerror(rc));
		return 1;
	}
	rc = flood_report(&o, &quiet, &loud);
	free(quiet.lat_us);
	free(loud.lat_us);
	return rc;
}
