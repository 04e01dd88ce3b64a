/* SPDX-License-Identifier: MIT */
/**
 * @file uring_probe.c
 * homa-udp-probe uring: what io_uring saves a UDP transport that sleeps
 * until its next datagram, measured on one 100-byte ping-pong between two
 * processes on loopback in two arms, interleaved round by round:
 *
 *  - poll: each side waits the way the runtime's I/O loop does, with
 *    ppoll(), then recvmmsg() (up to 16, MSG_DONTWAIT) and sendmmsg():
 *    three system calls per exchange and side;
 *  - io_uring: each side keeps a RECVMSG posted on its ring and, per
 *    exchange, submits its SENDMSG (IOSQE_CQE_SKIP_SUCCESS) and the next
 *    RECVMSG in the io_uring_enter() that waits for the datagram: one call.
 *
 * Both arms sleep in the kernel while they wait (GUIDE section 6: compare
 * sleeping with sleeping). Every datagram's echo is checked. Per round
 * trip it prints the system calls each side made (counted by the probe
 * around each call), P50/P99, CPU as getrusage (both processes) and as
 * busy time (wall x CPUs minus /proc/stat idle and iowait, the whole
 * machine), and then the io_uring/poll ratios' median and range.
 */
#define _GNU_SOURCE
#include "uring_probe.h"

#include "ring.h"
#include "util/cpu.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAYLOAD 100 /* bytes of a ping or pong */
#define STOP 1      /* bytes of the datagram that ends the server */
#define BATCH 16    /* recvmmsg() batch of the poll arm */
#define TAG_RECV 1  /* user_data of a RECVMSG */
#define TAG_SEND 2  /* user_data of a SENDMSG (completes only on failure) */

enum arm { ARM_POLL = 0, ARM_URING = 1 };
static const char *const arm_name[] = {"poll", "io_uring"};

/** Seconds after which either process gives up (set by homa_probe_uring()). */
static unsigned watchdog_s = 60;

/** What the server process reports through its pipe when it stops. */
struct server_report {
	uint64_t calls;   /**< system calls made while serving */
	int64_t cpu_us;   /**< its getrusage user+system time while serving */
	int failed;       /**< nonzero: a system call failed */
};

/** One arm's figures in one round, per round trip. */
struct arm_figures {
	double p50_us, p99_us;
	double calls_client, calls_server;
	double cpu_us;  /**< getrusage, client + server */
	double busy_us; /**< the machine's busy time */
};

/** A datagram buffer with its header, address and iovec. */
struct dgram {
	char buf[128];
	struct sockaddr_in addr;
	struct iovec iov;
	struct msghdr hdr;
};

/** mono_ns() - CLOCK_MONOTONIC in nanoseconds. */
static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/** dgram_init() - Point @d's header at its buffer (@len bytes) and address. */
static void dgram_init(struct dgram *d, size_t len)
{
	d->iov.iov_base = d->buf;
	d->iov.iov_len = len;
	memset(&d->hdr, 0, sizeof(d->hdr));
	d->hdr.msg_name = &d->addr;
	d->hdr.msg_namelen = sizeof(d->addr);
	d->hdr.msg_iov = &d->iov;
	d->hdr.msg_iovlen = 1;
}

