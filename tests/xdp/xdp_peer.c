/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_peer.c
 * One end of the XDP driver's veth tests (run by xdp_veth.sh and
 * xdp_capture.sh in a network namespace of its own):
 *   xdp_peer server IF ADDR PORT TCPPORT   Homa echo server on the XDP driver
 *                                          and a TCP echo server, both on IF
 *   xdp_peer client IF ADDR PEER PORT TCPPORT
 *                                          RPCs of 1 B to 4 MiB, checked
 *                                          byte for byte, while a TCP stream
 *                                          through the same interface is
 *                                          echoed and checked
 *   xdp_peer echo IF ADDR PEER PORT SIZES COUNT [LPORT]
 *                                          COUNT RPCs of each size of the
 *                                          comma-separated SIZES, each
 *                                          checked byte for byte, from
 *                                          port LPORT (default: any)
 *   xdp_peer open IF ADDR MTU COUNT        open COUNT sockets on IF (with
 *                                          settings.mtu MTU, 0: default) and
 *                                          print "mode copy|zerocopy" once open,
 *                                          then the result of the last open as a
 *                                          number (0 or a homa error)
 *   xdp_peer pair IF ADDR PEER PORT       two Homa sockets on the XDP driver of
 *                                          IF in this process, each running RPCs
 *                                          of 1 B to 200 kB from its own thread,
 *                                          checked byte for byte; then the first
 *                                          closes and the second runs them again
 *   xdp_peer spin IF ADDR COUNT            a polled server socket on IF calls
 *                                          homa_recv() with a zero timeout COUNT
 *                                          times with nothing to receive; prints
 *                                          "spins COUNT" if each said HOMA_EAGAIN
 *   xdp_peer procs IF ADDR PEER PORT first|second|second2
 *                                          one of two processes on the XDP driver
 *                                          of IF (xdp_procs.sh): "first" runs
 *                                          rounds of RPCs of 1 B to 200 kB until
 *                                          killed, keeping its last three
 *                                          responses unreleased (their frames
 *                                          held), printing "ok ROUND" after each;
 *                                          "second" prints "joined" once open, runs
 *                                          rounds until frames of a dead process
 *                                          were reclaimed and three more rounds
 *                                          passed (40 s at most), and prints
 *                                          "reclaimed N"; "second2" is "second"
 *                                          with a second socket opened after
 *                                          joining, each round on both sockets
 * IF "udp" runs that end on the UDP driver instead (no offload).
 * The client prints the driver's counters and exits 0 only if every RPC
 * and the whole TCP stream came back intact.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "homa/homa.h"

/** Bytes of the TCP stream echoed during the Homa run. */
#define TCP_BYTES (8u << 20)
/** How long any one wait may last (ns): a failure, never a hang. */
#define WAIT_NS (20ll * 1000000000ll)

/** fill() - Deterministic bytes for message @seed of @len bytes. */
static void fill(uint8_t *b, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (uint8_t)(x >> 16);
	}
}

/**
 * open_xdp() - A Homa socket on the XDP driver of @ifname bound to
 * @addr:@port; @ifname "udp" means the UDP driver instead, without
 * segmentation offload (for captures of packets as the wire carries
 * them). The RPC timeout is 5 s of silence instead of 100 ms: a loaded
 * 2-core machine can stall a process for longer than that.
 */
static homa_socket *open_xdp(const char *ifname, const char *addr, uint16_t port, bool server)
{
	struct homa_open_opts o;
	struct homa_settings st;
	homa_socket *s = NULL;
	int err;

	homa_settings_default(&st);
	st.timeout_ticks = 5000;
	homa_open_opts_default(&o);
	o.settings = &st;
	o.driver = HOMA_DRIVER_XDP;
	o.ifname = ifname;
	if (!strcmp(ifname, "udp")) {
		o.driver = HOMA_DRIVER_UDP;
		o.ifname = NULL;
		o.offload = false;
	}
	o.bind_addr = addr;
	o.port = port;
	o.server = server;
	err = homa_open(&s, &o);
	if (err) {
		fprintf(stderr, "xdp_peer: homa_open on %s: %s\n", ifname, homa_strerror(err));
		exit(1);
	}
	return s;
}

