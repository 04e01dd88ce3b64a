/* SPDX-License-Identifier: MIT */
/**
 * @file rtt_compare.c
 * Example and measurement: the round-trip time of a small request and
 * response (default 100 bytes each way) on loopback, over homa (UDP and
 * raw drivers, threaded and polled modes), kernel TCP (TCP_NODELAY) and
 * plain UDP ping-pong, all in one run; prints P50/P99 and ratios to UDP.
 * The last two arms are homa over UDP with every packet encrypted (PSP,
 * AES-GCM-128; keys installed through include/homa/encrypt.h), followed
 * by their ratios to the same arms in clear text.
 *
 *   rtt_compare [--count N] [--size BYTES] [--no-raw] [--pcap FILE] [--metrics-port N]
 *
 * Each arm runs its server in a thread of this process and its client in
 * the main thread, one RPC at a time. --pcap FILE captures the client
 * socket of each Homa arm (it sees every packet of the exchange) in
 * FILE.<driver>-<mode> (FILE.udp-<mode>-psp for the PSP arms); --metrics-port serves both Homa sockets of the arm
 * running (see obs_args.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "homa/encrypt.h"
#include "homa/homa.h"
#include "obs_args.h"

/** Arms: udp, tcp, homa udp x2, homa raw x2, homa udp encrypted x2. */
#define NARMS 8

static int count = 20000;
static size_t size = 100;
static struct homa_open_opts obs; /* --pcap (file name stem) and --metrics-port */

static const char usage[] =
	"usage: rtt_compare [--count N] [--size BYTES] [--no-raw] " EXAMPLE_OBS_USAGE "\n"
	EXAMPLE_OBS_HELP "                     (--pcap FILE: FILE.<driver>-<mode>, one per Homa arm)\n";

/** now_ns() - CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/** cmp_u64() - qsort order. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/** One arm's result. */
struct result {
	const char *name;
	double p50, p99;  /* microseconds */
	double cpu_us;    /* CPU time of the whole process per round trip */
	int fails;        /* homa RPCs that returned an error */
	int ok;
};

/** cpu_now() - User + system CPU time of this process, in microseconds. */
static double cpu_now(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
	       (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/** summarize() - Sort @t (count samples) into P50/P99, skipping warm-up. */
static void summarize(struct result *r, uint64_t *t)
{
	int warm = count / 10, n = count - warm;

	qsort(t + warm, (size_t)n, sizeof(*t), cmp_u64);
	r->p50 = t[warm + n / 2] / 1e3;
	r->p99 = t[warm + n * 99 / 100] / 1e3;
	r->ok = 1;
}

/** full_io() - read or write exactly @len bytes on a stream socket. */
static int full_io(int fd, void *buf, size_t len, int wr)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = wr ? write(fd, (char *)buf + done, len - done)
			       : read(fd, (char *)buf + done, len - done);

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/** tcp_server() - Echo one connection's fixed-size messages. */
static void *tcp_server(void *arg)
{
	int lfd = *(int *)arg, one = 1;
	int fd = accept(lfd, NULL, NULL);
	char *buf = malloc(size);

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (full_io(fd, buf, size, 0) == 0 && full_io(fd, buf, size, 1) == 0)
		;
	close(fd);
	free(buf);
	return NULL;
}

/** run_tcp() - Kernel TCP ping-pong arm. */
static void run_tcp(struct result *r, uint64_t *t)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd, one = 1;
	char *buf = calloc(1, size);
	pthread_t th;

	bind(lfd, (struct sockaddr *)&a, sizeof(a));
	listen(lfd, 1);
	getsockname(lfd, (struct sockaddr *)&a, &al);
	pthread_create(&th, NULL, tcp_server, &lfd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		for (int i = 0; i < count; i++) {
			uint64_t t0 = now_ns();

			if (full_io(fd, buf, size, 1) || full_io(fd, buf, size, 0))
				break;
			t[i] = now_ns() - t0;
			if (i == count - 1)
				summarize(r, t);
		}
	}
	close(fd);
	pthread_join(th, NULL);
	close(lfd);
	free(buf);
}

/** udp_server() - Echo datagrams until a 1-byte one arrives. */
static void *udp_server(void *arg)
{
	int fd = *(int *)arg;
	char buf[65536];
	struct sockaddr_storage peer;

	for (;;) {
		socklen_t pl = sizeof(peer);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &pl);

		if (n <= 1)
			break;
		sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&peer, pl);
	}
	return NULL;
}