/** watchdog() - SIGALRM: a datagram never came; say so and fail. */
static void watchdog(int sig)
{
	static const char msg[] = "homa-udp-probe uring: no answer in time\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/** open_socket() - A UDP socket bound to 127.0.0.1:0, its address in @a. Return: fd or -1. */
static int open_socket(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) ||
	    getsockname(fd, (struct sockaddr *)a, &len)) {
		perror("homa-udp-probe uring: socket");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/** cpu_us() - This process's user+system time in µs. */
static int64_t cpu_us(void)
{
	int64_t t = homa_cpu_now_us(HOMA_CPU_PROCESS);

	return t < 0 ? 0 : t;
}

/**
 * serve_poll() - The poll arm's server on @fd: echo every datagram until
 * a STOP one, with ppoll + recvmmsg + sendmmsg. Counts its calls in @rep
 * and sets @rep->failed when one fails.
 */
static void serve_poll(int fd, struct server_report *rep)
{
	static struct dgram d[BATCH];
	struct mmsghdr in[BATCH], out[BATCH];
	struct pollfd p = {fd, POLLIN, 0};

	for (;;) {
		int n, k = 0;

		rep->calls += 2;
		if (ppoll(&p, 1, NULL, NULL) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < BATCH; i++) {
			dgram_init(&d[i], sizeof(d[i].buf));
			in[i].msg_hdr = d[i].hdr;
		}
		n = recvmmsg(fd, in, BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			if (in[i].msg_len == STOP)
				return;
			d[i].iov.iov_len = in[i].msg_len;
			out[k].msg_hdr = d[i].hdr;
			out[k++].msg_hdr.msg_namelen = in[i].msg_hdr.msg_namelen;
		}
		if (k && (rep->calls++, sendmmsg(fd, out, (unsigned)k, 0) != k))
			break;
	}
	rep->failed = 1;
}

/** queue_recv() - Queue a RECVMSG of @d on @r. Return: 0, or -1 (queue full). */
static int queue_recv(struct probe_ring *r, int fd, struct dgram *d)
{
	struct io_uring_sqe *sqe = probe_ring_sqe(r);

	if (!sqe)
		return -1;
	dgram_init(d, sizeof(d->buf));
	sqe->opcode = IORING_OP_RECVMSG;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)&d->hdr;
	sqe->user_data = TAG_RECV;
	return 0;
}

/** queue_send() - Queue a SENDMSG of @d that posts no completion when it succeeds. */
static int queue_send(struct probe_ring *r, int fd, struct dgram *d)
{
	struct io_uring_sqe *sqe = probe_ring_sqe(r);

	if (!sqe)
		return -1;
	sqe->opcode = IORING_OP_SENDMSG;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)&d->hdr;
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
	sqe->user_data = TAG_SEND;
	return 0;
}

/**
 * wait_recv() - Submit what @r holds and wait for the RECVMSG's
 * completion. Return: the bytes received, or -1 (a failed call, a failed
 * send or receive).
 */
static int wait_recv(struct probe_ring *r)
{
	struct io_uring_cqe cqe;

	for (;;) {
		if (probe_ring_enter(r, 1))
			return -1;
		if (probe_ring_reap(r, &cqe))
			return cqe.user_data == TAG_RECV && cqe.res >= 0 ? cqe.res : -1;
	}
}

/** serve_uring() - The io_uring arm's server on @fd; see serve_poll(). */
static void serve_uring(int fd, struct server_report *rep)
{
	static struct dgram in, out;
	struct probe_ring r;
	int n;

	if (probe_ring_open(&r, 8)) {
		rep->failed = 1;
		return;
	}
	n = queue_recv(&r, fd, &in);
	while (!n && (n = wait_recv(&r)) > STOP) {
		memcpy(out.buf, in.buf, (size_t)n);
		out.addr = in.addr;
		dgram_init(&out, (size_t)n);
		n = queue_send(&r, fd, &out) || queue_recv(&r, fd, &in) ? -1 : 0;
	}
	rep->failed = n != STOP;
	rep->calls = r.enters;
	probe_ring_close(&r);
}

/**
 * server() - Child process: serve @fd in @arm, report through @pipe_fd,
 * exit. It dies with its parent and after the parent's watchdog time.
 */
static void server(int fd, enum arm arm, int pipe_fd, unsigned seconds)
{
	struct server_report rep = {0, 0, 0};
	int64_t t0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(seconds);
	t0 = cpu_us();

	if (arm == ARM_POLL)
		serve_poll(fd, &rep);
	else
		serve_uring(fd, &rep);
	rep.cpu_us = cpu_us() - t0;
	_exit(write(pipe_fd, &rep, sizeof(rep)) == sizeof(rep) ? 0 : 1);
}

/** check_echo() - 0 if @d holds the PAYLOAD-byte echo of ping @seq, -1 if not. */
static int check_echo(const struct dgram *d, int n, uint64_t seq)
{
	uint64_t got;

	memcpy(&got, d->buf, sizeof(got));
	return n == PAYLOAD && got == seq ? 0 : -1;
}

