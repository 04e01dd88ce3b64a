/* SPDX-License-Identifier: MIT */
/**
 * @file test_gate_wait.c
 * A real socket's wait while the strangers' gate (src/io/gate.c) is
 * closed: a polled server opened with homa_open() (UDP driver, loopback)
 * with more than 13 known peers waits on the driver's epoll set (no
 * polled list), and an ICMP port unreachable report queued on one of its
 * port's queues while the gate is closed is read at the first wake-up it
 * causes; the waiter is not woken again and again until the gate opens.
 * The binary links with -Wl,--wrap=homa_gate_now to hold the gate's
 * clock still (the gate stays closed; the runtime's clock runs),
 * --wrap=timerfd_settime to keep the gate's timer from being armed
 * meanwhile (it would fire on the kernel's clock into a gate that cannot
 * open), --wrap=epoll_ctl to learn the server's epoll set and the gate's
 * timerfd, and --wrap=ppoll to count the waits on that set that ended
 * with it readable.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "gate.h"
#include "helpers.h"

/** Clients that each complete an RPC with the server: too many for the polled list. */
#define CLIENTS 16
/** The server's strangers' budget (packets per ms). */
#define BUDGET 8
/** Strangers' datagrams sent to close the gate. */
#define STRANGERS 1000
/** Most wake-ups on the server's set allowed while the report is handled. */
#define WAKES_MAX 4

/** The gate's clock as __wrap_homa_gate_now() reports it while non-zero (ns). */
static atomic_ullong frozen_ns;
/** While set, the next gate timerfd registered names the watched set. */
static atomic_bool learning;
/** The watched server's epoll set and its gate's timerfd (-1: none yet). */
static atomic_int watched_ep = -1, gate_tfd = -1;
/** While set, __wrap_ppoll() counts waits on watched_ep. */
static atomic_bool counting;
/** Waits on watched_ep (first descriptor) counted, and those that ended with it readable. */
static atomic_int set_waits, set_wakes;

uint64_t __real_homa_gate_now(void);
int __real_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev);
int __real_timerfd_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old);
int __real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask);

/** __wrap_homa_gate_now() - The gate's clock; held at frozen_ns while that is set. */
uint64_t __wrap_homa_gate_now(void)
{
	unsigned long long f = atomic_load(&frozen_ns);

	return f ? f : __real_homa_gate_now();
}

/**
 * __wrap_epoll_ctl() - epoll_ctl(); while learning, the first gate
 * timerfd added (data HOMA_GATE_TAG) names its set and itself.
 */
int __wrap_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	if (op == EPOLL_CTL_ADD && ev && ev->data.u32 == HOMA_GATE_TAG &&
	    atomic_exchange(&learning, false)) {
		atomic_store(&watched_ep, ep);
		atomic_store(&gate_tfd, fd);
	}
	return __real_epoll_ctl(ep, op, fd, ev);
}

/**
 * __wrap_timerfd_settime() - timerfd_settime(); the watched gate's timer
 * is left as it is while the gate's clock is held (reported done).
 */
int __wrap_timerfd_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old)
{
	if (atomic_load(&frozen_ns) && fd == atomic_load(&gate_tfd))
		return 0;
	return __real_timerfd_settime(fd, flags, v, old);
}

/**
 * __wrap_ppoll() - ppoll(); while counting, a wait whose first
 * descriptor is the watched set (the runtime's wait without the polled
 * list) is counted in set_waits, and in set_wakes if it ended with the
 * set readable.
 */
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	int r = __real_ppoll(fds, n, ts, mask);
	bool mine = n > 0 && fds[0].fd >= 0 && fds[0].fd == atomic_load(&watched_ep);

	if (mine && atomic_load(&counting)) {
		atomic_fetch_add(&set_waits, 1);
		if (r > 0 && fds[0].revents)
			atomic_fetch_add(&set_wakes, 1);
	}
	return r;
}

/**
 * open_server() - A polled server on 127.0.0.1 with the strangers'
 * budget BUDGET (known peers: the default); its epoll set and gate
 * timerfd are learnt (watched_ep, gate_tfd). Return: homa_open()'s.
 */
static int open_server(homa_socket **s)
{
	struct homa_open_opts o;
	struct homa_settings st;
	int r;

	homa_settings_default(&st);
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	homa_open_opts_default(&o);
	o.driver = HOMA_DRIVER_UDP;
	o.mode = HOMA_MODE_POLLED;
	o.server = true;
	o.bind_addr = "127.0.0.1";
	o.settings = &st;
	o.stranger_budget = BUDGET;
	atomic_store(&learning, true);
	r = homa_open(s, &o);
	atomic_store(&learning, false);
	return r;
}

/** serve_thread() - Answer requests on the server until it closes. */
static void *serve_thread(void *arg)
{
	uint64_t served = 0, errors = 0;

	test_serve_forever(arg, &served, &errors);
	return NULL;
}

