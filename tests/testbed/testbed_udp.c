/*
 * testbed-udp: raw UDP traffic that checks the emulated datacenter fabric
 * (scripts/testbed run fabric) before any transport runs on it.
 *
 *   testbed-udp sink  PORT SECONDS   (0 seconds: until SIGTERM/SIGINT)
 *   testbed-udp blast IP:PORT MBIT SIZE CLASS SECONDS
 *   testbed-udp echo  PORT SECONDS   (0 seconds: until SIGTERM/SIGINT)
 *   testbed-udp probe IP:PORT CLASSES INTERVAL_US SECONDS
 *
 * blast sends SIZE-byte IP datagrams (headers included) at MBIT Mbit/s with
 * DSCP class selector CLASS (0..7, the top three TOS bits); probe sends
 * open-loop probes through an echo, cycling through CLASSES ("7,0"). Each
 * mode prints one JSON object on stdout. Only the given address is used.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TB_HDR 28           /* IPv4 + UDP header bytes */
#define TB_BATCH 16         /* datagrams per sendmmsg/recvmmsg */
#define TB_MAX_CLASSES 8
#define TB_MAX_PROBES 200000

/** Set by SIGTERM/SIGINT: every mode then stops and prints its results. */
static volatile sig_atomic_t tb_stop;

/** Signal handler: asks the running mode to stop. */
static void tb_on_signal(int sig)
{
	(void)sig;
	tb_stop = 1;
}

/**
 * Returns the end time of a run of @secs seconds from now; 0 seconds means
 * until a signal arrives.
 */
static int64_t tb_end_ns(double secs);

/** Returns CLOCK_MONOTONIC in nanoseconds. */
static int64_t tb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t tb_end_ns(double secs)
{
	return secs > 0 ? tb_now_ns() + (int64_t)(secs * 1e9) : INT64_MAX;
}

/** Prints a usage message and returns exit status 2. */
static int tb_usage(void)
{
	fprintf(stderr,
		"usage: testbed-udp sink PORT SECONDS\n"
		"       testbed-udp blast IP:PORT MBIT SIZE CLASS SECONDS\n"
		"       testbed-udp echo PORT SECONDS\n"
		"       testbed-udp probe IP:PORT CLASSES INTERVAL_US SECONDS\n");
	return 2;
}

/**
 * Parses "IP:PORT" into @sa. Returns 0, or -1 (after a message) on bad
 * input.
 */
static int tb_parse_addr(const char *s, struct sockaddr_in *sa)
{
	char ip[64];
	const char *colon = strrchr(s, ':');
	if (!colon || colon - s >= (long)sizeof(ip)) {
		fprintf(stderr, "testbed-udp: bad address %s (want IP:PORT)\n", s);
		return -1;
	}
	memcpy(ip, s, colon - s);
	ip[colon - s] = 0;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, ip, &sa->sin_addr) != 1 || !sa->sin_port) {
		fprintf(stderr, "testbed-udp: bad address %s\n", s);
		return -1;
	}
	return 0;
}

/**
 * Opens a UDP socket; bound to @port if nonzero, connected to @dst if not
 * NULL, with TOS class @cls. Returns the descriptor or -1 after a message.
 */
static int tb_socket(int port, const struct sockaddr_in *dst, int cls)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), buf = 4 << 20, tos = cls << 5;
	if (fd < 0) {
		perror("testbed-udp: socket");
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	if (port) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)port)};
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("testbed-udp: bind");
			close(fd);
			return -1;
		}
	}
	if (dst && connect(fd, (const struct sockaddr *)dst, sizeof(*dst)) < 0) {
		perror("testbed-udp: connect");
		close(fd);
		return -1;
	}
	return fd;
}

