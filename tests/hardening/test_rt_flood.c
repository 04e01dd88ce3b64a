/* SPDX-License-Identifier: MIT */
/**
 * @file test_rt_flood.c
 * Hostile input against a live receiver (runtime + UDP driver on
 * loopback): a thread floods the server with forged DATA packets that
 * announce 64 MiB messages from random Homa ports and ids, sent from four
 * fake hosts (127.0.0.2-5) and from the genuine client's own address
 * (127.0.0.1), while a genuine client keeps running RPCs. The server's
 * buffered bytes must stay under its cap (plus one 64 KiB chunk), the
 * excess must be dropped and counted, genuine RPCs must keep completing
 * during the flood (at least one, none failed, corrupted, hung or run
 * twice: shorter messages evict the forged ones, src/core/evict.c; the
 * flood ends when new RPCs stop, and those in flight must then complete),
 * and once the flood stops the server must serve every genuine RPC again.
 * A second client that opens while the flood runs and the first client
 * keeps the server busy (a stranger to the server, whose strangers' queue
 * then gets only homa_open_opts.stranger_budget packets per millisecond)
 * must complete its first RPCs too.
 * P50/P99 latency of genuine RPCs during the flood and without it are
 * printed, not asserted (docs/HARDENING.md records them), and so are the
 * error that ended each failed RPC, both sockets' drop counters and the
 * kernel's receive-buffer drops: a flood the server cannot keep up with
 * (under ASan) overflows its socket buffer, and an honest request lost
 * four times in a row once failed with HOMA_ENOSERVER (restart() in
 * src/core/incoming.c). The sockets have the library's defaults but for
 * the server's memory cap, its strangers' limit of partly received
 * requests (raised to a proven host's, so that the forged requests reach
 * the cap) and FLOOD_TIMEOUT_TICKS (2 s) of silence
 * before they declare the other dead: the flood keeps the server's
 * kernel receive queue (rcvbuf_bytes, 1 MiB by default, 2 MiB in the
 * kernel) full, and an ASan build with two more copies beside it at
 * load 26-32 drains it so slowly that honest RPCs took 0.2-2 s (P50)
 * during the flood; the library's 100 ms timed 3 of 3 such runs out,
 * 500 ms 1 of 6 (with the old 8 MiB queue, 6 of 6).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/wire.h"
#include "rt_load.h"

#define RX_CAP (8u << 20)
#define RX_SLACK (64u * 1024)

/** State shared with the flood thread. */
struct flood {
	int port;
	uint64_t until;         /**< rt_now() at which the flood ends by itself (0: never) */
	_Atomic int stop;
	_Atomic uint64_t sent;
};

/** Sources of forged packets: 127.0.0.2-5 and the genuine client's 127.0.0.1. */
#define FLOOD_HOSTS 5

/** flood_socket() - A UDP socket bound to host 127.0.0.@host. Return: fd. */
static int flood_socket(int host)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(0x7f000000u + (uint32_t)host);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/** flood_main() - Send forged DATA until told to stop. */
static void *flood_main(void *arg)
{
	static uint8_t payload[1400];
	struct flood *f = arg;
	struct sockaddr_in dst;
	uint8_t pkt[1500];
	uint64_t rng = 88172645463325252ull, n = 0;
	int fds[FLOOD_HOSTS], i;

	for (i = 0; i < FLOOD_HOSTS; i++)
		fds[i] = flood_socket(i < FLOOD_HOSTS - 1 ? 2 + i : 1);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)f->port);
	dst.sin_addr.s_addr = htonl(0x7f000001u);
	while (!atomic_load(&f->stop) && (!f->until || rt_now() < f->until)) {
		struct homa_pkt p;
		int len;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		memset(&p, 0, sizeof(p));
		p.type = HOMA_PKT_DATA;
		p.sport = (uint16_t)(1024 + rng % 60000);
		p.dport = (uint16_t)f->port;
		p.sender_id = (rng >> 16) << 1;
		p.u.data.message_length = (64u << 20) - 1;
		p.u.data.incoming = 40000;
		p.u.data.payload = payload;
		p.u.data.payload_len = sizeof(payload);
		len = homa_wire_encode(&p, pkt, sizeof(pkt));
		sendto(fds[n % FLOOD_HOSTS], pkt, (size_t)len, MSG_DONTWAIT, (struct sockaddr *)&dst, sizeof(dst));
		if (++n % 256 == 0)
			usleep(200); /* about 1 Gbit/s of forged traffic; leaves CPU for the rest */
	}
	atomic_store(&f->sent, n);
	for (i = 0; i < FLOOD_HOSTS; i++)
		close(fds[i]);
	return NULL;
}

/** A client that is a stranger to the server when the flood is on. */
struct newcomer {
	int port;
	const struct homa_settings *st;
	struct rt_result res;
};

