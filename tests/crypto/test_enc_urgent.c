/* SPDX-License-Identifier: MIT */
/**
 * @file test_enc_urgent.c
 * A short request overtakes bulk data being opened, real stack (UDP on
 * loopback, 64 KB packets as homa-bench's loopback profile sends them,
 * the default receive queues: both clients are known peers of the
 * server, each with a socket of its own): an encrypted server that reads
 * a batch of bulk packets opens it a chunk at a time and, between
 * chunks, reads the queues of short messages (io.c, input_batch(); the
 * UDP driver's recv_urgent(): the high-priority queue, and known peers
 * that sent only short messages lately), so a lookup that arrives while
 * the batch is opened is answered before the rest of the batch is. This file interposes sendmmsg() and recvmmsg()
 * (-Wl,--wrap) and reads the server's PSP counters as packets pass.
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

/** The bulk request's bytes: 17 packets of 64 KB, 9 of them unscheduled. */
#define BIG_LEN (1u << 20)
/** Bulk datagrams the wrapped recvmmsg() gathers into one batch for the server. */
#define GATHER 8
/** Bulk RPCs tried, each with one lookup, until a lookup is answered early. */
#define ROUNDS 20
/** The lookup's bytes (request and echoed response). */
#define LOOKUP_LEN 100
/** A datagram at least this long is bulk data (64 KB packets). */
#define BULK_DGRAM 60000
/** A datagram to the lookup client at least this long is its response (not control). */
#define RESPONSE_DGRAM 150

int __real_sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags);

/** What the wrappers saw and do (w_lock). */
static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static homa_socket *g_server;      /**< whose batches are gathered; NULL: off */
static homa_socket *g_lookup;      /**< the client that sends the lookup */
static uint16_t g_port;            /**< the server's port (network order) */
static uint16_t g_lookup_port;     /**< the lookup client's port (network order) */
static bool g_armed;               /**< the next gathered batch sends the lookup */
static int g_batches;              /**< batches of GATHER bulk datagrams gathered */
static uint64_t g_batch_start;     /**< server's opened count when that batch was read */
static uint64_t g_batch_end;       /**< server's opened count once that batch is opened */
static bool g_sent;                /**< the lookup was sent */
static uint64_t g_lookup_id;       /**< its RPC id */
static uint64_t g_resp_opened;     /**< server's opened count when the response left
				    *   (UINT64_MAX: not yet) */
static uint8_t g_lookup_out[LOOKUP_LEN];

/**
 * send_lookup() - Send the lookup request from g_lookup to the server (not
 * under w_lock: the client's send passes __wrap_sendmmsg()), then give
 * loopback 2 ms to queue it in the server's high-priority queue.
 */
static void send_lookup(void)
{
	struct sockaddr_storage sa = crypto_dst(ntohs(g_port));
	struct timespec ts = {0, 2000000};
	uint64_t id = 0;
	int err;

	for (int i = 0; i < LOOKUP_LEN; i++)
		g_lookup_out[i] = (uint8_t)(i * 7 + 1);
	err = homa_send(g_lookup, (struct sockaddr *)&sa, g_lookup_out, LOOKUP_LEN, 0, &id);
	pthread_mutex_lock(&w_lock);
	g_lookup_id = id;
	g_sent = err == 0;
	pthread_mutex_unlock(&w_lock);
	nanosleep(&ts, NULL);
}

/**
 * __wrap_recvmmsg() - recvmmsg() that, while armed, for a read of bulk
 * datagrams on the server's port (its low-priority queue) waits up to 20
 * ms for GATHER of them, notes the opened count the server will have
 * once they are opened, and sends the lookup before returning them: the
 * lookup then waits in the high-priority queue while the batch is opened.
 * Return: as recvmmsg().
 */
int __wrap_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
		    struct timespec *timeout)
{
	int n = __real_recvmmsg(fd, msgs, vlen, flags, timeout);
	bool send = false;

	pthread_mutex_lock(&w_lock);
	if (g_armed && g_server && n > 0 && msgs[0].msg_len >= BULK_DGRAM &&
	    crypto_fd_port(fd) == g_port) {
		n = crypto_gather(fd, msgs, vlen, n, GATHER);
		if (n >= GATHER) {
			g_armed = false;
			g_batches++;
			g_batch_start = crypto_opened_count(g_server);
			g_batch_end = g_batch_start + (uint64_t)n;
			g_resp_opened = UINT64_MAX;
			send = true;
		}
	}
	pthread_mutex_unlock(&w_lock);
	if (send)
		send_lookup();
	return n;
}

/**
 * __wrap_sendmmsg() - sendmmsg() that notes the server's opened count when
 * the lookup's response leaves (the first after the lookup was sent).
 * Return: as sendmmsg().
 */
int __wrap_sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags)
{
	pthread_mutex_lock(&w_lock);
	if (g_server && g_sent && g_resp_opened == UINT64_MAX &&
	    crypto_sent_to(msgs, vlen, g_lookup_port, RESPONSE_DGRAM, SIZE_MAX))
		g_resp_opened = crypto_opened_count(g_server);
	pthread_mutex_unlock(&w_lock);
	return __real_sendmmsg(fd, msgs, vlen, flags);
}

/**
 * one_round() - A bulk RPC during which the lookup is sent (once a batch of
 * GATHER bulk datagrams was read), then the lookup's echo. Return: how
 * many packets the server opened from reading that batch until the
 * lookup's response left (the lookup's own packet included); *@sent
 * whether the lookup was sent at all. The batch's GATHER packets
 * are opened whole at the return value GATHER + 1.
 */
