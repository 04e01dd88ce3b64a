/* SPDX-License-Identifier: MIT */
/**
 * @file homa_stat.c
 * homa-stat: show what a running homa process is doing, from its
 * /metrics endpoint (the runtime's metrics port).
 *
 *   homa-stat [options] [http://]HOST:PORT[/PATH]   (or -p PORT for 127.0.0.1)
 *
 * Without --interval: prints the series that changed since the previous
 * call (kept in a state file, like the Linux module's metrics script),
 * with the change and the rate per second; the first call prints every
 * non-zero series. With --interval N: scrapes every N seconds and prints
 * rates per second of what changed, --count times (default: until killed).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stat.h"

/** Command-line options. */
struct opts {
	char host[256];
	char port[16];
	char path[256];
	char state[1024];
	double interval;
	long count;
	int timeout_ms;
	struct stat_report_opts rep;
};

/** usage() - Print help to @f. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: homa-stat [options] [http://]HOST:PORT[/PATH]\n"
		"       homa-stat [options] -p PORT       (host 127.0.0.1)\n"
		"Shows the homa counters that changed since the last call.\n"
		"  -p, --port PORT       metrics port on 127.0.0.1\n"
		"  -i, --interval SECS   print rates every SECS seconds instead\n"
		"  -c, --count N         with --interval: stop after N reports\n"
		"  -s, --state FILE      state file (default ~/.homa-stat-HOST-PORT)\n"
		"  -a, --all             print every series, changed or not\n"
		"  -b, --buckets         include histogram buckets\n"
		"  -f, --filter TEXT     only series whose name or labels contain TEXT\n"
		"  -t, --timeout MS      connect/read timeout (default 5000)\n"
		"  -h, --help\n");
}

/** parse_target() - Split [http://]HOST:PORT[/PATH] (HOST may be [v6]). Return: 0 or -1. */
static int parse_target(const char *t, struct opts *o)
{
	const char *p = strncmp(t, "http://", 7) ? t : t + 7;
	const char *slash, *colon, *hend;

	if (*p == '[') {
		hend = strchr(p, ']');
		if (!hend || hend[1] != ':')
			return -1;
		snprintf(o->host, sizeof(o->host), "%.*s", (int)(hend - p - 1), p + 1);
		colon = hend + 1;
	} else {
		colon = strchr(p, ':');
		if (!colon)
			return -1;
		snprintf(o->host, sizeof(o->host), "%.*s", (int)(colon - p), p);
	}
	slash = strchr(colon, '/');
	snprintf(o->port, sizeof(o->port), "%.*s",
		 (int)(slash ? slash - colon - 1 : (long)strlen(colon + 1)), colon + 1);
	if (slash)
		snprintf(o->path, sizeof(o->path), "%s", slash);
	return o->host[0] && o->port[0] ? 0 : -1;
}

/** parse_args() - Fill @o from argv. Return: 0, 1 (help printed) or -1 (error printed). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{"port", 1, NULL, 'p'}, {"interval", 1, NULL, 'i'}, {"count", 1, NULL, 'c'},
		{"state", 1, NULL, 's'}, {"all", 0, NULL, 'a'}, {"buckets", 0, NULL, 'b'},
		{"filter", 1, NULL, 'f'}, {"timeout", 1, NULL, 't'}, {"help", 0, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	snprintf(o->path, sizeof(o->path), "/metrics");
	o->timeout_ms = 5000;
	while ((c = getopt_long(argc, argv, "p:i:c:s:abf:t:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			snprintf(o->host, sizeof(o->host), "127.0.0.1");
			snprintf(o->port, sizeof(o->port), "%s", optarg);
			break;
		case 'i': o->interval = atof(optarg); break;
		case 'c': o->count = atol(optarg); break;
		case 's': snprintf(o->state, sizeof(o->state), "%s", optarg); break;
		case 'a': o->rep.all = true; break;
		case 'b': o->rep.buckets = true; break;
		case 'f': o->rep.filter = optarg; break;
		case 't': o->timeout_ms = atoi(optarg); break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc && parse_target(argv[optind], o)) {
		fprintf(stderr, "homa-stat: bad target '%s'\n", argv[optind]);
		return -1;
	}
	if (!o->port[0] || o->interval < 0 || o->timeout_ms <= 0) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/** now_ns() - Wall clock in ns. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** scrape() - Fetch and parse into @set. Return: 0 or -1 (message printed). */
static int scrape(const struct opts *o, struct stat_set *set)
{
	char err[256];
	char *text = stat_fetch(o->host, o->port, o->path, o->timeout_ms, err, sizeof(err));

	memset(set, 0, sizeof(*set));
	if (!text) {
		fprintf(stderr, "homa-stat: %s\n", err);
		return -1;
	}
	set->time_ns = now_ns();
	stat_parse(text, set);
	free(text);
	return 0;
}

/** run_once() - Compare with the state file, print, save. Return: exit code. */
static int run_once(struct opts *o)
{
	struct stat_set old, cur;
	int have_old;

	if (!o->state[0]) {
		const char *home = getenv("HOME");

		snprintf(o->state, sizeof(o->state), "%s/.homa-stat-%s-%s",
			 home && *home ? home : "/tmp", o->host, o->port);
	}
	if (scrape(o, &cur))
		return 1;
	have_old = stat_load(o->state, &old) == 0;
	if (!have_old)
		printf("# first call: totals (state kept in %s)\n", o->state);
	else
		printf("# changes over the last %.3f s\n",
		       (double)(cur.time_ns - old.time_ns) / 1e9);
	if (!stat_report(stdout, have_old ? &old : NULL, &cur,
			 have_old ? (double)(cur.time_ns - old.time_ns) / 1e9 : 0, &o->rep))
		printf("# no changes\n");
	if (stat_save(o->state, &cur))
		fprintf(stderr, "homa-stat: cannot write %s\n", o->state);
	stat_free(&cur);
	if (have_old)
		stat_free(&old);
	return 0;
}

/** run_interval() - Rates every o->interval seconds. Return: exit code. */
static int run_interval(const struct opts *o)
{
	struct stat_set prev, cur;
	long n;

	if (scrape(o, &prev))
		return 1;
	for (n = 0; !o->count || n < o->count; n++) {
		usleep((useconds_t)(o->interval * 1e6));
		if (scrape(o, &cur)) {
			stat_free(&prev);
			return 1;
		}
		printf("# rates over %.3f s\n", (double)(cur.time_ns - prev.time_ns) / 1e9);
		stat_report(stdout, &prev, &cur, (double)(cur.time_ns - prev.time_ns) / 1e9, &o->rep);
		fflush(stdout);
		stat_free(&prev);
		prev = cur;
	}
	stat_free(&prev);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int r = parse_args(argc, argv, &o);

	if (r)
		return r > 0 ? 0 : 2;
	return o.interval > 0 ? run_interval(&o) : run_once(&o);
}
