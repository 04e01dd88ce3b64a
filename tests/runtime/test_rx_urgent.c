/* SPDX-License-Identifier: MIT */
/**
 * @file test_rx_urgent.c
 * A short request overtakes bulk data being handed to the engine on a
 * clear (unencrypted) socket, real stack (UDP on loopback, 65000-byte
 * packets as homa-bench's loopback profile sends them): the runtime hands
 * a batch that holds bulk bytes to the engine a chunk at a time and,
 * between chunks, reads the driver's queues of short messages (io.c,
 * input_batch(); the UDP driver's recv_urgent(): the known peers that
 * sent only short messages lately). This file interposes recvmmsg()
 * (-Wl,--wrap): when the server reads a batch of bulk packets, the
 * lookup is sent before the batch is returned, so it waits in its own
 * socket while the batch is handed over.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "homa/homa.h"
#include "homa/stats.h"

/** The bulk request's bytes: 10 unscheduled packets of 65000 B, then grants. */
#define BIG_LEN (1u << 20)
/** The lookup's bytes. */
#define LOOKUP_LEN 100
/** A datagram at least this long is bulk data. */
#define BULK_DGRAM 60000
/** Bulk datagrams a server's read must return for the lookup to be sent. */
#define BULK_MIN 8
/**
 * Packets of the batch the engine may take before the lookup: one chunk
 * (io.c, 250000 B: four packets of 65000 B, five if some are shorter).
 * The old code took the whole batch: BULK_MIN or more.
 */
#define CHUNK_PKTS 5

int __real_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
		    struct timespec *timeout);

/** What the wrapper does and saw (w_lock). */
static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static homa_socket *g_lookup;  /**< sends the lookup; NULL: the wrapper is off */
static uint16_t g_port;        /**< the server's port (network order) */
static bool g_armed;           /**< the next bulk batch of the server sends the lookup */
static int g_bulk_early;       /**< bulk datagrams the server read before that batch */
static int g_bulk_read;        /**< bulk datagrams in that batch */
static uint64_t g_lookup_id;   /**< the lookup's RPC id (0: not sent) */
static homa_socket *g_srv;     /**< the server, whose engine's count is read */
static bool g_watch;           /**< the lookup was sent; its read is awaited */
static int64_t g_taken;        /**< DATA packets the server's engine had taken when
				    the lookup was read (-1: not yet) */

static uint64_t data_pkts(homa_socket *s, bool sent);

/** fd_port() - The local IPv4 port of socket @fd (network order), 0 if none. */
static uint16_t fd_port(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len) || a.sin_family != AF_INET)
		return 0;
	return a.sin_port;
}

/**
 * send_lookup() - Send the LOOKUP_LEN-byte lookup from g_lookup to the
 * server (not under w_lock), note its id, and give loopback 2 ms to queue
 * it in the server's socket for that peer.
 */
static void send_lookup(void)
{
	struct sockaddr_storage dst = test_dst(ntohs(g_port));
	struct timespec ts = {0, 2000000};
	uint8_t req[LOOKUP_LEN] = {7};
	uint64_t id = 0;

	uint64_t sent = data_pkts(g_lookup, true);

	if (homa_send(g_lookup, (struct sockaddr *)&dst, req, sizeof(req), 0, &id))
		id = 0;
	pthread_mutex_lock(&w_lock);
	g_lookup_id = id;
	g_watch = id != 0;
	pthread_mutex_unlock(&w_lock);
	for (int64_t end = test_now_ms() + 1000;
	     id && data_pkts(g_lookup, true) == sent && test_now_ms() < end;)
		usleep(200);
	nanosleep(&ts, NULL);
}

/** lookup_in() - Whether one of the @n datagrams at @msgs is the lookup's (short, with its bytes). */
static bool lookup_in(const struct mmsghdr *msgs, int n)
{
	for (int i = 0; i < n; i++)
		if (msgs[i].msg_len >= LOOKUP_LEN && msgs[i].msg_len < BULK_DGRAM)
			return true;
	return false;
}