/**
 * ping_poll() - One poll-arm round trip: send @ping carrying @seq, wait
 * for @pong, count the calls in @calls. Return: 0, or -1 (a failed call
 * or a wrong echo).
 */
static int ping_poll(int fd, struct dgram *ping, struct dgram *pong, uint64_t seq,
		     uint64_t *calls)
{
	struct mmsghdr out = {ping->hdr, 0}, in;
	struct pollfd p = {fd, POLLIN, 0};
	int n;

	memcpy(ping->buf, &seq, sizeof(seq));
	(*calls)++;
	if (sendmmsg(fd, &out, 1, 0) != 1)
		return -1;
	do {
		*calls += 2;
		if (ppoll(&p, 1, NULL, NULL) < 0 && errno != EINTR)
			return -1;
		dgram_init(pong, sizeof(pong->buf));
		in.msg_hdr = pong->hdr;
		n = recvmmsg(fd, &in, 1, MSG_DONTWAIT, NULL);
	} while (n < 0 && (errno == EAGAIN || errno == EINTR));
	return n == 1 ? check_echo(pong, (int)in.msg_len, seq) : -1;
}

/** ping_uring() - One io_uring-arm round trip; see ping_poll(). */
static int ping_uring(struct probe_ring *r, int fd, struct dgram *ping, struct dgram *pong,
		      uint64_t seq)
{
	memcpy(ping->buf, &seq, sizeof(seq));
	if (queue_send(r, fd, ping) || queue_recv(r, fd, pong))
		return -1;
	return check_echo(pong, wait_recv(r), seq);
}

/** cmp_u64() - qsort comparator for uint64_t. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/**
 * client() - @count round trips from @fd to @to in @arm; fills @f's
 * latency, the client's calls and CPU. Return: 0, or -1 (failed call or
 * a wrong echo).
 */
static int client(int fd, const struct sockaddr_in *to, enum arm arm, int count,
		  struct arm_figures *f)
{
	static struct dgram ping, pong;
	uint64_t *rtt = calloc((size_t)count, sizeof(*rtt)), calls = 0;
	struct probe_ring r = {.fd = -1};
	int64_t t0 = cpu_us();
	int rc = 0;

	memset(ping.buf, 'p', PAYLOAD);
	ping.addr = *to;
	dgram_init(&ping, PAYLOAD);
	if (!rtt || (arm == ARM_URING && probe_ring_open(&r, 8)))
		rc = -1;
	for (int i = 0; i < count && !rc; i++) {
		uint64_t t = mono_ns();

		if (arm == ARM_POLL)
			rc = ping_poll(fd, &ping, &pong, (uint64_t)i, &calls);
		else
			rc = ping_uring(&r, fd, &ping, &pong, (uint64_t)i);
		rtt[i] = mono_ns() - t;
	}
	f->cpu_us = (double)(cpu_us() - t0);
	f->calls_client = (double)(calls + r.enters) / count;
	probe_ring_close(&r);
	if (!rc) {
		qsort(rtt, (size_t)count, sizeof(*rtt), cmp_u64);
		f->p50_us = (double)rtt[count / 2] / 1e3;
		f->p99_us = (double)rtt[(size_t)count * 99 / 100] / 1e3;
	}
	free(rtt);
	return rc;
}

/**
 * run_arm() - One arm: a server process and @count round trips to it.
 * Return: 0 with @f filled, or -1 with a message on stderr.
 */