static uint64_t one_round(struct crypto_echo *c, struct crypto_echo *srv, struct crypto_echo *l,
			  bool *sent)
{
	uint64_t id, start, end, at;

	pthread_mutex_lock(&w_lock);
	g_sent = false;
	g_armed = true;
	pthread_mutex_unlock(&w_lock);
	assert_int_equal(crypto_zc_rpc(c->s, srv->port, BIG_LEN), 0);
	pthread_mutex_lock(&w_lock);
	g_armed = false;
	*sent = g_sent;
	id = g_lookup_id;
	pthread_mutex_unlock(&w_lock);
	if (!*sent)
		return UINT64_MAX;
	assert_int_equal(crypto_await_echo(l->s, id, g_lookup_out, LOOKUP_LEN), 0);
	pthread_mutex_lock(&w_lock);
	start = g_batch_start;
	end = g_batch_end;
	at = g_resp_opened;
	pthread_mutex_unlock(&w_lock);
	print_message("batch read at %llu, opened at %llu, lookup answered at %llu\n",
		      (unsigned long long)start, (unsigned long long)end,
		      (unsigned long long)at);
	return at >= start ? at - start : 0;
}

/**
 * open_three() - The server @srv, the bulk client @c and the lookup
 * client @l on loopback, associated both ways and warmed up (one RPC
 * each), with the wrappers pointed at them. Default priorities: a 1 MB
 * message's packets wait in the server's low-priority queue, a 100 B
 * one's in the high-priority queue.
 */
static void open_three(struct crypto_echo *c, struct crypto_echo *srv, struct crypto_echo *l)
{
	crypto_open_lo(srv, true, 600000, 0);
	crypto_open_lo(c, false, 600000, 0);
	crypto_open_lo(l, false, 600000, 0);
	crypto_associate(c->s, srv->s, srv->port);
	crypto_associate(l->s, srv->s, srv->port);
	crypto_associate(srv->s, c->s, c->port);
	crypto_associate(srv->s, l->s, l->port);
	assert_int_equal(crypto_rpc(c->s, srv->port, 1000), 0);  /* all warm */
	assert_int_equal(crypto_rpc(l->s, srv->port, LOOKUP_LEN), 0);
	pthread_mutex_lock(&w_lock);
	g_port = htons((uint16_t)srv->port);
	g_lookup_port = htons((uint16_t)l->port);
	g_lookup = l->s;
	g_batches = 0;
	g_server = srv->s;
	pthread_mutex_unlock(&w_lock);
}

/**
 * close_three() - Point the wrappers away from open_three()'s sockets,
 * then close them.
 */
static void close_three(struct crypto_echo *c, struct crypto_echo *srv, struct crypto_echo *l)
{
	pthread_mutex_lock(&w_lock);
	g_server = NULL;
	pthread_mutex_unlock(&w_lock);
	crypto_echo_stop(c);
	crypto_echo_stop(l);
	crypto_echo_stop(srv);
}

/**
 * rounds_answered_within() - Up to ROUNDS of one_round() on open_three()'s
 * sockets, until one sends the lookup and its response leaves with at
 * most @max packets opened; prints how many rounds sent it and how many
 * answered it so (@what) and asserts that at least one round sent it.
 * Return: the rounds that answered it within @max (0 or 1).
 */
static int rounds_answered_within(struct crypto_echo *c, struct crypto_echo *srv,
				  struct crypto_echo *l, uint64_t max, const char *what)
{
	int sent_rounds = 0, within = 0;

	for (int r = 0; r < ROUNDS && !within; r++) {
		bool sent;
		uint64_t at = one_round(c, srv, l, &sent);

		within += sent && at <= max;
		sent_rounds += sent;
	}
	print_message("rounds with a lookup sent %d, answered %s %d\n", sent_rounds, what, within);
	assert_true(sent_rounds >= 1);
	return within;
}

/**
 * enc_urgent__lookup_answered_before_batch_opened() - While the server
 * opens a batch of GATHER bulk packets of 64 KB (one 1 MB request), a
 * 100 B lookup arrives in its high-priority queue: the server reads it
 * between chunks and answers it while packets of the batch still wait
 * to be opened (in one of up to ROUNDS rounds: on a loaded machine
 * another thread may step in, or the batch may not gather in time). Opening the whole batch before reading again
 * answers the lookup only after the batch's last AES-GCM pass. Both
 * RPCs' echoes come back intact.
 */
static void enc_urgent__lookup_answered_before_batch_opened(void **state)
{
	struct crypto_echo c, srv, l;

	(void)state;
	open_three(&c, &srv, &l);
	assert_true(rounds_answered_within(&c, &srv, &l, GATHER, "early") >= 1);
	close_three(&c, &srv, &l);
}

/**
 * enc_urgent__lookup_read_before_first_chunk() - The lookup reaches the
 * server's high-priority queue while the server reads a batch of GATHER
 * bulk packets of 64 KB (512 KB, more than URGENT_EVERY): the server
 * looks at the queues of short messages before it opens the batch's
 * first chunk, so the lookup's response leaves with no packet of the
 * batch opened, only the lookup's own (in one of up to ROUNDS rounds).
 * Looking first after URGENT_EVERY bytes opened answers it only after
 * two bulk packets' AES-GCM passes.
 */
static void enc_urgent__lookup_read_before_first_chunk(void **state)
{
	struct crypto_echo c, srv, l;

	(void)state;
	open_three(&c, &srv, &l);
	assert_true(rounds_answered_within(&c, &srv, &l, 1, "first") >= 1);
	close_three(&c, &srv, &l);
}

/** main() - Run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(enc_urgent__lookup_answered_before_batch_opened),
		cmocka_unit_test(enc_urgent__lookup_read_before_first_chunk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
