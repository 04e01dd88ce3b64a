/* SPDX-License-Identifier: MIT */
/**
 * @file test_enc_gate.c
 * The strangers' CPU budget on encrypted sockets, real stack (UDP on
 * loopback, 64 KB packets): a batch read from the port's own queues
 * (strangers) while a known peer is active is metered (rx_metered) and
 * its cost reported to the driver (rx_spent(), homa_gate_spend()). An
 * encrypted server opens such a batch a chunk at a time and, between
 * chunks, takes a known peer's lookup (recv_urgent); once that serves the
 * thread polling the socket, the rest of the batch waits in rt->rx_rest
 * for a later call (io.c, input_batch(), input_rest()). Every part must
 * be charged. This file interposes recvmmsg() and sendmmsg() (to gather
 * batches and see responses leave), homa_psp_open_view() (each
 * stranger's packet takes at least JUNK_DELAY_NS to open, a stand-in for
 * the AES-GCM pass over a forged packet of 64 KB) and homa_gate_spend()
 * (what the runtime reported), with -Wl,--wrap.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/encrypt.h"
#include "homa/homa.h"
#include "homa/psp.h"
#include "rt.h"
#include "rt_helpers.h"
#include "wrap_helpers.h"

/** Bytes of a stranger's datagram (PSP-looking junk, unknown SPI). */
#define JUNK_LEN 60000
/** Where the junk carries its mark. */
#define JUNK_MARK_OFF 64
/** The mark. */
#define JUNK_MARK "homa-enc-gate-junk"
/** Junk datagrams per burst, gathered into one batch by the wrapped recvmmsg(). */
#define GATHER 12
/** Opening one junk datagram takes at least this long (the wrapper sleeps). */
#define JUNK_DELAY_NS 2000000ull
/** Bursts tried until one was cut short by a lookup. */
#define BURSTS 10
/** The lookup's bytes (request and echoed response). */
#define LOOKUP_LEN 100
/** A datagram to the lookup client at least this long is its response (not control). */
#define RESPONSE_DGRAM 150

int __real_sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags);
int __real_homa_psp_open_view(homa_psp *p, uint8_t *pkt, size_t len, uint8_t **homa);
struct homa_gate;
bool __real_homa_gate_spend(struct homa_gate *g, uint64_t ns, uint64_t now);

/** What the wrappers saw (w_lock). */
static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static struct homa_driver *g_drv;  /**< the server's driver; NULL: wrappers off */
static uint16_t g_port;            /**< the server's port (network order) */
static uint16_t g_lookup_port;     /**< the lookup client's port (network order) */
static uint64_t g_junk_read;       /**< junk datagrams the server read */
static uint64_t g_junk_opened;     /**< junk datagrams it opened */
static uint64_t g_owed_ns;         /**< JUNK_DELAY_NS per junk opened from a metered batch */
static uint64_t g_reported_ns;     /**< ns reported with homa_gate_spend() */
static int g_cuts;                 /**< lookup responses sent while read junk waited unopened */

/** is_junk() - Whether the @len bytes at @pkt are a junk datagram of this test. */
static bool is_junk(const uint8_t *pkt, size_t len)
{
	return len == JUNK_LEN && !memcmp(pkt + JUNK_MARK_OFF, JUNK_MARK, sizeof(JUNK_MARK));
}

/**
 * __wrap_recvmmsg() - recvmmsg() that, for a read of junk on the server's
 * port, waits up to 20 ms for GATHER datagrams (one batch, as a flood's
 * would be) and counts the junk read. Return: as recvmmsg().
 */
int __wrap_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
		    struct timespec *timeout)
{
	int n = __real_recvmmsg(fd, msgs, vlen, flags, timeout);

	pthread_mutex_lock(&w_lock);
	if (g_drv && n > 0 && msgs[0].msg_len == JUNK_LEN && crypto_fd_port(fd) == g_port) {
		n = crypto_gather(fd, msgs, vlen, n, GATHER);
		for (int i = 0; i < n; i++)
			g_junk_read += msgs[i].msg_len == JUNK_LEN;
	}
	pthread_mutex_unlock(&w_lock);
	return n;
}

/**
 * __wrap_sendmmsg() - sendmmsg() that counts in g_cuts the lookup
 * responses that leave while junk the server read waits unopened (a
 * batch cut short: the rest is opened later). Return: as sendmmsg().
 */