/** udp_socket() - A UDP socket bound to 127.0.0.1 (ephemeral port in *@port). */
static int udp_socket(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/** flood() - STRANGERS 100-byte datagrams of zeros to 127.0.0.1:@port from one stranger. */
static void flood(int port)
{
	struct sockaddr_storage dst = test_dst(port);
	uint8_t junk[100] = {0};
	uint16_t mine;
	int fd = udp_socket(&mine);

	for (int i = 0; i < STRANGERS; i++)
		assert_int_equal(sendto(fd, junk, sizeof(junk), 0, (struct sockaddr *)&dst,
					sizeof(struct sockaddr_in)), (ssize_t)sizeof(junk));
	close(fd);
}

/** closed_port() - A port of 127.0.0.1 where nothing listens (bound, then closed). */
static int closed_port(void)
{
	uint16_t port;

	close(udp_socket(&port));
	return port;
}

/**
 * io_stats_reach() - Wait (up to 10 s) until @s's homa_io_stats field at
 * byte @off is at least @want. Return: whether it got there.
 */
static bool io_stats_reach(homa_socket *s, size_t off, uint64_t want)
{
	struct homa_io_stats io;
	uint64_t v;

	for (int64_t t0 = test_now_ms(); test_now_ms() - t0 < 10000; usleep(1000)) {
		assert_int_equal(homa_io_stats(s, &io), 0);
		memcpy(&v, (const char *)&io + off, sizeof(v));
		if (v >= want)
			return true;
	}
	return false;
}

/**
 * homa_recv__closed_gate_report_wakes_once() - A polled server with
 * CLIENTS known peers (each client completed an RPC with it), its
 * gate's clock held still, then a known peer's RPC and a stranger's
 * STRANGERS datagrams: the gate closes and stays closed. The server
 * sends a request to a closed port; the port unreachable report lands
 * on one of its port's queues, and its thread waiting in homa_recv() for
 * the response is woken by the set at most WAKES_MAX times before it
 * returns HOMA_ENOSERVER. It used to be woken at once again and again
 * (the set reported the queue in error, nothing read the error queue)
 * for as long as the gate stayed closed, and the report was not read.
 */
static void homa_recv__closed_gate_report_wakes_once(void **state)
{
	homa_socket *srv, *cli[CLIENTS];
	struct sockaddr_storage gone;
	struct homa_io_stats io;
	struct homa_message m;
	pthread_t th;
	uint64_t id;
	int port, r;

	(void)state;
	assert_int_equal(open_server(&srv), 0);
	assert_true(atomic_load(&watched_ep) >= 0);
	port = homa_local_port(srv);
	pthread_create(&th, NULL, serve_thread, srv);
	for (int i = 0; i < CLIENTS; i++) {
		assert_int_equal(test_open(&cli[i], HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0,
					   NULL), 0);
		test_rpc(cli[i], port);
	}
	/* the last peer is admitted at the server's next receive */
	assert_true(io_stats_reach(srv, offsetof(struct homa_io_stats, rx_known_peers), CLIENTS));
	assert_int_equal(homa_io_stats(srv, &io), 0);  /* the clients' first packets were strangers' */
	usleep(20000);  /* the interval ends: the gate opens at the next receive, if closed */
	atomic_store(&frozen_ns, __real_homa_gate_now());
	test_rpc(cli[0], port);  /* a known peer active for good */
	flood(port);
	assert_true(io_stats_reach(srv, offsetof(struct homa_io_stats, rx_gate_closed),
				   io.rx_gate_closed + 1));
	gone = test_dst(closed_port());
	atomic_store(&set_waits, 0);
	atomic_store(&set_wakes, 0);
	atomic_store(&counting, true);
	assert_int_equal(homa_send(srv, (struct sockaddr *)&gone, "x", 1, 2, &id), 0);
	r = homa_recv(srv, HOMA_RECV_RESPONSE, id, 2000000000ll, &m);
	atomic_store(&counting, false);
	atomic_store(&frozen_ns, 0);
	if (r == 0)
		homa_message_release(&m);
	assert_true(atomic_load(&set_waits) > 0);  /* the wait was on the epoll set */
	if (r != HOMA_ENOSERVER || atomic_load(&set_wakes) > WAKES_MAX)
		fail_msg("homa_recv() %d (expected HOMA_ENOSERVER %d), woken by the set %d times "
			 "in %d waits with the gate closed (expected at most %d)", r,
			 HOMA_ENOSERVER, atomic_load(&set_wakes), atomic_load(&set_waits),
			 WAKES_MAX);
	for (int i = 0; i < CLIENTS; i++)
		homa_close(cli[i]);
	homa_close(srv);
	pthread_join(th, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_recv__closed_gate_report_wakes_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