/** tcp_echo() - Accept one connection on @port and echo it until EOF. */
static void *tcp_echo(void *arg)
{
	int port = (int)(intptr_t)arg, one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int l = socket(AF_INET, SOCK_STREAM, 0), c;
	static char buf[65536];
	ssize_t n;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		return NULL;
	c = accept(l, NULL, NULL);
	while (c >= 0 && (n = read(c, buf, sizeof(buf))) > 0)
		if (write(c, buf, (size_t)n) != n)
			break;
	if (c >= 0)
		close(c);
	close(l);
	return NULL;
}

/**
 * serve() - Echo every Homa request back until killed. Replies are
 * zero-copy sends (homa_reply_zc()) from a copy of the request that the
 * release callback frees, so the driver's frames carry payload it reads
 * from the application's buffer.
 */
static int serve(const char *ifname, const char *addr, uint16_t port, int tcp_port)
{
	homa_socket *s = open_xdp(ifname, addr, port, true);
	pthread_t t;

	pthread_create(&t, NULL, tcp_echo, (void *)(intptr_t)tcp_port);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct homa_message m;
		struct homa_iov iov;
		uint8_t *buf;

		if (homa_recv(s, HOMA_RECV_REQUEST, 0, -1, &m))
			continue;
		buf = malloc(m.length ? m.length : 1);
		iov = (struct homa_iov){buf, buf ? homa_message_copy(&m, 0, buf, m.length) : 0};
		if (!buf || homa_reply_zc(s, m.id, &iov, 1, free, buf))
			free(buf);  /* no reply: the client's RPC fails and says so */
		homa_message_release(&m);
	}
	return 0;
}

/** Arguments of the TCP check thread. */
struct tcp_check {
	struct sockaddr_in peer;
	int ok;
};

/** tcp_check() - Send TCP_BYTES to the echo server and compare what comes back. */
static void *tcp_check(void *arg)
{
	struct tcp_check *t = arg;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint8_t *out = malloc(TCP_BYTES), *in = malloc(TCP_BYTES);
	size_t got = 0, sent = 0;

	fill(out, TCP_BYTES, 7);
	for (int i = 0; i < 50 && connect(fd, (struct sockaddr *)&t->peer, sizeof(t->peer)); i++)
		usleep(100000);
	while (got < TCP_BYTES) {
		if (sent < TCP_BYTES) {
			ssize_t n = write(fd, out + sent, TCP_BYTES - sent > 65536 ? 65536 : TCP_BYTES - sent);

			if (n <= 0)
				break;
			sent += (size_t)n;
		}
		ssize_t n = recv(fd, in + got, TCP_BYTES - got, sent < TCP_BYTES ? MSG_DONTWAIT : 0);

		if (n == 0 || (n < 0 && sent >= TCP_BYTES))
			break;
		if (n > 0)
			got += (size_t)n;
	}
	t->ok = got == TCP_BYTES && !memcmp(in, out, TCP_BYTES);
	close(fd);
	free(out);
	free(in);
	return NULL;
}

/** rpc() - One RPC of @len bytes to @peer (IPv4 or IPv6), checked byte for byte. Return: 0 or -1. */
static int rpc(homa_socket *s, const void *peer, size_t len, uint32_t seed,
	       uint8_t *req, uint8_t *resp)
{
	struct homa_message m;
	uint64_t id;
	int err;

	fill(req, len, seed);
	err = homa_send(s, (const struct sockaddr *)peer, req, len, seed, &id);
	if (!err)
		err = homa_recv(s, HOMA_RECV_RESPONSE, id, WAIT_NS, &m);
	if (err) {
		fprintf(stderr, "xdp_peer: %zu-byte RPC: %s\n", len, homa_strerror(err));
		return -1;
	}
	err = m.length == len && homa_message_copy(&m, 0, resp, len) == len &&
	      !memcmp(req, resp, len) ? 0 : -1;
	if (err)
		fprintf(stderr, "xdp_peer: %zu-byte RPC came back with %zu different bytes\n",
			len, m.length);
	homa_message_release(&m);
	return err;
}