/** Receives for @secs seconds; prints packets, bytes and receive rate. */
static int tb_sink(int port, double secs)
{
	static char bufs[TB_BATCH][2048];
	struct mmsghdr msgs[TB_BATCH];
	struct iovec iov[TB_BATCH];
	struct timeval tv = {.tv_usec = 100000};
	int64_t end, first = 0, last = 0;
	uint64_t pkts = 0, bytes = 0;
	int fd = tb_socket(port, NULL, 0);
	if (fd < 0)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < TB_BATCH; i++) {
		iov[i] = (struct iovec){bufs[i], sizeof(bufs[i])};
		msgs[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1};
	}
	end = tb_end_ns(secs);
	while (!tb_stop && tb_now_ns() < end) {
		int n = recvmmsg(fd, msgs, TB_BATCH, 0, NULL);
		if (n <= 0)
			continue;
		last = tb_now_ns();
		if (!first)
			first = last;
		for (int i = 0; i < n; i++)
			bytes += msgs[i].msg_len + TB_HDR;
		pkts += n;
	}
	double span = (last - first) / 1e9;
	printf("{\"mode\": \"sink\", \"packets\": %llu, \"wire_bytes\": %llu, "
	       "\"seconds\": %.3f, \"mbit_per_s\": %.1f}\n",
	       (unsigned long long)pkts, (unsigned long long)bytes, span,
	       span > 0 ? bytes * 8 / span / 1e6 : 0.0);
	close(fd);
	return 0;
}

/** Sends paced datagrams for @secs seconds; prints what it sent. */
static int tb_blast(const struct sockaddr_in *dst, double mbit, int size,
		    int cls, double secs)
{
	static char payload[65536];
	struct mmsghdr msgs[TB_BATCH];
	struct iovec iov = {payload, (size_t)(size - TB_HDR)};
	uint64_t sent = 0, errors = 0;
	double pps = mbit * 1e6 / 8 / size;
	int fd = tb_socket(0, dst, cls);
	if (fd < 0)
		return 1;
	for (int i = 0; i < TB_BATCH; i++)
		msgs[i].msg_hdr = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1};
	int64_t start = tb_now_ns(), now;
	int64_t end = tb_end_ns(secs);
	while (!tb_stop && (now = tb_now_ns()) < end) {
		uint64_t due = (uint64_t)((now - start) / 1e9 * pps) + 1;
		if (due < sent + TB_BATCH) {
			/* Sleep until a whole batch is due: few wakeups. */
			int64_t at = start + (int64_t)((sent + TB_BATCH) / pps * 1e9);
			struct timespec ts = {(at - now) / 1000000000, (at - now) % 1000000000};
			nanosleep(&ts, NULL);
			continue;
		}
		int want = due - sent > TB_BATCH ? TB_BATCH : (int)(due - sent);
		int n = sendmmsg(fd, msgs, want, 0);
		if (n < 0) {
			errors++;
			n = 1;
		}
		sent += n;
	}
	double span = (tb_now_ns() - start) / 1e9;
	printf("{\"mode\": \"blast\", \"packets\": %llu, \"send_errors\": %llu, "
	       "\"seconds\": %.3f, \"mbit_per_s\": %.1f, \"tos_class\": %d}\n",
	       (unsigned long long)sent, (unsigned long long)errors, span,
	       sent * size * 8 / span / 1e6, cls);
	close(fd);
	return 0;
}

/** Reflects every datagram to its sender for @secs seconds. */
static int tb_echo(int port, double secs)
{
	char buf[2048];
	struct timeval tv = {.tv_usec = 100000};
	int fd = tb_socket(port, NULL, 7);
	if (fd < 0)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int64_t end = tb_end_ns(secs);
	while (!tb_stop && tb_now_ns() < end) {
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&peer, &len);
		if (n > 0)
			sendto(fd, buf, n, 0, (struct sockaddr *)&peer, len);
	}
	close(fd);
	return 0;
}

/** qsort comparison of doubles. */
static int tb_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/** Nearest-rank percentile @p of sorted @v[0..n); 0 when empty. */
static double tb_pct(const double *v, int n, double p)
{
	if (n == 0)
		return 0;
	int k = (int)(p / 100 * n + 0.5);
	return v[k < 1 ? 0 : (k > n ? n - 1 : k - 1)];
}

/**
 * Receives every probe echo waiting on @fds[0..n) and records its RTT in
 * @rtt/@counts (indexed like @fds).
 */
static void tb_probe_collect(const int *fds, int n, double (*rtt)[TB_MAX_PROBES],
			     int *counts)
{
	uint64_t reply[8];
	for (int c = 0; c < n; c++) {
		while (recv(fds[c], reply, sizeof(reply), MSG_DONTWAIT) >= 16) {
			if (counts[c] < TB_MAX_PROBES)
				rtt[c][counts[c]++] = (tb_now_ns() - (int64_t)reply[1]) / 1000.0;
		}
	}
}

