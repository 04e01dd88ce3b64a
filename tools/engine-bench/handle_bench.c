/* SPDX-License-Identifier: MIT */
/**
 * @file handle_bench.c
 * homa-handle-bench: many threads calling into many sockets at once, to
 * measure what a call costs in handle lookup and reference counting.
 * Each thread cycles over the sockets calling homa_recv() with a zero
 * timeout (it finds nothing: HOMA_EAGAIN) or homa_local_port(); the
 * figure is calls per second over all threads, with the process's CPU
 * (getrusage) and the host's busy CPU (/proc/stat) over the same window.
 *
 * Usage: homa-handle-bench [--threads N] [--sockets N] [--seconds S]
 * [--call recv|port] (getopt_long, -h/--help; exit status 2 on a bad
 * option or value). Prints one line: "calls_per_s=... cpu_s=... busy_s=... wall_s=...".
 * scripts/handle-bench.sh runs it against two builds of the library.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "homa/homa.h"

static homa_socket **socks;
static int nsocks;
static atomic_bool stop;
static bool use_port;

/** now_s() - CLOCK_MONOTONIC in seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/** busy_s() - Busy CPU seconds of the host so far (all CPUs, /proc/stat). */
static double busy_s(void)
{
	unsigned long long v[10] = {0}, busy = 0;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		v[0] = 0;
	fclose(f);
	for (int i = 0; i < 8; i++)
		if (i != 3 && i != 4) /* idle, iowait */
			busy += v[i];
	return (double)busy / 100.0; /* USER_HZ */
}

/** cpu_s() - This process's user + system CPU seconds. */
static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/** worker() - Call into the sockets round robin until told to stop. */
static void *worker(void *arg)
{
	unsigned long long *calls = arg;
	int i = (int)(*calls % (unsigned long long)nsocks);
	struct homa_message m;
	unsigned long long n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int k = 0; k < 64; k++) {
			int r = use_port ? homa_local_port(socks[i])
				: homa_recv(socks[i], HOMA_RECV_RESPONSE, 0, 0, &m);

			if (use_port ? r <= 0 : r != HOMA_EAGAIN) {
				fprintf(stderr, "unexpected result %d\n", r);
				exit(1);
			}
			if (++i == nsocks)
				i = 0;
		}
		n += 64;
	}
	*calls = n;
	return NULL;
}

static const char usage[] =
	"usage: homa-handle-bench [--threads N] [--sockets N] [--seconds S] [--call recv|port]\n"
	"  --threads N     calling threads (default 8; 1..1024)\n"
	"  --sockets N     sockets they cycle over (default 8; 1..4096)\n"
	"  --seconds S     measured time (default 2; 0.01..3600)\n"
	"  --call C        recv: homa_recv() with timeout 0 (default); port: homa_local_port()\n"
	"  -h, --help      this text\n";

/** The command line of one run. */
struct args {
	long threads, sockets;
	double secs;
};

/**
 * number() - Parse @v as a number in [@lo, @hi] for option --@name.
 * Return: 0, or -1 after saying why on stderr.
 */
static int number(const char *name, const char *v, double lo, double hi, double *out)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !(d >= lo && d <= hi)) {
		fprintf(stderr, "homa-handle-bench: --%s wants a number in [%g, %g], got '%s'\n",
			name, lo, hi, v);
		return -1;
	}
	*out = d;
	return 0;
}

/**
 * parse_args() - getopt_long over the command line into @a (and the
 * global use_port). Return: 0, 1 (help printed), or 2 (bad option or
 * value, said on stderr): the exit status.
 */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{"threads", required_argument, NULL, 't'}, {"sockets", required_argument, NULL, 's'},
		{"seconds", required_argument, NULL, 'S'}, {"call", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	double d = 0;
	int c, bad = 0;

	*a = (struct args){8, 8, 2};
	while (!bad && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 1;
		} else if (c == 't') {
			bad = number("threads", optarg, 1, 1024, &d);
			a->threads = (long)d;
		} else if (c == 's') {
			bad = number("sockets", optarg, 1, 4096, &d);
			a->sockets = (long)d;
		} else if (c == 'S') {
			bad = number("seconds", optarg, 0.01, 3600, &a->secs);
		} else if (c == 'c' && (!strcmp(optarg, "recv") || !strcmp(optarg, "port"))) {
			use_port = !strcmp(optarg, "port");
		} else {
			if (c == 'c')
				fprintf(stderr, "homa-handle-bench: --call is recv or port, not '%s'\n",
					optarg);
			bad = -1;
		}
	}
	if (!bad && optind < argc) {
		fprintf(stderr, "homa-handle-bench: unexpected argument '%s'\n", argv[optind]);
		bad = -1;
	}
	if (bad) {
		fputs(usage, stderr);
		return 2;
	}
	return 0;
}

/** main() - Parse the options, open the sockets, run the threads, print the line. */
int main(int argc, char **argv)
{
	struct homa_open_opts o;
	struct args a;
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc == 1 ? 0 : rc;
	int nthreads = (int)a.threads;
	double secs = a.secs;

	nsocks = (int)a.sockets;
	socks = calloc((size_t)nsocks, sizeof(*socks));
	pthread_t *th = calloc((size_t)nthreads, sizeof(*th));
	unsigned long long *calls = calloc((size_t)nthreads, sizeof(*calls));

	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	for (int i = 0; i < nsocks; i++) {
		int err = homa_open(&socks[i], &o);

		if (err) {
			fprintf(stderr, "homa_open: %s\n", homa_strerror(err));
			return 1;
		}
	}
	double t0 = now_s(), c0 = cpu_s(), b0 = busy_s();

	for (int t = 0; t < nthreads; t++) {
		calls[t] = (unsigned long long)t;
		pthread_create(&th[t], NULL, worker, &calls[t]);
	}
	struct timespec nap = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};

	nanosleep(&nap, NULL);
	atomic_store(&stop, true);
	unsigned long long total = 0;

	for (int t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		total += calls[t];
	}
	double wall = now_s() - t0;

	printf("calls_per_s=%.0f cpu_s=%.3f busy_s=%.3f wall_s=%.3f\n", (double)total / wall,
	       cpu_s() - c0, busy_s() - b0, wall);
	for (int i = 0; i < nsocks; i++)
		homa_close(socks[i]);
	free(socks);
	free(th);
	free(calls);
	return 0;
}
