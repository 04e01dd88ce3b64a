/* SPDX-License-Identifier: MIT */
/**
 * @file bench_rt_obs.c
 * What capture and metrics cost a real socket pair (a benchmark, not a
 * test): RPC rate over loopback with capture off, capture of every packet,
 * capture cut to 128 bytes, and metrics scraped 100 times a second, arms
 * interleaved in rounds within one run; prints rates and CPU time per RPC
 * (all threads, getrusage) and their ratios to "off".
 *   usage: bench_rt_obs [rounds] [rpcs per arm per round] [request bytes]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "homa/homa.h"
#include "http_get.h"
#include "rt_util.h"

enum { ARM_OFF, ARM_PCAP, ARM_SNAP, ARM_SCRAPE, NARMS };
static const char *const arm_names[NARMS] = {"off", "pcap all", "pcap snaplen 128",
					     "metrics scraped 100/s"};

static atomic_int scraping;

/** now_s() - CLOCK_MONOTONIC in seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/** scraper() - GET /metrics every 10 ms while scraping is set. */
static void *scraper(void *arg)
{
	uint16_t port = (uint16_t)(uintptr_t)arg;

	while (atomic_load(&scraping)) {
		free(http_exchange(port, "GET /metrics HTTP/1.1\r\n\r\n", 26));
		usleep(10000);
	}
	return NULL;
}

/** cpu_s() - CPU time of the whole process (all threads), seconds. */
static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/**
 * run_arm() - Open a pair configured for @arm, run @n RPCs.
 * @cpu_us: receives CPU microseconds per RPC (client, server and helper threads).
 * Return: RPCs per second.
 */
static double run_arm(int arm, int n, size_t req, double *cpu_us)
{
	char spath[64], cpath[64];
	struct homa_open_opts so, co;
	struct homa_settings st;
	struct rt_server srv;
	pthread_t th;
	int err;
	homa_socket *c;
	double t0, t, c0;
	int i;

	homa_settings_default(&st);
	st.timeout_ticks = 5000; /* a loaded machine must not abort RPCs mid-run */
	homa_open_opts_default(&so);
	homa_open_opts_default(&co);
	so.settings = co.settings = &st;
	snprintf(spath, sizeof(spath), "/tmp/bench_rt_obs_s.pcap");
	snprintf(cpath, sizeof(cpath), "/tmp/bench_rt_obs_c.pcap");
	if (arm == ARM_PCAP || arm == ARM_SNAP) {
		so.pcap_path = spath;
		co.pcap_path = cpath;
		so.pcap.snaplen = co.pcap.snaplen = arm == ARM_SNAP ? 128 : 0;
		so.pcap.max_bytes = co.pcap.max_bytes = 256u << 20;
		so.pcap.keep_files = co.pcap.keep_files = 1;
	}
	if (arm == ARM_SCRAPE)
		so.metrics_port = co.metrics_port = 19464;
	err = rt_server_start(&srv, &so);
	if (err) {
		fprintf(stderr, "server: %s\n", homa_strerror(err));
		return -1;
	}
	co.bind_addr = "127.0.0.1";
	err = homa_open(&c, &co);
	if (err) {
		fprintf(stderr, "client: %s\n", homa_strerror(err));
		rt_server_stop(&srv);
		return -1;
	}
	if (arm == ARM_SCRAPE) {
		atomic_store(&scraping, 1);
		pthread_create(&th, NULL, scraper, (void *)(uintptr_t)19464);
	}
	t0 = now_s();
	c0 = cpu_s();
	for (i = 0; i < n; i++) {
		err = rt_rpc(c, srv.port, req, 100);
		if (err) {
			fprintf(stderr, "rpc %d: %s\n", i, homa_strerror(err));
			break;
		}
	}
	t = now_s() - t0;
	*cpu_us = (cpu_s() - c0) * 1e6 / n;
	if (arm == ARM_SCRAPE) {
		atomic_store(&scraping, 0);
		pthread_join(th, NULL);
	}
	homa_close(c);
	rt_server_stop(&srv);
	remove(spath);
	remove(cpath);
	return i == n ? n / t : -1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, n = argc > 2 ? atoi(argv[2]) : 2000;
	size_t req = argc > 3 ? (size_t)atol(argv[3]) : 1000;
	double sum[NARMS] = {0}, cpu[NARMS] = {0};
	int r, a;

	for (r = 0; r < rounds; r++)
		for (a = 0; a < NARMS; a++) {
			double c, rate = run_arm(a, n, req, &c);

			if (rate < 0) {
				fprintf(stderr, "arm %s failed\n", arm_names[a]);
				return 1;
			}
			sum[a] += rate;
			cpu[a] += c;
		}
	printf("%d rounds x %d RPCs per arm, request %zu bytes, response 100 bytes\n",
	       rounds, n, req);
	for (a = 0; a < NARMS; a++)
		printf("%-24s %10.0f RPC/s  %.3fx of off   %7.1f CPU us/RPC  %.3fx of off\n",
		       arm_names[a], sum[a] / rounds, sum[a] / sum[ARM_OFF], cpu[a] / rounds,
		       cpu[a] / cpu[ARM_OFF]);
	return 0;
}