/** run_udp() - Plain UDP ping-pong arm (the floor for a UDP-carried stack). */
static void run_udp(struct result *r, uint64_t *t)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int sfd = socket(AF_INET, SOCK_DGRAM, 0), fd = socket(AF_INET, SOCK_DGRAM, 0);
	char *buf = calloc(1, size > 1 ? size : 2);
	struct timeval tv = {1, 0};
	pthread_t th;

	bind(sfd, (struct sockaddr *)&a, sizeof(a));
	getsockname(sfd, (struct sockaddr *)&a, &al);
	pthread_create(&th, NULL, udp_server, &sfd);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < count; i++) {
		uint64_t t0 = now_ns();

		sendto(fd, buf, size, 0, (struct sockaddr *)&a, al);
		if (recv(fd, buf, size, 0) <= 0)
			break;
		t[i] = now_ns() - t0;
		if (i == count - 1)
			summarize(r, t);
	}
	sendto(fd, buf, 1, 0, (struct sockaddr *)&a, al);
	pthread_join(th, NULL);
	close(fd);
	close(sfd);
	free(buf);
}

/** homa_server() - Echo requests until the socket closes. */
static void *homa_server(void *arg)
{
	homa_socket *s = arg;
	struct homa_message m;
	char *buf = malloc(size);

	while (homa_recv(s, HOMA_RECV_REQUEST, 0, -1, &m) == 0) {
		homa_message_copy(&m, 0, buf, size);
		homa_message_release(&m);
		homa_reply_buf(s, m.id, buf, size);
	}
	free(buf);
	return NULL;
}

/**
 * associate() - @from learns @to's SPI and key (the API an application
 * with its own key distribution uses). Return: 0 or a homa error.
 */
static int associate(homa_socket *from, homa_socket *to)
{
	struct sockaddr_storage sa;
	socklen_t len;
	uint8_t key[32];
	uint32_t spi;
	int err = homa_encrypt_rx_issue(to, &spi, key);

	homa_sockaddr_parse("127.0.0.1", (uint16_t)homa_local_port(to), &sa, &len);
	return err ? err : homa_encrypt_tx_add(from, (struct sockaddr *)&sa, spi, key, 0);
}

/** run_homa() - Homa arm with @driver and @mode for both ends (@encrypt: PSP). */
static void run_homa(struct result *r, uint64_t *t, int driver, int mode, bool encrypt)
{
	struct homa_encrypt_opts eo;
	struct homa_open_opts o;
	homa_socket *srv, *cli;
	struct sockaddr_storage dst;
	socklen_t dl;
	char *buf = calloc(1, size), pcap[4096];
	pthread_t th;

	homa_open_opts_default(&o);
	homa_encrypt_opts_default(&eo);
	o.driver = driver;
	o.mode = mode;
	o.server = true;
	o.encrypt = encrypt ? &eo : NULL;
	o.metrics_port = obs.metrics_port;
	if (homa_open(&srv, &o)) {
		free(buf);
		return;
	}
	o.server = false;
	if (obs.pcap_path) {
		snprintf(pcap, sizeof(pcap), "%s.%s-%s%s", obs.pcap_path,
			 driver == HOMA_DRIVER_RAW ? "raw" : "udp",
			 mode == HOMA_MODE_POLLED ? "polled" : "threaded", encrypt ? "-psp" : "");
		o.pcap_path = pcap;
	}
	if (homa_open(&cli, &o)) {
		homa_close(srv);
		free(buf);
		return;
	}
	if (encrypt && (associate(cli, srv) || associate(srv, cli))) {
		homa_close(cli);
		homa_close(srv);
		free(buf);
		return;
	}
	homa_sockaddr_parse("127.0.0.1", (uint16_t)homa_local_port(srv), &dst, &dl);
	pthread_create(&th, NULL, homa_server, srv);
	for (int i = 0; i < count && r->fails < count;) {
		struct homa_message m;
		uint64_t id, t0 = now_ns();

		/* a failed RPC (e.g. timed out on a starved machine) is counted, not timed */
		if (homa_send(cli, (struct sockaddr *)&dst, buf, size, 0, &id) ||
		    homa_recv(cli, HOMA_RECV_RESPONSE, id, 2000000000LL, &m)) {
			r->fails++;
			continue;
		}
		homa_message_release(&m);
		t[i] = now_ns() - t0;
		if (++i == count)
			summarize(r, t);
	}
	homa_close(cli);
	homa_close(srv);
	pthread_join(th, NULL);
	free(buf);
}