static int run_arm(enum arm arm, int count, struct arm_figures *f)
{
	struct sockaddr_in ca, sa;
	struct homa_host_cpu h0, h1;
	struct server_report rep = {0, 0, 1};
	int cfd, sfd, p[2] = {-1, -1}, rc = -1;
	pid_t pid = -1;
	char stop = 0;

	errno = 0;
	cfd = open_socket(&ca);
	sfd = open_socket(&sa);
	if (cfd < 0 || sfd < 0 || pipe(p) || homa_host_cpu_snap(&h0))
		goto out;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		server(sfd, arm, p[1], watchdog_s);
	}
	if (pid < 0 || client(cfd, &sa, arm, count, f))
		goto out;
	sendto(cfd, &stop, STOP, 0, (struct sockaddr *)&sa, sizeof(sa));
	if (read(p[0], &rep, sizeof(rep)) == sizeof(rep) && !rep.failed &&
	    !homa_host_cpu_snap(&h1)) {
		f->calls_server = (double)rep.calls / count;
		f->cpu_us = (f->cpu_us + (double)rep.cpu_us) / count;
		f->busy_us = homa_host_busy_us(&h0, &h1) / count;
		rc = 0;
	}
out:
	if (rc)
		fprintf(stderr, "homa-udp-probe uring: the %s arm failed (%s)\n", arm_name[arm],
			errno ? strerror(errno) : "a wrong echo or a server that failed");
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	if (cfd >= 0)
		close(cfd);
	if (sfd >= 0)
		close(sfd);
	return rc;
}

/** print_arm() - One arm's line of round @round. */
static void print_arm(int round, enum arm arm, const struct arm_figures *f)
{
	printf("round %d %-8s round trip P50 %.1f us, P99 %.1f us; system calls %.2f "
	       "(client %.2f, server %.2f); CPU getrusage %.1f us, busy %.1f us\n",
	       round, arm_name[arm], f->p50_us, f->p99_us, f->calls_client + f->calls_server,
	       f->calls_client, f->calls_server, f->cpu_us, f->busy_us);
}

/** cmp_double() - qsort comparator for double. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/** print_ratio() - "NAME median M (range LO-HI)" of @n ratios in @v (sorted here). */
static void print_ratio(const char *name, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	printf("  %-22s median %.2f (range %.2f-%.2f)\n", name,
	       n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]);
}

/** load_average() - The 1-minute load average, or -1. */
static double load_average(void)
{
	double l[1];

	return getloadavg(l, 1) == 1 ? l[0] : -1;
}

int homa_probe_uring(int count, int rounds)
{
	double *ratio = calloc((size_t)rounds * 5, sizeof(*ratio));
	struct probe_ring probe;

	if (!ratio)
		return 1;
	if (probe_ring_open(&probe, 8)) {
		printf("io_uring unavailable here: %s\n", strerror(errno));
		free(ratio);
		return 77;
	}
	probe_ring_close(&probe);
	signal(SIGALRM, watchdog);
	watchdog_s = (unsigned)(60 + (int64_t)count * rounds / 500);
	alarm(watchdog_s);
	printf("load average %.2f; %d rounds of %d 100-byte round trips per arm, "
	       "arms alternating first\n", load_average(), rounds, count);
	for (int i = 0; i < rounds; i++) {
		struct arm_figures f[2];

		for (int k = 0; k < 2; k++) {
			enum arm a = (enum arm)((i + k) % 2);

			if (run_arm(a, count, &f[a])) {
				free(ratio);
				return 1;
			}
			print_arm(i + 1, a, &f[a]);
		}
		ratio[i] = (f[1].calls_client + f[1].calls_server) /
			   (f[0].calls_client + f[0].calls_server);
		ratio[rounds + i] = f[1].p50_us / f[0].p50_us;
		ratio[2 * rounds + i] = f[1].p99_us / f[0].p99_us;
		ratio[3 * rounds + i] = f[1].cpu_us / f[0].cpu_us;
		ratio[4 * rounds + i] = f[1].busy_us / f[0].busy_us;
	}
	printf("io_uring / poll over %d rounds (load average %.2f at the end):\n", rounds,
	       load_average());
	print_ratio("system calls", ratio, rounds);
	print_ratio("P50", ratio + rounds, rounds);
	print_ratio("P99", ratio + 2 * rounds, rounds);
	print_ratio("CPU getrusage", ratio + 3 * rounds, rounds);
	print_ratio("busy CPU", ratio + 4 * rounds, rounds);
	alarm(0);
	free(ratio);
	return 0;
}