/** bulk_in() - How many of the @n datagrams at @msgs are bulk data (BULK_DGRAM). */
static int bulk_in(const struct mmsghdr *msgs, int n)
{
	int b = 0;

	for (int i = 0; i < n; i++)
		b += msgs[i].msg_len >= BULK_DGRAM;
	return b;
}

/**
 * __wrap_recvmmsg() - recvmmsg() that, while armed, counts the bulk
 * datagrams read on the server's port (any of its sockets) and, for the
 * first read that holds at least BULK_MIN of them, sends the lookup
 * before returning them. Return: as recvmmsg().
 */
int __wrap_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
		    struct timespec *timeout)
{
	int n = __real_recvmmsg(fd, msgs, vlen, flags, timeout);
	bool send = false, seen = false;

	pthread_mutex_lock(&w_lock);
	if (g_watch && n > 0 && fd_port(fd) == g_port && lookup_in(msgs, n)) {
		g_watch = false;
		seen = true;
	}
	if (g_lookup && g_armed && n > 0 && fd_port(fd) == g_port) {
		int b = bulk_in(msgs, n);

		if (b >= BULK_MIN) {
			g_armed = false;
			g_bulk_read = b;
			send = true;
		} else {
			g_bulk_early += b;
		}
	}
	pthread_mutex_unlock(&w_lock);
	if (seen) {
		int64_t taken = (int64_t)data_pkts(g_srv, false);

		pthread_mutex_lock(&w_lock);
		g_taken = taken;
		pthread_mutex_unlock(&w_lock);
	}
	if (send)
		send_lookup();
	return n;
}

/** open_lo() - Open @s on 127.0.0.1: loopback profile (65000-byte packets), polled if @server. */
static void open_lo(homa_socket **s, bool server)
{
	struct homa_open_opts o;
	struct homa_settings st;

	homa_settings_default(&st);
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	st.mtu = 65000;
	st.unsched_bytes = 600000;
	st.link_mbps = 400000;
	if (server)
		st.tick_ns = 100000000;  /* the standby thread stays away: the test's thread reads */
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.mode = server ? HOMA_MODE_POLLED : HOMA_MODE_THREADED;
	o.server = server;
	o.settings = &st;
	assert_int_equal(homa_open(s, &o), 0);
}

/**
 * serve_one() - Take the next request on @srv (1 s at most), check that
 * it has @len bytes, and answer with one byte.
 */
static void serve_one(homa_socket *srv, size_t len)
{
	struct homa_message m;
	int err = homa_recv(srv, HOMA_RECV_REQUEST, 0, 1000000000, &m);

	if (err)
		fail_msg("server: no %zu-byte request: %s", len, homa_strerror(err));
	if (m.length != len)
		fail_msg("server: a %zu-byte request where one of %zu bytes was due", m.length, len);
	assert_int_equal(homa_reply_buf(srv, m.id, "r", 1), 0);
	homa_message_release(&m);
}

