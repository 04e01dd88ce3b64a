/* SPDX-License-Identifier: MIT */
/**
 * @file test_conformance.c
 * Code and comment agree: the test reads include/homa/homa.h, collects
 * for every HOMA_API function the HOMA_E* codes its comment names (plus
 * those of the function it refers to with "as homa_x()"), then drives
 * each function into each of those errors on loopback and checks the
 * result. A documented code that no case provokes must be listed in
 * elsewhere[] with the test that covers it (or why it cannot be provoked
 * here); a provoked code the comment does not name fails the test, and
 * so does a function with no case at all.
 *
 * The argument picks the transport every socket uses: homa (default),
 * tcp or auto (CTest runs all three).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api.h"
#include "doc_codes.h"

/** Sockets shared by the cases. */
struct ctx {
	homa_socket *cli;     /**< threaded client */
	homa_socket *srv;     /**< threaded server whose application never answers */
	homa_socket *polled;  /**< polled client */
	homa_socket *dead;    /**< a closed handle */
	struct sockaddr_storage srv_dst;
};

static struct ctx c;

/* ---- the cases: each returns what the call returned ---- */

static int open_null(void) { return homa_open(NULL, NULL); }

static int open_in_use(void)
{
	struct homa_open_opts o;
	homa_socket *s;

	api_opts(&o, HOMA_MODE_THREADED, false, NULL);
	o.port = (uint16_t)homa_local_port(c.srv);
	return homa_open(&s, &o);
}

static int open_not_local(void)
{
	struct homa_open_opts o;
	homa_socket *s;

	api_opts(&o, HOMA_MODE_THREADED, false, NULL);
	o.bind_addr = "192.0.2.1"; /* TEST-NET-1: never this host's */
	return homa_open(&s, &o);
}

static int close_null(void) { return homa_close(NULL); }
static int close_dead(void) { return homa_close(c.dead); }
static int close_wait_null(void) { return homa_close_wait(NULL, 0); }
static int close_wait_dead(void) { return homa_close_wait(c.dead, 0); }

/** close_wait_bad_timeout() - A timeout below -1 is refused and closes nothing. */
static int close_wait_bad_timeout(void)
{
	int err = homa_close_wait(c.cli, -2);

	assert_true(homa_local_port(c.cli) > 0);
	return err;
}

static int port_null(void) { return homa_local_port(NULL); }
static int port_dead(void) { return homa_local_port(c.dead); }

static int sendv_null_iov(void)
{
	uint64_t id;

	return homa_request_iov(c.cli, (struct sockaddr *)&c.srv_dst, NULL, 1, 0, &id);
}

static int sendv_v6_on_v4(void)
{
	struct sockaddr_storage v6;
	struct homa_iov iov = {"x", 1};
	socklen_t l;
	uint64_t id;

	homa_sockaddr_parse("::1", 4000, &v6, &l);
	return homa_request_iov(c.cli, (struct sockaddr *)&v6, &iov, 1, 0, &id);
}

/** send_too_long() - A message one byte past settings.max_message (1000 here). */
static int send_too_long(void)
{
	static char big[1001];
	struct homa_iov iov = {big, sizeof(big)};
	uint64_t id;

	return homa_request_iov(c.cli, (struct sockaddr *)&c.srv_dst, &iov, 1, 0, &id);
}

static int sendv_dead(void)
{
	struct homa_iov iov = {"x", 1};
	uint64_t id;

	return homa_request_iov(c.dead, (struct sockaddr *)&c.srv_dst, &iov, 1, 0, &id);
}

/**
 * send_full() - A socket whose transmit budget (max_tx_buffered = mtu) is
 * held by a request to a server that never answers: the next send
 * waits @timeout_ns (send_timeout_ns) and fails.
 */
static int send_full(int64_t timeout_ns)
{
	struct homa_open_opts o;
	struct homa_settings st;
	static char buf[65536];
	size_t len;
	homa_socket *s;
	uint64_t id;
	int err;

	homa_settings_default(&st);
	st.max_tx_buffered = st.mtu;
	len = st.mtu / 2 + 100; /* two do not fit */
	api_opts(&o, HOMA_MODE_THREADED, false, &st);
	o.send_timeout_ns = timeout_ns;
	assert_int_equal(homa_open(&s, &o), 0);
	/* the first one is queued whole (a budget is never refused when empty) */
	assert_int_equal(homa_request_buf(s, (struct sockaddr *)&c.srv_dst, buf, len, 0, &id), 0);
	err = homa_request_buf(s, (struct sockaddr *)&c.srv_dst, buf, len, 0, &id);
	homa_close(s);
	return err;
}