int __wrap_sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags)
{
	pthread_mutex_lock(&w_lock);
	if (g_drv && g_junk_opened < g_junk_read &&
	    crypto_sent_to(msgs, vlen, g_lookup_port, RESPONSE_DGRAM, SIZE_MAX))
		g_cuts++;
	pthread_mutex_unlock(&w_lock);
	return __real_sendmmsg(fd, msgs, vlen, flags);
}

/**
 * __wrap_homa_psp_open_view() - homa_psp_open_view() that takes at least
 * JUNK_DELAY_NS for a junk datagram (it sleeps, in the thread handling
 * the batch), and owes that time to the strangers' budget when the
 * batch it came in was metered (the server's rx_metered, set by the
 * recv() that read it, stays until the next recv(): also while a rest of
 * the batch is handled). Return: as homa_psp_open_view().
 */
int __wrap_homa_psp_open_view(homa_psp *p, uint8_t *pkt, size_t len, uint8_t **homa)
{
	struct timespec ts = {0, (long)JUNK_DELAY_NS};
	struct homa_driver *drv;

	pthread_mutex_lock(&w_lock);
	drv = is_junk(pkt, len) ? g_drv : NULL;
	pthread_mutex_unlock(&w_lock);
	if (drv) {
		bool metered = drv->rx_metered;  /* this thread's own batch */

		while (nanosleep(&ts, &ts))
			;
		pthread_mutex_lock(&w_lock);
		g_junk_opened++;
		g_owed_ns += metered ? JUNK_DELAY_NS : 0;
		pthread_mutex_unlock(&w_lock);
	}
	return __real_homa_psp_open_view(p, pkt, len, homa);
}

/**
 * __wrap_homa_gate_spend() - homa_gate_spend() that adds the @ns reported
 * to g_reported_ns while the wrappers are on. Return: as homa_gate_spend().
 */
bool __wrap_homa_gate_spend(struct homa_gate *g, uint64_t ns, uint64_t now)
{
	pthread_mutex_lock(&w_lock);
	if (g_drv)
		g_reported_ns += ns;
	pthread_mutex_unlock(&w_lock);
	return __real_homa_gate_spend(g, ns, now);
}

/** A client sending lookups one after the other until stopped. */
struct looker {
	homa_socket *s;
	int port;          /**< the server's */
	_Atomic int stop;
	int err;           /**< the first failed lookup's error */
	int done;          /**< lookups completed */
	pthread_t thread;
};

/** look_main() - Thread body: lookups of LOOKUP_LEN bytes from @arg until stopped or one fails. */
static void *look_main(void *arg)
{
	struct looker *lk = arg;

	while (!atomic_load(&lk->stop) && !lk->err) {
		lk->err = crypto_rpc(lk->s, lk->port, LOOKUP_LEN);
		lk->done += !lk->err;
	}
	return NULL;
}

/**
 * junk_socket() - A UDP socket on 127.0.0.1 (a stranger to the server)
 * and in @pkt a PSP-looking datagram of JUNK_LEN bytes to @port: next
 * header 146, version 0, an SPI the server never issued, the mark.
 * Return: the socket.
 */
static int junk_socket(uint8_t *pkt, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001u)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	memset(pkt, 0x5a, JUNK_LEN);
	pkt[0] = HOMA_PSP_NEXT_HDR;
	pkt[1] = 1;
	pkt[2] = HOMA_PSP_CRYPT_OFF;
	pkt[3] = 1;
	memcpy(pkt + 4, "\x7e\x11\x22\x33", 4);  /* SPI */
	pkt[HOMA_PSP_HDR_LEN + 2] = (uint8_t)(port >> 8);
	pkt[HOMA_PSP_HDR_LEN + 3] = (uint8_t)port;
	memcpy(pkt + JUNK_MARK_OFF, JUNK_MARK, sizeof(JUNK_MARK));
	return fd;
}

