/* SPDX-License-Identifier: MIT */
/**
 * @file opts.c
 * homa-sim command line: defaults (the SIGCOMM 2018 fabric), presets and
 * parsing with clear errors.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/** sim_usage() - Print the command-line summary to @f. */
void sim_usage(FILE *f)
{
	fprintf(f,
		"usage: homa-sim [options]\n"
		"  --workload W        w1..w5, a size, range:LO-HI or file:PATH (w4)\n"
		"  --load F            offered load, share of host link rate (0.8)\n"
		"  --pattern P         poisson | incast | alltoall | alltoall-step |\n"
		"                      ring-allreduce | lookup-batch (poisson); the last three\n"
		"                      alternate a compute phase with a collective step\n"
		"                      (docs/COLLECTIVE.md)\n"
		"  --steps N           step patterns: steps (10; --warmup is a share of them)\n"
		"  --compute-us U      step patterns: compute phase per step (100)\n"
		"  --lookups K         lookup-batch: answers per host and step (16)\n"
		"  --background F      step patterns: background bulk traffic, share of every\n"
		"                      host link, Poisson arrivals between random pairs (0)\n"
		"  --background-size N step patterns: background message size (1000000)\n"
		"  --messages N        messages to send (poisson: 20000)\n"
		"  --warmup F          share of first messages left out of statistics (0.1)\n"
		"  --seed S            random seed (1)\n"
		"  --mode M            classic | start_msg (classic)\n"
		"  --preset P          10 (10/40 Gbit/s), 25 (25/100), 100 (100/400)\n"
		"  --hosts N --racks N --spines N --host-gbps G --core-gbps G\n"
		"                      fabric (144 hosts, 9 racks, 4 spines, 10, 40)\n"
		"  --switch-delay-ns N (250)  --host-delay-ns N (1500)\n"
		"  --queue-bytes N     switch port buffer, 0 = unlimited (0)\n"
		"  --wire-overhead N   framing bytes per packet (66)\n"
		"  --size N            message size for incast/alltoall, all-to-all message and\n"
		"                      all-reduce chunk of the step patterns (100000)\n"
		"  --senders N         incast senders (hosts - 1)\n"
		"  --max-size N        cap sampled message sizes\n"
		"  --unsched-bytes N --max-incoming N --overcommit N (16) --unsched-prios N --tick-us N\n"
		"  --grant-step N --fifo-increment N --grant-silence-rtts N --no-grant-silence\n"
		"  --max-tx-buffered N\n"
		"                      engine overrides (unsched-prios: levels for unscheduled data;\n"
		"                      tick-us: timer tick, the unit of RESENDs and timeouts, 1000;\n"
		"                      grant-step: least bytes a GRANT adds, a third of unsched;\n"
		"                      fifo-increment: bytes per FIFO grant, unsched;\n"
		"                      grant-silence-rtts: RTTs without DATA before granted bytes\n"
		"                      stop holding the budget, 4; no-grant-silence: never;\n"
		"                      max-tx-buffered: bytes a sender queues before it refuses\n"
		"                      messages, 256 MiB; refused ones count as send_errors)\n"
		"  --oneway abort|reply  end of a one-way message (abort)\n"
		"  --no-ideal          skip the SRPT reference\n"
		"  --max-time-ms T     stop the simulation at T ms of simulated time\n"
		"  --pcap FILE         write the first packets (IPv4, protocol 146)\n"
		"  --pcap-count N      packets to write (1000)\n"
		"  --samples FILE      per-message lines: size slowdown ideal_slowdown\n"
		"  --json              JSON report instead of text\n"
		"  --no-timing         leave out wall-clock fields (same seed, same bytes)\n"
		"  -h, --help          this text\n"
		"Values go as --name value or --name=value; a long name may be shortened\n"
		"to any unambiguous prefix.\n");
}

