/* SPDX-License-Identifier: MIT */
/**
 * @file test_rx_copy.c
 * Receiving (src/runtime/io.c): payload is copied into messages with the
 * socket lock released, and a message is not delivered before all its
 * bytes are copied. The client receives into pieces from its own
 * rx_alloc hooks; the first piece's pages are missing and registered
 * with a userfaultfd, so the copy into it (on whichever thread drives
 * the socket) stops until the test has probed the socket.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "homa/engine.h"

/** Seconds a step may take before the test gives up on it. */
#define STEP_S 10

/** Response length: two pieces, the first one guarded. */
#define RESP_LEN 100000

/* State shared with the hooks and the fault thread. */
static uint8_t *guarded;        /**< the first piece: its pages fault into uffd */
static size_t guarded_len;
static int uffd = -1;
static atomic_int armed;        /**< the next piece handed out is the guarded one */
static sem_t in_copy, go, resolved;

/** open_uffd() - A userfaultfd for user-mode faults. Return: false if this kernel refuses. */
static bool open_uffd(void)
{
	struct uffdio_api api = {.api = UFFD_API};

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0)
		uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		return false;
	if (ioctl(uffd, UFFDIO_API, &api) == 0)
		return true;
	close(uffd);
	uffd = -1;
	return false;
}

/**
 * fault_thread() - Wait (at most STEP_S) for the first write into
 * @guarded: report it, wait for the probe, then map the whole piece
 * (zero pages; the stopped copy goes on).
 */
static void *fault_thread(void *arg)
{
	struct pollfd p = {.fd = uffd, .events = POLLIN};
	struct uffd_msg msg;
	struct uffdio_zeropage z = {0};

	(void)arg;
	if (poll(&p, 1, STEP_S * 1000) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
	    msg.event == UFFD_EVENT_PAGEFAULT) {
		sem_post(&in_copy);
		while (sem_wait(&go) != 0 && errno == EINTR)
			;
	}
	z.range.start = (uintptr_t)guarded;
	z.range.len = guarded_len;
	ioctl(uffd, UFFDIO_ZEROPAGE, &z);
	sem_post(&resolved);
	return NULL;
}

/** piece_alloc() - rx_alloc hook: the first piece guarded (uffd), the others malloc. */
static void *piece_alloc(void *ctx, size_t size)
{
	struct uffdio_register r = {0};
	size_t len = (size + 4095) & ~(size_t)4095;
	void *p;

	(void)ctx;
	if (!atomic_exchange(&armed, 0))
		return malloc(size);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	r.range.start = (uintptr_t)p;
	r.range.len = len;
	r.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &r) != 0) {
		munmap(p, len);
		return NULL;
	}
	guarded_len = len;
	guarded = p;
	return p;
}

/** piece_free() - rx_alloc hook: give a piece back. */
static void piece_free(void *ctx, void *p, size_t size)
{
	(void)ctx;
	(void)size;
	if (p == guarded)
		munmap(p, guarded_len);
	else
		free(p);
}

/** What the probe thread saw while the copy was stopped. */
struct probe {
	homa_socket *s;
	uint64_t id;
	int stats_err;
	int recv_err;
	sem_t done;
};

/**
 * probe_thread() - Take the socket lock (homa_socket_stats()), then wait
 * 200 ms for the response whose copy is stopped: it must not come.
 */
static void *probe_thread(void *arg)
{
	struct probe *p = arg;
	struct homa_stats st;
	struct homa_message m;

	p->stats_err = homa_socket_stats(p->s, &st);
	p->recv_err = homa_recv(p->s, HOMA_RECV_RESPONSE, p->id, 200000000LL, &m);
	if (p->recv_err == 0)
		homa_message_release(&m);
	sem_post(&p->done);
	return NULL;
}

/**
 * homa_recv__copies_without_the_socket_lock() - While the I/O thread is
 * stopped in the middle of copying a response into its message, another
 * thread takes the socket lock (homa_socket_stats() returns) and does not
 * get the response (homa_recv() times out); once the copy goes on, the
 * response arrives intact.
 */
static void homa_recv__copies_without_the_socket_lock(void **state)
{
	static uint8_t resp[RESP_LEN];
	struct homa_alloc hooks = {piece_alloc, piece_free, NULL};
	struct probe probe = {0};
	struct sockaddr_storage dst;
	struct homa_open_opts o;
	struct homa_message m;
	homa_socket *cli, *srv;
	uint64_t cid, sid;
	bool copying, probed;
	pthread_t pt, ft;

	(void)state;
	if (!open_uffd())
		skip();  /* no userfaultfd here */
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.rx_alloc = &hooks;
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(homa_open(&cli, &o), 0);
	dst = test_dst(homa_local_port(srv));
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &cid), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
	sid = m.id;
	homa_message_release(&m);
	sem_init(&in_copy, 0, 0);
	sem_init(&go, 0, 0);
	sem_init(&resolved, 0, 0);
	sem_init(&probe.done, 0, 0);
	atomic_store(&armed, 1);
	test_fill(resp, RESP_LEN, 5);
	for (size_t i = 0; i < RESP_LEN; i++)
		resp[i] ^= 0x5a;  /* test_check_response() expects an echo server's bytes */
	assert_int_equal(homa_reply_buf(srv, sid, resp, RESP_LEN), 0);
	pthread_create(&ft, NULL, fault_thread, NULL);
	copying = test_sem_wait_s(&in_copy, STEP_S);
	probe.s = cli;
	probe.id = cid;
	pthread_create(&pt, NULL, probe_thread, &probe);
	probed = copying && test_sem_wait_s(&probe.done, STEP_S);
	sem_post(&go);
	pthread_join(ft, NULL);
	pthread_join(pt, NULL);
	assert_true(copying);
	assert_true(probed);  /* fails if the copy held the socket lock */
	assert_int_equal(probe.stats_err, 0);
	assert_int_equal(probe.recv_err, HOMA_ETIME);  /* not delivered while copying */
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, cid, 30000000000LL, &m), 0);
	assert_true(test_check_response(&m, RESP_LEN, 5));
	homa_message_release(&m);
	homa_close(cli);
	homa_close(srv);
	close(uffd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_recv__copies_without_the_socket_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