/** NEWCOMER_RPCS: RPCs the newcomer runs, one at a time. */
#define NEWCOMER_RPCS 4

/** newcomer_main() - Open a fresh client 100 ms into the flood and run NEWCOMER_RPCS RPCs. */
static void *newcomer_main(void *arg)
{
	struct newcomer *nc = arg;
	homa_socket *c;

	usleep(100000);
	if (rt_open(&c, false, 0, nc->st))
		return NULL;
	rt_load_run(c, nc->port, 1000000, NEWCOMER_RPCS, 1, 10000000000ull, 0, &nc->res);
	homa_close(c);
	return NULL;
}

/**
 * udp_rcvbuf_errors() - The kernel's count of UDP datagrams dropped for a
 * full socket receive buffer (/proc/net/snmp, all sockets). Return: the
 * count, or 0 if it cannot be read.
 */
static uint64_t udp_rcvbuf_errors(void)
{
	char line[512], head[512];
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/net/snmp", "r");

	if (!f)
		return 0;
	head[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Udp: ", 5) && !strncmp(head, "Udp: ", 5) &&
		    sscanf(line + 5, "%llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5]) == 6)
			break;
		memcpy(head, line, sizeof(line));
	}
	fclose(f);
	return v[4]; /* InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors ... */
}

/** print_drops() - Print @what's nonzero drop counters and client restarts of @s. */
static void print_drops(const char *what, homa_socket *s)
{
	struct homa_stats st;
	int r;

	homa_socket_stats(s, &st);
	print_message("%s: restarts %llu, resends sent %llu received %llu, drops:", what,
		      (unsigned long long)st.rpc_restarts, (unsigned long long)st.resends_sent,
		      (unsigned long long)st.resends_received);
	for (r = 0; r < HOMA_DROP_REASONS; r++)
		if (st.drops[r])
			print_message(" %s %llu", homa_drop_reason_name(r), (unsigned long long)st.drops[r]);
	print_message("\n");
}

/** report() - Print one latency line (P50/P99 sort r->lat). */
static void report(const char *what, struct rt_result *r, double secs)
{
	print_message("%s: %llu RPCs ok of %llu in %.2f s (failed %llu, hung %llu), "
		      "P50 %.0f us, P99 %.0f us, mean %.0f us, max %.0f us\n", what,
		      (unsigned long long)r->ok, (unsigned long long)r->sent, secs,
		      (unsigned long long)r->failed, (unsigned long long)r->hung,
		      rt_lat_percentile(r, 50) / 1e3, rt_lat_percentile(r, 99) / 1e3,
		      r->lat_n ? r->lat_sum_ns / 1e3 / (double)r->lat_n : 0.0, r->lat_max_ns / 1e3);
}

/** A thread that records the peak rx_buffered_bytes of a socket. */
struct sampler {
	homa_socket *s;
	_Atomic int stop;
	uint64_t peak;
};

/** sampler_main() - Sample every millisecond until told to stop. */
static void *sampler_main(void *arg)
{
	struct sampler *sm = arg;
	struct homa_stats st;

	while (!atomic_load(&sm->stop)) {
		homa_socket_stats(sm->s, &st);
		if (st.rx_buffered_bytes > sm->peak)
			sm->peak = st.rx_buffered_bytes;
		usleep(1000);
	}
	return NULL;
}

/** Ticks (1 ms) of silence before a peer is declared dead; file comment. */
#define FLOOD_TIMEOUT_TICKS 2000

/**
 * flood__memory_capped_then_recovers: see the file comment.
 */
static void flood__memory_capped_then_recovers(void **state)
{
	struct homa_settings st;
	struct rt_server sv;
	static struct rt_result quiet, loud, after;
	double p50q, p99q, p50l, p99l;
	uint64_t t0, t1;
	double load[3];
	struct flood f;
	struct sampler sm;
	struct homa_stats ss;
	struct homa_io_stats io;
	pthread_t ft, smt, nct;
	static struct newcomer nc;
	homa_socket *c;
	uint64_t n = 400, kdrops;

	rt_settings(&st, FLOOD_TIMEOUT_TICKS);
	st.max_rx_buffered = RX_CAP;
	/* the fake hosts open as many requests as a proven host: it is the
	 * memory cap, not the strangers' smaller limit, that this flood meets */
	st.max_stranger_partial_msgs = st.max_peer_partial_msgs;
	assert_int_equal(rt_server_start(&sv, 2, 0, &st), 0);
	assert_int_equal(rt_open(&c, false, 0, &st), 0);
	rt_load_run(c, sv.port, 3 * n, n / 4, 4, 30000000000ull, 0, &quiet); /* warm-up */
	t0 = rt_now();
	rt_load_run(c, sv.port, 0, n, 4, 30000000000ull, 0, &quiet);
	report("without flood", &quiet, (rt_now() - t0) / 1e9);
	rt_result_print_failures("without flood", &quiet);

	memset(&f, 0, sizeof(f));
	f.port = sv.port;
	memset(&sm, 0, sizeof(sm));
	sm.s = sv.s;
	kdrops = udp_rcvbuf_errors();
	pthread_create(&smt, NULL, sampler_main, &sm);
	f.until = rt_now() + 5300000000ull;
	pthread_create(&ft, NULL, flood_main, &f);
	usleep(300000); /* let the flood fill the buffer first */
	memset(&nc, 0, sizeof(nc));
	nc.port = sv.port;
	nc.st = &st;
	pthread_create(&nct, NULL, newcomer_main, &nc);
	t0 = rt_now();
	/* the flood ends when new RPCs stop: those still in flight must then
	 * complete (an overloaded server's kernel buffer may drop one request
	 * again and again while the flood lasts; it keeps restarting) */
	rt_load_run(c, sv.port, n, n, 4, 10000000000ull, f.until, &loud);
	t1 = rt_now();
	pthread_join(nct, NULL);
	atomic_store(&f.stop, 1);
	pthread_join(ft, NULL);
	atomic_store(&sm.stop, 1);
	pthread_join(smt, NULL);
	homa_socket_stats(sv.s, &ss);
	report("during flood", &loud, (t1 - t0) / 1e9);
	report("newcomer during flood", &nc.res, (t1 - t0) / 1e9);
	assert_int_equal(homa_io_stats(sv.s, &io), 0);
	print_message("server: %llu ms with strangers over their budget, %llu known peers' packets\n",
		      (unsigned long long)io.rx_gate_closed, (unsigned long long)io.rx_known_packets);
	rt_result_print_failures("during flood", &loud);
	print_drops("server", sv.s);
	print_drops("client", c);
	print_message("kernel UDP receive-buffer drops during the flood: %llu\n",
		      (unsigned long long)(udp_rcvbuf_errors() - kdrops));
	print_message("flood: %llu forged packets (%.0f per s), server peak rx %llu bytes (cap %u), "
		      "dropped for memory %llu, requests evicted %llu (stale %llu)\n",
		      (unsigned long long)f.sent, f.sent / ((t1 - t0) / 1e9 + 0.3),
		      (unsigned long long)sm.peak, RX_CAP,
		      (unsigned long long)ss.drops[HOMA_DROP_MEMORY],
		      (unsigned long long)ss.msgs_evicted, (unsigned long long)ss.stale_evicted);
	p50q = rt_lat_percentile(&quiet, 50), p99q = rt_lat_percentile(&quiet, 99);
	p50l = rt_lat_percentile(&loud, 50), p99l = rt_lat_percentile(&loud, 99);
	if (getloadavg(load, 3) != 3)
		load[0] = load[1] = load[2] = -1;
	print_message("flood/no-flood latency ratio (before): P50 %.2f, P99 %.2f "
		      "(load average %.2f %.2f %.2f)\n", p50q > 0 ? p50l / p50q : 0.0,
		      p99q > 0 ? p99l / p99q : 0.0, load[0], load[1], load[2]);
	/* a fresh client socket: the old one may still hold RPCs the flood stalled */
	homa_close(c);
	assert_int_equal(rt_open(&c, false, 0, &st), 0);
	t0 = rt_now();
	rt_load_run(c, sv.port, 2 * n, n, 4, 30000000000ull, 0, &after);
	report("after flood", &after, (rt_now() - t0) / 1e9);
	rt_result_print_failures("after flood", &after);
	p50q = rt_lat_percentile(&after, 50), p99q = rt_lat_percentile(&after, 99);
	print_message("flood/no-flood latency ratio (after): P50 %.2f, P99 %.2f\n",
		      p50q > 0 ? p50l / p50q : 0.0, p99q > 0 ? p99l / p99q : 0.0);
	assert_int_equal(quiet.ok, n);
	assert_true(loud.ok > 0);
	if (nc.res.ok != NEWCOMER_RPCS)
		fail_msg("a client new during the flood completed %llu of %d RPCs (%llu failed, %llu hung)",
			 (unsigned long long)nc.res.ok, NEWCOMER_RPCS,
			 (unsigned long long)nc.res.failed, (unsigned long long)nc.res.hung);
	assert_int_equal(loud.failed + loud.hung, 0);
	assert_int_equal(loud.ok, loud.sent);
	assert_int_equal(loud.corrupt + loud.twice, 0);
	assert_true(sm.peak <= RX_CAP + RX_SLACK);
	assert_true(ss.drops[HOMA_DROP_MEMORY] > 0);
	assert_int_equal(after.ok, n);
	assert_int_equal(atomic_load(&sv.bad), 0);
	homa_close(c);
	rt_server_stop(&sv);
}

/** main() - Run the flood test. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flood__memory_capped_then_recovers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