/** defaults() - Fill @o with the SIGCOMM 2018 setup. */
static void defaults(struct sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	strcpy(o->workload, "w4");
	o->load = 0.8;
	o->hosts = 144;
	o->racks = 9;
	o->spines = 4;
	o->host_gbps = 10;
	o->core_gbps = 40;
	o->switch_delay_ns = 250;
	o->host_delay_ns = 1500;
	o->wire_overhead = 66;
	o->messages = 20000;
	o->warmup = 0.1;
	o->seed = 1;
	o->ideal = true;
	o->size = 100000;
	o->pcap_count = 1000;
	o->overcommit = SIM_OVERCOMMIT;
	o->steps = 10;
	o->compute_us = 100;
	o->lookups = 16;
	o->bg_size = 1000000;
}

/** num() - Parse a finite number in [@lo, @hi]. Return: 0 or -1. */
static int num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/** unum() - Parse an unsigned integer in [@lo, @hi]. Return: 0 or -1. */
static int unum(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/** preset() - Apply fabric preset @p (10, 25 or 100). Return: 0 or -1. */
static int preset(struct sim_opts *o, const char *p)
{
	if (!strcmp(p, "10")) {
		o->host_gbps = 10;
		o->core_gbps = 40;
	} else if (!strcmp(p, "25")) {
		o->host_gbps = 25;
		o->core_gbps = 100;
	} else if (!strcmp(p, "100")) {
		o->host_gbps = 100;
		o->core_gbps = 400;
	} else {
		return -1;
	}
	return 0;
}

/** word_opt() - Options whose value is a word. Return: 1 handled, 0 not mine, -1 bad. */
static int word_opt(struct sim_opts *o, const char *k, const char *v)
{
	if (!strcmp(k, "--workload")) {
		if (strlen(v) >= sizeof(o->workload))
			return -1;
		strcpy(o->workload, v);
	} else if (!strcmp(k, "--mode")) {
		if (strcmp(v, "classic") && strcmp(v, "start_msg"))
			return -1;
		o->start_msg = !strcmp(v, "start_msg");
	} else if (!strcmp(k, "--pattern")) {
		if (!strcmp(v, "poisson"))
			o->pattern = SIM_POISSON;
		else if (!strcmp(v, "incast"))
			o->pattern = SIM_INCAST;
		else if (!strcmp(v, "alltoall"))
			o->pattern = SIM_ALLTOALL;
		else if (!strcmp(v, "alltoall-step"))
			o->pattern = SIM_ALLTOALL_STEP;
		else if (!strcmp(v, "ring-allreduce"))
			o->pattern = SIM_RING_ALLREDUCE;
		else if (!strcmp(v, "lookup-batch"))
			o->pattern = SIM_LOOKUP_BATCH;
		else
			return -1;
	} else if (!strcmp(k, "--oneway")) {
		if (strcmp(v, "abort") && strcmp(v, "reply"))
			return -1;
		o->oneway = !strcmp(v, "reply") ? SIM_ONEWAY_REPLY : SIM_ONEWAY_ABORT;
	} else if (!strcmp(k, "--preset")) {
		return preset(o, v) ? -1 : 1;
	} else if (!strcmp(k, "--pcap")) {
		o->pcap = v;
	} else if (!strcmp(k, "--samples")) {
		o->samples = v;
	} else {
		return 0;
	}
	return 1;
}

/** real_opt() - Options whose value is a real number. Return: 1, 0 or -1. */
static int real_opt(struct sim_opts *o, const char *k, const char *v)
{
	double *dst, lo = 0, hi = 1e9;

	if (!strcmp(k, "--load")) {
		dst = &o->load;
		lo = 1e-6;
		hi = 2.0;
	} else if (!strcmp(k, "--host-gbps")) {
		dst = &o->host_gbps;
		lo = 0.001;
		hi = 10000;
	} else if (!strcmp(k, "--core-gbps")) {
		dst = &o->core_gbps;
		lo = 0.001;
		hi = 100000;
	} else if (!strcmp(k, "--warmup")) {
		dst = &o->warmup;
		hi = 0.9;
	} else if (!strcmp(k, "--max-time-ms")) {
		dst = &o->max_time_ms;
	} else if (!strcmp(k, "--compute-us")) {
		dst = &o->compute_us;
		hi = 1e7;
	} else if (!strcmp(k, "--background")) {
		dst = &o->bg_load;
		hi = 0.95;
	} else {
		return 0;
	}
	return num(v, lo, hi, dst) ? -1 : 1;
}

/** int_opt() - Options whose value is an integer. Return: 1, 0 or -1. */
static int int_opt(struct sim_opts *o, const char *k, const char *v)
{
	static const struct {
		const char *name;
		size_t off, size;
		uint64_t lo, hi;
	} t[] = {
#define F(n, f, lo, hi) {n, offsetof(struct sim_opts, f), sizeof(((struct sim_opts *)0)->f), lo, hi}
		F("--hosts", hosts, 2, 100000), F("--racks", racks, 1, 10000),
		F("--spines", spines, 1, 1000), F("--messages", messages, 1, 1000000000),
		F("--seed", seed, 0, UINT64_MAX), F("--switch-delay-ns", switch_delay_ns, 0, 1000000000),
		F("--host-delay-ns", host_delay_ns, 0, 1000000000),
		F("--queue-bytes", queue_bytes, 0, UINT64_MAX),
		F("--wire-overhead", wire_overhead, 0, 1000), F("--size", size, 8, 1u << 31),
		F("--senders", senders, 1, 100000), F("--max-size", max_size, 8, 1u << 31),
		F("--unsched-bytes", unsched_bytes, 1, 1u << 30),
		F("--max-incoming", max_incoming, 1, 1u << 31),
		F("--overcommit", overcommit, 1, 64),
		F("--max-tx-buffered", max_tx_buffered, 65536, UINT64_MAX),
		F("--unsched-prios", unsched_prios, 1, 7), F("--pcap-count", pcap_count, 1, UINT64_MAX),
		F("--tick-us", tick_us, 1, 10000000), F("--grant-step", grant_step, 1, 1u << 30),
		F("--fifo-increment", fifo_increment, 1, 1u << 30),
		F("--grant-silence-rtts", grant_silence_rtts, 1, 1000000),
		F("--steps", steps, 1, 100000), F("--lookups", lookups, 1, 10000),
		F("--background-size", bg_size, 8, 1u << 30),
#undef F
	};
	uint64_t v64;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(k, t[i].name))
			continue;
		if (unum(v, t[i].lo, t[i].hi, &v64))
			return -1;
		if (t[i].size == 8)
			*(uint64_t *)((char *)o + t[i].off) = v64;
		else
			*(uint32_t *)((char *)o + t[i].off) = (uint32_t)v64;
		return 1;
	}
	return 0;
}

