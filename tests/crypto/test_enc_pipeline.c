/* SPDX-License-Identifier: MIT */
/**
 * @file test_enc_pipeline.c
 * Opening overlaps the engine's answers on encrypted sockets, real stack
 * (UDP on loopback, 64 KB packets as homa-bench's loopback profile sends
 * them): the receiver hands a batch of such packets to the engine one at
 * a time as each is opened (io.c, input_chunk()), so its GRANTs go out
 * before the rest of the batch is opened. This file interposes sendmmsg()
 * and recvmmsg() (-Wl,--wrap) and reads the PSP counters as packets pass.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <cmocka.h>

#include "homa/encrypt.h"
#include "homa/homa.h"
#include "rt_helpers.h"
#include "wrap_helpers.h"

/** The request's bytes: 17 packets of 64 KB, most of them granted. */
#define BIG_LEN (1u << 20)
/** Packets the wrapped recvmmsg() gathers into one batch for the server. */
#define GATHER 4

int __real_sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags);

/** What the wrappers saw (w_lock). */
static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static homa_socket *g_server;      /**< whose batches are gathered; NULL: off */
static int g_fd = -1;              /**< its UDP socket (found by port) */
static uint16_t g_port;            /**< its port (network order) */
static uint16_t g_client_port;     /**< where its GRANTs go (network order) */
static pthread_t g_thread;         /**< the thread that read the current batch */
static uint64_t g_batch_end;       /**< opened count once the current batch is opened */
static bool g_in_batch;            /**< a gathered batch is being handed over */
static int g_batches;              /**< batches of at least 2 datagrams gathered */
static int g_early;                /**< control packets sent by that thread before
				    *   the last packet of its batch was opened */

/**
 * note_ctl() - Under w_lock: a control packet to the client leaves; count
 * it in g_early if the thread handing over a gathered batch sends it
 * before the batch's last packet is opened.
 */
static void note_ctl(const struct mmsghdr *msgs, unsigned int vlen)
{
	if (g_server && g_in_batch && pthread_equal(g_thread, pthread_self()) &&
	    crypto_sent_to(msgs, vlen, g_client_port, 0, 200) &&
	    crypto_opened_count(g_server) < g_batch_end)
		g_early++;
}

/** is_server_fd() - Under w_lock: whether @fd is g_server's UDP socket. */
static bool is_server_fd(int fd)
{
	if (fd == g_fd)
		return true;
	if (crypto_fd_port(fd) == g_port) {
		g_fd = fd;
		return true;
	}
	return false;
}

/**
 * __wrap_recvmmsg() - recvmmsg() that, for the server's socket while the
 * second test runs, waits up to 20 ms for GATHER datagrams before it
 * returns, so that one batch holds several packets of 64 KB, and notes
 * how many packets will have been opened once that batch is.
 * Return: as recvmmsg().
 */
int __wrap_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
		    struct timespec *timeout)
{
	int n = __real_recvmmsg(fd, msgs, vlen, flags, timeout);

	pthread_mutex_lock(&w_lock);
	g_in_batch = false;
	if (g_server && n > 0 && is_server_fd(fd)) {
		n = crypto_gather(fd, msgs, vlen, n, GATHER);
		g_batch_end = crypto_opened_count(g_server) + (uint64_t)n;
		g_thread = pthread_self();
		g_in_batch = true;
		g_batches += n >= 2;
	}
	pthread_mutex_unlock(&w_lock);
	return n;
}

/**
 * __wrap_sendmmsg() - sendmmsg() that notes control packets the server
 * sends while it hands over a gathered batch (note_ctl()).
 * Return: as sendmmsg().
 */
int __wrap_sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags)
{
	pthread_mutex_lock(&w_lock);
	note_ctl(msgs, vlen);
	pthread_mutex_unlock(&w_lock);
	return __real_sendmmsg(fd, msgs, vlen, flags);
}

/**
 * enc_pipeline__grants_before_batch_opened() - 1 MB requests sent with
 * one packet unscheduled, so the server grants the rest: batches of
 * GATHER packets of 64 KB reach the server at once (the wrapped
 * recvmmsg() gathers them), and it sends GRANTs while later packets of
 * the batch still wait to be opened (in one of up to 5 RPCs). Opening a
 * whole batch before the engine sees any of it (its GRANTs then wait for
 * the batch's last AES-GCM pass) leaves g_early at 0. Echoes come back
 * intact.
 */
static void enc_pipeline__grants_before_batch_opened(void **state)
{
	struct crypto_echo c, srv;
	int batches, early;

	(void)state;
	crypto_open_lo(&srv, true, 600000, 60000);  /* a GRANT for every packet */
	crypto_open_lo(&c, false, 60000, 60000);
	crypto_associate(c.s, srv.s, srv.port);
	crypto_associate(srv.s, c.s, c.port);
	assert_int_equal(crypto_rpc(c.s, srv.port, 1000), 0);  /* both sides warm */
	pthread_mutex_lock(&w_lock);
	g_port = htons((uint16_t)srv.port);
	g_client_port = htons((uint16_t)c.port);
	g_fd = -1;
	g_batches = g_early = 0;
	g_server = srv.s;
	pthread_mutex_unlock(&w_lock);

	/* up to 5 RPCs: on a loaded machine another thread of the server may
	 * hold its transmit lock and send a GRANT (not counted) */
	for (int r = 0; r < 5; r++) {
		assert_int_equal(crypto_zc_rpc(c.s, srv.port, BIG_LEN), 0);
		pthread_mutex_lock(&w_lock);
		early = g_early;
		pthread_mutex_unlock(&w_lock);
		if (early)
			break;
	}

	pthread_mutex_lock(&w_lock);
	g_server = NULL;
	g_in_batch = false;
	batches = g_batches;
	early = g_early;
	pthread_mutex_unlock(&w_lock);
	print_message("gathered batches %d, control packets sent before a batch was opened %d\n",
		      batches, early);
	assert_true(batches >= 1);
	assert_true(early >= 1);
	crypto_echo_stop(&c);
	crypto_echo_stop(&srv);
}

/** main() - Run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(enc_pipeline__grants_before_batch_opened),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