/** await() - Wait for @c's response to @id (1 s at most); it must have one byte. */
static void await(homa_socket *c, uint64_t id)
{
	struct homa_message m;

	assert_int_equal(homa_recv(c, HOMA_RECV_RESPONSE, id, 1000000000, &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, 1);
	homa_message_release(&m);
}

/** warm() - One @len-byte RPC from @c to the polled server @srv. */
static void warm(homa_socket *c, homa_socket *srv, size_t len)
{
	struct sockaddr_storage dst = test_dst((int)homa_local_port(srv));
	static uint8_t buf[LOOKUP_LEN];
	uint64_t id;

	assert_int_equal(homa_send(c, (struct sockaddr *)&dst, buf, len, 0, &id), 0);
	serve_one(srv, len);
	await(c, id);
}

/** data_pkts() - DATA packets @s's engine has taken in (@sent false) or sent. */
static uint64_t data_pkts(homa_socket *s, bool sent)
{
	struct homa_stats st;

	assert_int_equal(homa_socket_stats(s, &st), 0);
	return sent ? st.pkts_sent[HOMA_PKT_DATA - HOMA_PKT_FIRST]
		    : st.pkts_recv[HOMA_PKT_DATA - HOMA_PKT_FIRST];
}

/**
 * await_sent() - Wait (1 s at most) until @s has sent @n more DATA packets
 * than @base, then 5 ms more: on a loaded machine the client's thread
 * may send its unscheduled packets late, and the server's read must find
 * them all queued.
 */
static void await_sent(homa_socket *s, uint64_t base, uint64_t n)
{
	for (int64_t end = test_now_ms() + 1000;
	     data_pkts(s, true) - base < n && test_now_ms() < end;)
		usleep(1000);
	usleep(5000);
}

/**
 * homa_rt_input__short_request_between_bulk_chunks() - A polled clear
 * server reads a batch of BULK_MIN or more 65000-byte packets of a 1 MB
 * request from known peer B; meanwhile a 100 B lookup from known peer L
 * (whose latest packets were all short) waits in L's socket. The server
 * hands the batch over CHUNK_PKTS packets at a time, reads L's socket
 * between chunks, and its homa_recv() returns the lookup with at most
 * CHUNK_PKTS bulk packets taken by the engine (the old code handed the
 * whole batch over first: every bulk packet read). The count is the
 * engine's when the lookup's datagram was read (__wrap_recvmmsg()). The
 * rest of the batch is taken later: both RPCs complete.
 */
static void homa_rt_input__short_request_between_bulk_chunks(void **state)
{
	static uint8_t big[BIG_LEN];
	struct sockaddr_storage dst;
	homa_socket *srv, *b, *l;
	uint64_t before, sent, bulk_before, big_id, lookup_id;
	struct homa_message m;
	int bulk_read, bulk_early;
	int64_t taken;

	(void)state;
	open_lo(&srv, true);
	open_lo(&b, false);
	open_lo(&l, false);
	/* both known peers of the server; L's latest batch all short (urgent) */
	warm(b, srv, LOOKUP_LEN);
	warm(l, srv, LOOKUP_LEN);
	warm(l, srv, LOOKUP_LEN);
	warm(l, srv, LOOKUP_LEN);
	/* the server takes the clients' last control packets (L's: short) */
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 20000000, &m), HOMA_ETIME);
	dst = test_dst((int)homa_local_port(srv));
	pthread_mutex_lock(&w_lock);
	g_port = htons(homa_local_port(srv));
	g_lookup = l;
	g_srv = srv;
	g_armed = true;
	g_bulk_early = 0;
	g_lookup_id = 0;
	g_taken = -1;
	pthread_mutex_unlock(&w_lock);

	before = data_pkts(srv, false);
	sent = data_pkts(b, true);
	assert_int_equal(homa_send(b, (struct sockaddr *)&dst, big, sizeof(big), 0, &big_id), 0);
	await_sent(b, sent, BULK_MIN + 1);  /* the unscheduled packets wait at the server */
	serve_one(srv, LOOKUP_LEN);  /* the lookup first: the bulk request needs grants */
	pthread_mutex_lock(&w_lock);
	g_lookup = NULL;
	g_watch = false;
	bulk_read = g_bulk_read;
	bulk_early = g_bulk_early;
	lookup_id = g_lookup_id;
	taken = g_taken;
	pthread_mutex_unlock(&w_lock);
	assert_true(bulk_read >= BULK_MIN);
	assert_true(lookup_id != 0);
	if (taken < 0)
		fail_msg("the server's reads never returned the lookup's datagram");
	bulk_before = (uint64_t)taken - before;
	print_message("bulk packets: %d read before the batch, %d in it; %llu taken by the engine "
		      "when the lookup was read\n", bulk_early, bulk_read,
		      (unsigned long long)bulk_before);
	if (bulk_before > (uint64_t)bulk_early + CHUNK_PKTS)
		fail_msg("%llu of the batch's %d bulk packets taken before the lookup (one chunk: %d)",
			 (unsigned long long)(bulk_before - (uint64_t)bulk_early), bulk_read,
			 CHUNK_PKTS);
	await(l, lookup_id);
	serve_one(srv, BIG_LEN);
	await(b, big_id);
	homa_close(l);
	homa_close(b);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_rt_input__short_request_between_bulk_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