/** flag_opt() - Options without a value. Return: 1 handled, 0 not mine. */
static int flag_opt(struct sim_opts *o, const char *k)
{
	if (!strcmp(k, "--json"))
		o->json = true;
	else if (!strcmp(k, "--no-ideal"))
		o->ideal = false;
	else if (!strcmp(k, "--no-timing"))
		o->no_timing = true;
	else if (!strcmp(k, "--no-grant-silence"))
		o->no_grant_silence = true;
	else
		return 0;
	return 1;
}

/** check() - Cross-option checks. Return: NULL or a message. */
static const char *check(struct sim_opts *o)
{
	if (o->racks > o->hosts)
		return "--racks must not exceed --hosts";
	if (o->pattern == SIM_INCAST && !o->senders)
		o->senders = o->hosts - 1;
	if (o->pattern == SIM_INCAST && o->senders > o->hosts - 1)
		return "--senders must be below --hosts";
	if (o->bg_load > 0 && !sim_is_step_pattern(o->pattern))
		return "--background goes with the step patterns (--load sets poisson's)";
	if (o->pattern == SIM_INCAST)
		o->messages = (uint64_t)o->senders;
	else if (o->pattern == SIM_ALLTOALL)
		o->messages = (uint64_t)o->hosts * (uint64_t)(o->hosts - 1);
	else if (sim_is_step_pattern(o->pattern)) {
		if (sim_step_messages(o) > 400000000u)
			return "too many messages: fewer --steps, --hosts or --lookups";
		o->messages = sim_step_messages(o);
	}
	return NULL;
}