/** Waits up to @ns nanoseconds for any of @fds[0..n) to be readable. */
static void tb_probe_wait(const int *fds, int n, int64_t ns)
{
	struct pollfd pfd[TB_MAX_CLASSES];
	struct timespec ts = {ns / 1000000000, ns % 1000000000};
	for (int c = 0; c < n; c++)
		pfd[c] = (struct pollfd){.fd = fds[c], .events = POLLIN};
	if (ns > 0)
		ppoll(pfd, n, &ts, NULL);
}

/** Prints the JSON of one probe class's RTT samples (sorted in place). */
static void tb_probe_print(int cls, double *v, int n, int lost, int comma)
{
	qsort(v, n, sizeof(*v), tb_cmp);
	printf("  \"%d\": {\"count\": %d, \"lost\": %d, \"p50_us\": %.1f, "
	       "\"p99_us\": %.1f, \"max_us\": %.1f}%s\n", cls, n, lost,
	       tb_pct(v, n, 50), tb_pct(v, n, 99), n ? v[n - 1] : 0.0,
	       comma ? "," : "");
}

/**
 * Open-loop probes through an echo: one every @interval_us, cycling through
 * the TOS classes; replies are matched by the timestamp they carry. A probe
 * not back 300 ms after the last one was sent counts as lost.
 */
static int tb_probe(const struct sockaddr_in *dst, const char *classes,
		    int interval_us, double secs)
{
	int cls[TB_MAX_CLASSES], fds[TB_MAX_CLASSES], ncls = 0;
	int counts[TB_MAX_CLASSES] = {0}, sent[TB_MAX_CLASSES] = {0};
	static double rtt[TB_MAX_CLASSES][TB_MAX_PROBES];
	for (const char *p = classes; *p && ncls < TB_MAX_CLASSES; p++) {
		if (*p >= '0' && *p <= '7') {
			cls[ncls] = *p - '0';
			if ((fds[ncls] = tb_socket(0, dst, cls[ncls])) < 0)
				return 1;
			ncls++;
		}
	}
	if (!ncls || interval_us <= 0)
		return tb_usage();
	int64_t start = tb_now_ns(), end = start + (int64_t)(secs * 1e9), next = start;
	for (uint64_t seq = 0; tb_now_ns() < end;) {
		if (tb_now_ns() >= next) {
			int c = seq % ncls;
			uint64_t msg[8] = {seq++, (uint64_t)tb_now_ns()};
			if (send(fds[c], msg, sizeof(msg), 0) == (ssize_t)sizeof(msg))
				sent[c]++;
			next += (int64_t)interval_us * 1000;
		}
		tb_probe_wait(fds, ncls, next - tb_now_ns());
		tb_probe_collect(fds, ncls, rtt, counts);
	}
	for (int64_t stop = tb_now_ns() + 300000000; tb_now_ns() < stop;) {
		tb_probe_wait(fds, ncls, stop - tb_now_ns());
		tb_probe_collect(fds, ncls, rtt, counts);
	}
	printf("{\"mode\": \"probe\", \"classes\": {\n");
	for (int c = 0; c < ncls; c++)
		tb_probe_print(cls[c], rtt[c], counts[c], sent[c] - counts[c], c + 1 < ncls);
	printf("}}\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in dst;
	struct sigaction sa = {.sa_handler = tb_on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "sink"))
		return tb_sink(atoi(argv[2]), atof(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "echo"))
		return tb_echo(atoi(argv[2]), atof(argv[3]));
	if (argc == 7 && !strcmp(argv[1], "blast")) {
		int size = atoi(argv[4]), cls = atoi(argv[5]);
		if (tb_parse_addr(argv[2], &dst) < 0)
			return 2;
		if (size < TB_HDR + 8 || size > 65535 || cls < 0 || cls > 7) {
			fprintf(stderr, "testbed-udp: SIZE 36..65535, CLASS 0..7\n");
			return 2;
		}
		return tb_blast(&dst, atof(argv[3]), size, cls, atof(argv[6]));
	}
	if (argc == 6 && !strcmp(argv[1], "probe")) {
		if (tb_parse_addr(argv[2], &dst) < 0)
			return 2;
		return tb_probe(&dst, argv[3], atoi(argv[4]), atof(argv[5]));
	}
	return tb_usage();
}
