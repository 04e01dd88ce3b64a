/* SPDX-License-Identifier: MIT */
/**
 * @file udp_probe.c
 * homa-udp-probe: plain-UDP reference figures for homa-bench on loopback.
 *
 *   homa-udp-probe blast [--size BYTES] [--seconds S]
 *	One process sends BYTES-byte datagrams (1472) to another as fast as
 *	sendto() allows for S seconds (2); prints the goodput the receiver got
 *	(one datagram per system call, no offload): the ceiling of a UDP
 *	transport at that packet size.
 *   homa-udp-probe wait [--count N]
 *	N (10000) 100-byte ping-pongs between two processes, the waiting side sleeping
 *	in (a) recv(), (b) ppoll() without a timeout, (c) ppoll() with a 1 ms
 *	timeout; prints P50/P99 round trips of each. (b) against (c) is the
 *	cost of arming a timer on every wait.
 *   homa-udp-probe uring [--count N] [--rounds R]
 *	R (3) rounds of N (10000) 100-byte ping-pongs in two arms, the
 *	runtime's ppoll + recvmmsg + sendmmsg against one io_uring_enter()
 *	per exchange (uring_probe.c): system calls, P50/P99 and CPU per
 *	round trip, and the io_uring/poll ratios. Exit 77: no io_uring here.
 *
 * Options are parsed with getopt_long(): --name value or --name=value;
 * -h/--help prints the usage. Only loopback is used. Exit status 0, 1 on
 * a failed system call, 2 on bad options.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uring_probe.h"

#define BIG_BUF (8 << 20)

/** now_ns() - CLOCK_MONOTONIC in nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/**
 * open_pair() - Two UDP sockets bound to 127.0.0.1; @addr receives each
 * one's address. Return: 0, or -1 with a message on stderr.
 */