static int send_full_now(void) { return send_full(0); }
static int send_full_wait(void) { return send_full(1000000); }

/**
 * send_full_opts() - As send_full() on a socket that would wait forever,
 * but the second send is homa_request_opts() with its own @timeout_ns.
 */
static int send_full_opts(int64_t timeout_ns)
{
	struct homa_open_opts o;
	struct homa_settings st;
	struct homa_send_opts so;
	static char buf[65536];
	struct homa_iov iov = {buf, 0};
	homa_socket *s;
	uint64_t id;
	int err;

	homa_settings_default(&st);
	st.max_tx_buffered = st.mtu;
	iov.len = st.mtu / 2 + 100;
	api_opts(&o, HOMA_MODE_THREADED, false, &st);
	o.send_timeout_ns = -1;
	assert_int_equal(homa_open(&s, &o), 0);
	assert_int_equal(homa_request_iov(s, (struct sockaddr *)&c.srv_dst, &iov, 1, 0, &id), 0);
	homa_send_opts_default(&so);
	so.timeout_ns = timeout_ns;
	err = homa_request_opts(s, (struct sockaddr *)&c.srv_dst, &iov, 1, &so, &id);
	homa_close(s);
	return err;
}

static int opts_full_now(void) { return send_full_opts(0); }
static int opts_full_wait(void) { return send_full_opts(1000000); }

static int opts_bad_size(void)
{
	struct homa_send_opts so;
	struct homa_iov iov = {"x", 1};
	uint64_t id;

	homa_send_opts_default(&so);
	so.size = 3;
	return homa_request_opts(c.cli, (struct sockaddr *)&c.srv_dst, &iov, 1, &so, &id);
}

static int reply_opts_bad_timeout(void)
{
	struct homa_send_opts so;
	struct homa_iov iov = {"x", 1};

	homa_send_opts_default(&so);
	so.timeout_ns = -5;
	return homa_reply_opts(c.srv, 1, &iov, 1, &so);
}

static int reply_opts_unknown(void)
{
	struct homa_iov iov = {"x", 1};

	return homa_reply_opts(c.srv, 12345, &iov, 1, NULL);
}

static int send_null_buf(void)
{
	uint64_t id;

	return homa_request_buf(c.cli, (struct sockaddr *)&c.srv_dst, NULL, 1, 0, &id);
}

static void dummy_release(void *arg) { (void)arg; }

static int send_zc_null_release(void)
{
	struct homa_iov iov = {"x", 1};
	uint64_t id;

	return homa_request_zc(c.cli, (struct sockaddr *)&c.srv_dst, &iov, 1, 0, NULL,
				    NULL, &id);
}

static int reply_zc_null_release(void)
{
	struct homa_iov iov = {"x", 1};

	return homa_reply_zc(c.srv, 1, &iov, 1, NULL, NULL);
}

static int reply_zc_unknown(void)
{
	struct homa_iov iov = {"x", 1};

	return homa_reply_zc(c.srv, 12345, &iov, 1, dummy_release, NULL);
}

static int recv_bad_flags(void)
{
	struct homa_message m;

	return homa_recv(c.cli, 0, 0, 0, &m);
}

static int recv_now(void)
{
	struct homa_message m;

	return homa_recv(c.cli, HOMA_RECV_RESPONSE, 0, 0, &m);
}

static int recv_1ms(void)
{
	struct homa_message m;

	return homa_recv(c.cli, HOMA_RECV_RESPONSE, 0, 1000000, &m);
}

static int recv_odd_id(void)
{
	struct homa_message m;

	return homa_recv(c.cli, HOMA_RECV_RESPONSE, 3, 0, &m);
}

static int recv_dead(void)
{
	struct homa_message m;

	return homa_recv(c.dead, HOMA_RECV_RESPONSE, 0, 0, &m);
}