/** print_stats() - The driver's counters of @s on one line, after @what. */
static void print_stats(homa_socket *s, const char *what)
{
	struct homa_io_stats st;

	homa_io_stats(s, &st);
	printf("%s; tx %llu rx %llu packets, zerocopy %llu, fill_empty %llu, "
	       "rx_dropped %llu, invalid_descs %llu, tx_ring_full %llu, rx_invalid %llu, "
	       "unresolved %llu\n", what,
	       (unsigned long long)st.tx_packets, (unsigned long long)st.rx_packets,
	       (unsigned long long)st.xdp_zerocopy, (unsigned long long)st.xdp_fill_empty,
	       (unsigned long long)st.xdp_rx_dropped, (unsigned long long)st.xdp_invalid_descs,
	       (unsigned long long)st.xdp_tx_ring_full, (unsigned long long)st.xdp_rx_invalid,
	       (unsigned long long)st.xdp_unresolved);
}

/**
 * peer_of() - @text (an IPv4 or IPv6 address) and @port as a socket address in @out.
 * Return: 0, or -1 if @text is neither.
 */
static int peer_of(const char *text, uint16_t port, struct sockaddr_storage *out)
{
	struct sockaddr_in *in = (struct sockaddr_in *)out;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;

	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		return 0;
	}
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	return inet_pton(AF_INET6, text, &in6->sin6_addr) == 1 ? 0 : -1;
}

/**
 * echo() - The "echo" mode: @count RPCs of each size in @sizes (comma
 * separated, at most 4 MiB each) from port @lport to @peer_addr (IPv4 or
 * IPv6).
 * Return: 0 if all came back intact.
 */
static int echo(const char *ifname, const char *addr, const char *peer_addr, uint16_t port,
		const char *sizes, int count, uint16_t lport)
{
	homa_socket *s = open_xdp(ifname, addr, lport, false);
	struct sockaddr_storage peer;
	uint8_t *req = malloc(4 << 20), *resp = malloc(4 << 20);
	char what[64];
	int bad = 0, n = 0;

	if (!s || peer_of(peer_addr, port, &peer)) {
		fprintf(stderr, "xdp_peer: no socket, or bad peer address %s\n", peer_addr);
		free(req);
		free(resp);
		if (s)
			homa_close(s);
		return 1;
	}
	for (const char *p = sizes; *p && !bad; p += *p == ',') {
		char *end;
		size_t len = strtoul(p, &end, 0);

		if (end == p || len > (4u << 20)) {
			fprintf(stderr, "xdp_peer: bad size list %s\n", sizes);
			bad = 1;
			break;
		}
		p = end;
		for (int i = 0; i < count && !bad; i++, n++)
			bad += rpc(s, &peer, len, (uint32_t)n, req, resp) != 0;
	}
	snprintf(what, sizeof(what), "rpcs %d bad %d", n, bad);
	print_stats(s, what);
	homa_close(s);
	free(req);
	free(resp);
	return bad ? 1 : 0;
}

/**
 * check_lent() - Zero-copy receive on the XDP driver: responses were read
 * from UMEM frames in place (rx_lent_bytes), and once every message is
 * released each frame goes back to the fill ring. A frame comes back at
 * the driver's next receive after its release, so 1-byte RPCs keep the
 * driver receiving until the gauge reads 0 or 10 s pass.
 * Return: 0 or -1 (with a message).
 */
static int check_lent(homa_socket *s, const struct sockaddr_in *peer, uint8_t *req,
		      uint8_t *resp)
{
	struct homa_io_stats st;
	struct timespec t0, t;

	homa_io_stats(s, &st);
	printf("lent %llu bytes, copied %llu bytes\n", (unsigned long long)st.rx_lent_bytes,
	       (unsigned long long)st.rx_copied_bytes);
	if (!st.rx_lent_bytes) {
		fprintf(stderr, "xdp_peer: no payload was received in place in UMEM\n");
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0;; i++) {
		if (rpc(s, peer, 1, 1000000 + i, req, resp))
			return -1;
		homa_io_stats(s, &st);
		if (!st.xdp_rx_lent)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10) {
			fprintf(stderr, "xdp_peer: %llu frames still held after every release\n",
				(unsigned long long)st.xdp_rx_lent);
			return -1;
		}
	}
}