/** send_burst() - GATHER junk datagrams @pkt from @fd to 127.0.0.1:@port in one call. */
static void send_burst(int fd, uint8_t *pkt, int port)
{
	struct sockaddr_storage to = crypto_dst(port);
	struct iovec iov = {pkt, JUNK_LEN};
	struct mmsghdr m[GATHER];

	memset(m, 0, sizeof(m));
	for (int i = 0; i < GATHER; i++) {
		m[i].msg_hdr.msg_name = &to;
		m[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	assert_int_equal(__real_sendmmsg(fd, m, GATHER, 0), GATHER);
}

/** junk_opened() - g_junk_opened, read under w_lock. */
static uint64_t junk_opened(void)
{
	uint64_t v;

	pthread_mutex_lock(&w_lock);
	v = g_junk_opened;
	pthread_mutex_unlock(&w_lock);
	return v;
}

/** settled() - Whether the reports have caught up with what is owed (under w_lock). */
static bool settled(void)
{
	bool ok;

	pthread_mutex_lock(&w_lock);
	ok = g_reported_ns >= g_owed_ns;
	pthread_mutex_unlock(&w_lock);
	return ok;
}

/**
 * homa_rt_input__strangers_rest_charged() - Bursts of GATHER junk
 * datagrams of 60 KB (PSP-looking, unknown SPI; each takes at least 2 ms
 * to open) reach an encrypted server while a known peer sends it 100 B
 * lookups one after another (so known peers are active and each junk
 * batch is metered). The server takes a lookup between chunks of a junk
 * batch and, served, leaves the rest of the batch for a later call. What
 * the runtime reports to the strangers' budget (homa_gate_spend()) must
 * cover the opening of every junk datagram read in a metered batch, the
 * rest's too: at least JUNK_DELAY_NS each. Charging only up to the cut
 * reports about a quarter of it (3 of 12 datagrams: 128 KB are opened
 * between looks for lookups). Bursts are sent until one was cut
 * (g_cuts: a lookup's response left while read junk waited unopened),
 * at most BURSTS; every lookup's echo comes back intact.
 */
static void homa_rt_input__strangers_rest_charged(void **state)
{
	static uint8_t pkt[JUNK_LEN];
	struct crypto_echo srv, l;
	struct looker lk = {0};
	struct homa_rt *rt;
	uint64_t owed, reported, read;
	int fd, cuts = 0, bursts = 0;

	(void)state;
	crypto_open_lo(&srv, true, 600000, 0);
	crypto_open_lo(&l, false, 600000, 0);
	crypto_associate(l.s, srv.s, srv.port);
	crypto_associate(srv.s, l.s, l.port);
	assert_int_equal(crypto_rpc(l.s, srv.port, LOOKUP_LEN), 0);  /* now a known peer */
	assert_int_equal(crypto_rpc(l.s, srv.port, LOOKUP_LEN), 0);
	rt = homa_rt_get(srv.s);
	assert_non_null(rt);
	fd = junk_socket(pkt, srv.port);
	pthread_mutex_lock(&w_lock);
	g_port = htons((uint16_t)srv.port);
	g_lookup_port = htons((uint16_t)l.port);
	g_drv = rt->drv;
	pthread_mutex_unlock(&w_lock);
	lk.s = l.s;
	lk.port = srv.port;
	assert_int_equal(pthread_create(&lk.thread, NULL, look_main, &lk), 0);

	while (bursts < BURSTS && (bursts < 2 || !cuts)) {
		uint64_t want = junk_opened() + GATHER;

		usleep(2000);  /* lookups flow: known peers are active */
		send_burst(fd, pkt, srv.port);
		bursts++;
		for (int64_t i = 0; i < 10000 && junk_opened() < want; i++)
			usleep(1000);
		pthread_mutex_lock(&w_lock);
		cuts = g_cuts;
		pthread_mutex_unlock(&w_lock);
	}
	atomic_store(&lk.stop, 1);
	pthread_join(lk.thread, NULL);
	for (int i = 0; i < 2000 && !settled(); i++)
		usleep(1000);  /* the last part's report follows its last open */

	pthread_mutex_lock(&w_lock);
	g_drv = NULL;
	owed = g_owed_ns;
	reported = g_reported_ns;
	read = g_junk_read;
	cuts = g_cuts;
	pthread_mutex_unlock(&w_lock);
	homa_rt_put(rt);
	close(fd);
	print_message("bursts %d, junk read %llu, opened %llu, cut batches %d, lookups %d; "
		      "owed %.1f ms, reported %.1f ms\n", bursts, (unsigned long long)read,
		      (unsigned long long)junk_opened(), cuts, lk.done, owed / 1e6, reported / 1e6);
	assert_int_equal(lk.err, 0);
	assert_int_equal(read, (uint64_t)bursts * GATHER);
	assert_true(cuts >= 1);
	assert_true(owed >= JUNK_DELAY_NS * GATHER);  /* at least one burst metered */
	if (reported < owed)
		fail_msg("strangers' opening of %.1f ms charged as %.1f ms", owed / 1e6,
			 reported / 1e6);
	crypto_echo_stop(&l);
	crypto_echo_stop(&srv);
}

/** main() - Run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_rt_input__strangers_rest_charged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