/** recv_no_server() - A request to a socket that is not a server fails. */
static int recv_no_server(void)
{
	struct sockaddr_storage dst = api_dst(c.polled);
	struct homa_message m;
	uint64_t id;
	int err;

	assert_int_equal(homa_request_buf(c.cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	err = homa_recv(c.cli, HOMA_RECV_RESPONSE, id, 60000000000LL, &m);
	assert_int_equal(m.id, id);
	assert_int_equal(m.error, err);
	return err;
}

static int release_null(void) { return homa_message_release(NULL); }

/**
 * take_request_from() - Send a request from @from to c.srv and take that
 * request there: c.srv never answers, so requests of earlier cases (whose
 * clients may have given up) wait in its queue too; they are released
 * unanswered until the one with this call's tag comes.
 */
static void take_request_from(homa_socket *from, struct homa_message *m)
{
	static unsigned int seq;
	char tag[16], got[16];
	uint64_t id;
	int len = snprintf(tag, sizeof(tag), "take-%u", ++seq);

	assert_int_equal(homa_request_buf(from, (struct sockaddr *)&c.srv_dst, tag, (size_t)len, 0,
					  &id), 0);
	for (;;) {
		assert_int_equal(homa_recv(c.srv, HOMA_RECV_REQUEST, 0, 30000000000LL, m), 0);
		if (m->length == (size_t)len &&
		    homa_message_copy(m, 0, got, (size_t)len) == (size_t)len && !memcmp(got, tag, (size_t)len))
			return;
		assert_int_equal(homa_message_release(m), 0);
	}
}

/** take_request() - Send a request from c.cli to c.srv and take it there. */
static void take_request(struct homa_message *m)
{
	take_request_from(c.cli, m);
}

static int release_twice(void)
{
	struct homa_message m;

	take_request(&m);
	assert_int_equal(homa_message_release(&m), 0);
	return homa_message_release(&m);
}

/** release_after_close() - A message of a socket closed since. */
static int release_after_close(void)
{
	struct homa_message m;
	homa_socket *s;
	uint64_t id;
	struct sockaddr_storage dst;

	assert_int_equal(api_open(&s, HOMA_MODE_THREADED, true, NULL), 0);
	dst = api_dst(s);
	assert_int_equal(homa_request_buf(c.cli, (struct sockaddr *)&dst, "r", 1, 0, &id), 0);
	assert_int_equal(homa_recv(s, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
	homa_close(s);
	return homa_message_release(&m);
}

static int partial_null_buf(void) { return (int)homa_recv_partial(c.cli, 2, 0, NULL, 1, NULL); }
static int partial_unknown(void)
{
	char b[4];

	return (int)homa_recv_partial(c.cli, 2, 0, b, sizeof(b), NULL);
}
static int partial_dead(void) { return (int)homa_recv_partial(c.dead, 2, 0, NULL, 0, NULL); }

static int pwait_zero_id(void)
{
	char b[4];

	return (int)homa_recv_partial_wait(c.cli, 0, 0, b, sizeof(b), 0, NULL);
}

static int pwait_unknown(void)
{
	char b[4];

	return (int)homa_recv_partial_wait(c.cli, 424242, 0, b, sizeof(b), 0, NULL);
}

static int pwait_dead(void) { return (int)homa_recv_partial_wait(c.dead, 2, 0, NULL, 0, 0, NULL); }

/**
 * pwait_pending() - Wait @timeout_ns for the response of a request that
 * c.srv takes and never answers; then give the RPC up.
 */
static int pwait_pending(int64_t timeout_ns)
{
	struct homa_message m;
	char b[4];
	uint64_t id;
	int err;

	assert_int_equal(homa_request_buf(c.cli, (struct sockaddr *)&c.srv_dst, "r", 1, 0, &id), 0);
	assert_int_equal(homa_recv(c.srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
	err = (int)homa_recv_partial_wait(c.cli, id, 0, b, sizeof(b), timeout_ns, NULL);
	homa_abort(c.cli, id);
	homa_message_release(&m);
	return err;
}

static int pwait_now(void) { return pwait_pending(0); }
static int pwait_1ms(void) { return pwait_pending(1000000); }

/**
 * pwait_no_server() - The response of a request to a socket that is not
 * a server: the RPC's error, which homa_recv() then still reports.
 */
static int pwait_no_server(void)
{
	struct sockaddr_storage dst = api_dst(c.polled);
	struct homa_message m;
	char b[4];
	uint64_t id;
	int err;

	assert_int_equal(homa_request_buf(c.cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	err = (int)homa_recv_partial_wait(c.cli, id, 0, b, sizeof(b), 60000000000LL, NULL);
	assert_int_equal(homa_recv(c.cli, HOMA_RECV_RESPONSE, id, 0, &m), err);
	return err;
}

static int recv_partial_without_request(void)
{
	struct homa_message m;

	return homa_recv(c.srv, HOMA_RECV_PARTIAL, 0, 0, &m);
}

static int reply_unknown(void)
{
	struct homa_iov iov = {"x", 1};

	return homa_reply_iov(c.srv, 12345, &iov, 1);
}

/**
 * reply_twice() - A second reply to a request already answered. The
 * client is a polled socket whose standby thread waits 10,000 ticks
 * before it drives the socket: nothing takes the response or acks it, so
 * the server still holds the RPC however long this thread is descheduled
 * between the two replies (with the default 5 ticks the standby thread
 * would ack it and the server forget the RPC: HOMA_ENOTFOUND).
 */
static int reply_twice(void)
{
	struct homa_settings st;
	struct homa_message m;
	homa_socket *quiet;
	int err;

	homa_settings_default(&st);
	st.resend_ticks = 10000;
	st.timeout_ticks = 20000;
	assert_int_equal(api_open(&quiet, HOMA_MODE_POLLED, false, &st), 0);
	take_request_from(quiet, &m);
	assert_int_equal(homa_reply_buf(c.srv, m.id, "a", 1), 0);
	err = homa_reply_buf(c.srv, m.id, "b", 1);
	homa_message_release(&m);
	assert_int_equal(homa_close(quiet), 0);
	return err;
}

/**
 * partial_request_id() - homa_recv_partial() reads responses only: the id
 * of a request the server took (odd) is no client RPC (it returned 0).
 */
static int partial_request_id(void)
{
	struct homa_message m;
	char b[4];
	int err;

	take_request(&m);
	err = (int)homa_recv_partial(c.srv, m.id, 0, b, sizeof(b), NULL);
	homa_message_release(&m);
	return err;
}

static int reply_no_iov(void) { return homa_reply_iov(c.srv, 1, NULL, 1); }

static int reply_too_long(void)
{
	static char big[1001];
	struct homa_message m;
	int err;

	take_request(&m);
	err = homa_reply_buf(c.srv, m.id, big, sizeof(big));
	homa_message_release(&m);
	return err;
}

static int reply_dead(void) { return homa_reply_buf(c.dead, 1, "x", 1); }
static int reply_buf_null(void) { return homa_reply_buf(c.srv, 1, NULL, 1); }
static int abort_zero(void) { return homa_abort(c.cli, 0); }
static int abort_unknown(void) { return homa_abort(c.cli, 424242); }
static int abort_dead(void) { return homa_abort(c.dead, 2); }
static int fd_null(void) { return homa_fd(NULL); }
static int fd_dead(void) { return homa_fd(c.dead); }
static int poll_threaded(void) { return homa_poll(c.cli, 0); }
static int poll_dead(void) { return homa_poll(c.dead, 0); }

static int settings_bad(void)
{
	struct homa_settings st;

	homa_settings_default(&st);
	st.tick_ns = 0;
	return homa_set_settings(c.cli, &st);
}

static int settings_dead(void)
{
	struct homa_settings st;

	homa_settings_default(&st);
	return homa_set_settings(c.dead, &st);
}

static int sstats_null(void) { return homa_socket_stats(c.cli, NULL); }
static int sstats_dead(void)
{
	struct homa_stats st;

	return homa_socket_stats(c.dead, &st);
}
static int iostats_null(void) { return homa_io_stats(c.cli, NULL); }
static int iostats_dead(void)
{
	struct homa_io_stats st;

	return homa_io_stats(c.dead, &st);
}

static int transport_null(void) { return homa_message_transport(NULL); }
static int tstats_null(void) { return homa_transport_stats(c.cli, NULL); }
static int tstats_dead(void)
{
	struct homa_transport_stats st;

	return homa_transport_stats(c.dead, &st);
}

static int parse_name(void)
{
	struct sockaddr_storage a;
	socklen_t l;

	return homa_sockaddr_parse("localhost", 1, &a, &l);
}

/** One documented error and the call that provokes it. */
struct errcase {
	const char *fn;
	const char *code;
	int want;
	int (*run)(void);
};

#define CASE(fn, code, run) {#fn, #code, code, run}

static const struct errcase cases[] = {
	CASE(homa_open, HOMA_EINVAL, open_null),
	CASE(homa_open, HOMA_EADDRINUSE, open_in_use),
	CASE(homa_open, HOMA_EADDRNOTAVAIL, open_not_local),
	CASE(homa_close, HOMA_EINVAL, close_null),
	CASE(homa_close, HOMA_ESHUTDOWN, close_dead),
	CASE(homa_close_wait, HOMA_EINVAL, close_wait_null),
	CASE(homa_close_wait, HOMA_EINVAL, close_wait_bad_timeout),
	CASE(homa_close_wait, HOMA_ESHUTDOWN, close_wait_dead),
	CASE(homa_local_port, HOMA_EINVAL, port_null),
	CASE(homa_local_port, HOMA_ESHUTDOWN, port_dead),
	CASE(homa_request_iov, HOMA_EINVAL, sendv_null_iov),
	CASE(homa_request_iov, HOMA_ENOTSUP, sendv_v6_on_v4),
	CASE(homa_request_iov, HOMA_EMSGSIZE, send_too_long),
	CASE(homa_request_iov, HOMA_EAGAIN, send_full_now),
	CASE(homa_request_iov, HOMA_ETIME, send_full_wait),
	CASE(homa_request_iov, HOMA_ESHUTDOWN, sendv_dead),
	CASE(homa_request_buf, HOMA_EINVAL, send_null_buf),
	CASE(homa_request_zc, HOMA_EINVAL, send_zc_null_release),
	CASE(homa_reply_zc, HOMA_EINVAL, reply_zc_null_release),
	CASE(homa_reply_zc, HOMA_ENOTFOUND, reply_zc_unknown),
	CASE(homa_recv, HOMA_EINVAL, recv_bad_flags),
	CASE(homa_recv, HOMA_EAGAIN, recv_now),
	CASE(homa_recv, HOMA_ETIME, recv_1ms),
	CASE(homa_recv, HOMA_ENOTFOUND, recv_odd_id),
	CASE(homa_recv, HOMA_ESHUTDOWN, recv_dead),
	CASE(homa_recv, HOMA_ENOSERVER, recv_no_server),
	CASE(homa_message_release, HOMA_EINVAL, release_null),
	CASE(homa_message_release, HOMA_EALREADY, release_twice),
	CASE(homa_message_release, HOMA_ESHUTDOWN, release_after_close),
	CASE(homa_recv, HOMA_EINVAL, recv_partial_without_request),
	CASE(homa_recv_partial_wait, HOMA_EINVAL, pwait_zero_id),
	CASE(homa_recv_partial_wait, HOMA_ENOTFOUND, pwait_unknown),
	CASE(homa_recv_partial_wait, HOMA_ESHUTDOWN, pwait_dead),
	CASE(homa_recv_partial_wait, HOMA_EAGAIN, pwait_now),
	CASE(homa_recv_partial_wait, HOMA_ETIME, pwait_1ms),
	CASE(homa_recv_partial_wait, HOMA_ENOSERVER, pwait_no_server),
	CASE(homa_request_opts, HOMA_EAGAIN, opts_full_now),
	CASE(homa_request_opts, HOMA_ETIME, opts_full_wait),
	CASE(homa_request_opts, HOMA_EINVAL, opts_bad_size),
	CASE(homa_reply_opts, HOMA_EINVAL, reply_opts_bad_timeout),
	CASE(homa_reply_opts, HOMA_ENOTFOUND, reply_opts_unknown),
	CASE(homa_recv_partial, HOMA_EINVAL, partial_null_buf),
	CASE(homa_recv_partial, HOMA_ENOTFOUND, partial_unknown),
	CASE(homa_recv_partial, HOMA_ESHUTDOWN, partial_dead),
	CASE(homa_recv_partial, HOMA_ENOTFOUND, partial_request_id),
	CASE(homa_reply_iov, HOMA_ENOTFOUND, reply_unknown),
	CASE(homa_reply_iov, HOMA_ESTATE, reply_twice),
	CASE(homa_reply_iov, HOMA_EINVAL, reply_no_iov),
	CASE(homa_reply_iov, HOMA_EMSGSIZE, reply_too_long),
	CASE(homa_reply_iov, HOMA_ESHUTDOWN, reply_dead),
	CASE(homa_reply_buf, HOMA_EINVAL, reply_buf_null),
	CASE(homa_abort, HOMA_EINVAL, abort_zero),
	CASE(homa_abort, HOMA_ENOTFOUND, abort_unknown),
	CASE(homa_abort, HOMA_ESHUTDOWN, abort_dead),
	CASE(homa_fd, HOMA_EINVAL, fd_null),
	CASE(homa_fd, HOMA_ESHUTDOWN, fd_dead),
	CASE(homa_poll, HOMA_EINVAL, poll_threaded),
	CASE(homa_poll, HOMA_ESHUTDOWN, poll_dead),
	CASE(homa_set_settings, HOMA_EINVAL, settings_bad),
	CASE(homa_set_settings, HOMA_ESHUTDOWN, settings_dead),
	CASE(homa_socket_stats, HOMA_EINVAL, sstats_null),
	CASE(homa_socket_stats, HOMA_ESHUTDOWN, sstats_dead),
	CASE(homa_io_stats, HOMA_EINVAL, iostats_null),
	CASE(homa_io_stats, HOMA_ESHUTDOWN, iostats_dead),
	CASE(homa_message_transport, HOMA_EINVAL, transport_null),
	CASE(homa_transport_stats, HOMA_EINVAL, tstats_null),
	CASE(homa_transport_stats, HOMA_ESHUTDOWN, tstats_dead),
	CASE(homa_sockaddr_parse, HOMA_EINVAL, parse_name),
};

/** A documented error this test does not provoke, and where it is covered. */
struct elsewhere {
	const char *fn, *code, *where;
};

static const struct elsewhere elsewhere[] = {
	{"homa_open", "HOMA_EPERM", "tests/runtime/test_api.c homa_open__raw_driver_needs_privilege (not root only)"},
	{"homa_open", "HOMA_ENOTSUP", "needs a kernel without the address family"},
	{"homa_open", "HOMA_ENOMEM", "allocation failure"},
	{"homa_open", "HOMA_EIO", "a failing system call"},
	{"homa_close_wait", "HOMA_ETIME", "tests/api/test_promises.c homa_close_wait__gives_up_after_its_timeout"},
	{"homa_request_iov", "HOMA_EPEERDEAD", "tests/runtime/test_kill.c (after a timeout)"},
	{"homa_request_iov", "HOMA_ENOMEM", "allocation failure"},
	{"homa_request_iov", "HOMA_ENOASSOC", "tests/crypto/test_rt_encrypt.c encrypt__api_associations"},
	{"homa_request_iov", "HOMA_ECERT", "tests/crypto/test_rt_encrypt.c encrypt__key_exchange"},
	{"homa_request_iov", "HOMA_EHANDSHAKE", "tests/crypto/test_rt_encrypt.c encrypt__key_exchange"},
	{"homa_request_iov", "HOMA_EKEYEXPIRED",
	 "tests/crypto/test_rt_encrypt.c encrypt__expired_after_failed_renewals"},
	{"homa_fd", "HOMA_EIO", "tests/api/test_promises.c homa_fd__fails_cleanly_at_the_descriptor_limit"},
	{"homa_request_zc", "*", "as homa_request_iov(): its cases"},
	{"homa_request_buf", "*", "as homa_request_iov(): its cases"},
	{"homa_send", "*", "alias: the same function as homa_request_buf() (test_promises.c)"},
	{"homa_send_request", "*", "alias: the same function as homa_request_iov() (test_promises.c)"},
	{"homa_send_request_zc", "*", "alias: the same function as homa_request_zc() (test_promises.c)"},
	{"homa_reply", "*", "alias: the same function as homa_reply_iov() (test_promises.c)"},
	{"homa_reply_zc", "*", "as homa_reply_iov(): its cases"},
	{"homa_reply_buf", "*", "as homa_reply_iov(): its cases"},
	{"homa_reply_opts", "HOMA_EAGAIN", "as homa_request_opts()'s HOMA_EAGAIN (same wait, send.c)"},
	{"homa_reply_opts", "HOMA_ETIME", "as homa_request_opts()'s HOMA_ETIME (same wait, send.c)"},
	{"homa_recv", "HOMA_ETIMEDOUT", "tests/runtime/test_kill.c"},
	{"homa_recv", "HOMA_ECANCELED", "tests/runtime/test_api.c homa_abort__wakes_waiter_with_canceled"},
	{"homa_recv", "HOMA_EABANDONED", "tests/core/test_done.c (finished-RPC cap)"},
	{"homa_recv", "HOMA_ENOMEM", "allocation failure"},
	{"homa_recv_partial_wait", "HOMA_ETIMEDOUT", "a failed RPC's error item, as homa_recv()'s (pwait_no_server)"},
	{"homa_recv_partial_wait", "HOMA_EABANDONED", "a failed RPC's error item, as homa_recv()'s (pwait_no_server)"},
	{"homa_reply_iov", "HOMA_EAGAIN", "as homa_request_iov()'s HOMA_EAGAIN (same wait, send.c)"},
	{"homa_reply_iov", "HOMA_ETIME", "as homa_request_iov()'s HOMA_ETIME (same wait, send.c)"},
	{"homa_reply_iov", "HOMA_ENOMEM", "allocation failure"},
	{"homa_reply_iov", "HOMA_ENOASSOC", "tests/crypto/test_rt_encrypt.c encrypt__reply_without_association"},
	{"homa_abort", "HOMA_ECANCELED", "what a waiter's homa_recv() returns, not homa_abort(): test_api.c"},
};

static struct doc_set docs;

/** documents() - True if @fn's comment (or the one it refers to) names @code. */
static bool documents(const char *fn, const char *code)
{
	return doc_documents(&docs, fn, code);
}

/** provoked() - True if a case provokes @code from @fn. */
static bool provoked(const char *fn, const char *code)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(cases[i].fn, fn) && !strcmp(cases[i].code, code))
			return true;
	return false;
}

/** covered_elsewhere() - True if elsewhere[] accounts for @fn's @code. */
static bool covered_elsewhere(const char *fn, const char *code)
{
	for (size_t i = 0; i < sizeof(elsewhere) / sizeof(elsewhere[0]); i++)
		if (!strcmp(elsewhere[i].fn, fn) &&
		    (!strcmp(elsewhere[i].code, code) || !strcmp(elsewhere[i].code, "*")))
			return true;
	return false;
}

/** setup() - The shared sockets (max_message 1000 for the size cases). */
static int setup(void **state)
{
	struct homa_settings st;

	(void)state;
	homa_settings_default(&st);
	st.max_message = 1000;
	st.timeout_ticks = 3000;
	assert_int_equal(api_open(&c.cli, HOMA_MODE_THREADED, false, &st), 0);
	assert_int_equal(api_open(&c.srv, HOMA_MODE_THREADED, true, &st), 0);
	assert_int_equal(api_open(&c.polled, HOMA_MODE_POLLED, false, NULL), 0);
	assert_int_equal(api_open(&c.dead, HOMA_MODE_THREADED, false, NULL), 0);
	assert_int_equal(homa_close(c.dead), 0);
	c.srv_dst = api_dst(c.srv);
	assert_true(doc_load(&docs, HOMA_H_PATH) >= 20);
	return 0;
}

/** teardown() - Close the shared sockets. */
static int teardown(void **state)
{
	(void)state;
	homa_close(c.cli);
	homa_close(c.srv);
	homa_close(c.polled);
	return 0;
}

/** conformance__every_case_returns_its_documented_code() - Run every case. */
static void conformance__every_case_returns_its_documented_code(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct errcase *k = &cases[i];
		int got = k->run();

		if (got != k->want) {
			print_error("%s: wanted %s, got %d (%s)\n", k->fn, k->code, got,
				    homa_strerror(got));
			bad++;
		}
		if (!documents(k->fn, k->code)) {
			print_error("%s returns %s but its comment does not say so\n", k->fn, k->code);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/**
 * conformance__every_documented_code_is_covered() - Every function of
 * homa.h has its comment's codes provoked here or accounted for.
 */
static void conformance__every_documented_code_is_covered(void **state)
{
	int bad = 0;

	(void)state;
	for (int i = 0; i < docs.n; i++) {
		const struct doc_fn *d = &docs.fns[i];

		for (int j = 0; j < d->n; j++) {
			if (provoked(d->fn, d->codes[j]) || covered_elsewhere(d->fn, d->codes[j]))
				continue;
			print_error("%s documents %s: no case provokes it\n", d->fn, d->codes[j]);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "tcp") == 0)
		api_transport = HOMA_TRANSPORT_TCP;
	else if (argc > 1 && strcmp(argv[1], "auto") == 0)
		api_transport = HOMA_TRANSPORT_AUTO;
	else if (argc > 1 && strcmp(argv[1], "homa") != 0)
		return 2;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conformance__every_case_returns_its_documented_code),
		cmocka_unit_test(conformance__every_documented_code_is_covered),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