/**
 * check_copies() - The requests of @rounds rounds of @sizes, sent with
 * homa_send() (copied into the message), were copied at most 2.5 times
 * per byte in the library (tx_copied_bytes): once into the message, once
 * out of it straight into UMEM send frames, plus what the lossy path
 * made it send again. A staging copy between the two (the message into a
 * buffer of the runtime, then that into a frame) makes 3. Return: 0 or 1.
 */
static int check_copies(homa_socket *s, const size_t *sizes, size_t n, int rounds)
{
	struct homa_io_stats st;
	uint64_t sent = 0;

	for (size_t i = 0; i < n; i++)
		sent += sizes[i] * (uint64_t)rounds;
	homa_io_stats(s, &st);
	printf("copies %.2f per byte sent (%llu bytes copied, %llu sent)\n",
	       (double)st.tx_copied_bytes / (double)sent,
	       (unsigned long long)st.tx_copied_bytes, (unsigned long long)sent);
	if (st.tx_copied_bytes * 2 <= sent * 5)
		return 0;
	fprintf(stderr, "xdp_peer: more than 2.5 copies per byte sent: a staging copy\n");
	return 1;
}

/** client() - The RPC sizes and the TCP check; prints the counters. */
static int client(const char *ifname, const char *addr, const char *peer_addr, uint16_t port,
		  int tcp_port)
{
	static const size_t sizes[] = {1, 2, 99, 1000, 1400, 1460, 1473, 3000, 10000, 65536,
				       100000, 500000, 1u << 20, 4u << 20};
	homa_socket *s = open_xdp(ifname, addr, 0, false);
	struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct tcp_check tc = {.peer = peer};
	uint8_t *req = malloc(4 << 20), *resp = malloc(4 << 20);
	char what[64];
	pthread_t t;
	int bad = 0, n = 0;

	inet_pton(AF_INET, peer_addr, &peer.sin_addr);
	tc.peer.sin_addr = peer.sin_addr;
	tc.peer.sin_port = htons((uint16_t)tcp_port);
	pthread_create(&t, NULL, tcp_check, &tc);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++, n++)
			bad += rpc(s, &peer, sizes[i], (uint32_t)n, req, resp) != 0;
	pthread_join(t, NULL);
	if (strcmp(ifname, "udp")) {
		bad += check_copies(s, sizes, sizeof(sizes) / sizeof(sizes[0]), 2);
		bad += check_lent(s, &peer, req, resp) != 0;
	}
	snprintf(what, sizeof(what), "rpcs %d bad %d tcp %s", n, bad, tc.ok ? "ok" : "BROKEN");
	print_stats(s, what);
	homa_close(s);
	free(req);
	free(resp);
	return bad || !tc.ok ? 1 : 0;
}

/** One socket of the "pair" mode and its result. */
struct pair_end {
	homa_socket *s;
	struct sockaddr_in peer;
	uint32_t seed;
	int bad;
};

/** pair_run() - The RPC sizes of the "pair" mode on one socket; counts failures in bad. */
static void *pair_run(void *arg)
{
	static const size_t sizes[] = {1, 100, 1460, 1473, 10000, 65536, 200000};
	struct pair_end *e = arg;
	uint8_t *req = malloc(200000), *resp = malloc(200000);

	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			e->bad += rpc(e->s, &e->peer, sizes[i], e->seed++, req, resp) != 0;
	free(req);
	free(resp);
	return NULL;
}

/**
 * pair() - The "pair" mode: two sockets share @ifname, their RPCs at the
 * same time, then the second alone after the first closed.
 * Return: 0 if every RPC came back intact.
 */
