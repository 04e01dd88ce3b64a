/* SPDX-License-Identifier: MIT */
/**
 * @file psp_host.c
 * The host's PSP receiver: PSP sends every sealed packet to one UDP port
 * of the destination host (1000), and Homa sockets each have a port of
 * their own, so one socket per host on the PSP port hands each packet to
 * the socket named by the clear common header's destination port
 * (psp_fwd.c). Each process with sockets opened with udp_port set runs
 * one thread for it: the process that binds the port serves the host; the
 * others stand by, tell the holder their ports every half second over
 * loopback and try to bind every 100 ms, so one of them takes over when
 * the holder exits (packets of the gap are lost and retransmitted). A
 * socket that joins while its process stands by is announced at once,
 * from homa_open()'s thread, so the holder knows its port before the
 * socket's first packet can arrive.
 *
 * Locking: life_mu serializes joining and leaving (starting and stopping
 * the thread); mu guards the totals. The thread owns the socket and the
 * registry; the bitmap of this process's ports is read atomically.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "psp_host.h"
#include "psp_steer.h"
#include "rt.h"

/** How long the holder sleeps in recvmmsg() before looking at the stop flag. */
#define RCV_TIMEOUT_US 500000

/** This process's receiver. */
static struct {
	pthread_mutex_t life_mu, mu;
	int users;                       /**< life_mu: sockets joined */
	uint16_t port;                   /**< life_mu: the PSP port */
	pthread_t thread;
	int wake;                        /**< eventfd: stop */
	int stop;                        /**< atomic */
	int fd;                          /**< bound socket, or -1 (thread's; atomic) */
	int tell;                        /**< life_mu: socket announcing our ports */
	uint64_t local[65536 / 64];      /**< this process's ports (atomic words) */
	struct homa_psp_host_stats st;   /**< mu: totals */
	uint16_t steer_port;             /**< mu: PSP port of the last socket steered */
} H = {.life_mu = PTHREAD_MUTEX_INITIALIZER, .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1,
     .tell = -1};

/**
 * open_family() - A UDP socket of @family on the wildcard address, @port,
 * able to send with any source address (IP_TRANSPARENT) and told each
 * datagram's destination (IP_PKTINFO, and IPV6_RECVPKTINFO on an IPv6
 * socket, which is dual-stack: it also takes IPv4, as v4-mapped).
 * Blocking reads wait at most RCV_TIMEOUT_US; sends never wait.
 * Return: the fd, or -errno.
 */
static int open_family(int family, uint16_t port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port),
				  .sin6_addr = IN6ADDR_ANY_INIT};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {.tv_usec = RCV_TIMEOUT_US};
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0), on = 1, off = 0;
	int bad, err;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		bad = 1;
	else if (family == AF_INET6)
		bad = setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0 ||
		      setsockopt(fd, IPPROTO_IPV6, IPV6_TRANSPARENT, &on, sizeof(on)) < 0 ||
		      setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof(on)) < 0 ||
		      bind(fd, (struct sockaddr *)&a6, sizeof(a6)) < 0;
	else
		bad = setsockopt(fd, IPPROTO_IP, IP_TRANSPARENT, &on, sizeof(on)) < 0 ||
		      setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on)) < 0 ||
		      bind(fd, (struct sockaddr *)&a4, sizeof(a4)) < 0;
	if (bad) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/**
 * open_port() - The receiver's socket on @port: IPv6 dual-stack, or IPv4
 * only on a kernel without IPv6. Return: the fd, or -errno (EADDRINUSE:
 * held elsewhere; EACCES/EPERM: no privilege).
 */
static int open_port(uint16_t port)
{
	int fd = open_family(AF_INET6, port);

	return fd == -EAFNOSUPPORT ? open_family(AF_INET, port) : fd;
}

/** family_of() - The address family of socket @fd (AF_INET6 if unknown). */
static int family_of(int fd)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return AF_INET6;
	return a.ss_family;
}

/** add_totals() - Add the thread's counts @r->st to the totals and clear them. */
static void add_totals(struct psp_host_rx *r)
{
	pthread_mutex_lock(&H.mu);
	H.st.forwarded += r->st.forwarded;
	H.st.not_psp += r->st.not_psp;
	H.st.truncated += r->st.truncated;
	H.st.no_port += r->st.no_port;
	H.st.send_errors += r->st.send_errors;
	H.st.registrations += r->st.registrations;
	H.st.batches += r->st.batches;
	H.st.owner = r->fd >= 0;
	pthread_mutex_unlock(&H.mu);
	memset(&r->st, 0, sizeof(r->st));
}

/**
 * announce() - Tell the holder of the port (over loopback, from @fd) the
 * Homa ports of this process's sockets. Sends nothing if there are none.
 * Called by the receiver thread and by homa_rt_psp_host_join().
 */