static int open_pair(int fd[2], struct sockaddr_in addr[2])
{
	for (int i = 0; i < 2; i++) {
		socklen_t len = sizeof(addr[i]);
		int big = BIG_BUF;

		fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
		memset(&addr[i], 0, sizeof(addr[i]));
		addr[i].sin_family = AF_INET;
		addr[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&addr[i], sizeof(addr[i])) ||
		    getsockname(fd[i], (struct sockaddr *)&addr[i], &len)) {
			perror("homa-udp-probe: socket");
			return -1;
		}
		setsockopt(fd[i], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
		setsockopt(fd[i], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	}
	return 0;
}

/** receive_all() - Child of blast: count bytes until 300 ms of silence; print Gbps. */
static void receive_all(int fd, size_t size)
{
	struct timeval idle = {0, 300000};
	char *buf = malloc(65536);
	uint64_t bytes = 0, first = 0, last = 0;
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
	while (buf && (n = recv(fd, buf, 65536, 0)) > 0) {
		last = now_ns();
		if (!first)
			first = last;
		bytes += (uint64_t)n;
	}
	if (last > first)
		printf("blast %zu B datagrams: receiver got %.2f Gbps (%.0f datagrams/s)\n", size,
		       (double)bytes * 8 / (double)(last - first),
		       (double)bytes / (double)size * 1e9 / (double)(last - first));
	fflush(stdout);
	free(buf);
}

/** blast() - The blast mode (see the file comment). Return: exit status. */
static int blast(size_t size, double seconds)
{
	int fd[2];
	struct sockaddr_in addr[2];
	char *buf = calloc(1, size);
	pid_t pid;

	if (!buf || size < 1 || size > 65507 || open_pair(fd, addr))
		return 1;
	pid = fork();
	if (pid == 0) {
		receive_all(fd[1], size);
		_exit(0);
	}
	for (uint64_t end = now_ns() + (uint64_t)(seconds * 1e9); now_ns() < end;)
		sendto(fd[0], buf, size, 0, (struct sockaddr *)&addr[1], sizeof(addr[1]));
	waitpid(pid, NULL, 0);
	free(buf);
	return 0;
}

/** wait_readable() - Wait for @fd the way @how says (0 recv, 1 ppoll, 2 ppoll+timeout). */
static void wait_readable(int fd, int how)
{
	struct pollfd p = {fd, POLLIN, 0};
	struct timespec ms = {0, 1000000};

	if (how == 1)
		ppoll(&p, 1, NULL, NULL);
	else if (how == 2)
		while (ppoll(&p, 1, &ms, NULL) == 0)
			;
}

/** cmp_u64() - qsort comparator. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/** ping_pong() - @count round trips waiting by @how; print P50/P99. Return: 0 or 1. */
static int ping_pong(int count, int how)
{
	static const char *const names[] = {"recv()", "ppoll(), no timeout", "ppoll(), 1 ms timeout"};
	int fd[2];
	struct sockaddr_in addr[2];
	char buf[128] = {0};
	uint64_t *rtt = calloc((size_t)count, sizeof(*rtt));
	pid_t pid;

	if (!rtt || open_pair(fd, addr))
		return 1;
	pid = fork();
	if (pid == 0) {
		for (;;) {
			wait_readable(fd[1], how);
			ssize_t n = recv(fd[1], buf, sizeof(buf), 0);
			if (n <= 0 || sendto(fd[1], buf, (size_t)n, 0, (struct sockaddr *)&addr[0],
					     sizeof(addr[0])) < 0)
				_exit(0);
		}
	}
	for (int i = 0; i < count; i++) {
		uint64_t t = now_ns();

		sendto(fd[0], buf, 100, 0, (struct sockaddr *)&addr[1], sizeof(addr[1]));
		wait_readable(fd[0], how);
		recv(fd[0], buf, sizeof(buf), 0);
		rtt[i] = now_ns() - t;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	qsort(rtt, (size_t)count, sizeof(*rtt), cmp_u64);
	printf("wait in %-22s round trip P50 %.1f us, P99 %.1f us\n", names[how],
	       (double)rtt[count / 2] / 1e3, (double)rtt[(size_t)count * 99 / 100] / 1e3);
	free(rtt);
	return 0;
}

static const char usage[] =
	"usage: homa-udp-probe blast [--size BYTES] [--seconds S]\n"
	"       homa-udp-probe wait [--count N]\n"
	"       homa-udp-probe uring [--count N] [--rounds R]\n"
	"  blast       send datagrams of --size bytes (1472, up to 65507) for\n"
	"              --seconds (2) and print the goodput received\n"
	"  wait        --count (10000) 100-byte ping-pongs, waiting in recv(),\n"
	"              ppoll() and ppoll() with a timeout; P50/P99 of each\n"
	"  uring       --rounds (3) of --count (10000) 100-byte ping-pongs, ppoll +\n"
	"              recvmmsg + sendmmsg against io_uring, arms alternating:\n"
	"              system calls, P50/P99, CPU per round trip and the ratios\n"
	"  -h, --help  this text\n";

/** main() - Parse MODE and options (getopt_long), run the probe. */
int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"size", required_argument, NULL, 's'},
		{"seconds", required_argument, NULL, 't'},
		{"count", required_argument, NULL, 'c'},
		{"rounds", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long size = 1472, count = 10000, rounds = 3;
	double seconds = 2.0;
	char *end = NULL;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c == 's')
			size = strtol(optarg, &end, 10);
		else if (c == 't')
			seconds = strtod(optarg, &end);
		else if (c == 'c')
			count = strtol(optarg, &end, 10);
		else if (c == 'r')
			rounds = strtol(optarg, &end, 10);
		if (c == '?' || *end || size < 1 || size > 65507 || !(seconds > 0) || count < 1 ||
		    count > 10000000 || rounds < 1 || rounds > 1000) {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind + 1 == argc && !strcmp(argv[optind], "blast"))
		return blast((size_t)size, seconds);
	if (optind + 1 == argc && !strcmp(argv[optind], "wait")) {
		for (int how = 0; how < 3; how++)
			rc |= ping_pong((int)count, how);
		return rc;
	}
	if (optind + 1 == argc && !strcmp(argv[optind], "uring"))
		return homa_probe_uring((int)count, (int)rounds);
	fputs(usage, stderr);
	return 2;
}