static int pair(const char *ifname, const char *addr, const char *peer_addr, uint16_t port)
{
	struct pair_end e[2];
	pthread_t t[2];
	int bad;

	for (int i = 0; i < 2; i++) {
		e[i] = (struct pair_end){.s = open_xdp(ifname, addr, 0, false), .seed = 1000u * i,
					 .peer = {.sin_family = AF_INET, .sin_port = htons(port)}};
		inet_pton(AF_INET, peer_addr, &e[i].peer.sin_addr);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, pair_run, &e[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	print_stats(e[0].s, e[0].bad ? "first socket: FAILED" : "first socket: ok");
	homa_close(e[0].s);
	pair_run(&e[1]);
	print_stats(e[1].s, e[1].bad ? "second socket: FAILED" : "second socket: ok");
	homa_close(e[1].s);
	bad = e[0].bad + e[1].bad;
	printf("pair: %d bad RPCs\n", bad);
	return bad ? 1 : 0;
}

/** Sizes of one round of the "procs" mode. */
static const size_t procs_sizes[] = {1, 100, 1460, 1473, 10000, 65536, 200000};

/**
 * procs_round() - One round of the "procs" mode on @s: an RPC of each
 * size, checked byte for byte; the responses' messages go to @keep (the
 * caller releases them) when @keep is not NULL. Return: RPCs that failed.
 */
static int procs_round(homa_socket *s, const struct sockaddr_in *peer, uint32_t *seed,
		       uint8_t *req, uint8_t *resp, struct homa_message *keep)
{
	int bad = 0;

	for (size_t i = 0; i < sizeof(procs_sizes) / sizeof(procs_sizes[0]); i++) {
		size_t len = procs_sizes[i];
		struct homa_message m;
		uint64_t id;
		int err;

		fill(req, len, *seed);
		err = homa_send(s, (const struct sockaddr *)peer, req, len, (*seed)++, &id);
		if (!err)
			err = homa_recv(s, HOMA_RECV_RESPONSE, id, WAIT_NS, &m);
		if (err) {
			fprintf(stderr, "xdp_peer: %zu-byte RPC: %s\n", len, homa_strerror(err));
			bad++;
			continue;
		}
		if (m.length != len || homa_message_copy(&m, 0, resp, len) != len ||
		    memcmp(req, resp, len)) {
			fprintf(stderr, "xdp_peer: %zu-byte RPC came back different\n", len);
			bad++;
		}
		if (keep && i + 1 == sizeof(procs_sizes) / sizeof(procs_sizes[0]))
			*keep = m;
		else
			homa_message_release(&m);
	}
	return bad;
}

/** now_s() - CLOCK_MONOTONIC in seconds. */
static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/**
 * procs() - The "procs" mode (see the file comment).
 * Return: 0 if every RPC came back intact (and, second, frames were reclaimed).
 */
static int procs(const char *ifname, const char *addr, const char *peer_addr, uint16_t port,
		 bool first, bool two)
{
	homa_socket *s = open_xdp(ifname, addr, 0, false);
	homa_socket *s2 = two ? open_xdp(ifname, addr, 0, false) : NULL;
	struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(port)};
	uint8_t *req = malloc(200000), *resp = malloc(200000);
	struct homa_message kept[3];
	struct homa_io_stats st = {0};
	uint32_t seed = first ? 0 : 1u << 30;
	int bad = 0, after = 0, round = 0;
	double end = now_s() + 40;

	inet_pton(AF_INET, peer_addr, &peer.sin_addr);
	if (!first) {
		printf("joined\n");
		fflush(stdout);
	}
	for (; first; round++) {
		if (round >= 3)
			homa_message_release(&kept[round % 3]);
		if (procs_round(s, &peer, &seed, req, resp, &kept[round % 3]))
			return 1;  /* the test sees no "ok" line */
		printf("ok %d\n", round);
		fflush(stdout);
	}
	while (after < 3 && now_s() < end) {
		bad += procs_round(s, &peer, &seed, req, resp, NULL);
		if (s2)
			bad += procs_round(s2, &peer, &seed, req, resp, NULL);
		round++;
		homa_io_stats(s, &st);
		after += st.xdp_reclaimed > 0;
	}
	print_stats(s, bad ? "second: FAILED" : "second: ok");
	printf("rounds %d bad %d reclaimed %llu\n", round, bad,
	       (unsigned long long)st.xdp_reclaimed);
	if (s2) {
		print_stats(s2, bad ? "second socket: FAILED" : "second socket: ok");
		homa_close(s2);
	}
	homa_close(s);
	free(req);
	free(resp);
	return bad || !st.xdp_reclaimed ? 1 : 0;
}

/** try_open() - The "open" mode: see the file comment. Return: 0. */
static int try_open(const char *ifname, const char *addr, uint32_t mtu, int count)
{
	struct homa_settings st;
	struct homa_open_opts o;
	homa_socket *s[4] = {0};
	int err = 0;

	homa_settings_default(&st);
	if (mtu)
		st.mtu = mtu;
	homa_open_opts_default(&o);
	o.driver = HOMA_DRIVER_XDP;
	o.ifname = strcmp(ifname, "-") ? ifname : NULL;
	o.bind_addr = addr;
	o.settings = &st;
	for (int i = 0; i < count && i < 4 && !err; i++)
		err = homa_open(&s[i], &o);
	if (s[0]) {
		struct homa_io_stats io;

		homa_io_stats(s[0], &io);
		printf("mode %s\n", io.xdp_zerocopy ? "zerocopy" : "copy");
	}
	printf("%d\n", err);
	for (int i = 0; i < 4; i++)
		if (s[i])
			homa_close(s[i]);
	return 0;
}

/**
 * spin() - The "spin" mode: see the file comment (xdp_spin.sh counts its
 * system calls). Return: 0 if every call said HOMA_EAGAIN, else 1.
 */
static int spin(const char *ifname, const char *addr, int count)
{
	struct homa_open_opts o;
	homa_socket *s = NULL;
	int err, again = 0;

	homa_open_opts_default(&o);
	o.driver = HOMA_DRIVER_XDP;
	o.ifname = ifname;
	o.bind_addr = addr;
	o.server = true;
	o.mode = HOMA_MODE_POLLED;
	err = homa_open(&s, &o);
	if (err) {
		fprintf(stderr, "xdp_peer: homa_open on %s: %s\n", ifname, homa_strerror(err));
		return 1;
	}
	for (int i = 0; i < count; i++) {
		struct homa_message m;
		int rc = homa_recv(s, HOMA_RECV_REQUEST, 0, 0, &m);

		if (rc == 0)
			homa_message_release(&m);
		again += rc == HOMA_EAGAIN;
	}
	homa_close(s);
	printf("spins %d\n", again);
	return again == count ? 0 : 1;
}

/** main() - See the file comment. */
int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "server"))
		return serve(argv[2], argv[3], (uint16_t)atoi(argv[4]), atoi(argv[5]));
	if (argc == 7 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], argv[4], (uint16_t)atoi(argv[5]), atoi(argv[6]));
	if ((argc == 8 || argc == 9) && !strcmp(argv[1], "echo"))
		return echo(argv[2], argv[3], argv[4], (uint16_t)atoi(argv[5]), argv[6], atoi(argv[7]),
			    argc == 9 ? (uint16_t)atoi(argv[8]) : 0);
	if (argc == 6 && !strcmp(argv[1], "pair"))
		return pair(argv[2], argv[3], argv[4], (uint16_t)atoi(argv[5]));
	if (argc == 7 && !strcmp(argv[1], "procs"))
		return procs(argv[2], argv[3], argv[4], (uint16_t)atoi(argv[5]),
			     !strcmp(argv[6], "first"), !strcmp(argv[6], "second2"));
	if (argc == 6 && !strcmp(argv[1], "open"))
		return try_open(argv[2], argv[3], (uint32_t)atoi(argv[4]), atoi(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "spin"))
		return spin(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: xdp_peer server IF ADDR PORT TCPPORT | "
		"client IF ADDR PEER PORT TCPPORT | echo IF ADDR PEER PORT SIZES COUNT [LPORT] | open IF ADDR MTU COUNT | "
		"pair IF ADDR PEER PORT | spin IF ADDR COUNT | "
		"procs IF ADDR PEER PORT first|second\n");
	return 2;
}