static void announce(int fd, uint16_t port)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint8_t msg[1400];
	size_t len = PSP_HOST_MAGIC_LEN;

	memcpy(msg, PSP_HOST_MAGIC, PSP_HOST_MAGIC_LEN);
	for (uint32_t p = 1; p < 65536; p++) {
		if (!psp_host_local_has(H.local, (uint16_t)p))
			continue;
		msg[len++] = (uint8_t)(p >> 8);
		msg[len++] = (uint8_t)p;
		if (len + 2 > sizeof(msg)) {
			sendto(fd, msg, len, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
			len = PSP_HOST_MAGIC_LEN;
		}
	}
	if (len > PSP_HOST_MAGIC_LEN)
		sendto(fd, msg, len, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
}

/** standby() - Not holding the port: announce our ports, try to bind it. */
static void standby(struct psp_host_rx *r, int tell_fd, uint64_t *next_announce)
{
	uint64_t now = homa_rt_now();

	if (now >= *next_announce) {
		announce(tell_fd, r->port);
		*next_announce = now + PSP_HOST_REG_EVERY_NS;
	}
	r->fd = open_port(r->port);
	if (r->fd >= 0) {
		r->family = family_of(r->fd);
		__atomic_store_n(&H.fd, r->fd, __ATOMIC_RELEASE);
	}
}

/**
 * run() - The receiver thread until told to stop: holding the port, it
 * sleeps in recvmmsg() (psp_host_drain()) and forwards batch by batch;
 * standing by, it announces and tries to bind every 100 ms.
 */
static void *run(void *arg)
{
	struct psp_host_rx r = {.fd = __atomic_load_n(&H.fd, __ATOMIC_ACQUIRE),
				.port = H.port, .local = H.local, .stop = &H.stop};
	uint8_t *bufs = malloc((size_t)PSP_HOST_BATCH * PSP_HOST_MAX_DGRAM);
	uint64_t next_announce = 0;

	(void)arg;
	if (r.fd >= 0)
		r.family = family_of(r.fd);
	r.seen = calloc(65536, sizeof(*r.seen));
	while (bufs && r.seen && !__atomic_load_n(&H.stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p = {.fd = H.wake, .events = POLLIN};

		if (r.fd < 0)
			standby(&r, H.tell, &next_announce);
		if (r.fd < 0)
			poll(&p, 1, 100);
		else if (!__atomic_load_n(&H.stop, __ATOMIC_ACQUIRE))
			psp_host_drain(&r, bufs, MSG_WAITFORONE);
		add_totals(&r);
	}
	free(r.seen);
	free(bufs);
	return NULL;
}

/** close_quietly() - Close *@fd if open and mark it closed (-1). */
static void close_quietly(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/** start() - First join: bind or stand by, start the thread. Return: 0 or a homa error. */
static int start(uint16_t port)
{
	int fd = open_port(port);

	if (fd < 0 && fd != -EADDRINUSE)
		return fd == -EACCES || fd == -EPERM ? HOMA_EPERM : HOMA_EIO;
	H.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	H.tell = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (H.wake < 0 || H.tell < 0) {
		close_quietly(&H.wake);
		close_quietly(&H.tell);
		if (fd >= 0)
			close(fd);
		return HOMA_EIO;
	}
	H.port = port;
	H.fd = fd;
	pthread_mutex_lock(&H.mu);
	H.st.owner = fd >= 0;
	pthread_mutex_unlock(&H.mu);
	__atomic_store_n(&H.stop, 0, __ATOMIC_RELEASE);
	if (pthread_create(&H.thread, NULL, run, NULL)) {
		close_quietly(&H.wake);
		close_quietly(&H.tell);
		if (fd >= 0)
			close(fd);
		H.fd = -1;
		return HOMA_ENOMEM;
	}
	return 0;
}

/**
 * wake_holder() - If the thread holds the port it may sleep in
 * recvmmsg(): send it an empty datagram over loopback, which it reads and
 * ignores once stop is set (lost, the socket's receive timeout, 500 ms,
 * still wakes it).
 */
static void wake_holder(void)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(H.port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	if (__atomic_load_n(&H.fd, __ATOMIC_ACQUIRE) >= 0)
		sendto(H.tell, "", 0, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
}

/** stop() - Last leave: stop the thread, release the port. */
static void stop(void)
{
	uint64_t one = 1;

	__atomic_store_n(&H.stop, 1, __ATOMIC_RELEASE);
	if (write(H.wake, &one, sizeof(one)) < 0) {
		/* the thread still sees stop within 100 ms */
	}
	wake_holder();
	pthread_join(H.thread, NULL);
	close_quietly(&H.wake);
	close_quietly(&H.tell);
	if (H.fd >= 0)
		close(H.fd);
	H.fd = -1;
	pthread_mutex_lock(&H.mu);
	H.st.owner = 0;
	pthread_mutex_unlock(&H.mu);
}

/**
 * after_fork() - In a child process: the receiver thread did not come
 * along, so forget the parent's receiver (its sockets are unusable here)
 * and let the child's own sockets start one.
 */
static void after_fork(void)
{
	pthread_mutex_init(&H.life_mu, NULL);
	pthread_mutex_init(&H.mu, NULL);
	if (H.users) {
		close_quietly(&H.wake);
		close_quietly(&H.tell);
		if (H.fd >= 0)
			close(H.fd);
	}
	H.users = 0;
	H.fd = -1;
	memset(H.local, 0, sizeof(H.local));
	memset(&H.st, 0, sizeof(H.st));
}

/** register_fork() - Once per process: after_fork() in children. */
static void register_fork(void)
{
	pthread_atfork(NULL, NULL, after_fork);
}

/** homa_rt_psp_host_join() - See rt.h. */
int homa_rt_psp_host_join(uint16_t udp_port, uint16_t homa_port)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int err = 0;

	pthread_once(&once, register_fork);
	pthread_mutex_lock(&H.life_mu);
	if (H.users && H.port != udp_port) {
		pthread_mutex_unlock(&H.life_mu);
		return HOMA_EINVAL;
	}
	/* set before the thread starts, so that its first announcement has it */
	__atomic_fetch_or(&H.local[homa_port / 64], 1ull << (homa_port % 64), __ATOMIC_RELAXED);
	if (!H.users)
		err = start(udp_port);
	if (err) {
		__atomic_fetch_and(&H.local[homa_port / 64], ~(1ull << (homa_port % 64)),
				   __ATOMIC_RELAXED);
	} else {
		/* standing by: the holder must know the port before its first packet */
		if (__atomic_load_n(&H.fd, __ATOMIC_ACQUIRE) < 0)
			announce(H.tell, udp_port);
		H.users++;
		pthread_mutex_lock(&H.mu);
		H.st.sockets = (uint32_t)H.users;
		pthread_mutex_unlock(&H.mu);
	}
	pthread_mutex_unlock(&H.life_mu);
	return err;
}

/** homa_rt_psp_host_leave() - See rt.h. */
void homa_rt_psp_host_leave(uint16_t homa_port)
{
	pthread_mutex_lock(&H.life_mu);
	__atomic_fetch_and(&H.local[homa_port / 64], ~(1ull << (homa_port % 64)), __ATOMIC_RELAXED);
	if (H.users && --H.users == 0)
		stop();
	pthread_mutex_lock(&H.mu);
	H.st.sockets = (uint32_t)H.users;
	pthread_mutex_unlock(&H.mu);
	pthread_mutex_unlock(&H.life_mu);
}

/** homa_rt_psp_host_steered() - See rt.h. */
void homa_rt_psp_host_steered(int delta, bool refused, uint16_t udp_port)
{
	pthread_mutex_lock(&H.mu);
	H.st.steered = (uint32_t)((int)H.st.steered + delta);
	H.st.steer_refused += refused;
	if (delta > 0)
		H.steer_port = udp_port;
	pthread_mutex_unlock(&H.mu);
}

/**
 * add_kernel_drops() - Add to @out what the steering program of PSP port
 * @udp_port dropped (the host's counts, all processes). If they cannot be
 * read (the program is gone, no right to open it by id), @out keeps this
 * process's receiver counts only and the log says why.
 */
static void add_kernel_drops(struct homa_psp_host_stats *out, uint16_t udp_port)
{
	uint64_t d[PSP_STEER_REASONS];
	int err = homa_rt_psp_steer_drops(udp_port, d);

	if (err) {
		HOMA_LOG_WARN("PSP port %u: kernel steering drop counts unreadable (%s)", udp_port,
			      homa_strerror(err));
		return;
	}
	out->not_psp += d[PSP_STEER_NOT_PSP];
	out->truncated += d[PSP_STEER_TRUNCATED];
	out->no_port += d[PSP_STEER_NO_PORT];
}

/** homa_encrypt_host_stats() - See encrypt.h. */
int homa_encrypt_host_stats(struct homa_psp_host_stats *out)
{
	uint16_t steer_port = 0;
	int err = 0;

	if (!out)
		return HOMA_EINVAL;
	pthread_mutex_lock(&H.mu);
	if (!H.st.sockets && !H.st.steered)
		err = HOMA_ENOTSUP;
	else
		*out = H.st;
	if (!err && H.st.steered)
		steer_port = H.steer_port;
	pthread_mutex_unlock(&H.mu);
	if (steer_port)
		add_kernel_drops(out, steer_port);
	return err;
}