static const struct option options[] = {
	{ "count", required_argument, NULL, 'n' },
	{ "size", required_argument, NULL, 'z' },
	{ "no-raw", no_argument, NULL, 'R' },
	EXAMPLE_OBS_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	static const char *const names[NARMS] = {"udp ping-pong", "tcp (nodelay)",
		"homa udp threaded", "homa udp polled", "homa raw threaded",
		"homa raw polled", "homa udp thr PSP", "homa udp pol PSP"};
	struct result res[NARMS];
	int no_raw = 0, c;

	homa_open_opts_default(&obs);
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'n': count = (int)example_long("count", optarg, 10, 100000000, usage); break;
		case 'z': size = (size_t)example_long("size", optarg, 2, 60000, usage); break;
		case 'R': no_raw = 1; break;
		default: example_obs_opt(c, optarg, &obs, usage);  /* the rest, or exit 2 */
		}
	}
	example_no_operands(argc, argv, usage);
	uint64_t *t = calloc((size_t)count, sizeof(*t));

	memset(res, 0, sizeof(res));
	for (int i = 0; i < NARMS; i++)
		res[i].name = names[i];

	for (int i = 0; i < NARMS; i++) {
		double c0 = cpu_now();

		if (i == 0)
			run_udp(&res[i], t);
		else if (i == 1)
			run_tcp(&res[i], t);
		else if (i < 4 || i >= 6 || !no_raw)
			run_homa(&res[i], t, i == 4 || i == 5 ? HOMA_DRIVER_RAW : HOMA_DRIVER_UDP,
				 i % 2 ? HOMA_MODE_POLLED : HOMA_MODE_THREADED, i >= 6);
		res[i].cpu_us = (cpu_now() - c0) / count;
	}
	printf("%zu-byte round trips on loopback, %d each (first 10%% dropped as warm-up)\n",
	       size, count);
	printf("%-20s %9s %9s %9s %9s %11s %6s\n", "arm", "P50 us", "P99 us", "P50/udp", "P99/udp",
	       "CPU us/RTT", "fails");
	for (int i = 0; i < NARMS; i++) {
		if (!res[i].ok) {
			printf("%-20s %9s\n", res[i].name, "n/a");
			continue;
		}
		printf("%-20s %9.1f %9.1f %9.2f %9.2f %11.1f %6d\n", res[i].name, res[i].p50,
		       res[i].p99, res[0].ok ? res[i].p50 / res[0].p50 : 0,
		       res[0].ok ? res[i].p99 / res[0].p99 : 0, res[i].cpu_us, res[i].fails);
	}
	for (int i = 6; i < NARMS; i++)  /* encryption's cost: PSP arm over the same arm in clear */
		if (res[i].ok && res[i - 4].ok)
			printf("%-20s P50 x%.3f  P99 x%.3f  CPU/RTT x%.3f\n", res[i].name,
			       res[i].p50 / res[i - 4].p50, res[i].p99 / res[i - 4].p99,
			       res[i].cpu_us / res[i - 4].cpu_us);
	free(t);
	return 0;
}
