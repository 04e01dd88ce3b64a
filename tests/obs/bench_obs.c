/* SPDX-License-Identifier: MIT */
/**
 * @file bench_obs.c
 * Cost of observability, measured side by side in one run (not a test):
 * homa_pcap_write() per 1400-byte DATA packet (whole packet, and cut to
 * 128 bytes, and 1-in-10 sampling) against copying the same bytes, and
 * homa_metrics_render() per endpoint. Prints CPU ns per operation and ratios.
 *   usage: bench_obs [packets]   (writes to $TMPDIR or /tmp)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "homa/obs.h"

/**
 * now_ns() - CPU time of this thread in ns (system calls included): less
 * sensitive than wall time to other work on a shared machine.
 */
static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/** pcap_cost() - ns per write of @n packets with @o. */
static double pcap_cost(const char *path, const struct homa_pcap_opts *o, int n,
			const uint8_t *pkt, size_t len)
{
	struct homa_pcap_pkt p = {.data = pkt, .len = len, .priority = 3,
				  .transport = HOMA_PCAP_UDP, .dir = HOMA_PCAP_TX};
	homa_pcap *pc;
	double t0;
	int i;

	p.src = homa_addr_ipv4(0x7f000001);
	p.dst = homa_addr_ipv4(0x7f000002);
	if (homa_pcap_open(path, o, &pc))
		return -1;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		p.ts_ns = 1700000000000000000ull + (uint64_t)i * 1000;
		homa_pcap_write(pc, &p);
	}
	homa_pcap_close(pc);
	return (now_ns() - t0) / n;
}

/** copy_cost() - ns per copy of @len bytes into a rolling 64 MiB buffer. */
static double copy_cost(int n, const uint8_t *pkt, size_t len)
{
	size_t cap = 64u << 20, off = 0;
	uint8_t *buf = malloc(cap);
	double t0;
	int i;

	memset(buf, 0, cap); /* fault the pages in before timing */
	t0 = now_ns();

	for (i = 0; i < n; i++) {
		if (off + len > cap)
			off = 0;
		memcpy(buf + off, pkt, len);
		off += len;
	}
	t0 = (now_ns() - t0) / n;
	printf("(copy checksum %d)\n", buf[len / 2]);
	free(buf);
	return t0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000, i;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct homa_pcap_opts full = {0}, cut = {.snaplen = 128}, sampled = {.sample_every = 10};
	struct homa_stats st;
	struct homa_metrics_source src = {"4000", &st};
	static uint8_t pkt[1456];
	static char text[1 << 16];
	char path[256];
	double c, f, s, m, t0;

	memset(pkt, 0x5a, sizeof(pkt));
	memset(&st, 0, sizeof(st));
	snprintf(path, sizeof(path), "%s/bench_obs.pcap", dir);
	c = copy_cost(n, pkt, sizeof(pkt));
	f = pcap_cost(path, &full, n, pkt, sizeof(pkt));
	s = pcap_cost(path, &cut, n, pkt, sizeof(pkt));
	m = pcap_cost(path, &sampled, n, pkt, sizeof(pkt));
	remove(path);
	t0 = now_ns();
	for (i = 0; i < 2000; i++)
		homa_metrics_render(&src, 1, NULL, 0, text, sizeof(text), NULL);
	t0 = (now_ns() - t0) / 2000;
	printf("packets %d of %zu bytes\n", n, sizeof(pkt));
	printf("memcpy            %8.1f ns/packet  1.00x\n", c);
	printf("pcap full packet  %8.1f ns/packet  %.2fx\n", f, f / c);
	printf("pcap snaplen 128  %8.1f ns/packet  %.2fx\n", s, s / c);
	printf("pcap 1 in 10      %8.1f ns/packet  %.2fx\n", m, m / c);
	printf("metrics render    %8.0f ns/endpoint (%zu bytes)\n", t0, strlen(text));
	return 0;
}