/**
 * Every long option; the handlers above take it as "--NAME". Each has its
 * own val (its line), so that getopt_long() refuses an ambiguous prefix
 * instead of picking the first of several options alike.
 */
#define OPT(n, a) {n, a, NULL, 256 + __LINE__}
static const struct option long_opts[] = {
	{"help", no_argument, NULL, 'h'},
	OPT("json", no_argument),
	OPT("no-ideal", no_argument),
	OPT("no-timing", no_argument),
	OPT("no-grant-silence", no_argument),
	OPT("workload", required_argument),
	OPT("mode", required_argument),
	OPT("pattern", required_argument),
	OPT("oneway", required_argument),
	OPT("preset", required_argument),
	OPT("pcap", required_argument),
	OPT("samples", required_argument),
	OPT("load", required_argument),
	OPT("host-gbps", required_argument),
	OPT("core-gbps", required_argument),
	OPT("warmup", required_argument),
	OPT("max-time-ms", required_argument),
	OPT("compute-us", required_argument),
	OPT("hosts", required_argument),
	OPT("racks", required_argument),
	OPT("spines", required_argument),
	OPT("messages", required_argument),
	OPT("seed", required_argument),
	OPT("switch-delay-ns", required_argument),
	OPT("host-delay-ns", required_argument),
	OPT("queue-bytes", required_argument),
	OPT("wire-overhead", required_argument),
	OPT("size", required_argument),
	OPT("senders", required_argument),
	OPT("max-size", required_argument),
	OPT("unsched-bytes", required_argument),
	OPT("max-incoming", required_argument),
	OPT("overcommit", required_argument),
	OPT("max-tx-buffered", required_argument),
	OPT("unsched-prios", required_argument),
	OPT("pcap-count", required_argument),
	OPT("tick-us", required_argument),
	OPT("grant-step", required_argument),
	OPT("fifo-increment", required_argument),
	OPT("grant-silence-rtts", required_argument),
	OPT("steps", required_argument),
	OPT("lookups", required_argument),
	OPT("background", required_argument),
	OPT("background-size", required_argument),
	{NULL, 0, NULL, 0},
};
#undef OPT

/**
 * apply() - Give option @name (without "--") and its value @v (NULL for a
 * flag) to the handler that owns it.
 * Return: 1 handled, -1 bad value (message on @err).
 */
static int apply(struct sim_opts *o, const char *name, const char *v, FILE *err)
{
	char k[40];
	int rc;

	snprintf(k, sizeof(k), "--%s", name);
	if (!v)
		return flag_opt(o, k) ? 1 : -1;
	rc = word_opt(o, k, v);
	if (!rc)
		rc = real_opt(o, k, v);
	if (!rc)
		rc = int_opt(o, k, v);
	if (rc <= 0)
		fprintf(err, "homa-sim: %s %s: bad value\n", k, v);
	return rc > 0 ? 1 : -1;
}

/**
 * sim_opts_parse() - Parse @argv into @o (defaults first) with
 * getopt_long(): "--name value", "--name=value" and unambiguous prefixes.
 * Errors are written to @err. Return: 0, 1 for --help/-h, or -1 on an
 * unknown option, a missing or bad value, or a stray argument.
 */
int sim_opts_parse(struct sim_opts *o, int argc, char **argv, FILE *err)
{
	const char *why;
	int c, idx;

	_Static_assert(sizeof(int) == 4, "int options are 32-bit");
	defaults(o);
	optind = 0; /* a fresh scan on every call (GNU getopt) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", long_opts, &idx)) != -1) {
		if (c == 'h')
			return 1;
		if (c < 256) { /* '?': unknown, ambiguous or missing value */
			fprintf(err, "homa-sim: unknown option or missing value: %s\n",
				argv[optind - 1]);
			return -1;
		}
		if (apply(o, long_opts[idx].name, optarg, err) < 0)
			return -1;
	}
	if (optind < argc) {
		fprintf(err, "homa-sim: unexpected argument: %s\n", argv[optind]);
		return -1;
	}
	why = check(o);
	if (why) {
		fprintf(err, "homa-sim: %s\n", why);
		return -1;
	}
	return 0;
}
