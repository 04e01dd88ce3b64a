/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_batch.c
 * Test of the XDP driver's per-batch costs (run by xdp_batch.sh, as root,
 * with two network namespaces joined by a veth pair): one driver opened
 * in each namespace by this one process (setns() between the opens), the
 * first sending, the second receiving.
 *
 *   xdp_batch NS_A IF_A ADDR_A NS_B IF_B ADDR_B
 *
 * Checks, each printed with its figures:
 * - sends are kicked per batch: 640 packets sent in calls of 32 cost at
 *   most one sendto() per 8 packets (tx_calls), not one per packet;
 * - a receive takes up to 64 packets from the ring (max_rx, and the first
 *   receive after 640 packets arrived), above the runtime's batch of 32;
 * - a receive that gives frames back to the fill ring takes the shared
 *   UMEM lock once, also when messages released kept frames since the
 *   last receive (those and the last batch's go back under one lock), and
 *   none when it has nothing to give back;
 * - every frame comes back: after the kept frames are released no frame
 *   is held (xdp_rx_lent 0), and 640 more packets are received.
 * Exit 0 if all hold, 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "xdp_drv.h"

/** Homa port of both ends. */
#define PORT 4711
/** Packets per send call (the runtime's default batch). */
#define CALL 32
/** Packets sent per round. */
#define ROUND 640

static int failures;

/** check() - Count a failed check @ok, printing @what either way. */
static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

/** enter() - Move this thread into network namespace @ns (a name under /run/netns). */
static int enter(const char *ns)
{
	char path[256];
	int fd, r;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = setns(fd, CLONE_NEWNET);
	close(fd);
	return r;
}

/** open_end() - Open the XDP driver on @ifname bound to @addr:PORT in namespace @ns. */
static struct homa_driver *open_end(const char *ns, const char *ifname, const char *addr)
{
	struct homa_driver_config cfg = {.batch = CALL, .max_packet = 1472, .ifname = ifname};
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg.bind;
	struct homa_driver *d = NULL;
	int err;

	sin->sin_family = AF_INET;
	sin->sin_port = htons(PORT);
	inet_pton(AF_INET, addr, &sin->sin_addr);
	cfg.bind_len = sizeof(*sin);
	if (enter(ns)) {
		perror("setns");
		return NULL;
	}
	err = homa_xdp_open(&cfg, &d);
	if (err) {
		fprintf(stderr, "xdp_batch: open %s in %s: %d\n", ifname, ns, err);
		return NULL;
	}
	return d;
}

/** sleep_ms() - Sleep @ms milliseconds. */
static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/** send_round() - Send @n 1000-byte packets to @dst in calls of CALL. Return: packets sent. */
static int send_round(struct homa_driver *a, uint32_t dst, int n)
{
	static uint8_t data[1000];
	struct homa_io_tx t[CALL];
	int sent = 0;

	memset(data, 0x5a, sizeof(data));
	for (int i = 0; i < CALL; i++)
		t[i] = (struct homa_io_tx){.data = data, .len = sizeof(data),
			.dst = homa_addr_ipv4(dst), .dport = PORT};
	while (sent < n)
		sent += a->ops->send(a, t, CALL);
	return sent;
}

/** drain() - Receive until nothing came for 100 looks 2 ms apart. Return: packets received. */
static int drain(struct homa_driver *b, int *first)
{
	struct homa_io_rx *rx;
	int total = 0, idle = 0;

	while (idle < 100) {
		int n = b->ops->recv(b, &rx);

		if (first && total == 0 && n > 0)
			*first = n;
		total += n > 0 ? n : 0;
		if (n > 0) {
			idle = 0;
		} else {
			idle++;
			sleep_ms(2);
		}
	}
	return total;
}

/** resolve() - Send single packets until one arrives (the neighbour is resolved). */
static int resolve(struct homa_driver *a, struct homa_driver *b, uint32_t dst)
{
	for (int i = 0; i < 100; i++) {
		send_round(a, dst, 1);
		sleep_ms(20);
		if (drain(b, NULL) > 0)
			return 0;
	}
	return -1;
}

/**
 * lock_checks() - Receive a batch, keep 8 of its frames as messages
 * would, release them, and check the UMEM locks the next receives take.
 */
static void lock_checks(struct homa_driver *a, struct homa_driver *b, uint32_t dst)
{
	struct homa_io_rx *rx;
	uint8_t *kept[8];
	uint64_t l0;
	int n, nk = 0;
	char what[160];

	send_round(a, dst, CALL);
	sleep_ms(50);
	n = b->ops->recv(b, &rx);
	for (int i = 0; i < n && nk < 8; i++)
		if (rx[i].lendable) {  /* as the engine does with payload it stores in place */
			rx[i].kept = true;
			kept[nk++] = rx[i].data;
		}
	check(nk == 8, "8 of the received frames lendable and kept");
	for (int i = 0; i < nk; i++)
		b->lend->release(b->lend->ctx, kept[i]);
	l0 = homa_xdp_umem_locks(b);
	n = b->ops->recv(b, &rx);  /* gives back the last batch and the 8 released frames */
	snprintf(what, sizeof(what), "a receive giving back the last batch and %d released "
		 "frames took the UMEM lock once (took it %llu times)", nk,
		 (unsigned long long)(homa_xdp_umem_locks(b) - l0));
	check(homa_xdp_umem_locks(b) - l0 == 1, what);
	check(n == 0, "nothing more arrived");
	l0 = homa_xdp_umem_locks(b);
	n = b->ops->recv(b, &rx);
	snprintf(what, sizeof(what), "a receive with nothing to give back took the UMEM lock "
		 "%llu times", (unsigned long long)(homa_xdp_umem_locks(b) - l0));
	check(n <= 0 && homa_xdp_umem_locks(b) - l0 == 0, what);
	b->ops->refresh(b);
	check(__atomic_load_n(&b->c.xdp_rx_lent, __ATOMIC_RELAXED) == 0,
	      "no frame held after the kept ones were released");
}

int main(int argc, char **argv)
{
	struct homa_driver *a, *b;
	struct in_addr dst;
	uint64_t calls0, pk0;
	int got, first = 0;
	char what[200];

	if (argc != 7) {
		fprintf(stderr, "usage: xdp_batch NS_A IF_A ADDR_A NS_B IF_B ADDR_B\n");
		return 2;
	}
	b = open_end(argv[4], argv[5], argv[6]);
	a = b ? open_end(argv[1], argv[2], argv[3]) : NULL;
	if (!a || !b || inet_pton(AF_INET, argv[6], &dst) != 1)
		return 1;
	snprintf(what, sizeof(what), "a receive takes up to %u packets (the caller's batch: %d)",
		 b->max_rx, CALL);
	check(b->max_rx >= 64, what);
	if (resolve(a, b, ntohl(dst.s_addr))) {
		fprintf(stderr, "xdp_batch: no packet arrived\n");
		return 1;
	}
	calls0 = a->c.tx_calls;
	pk0 = a->c.tx_packets;
	send_round(a, ntohl(dst.s_addr), ROUND);
	snprintf(what, sizeof(what), "%llu packets sent with %llu sendto() kicks",
		 (unsigned long long)(a->c.tx_packets - pk0),
		 (unsigned long long)(a->c.tx_calls - calls0));
	check(a->c.tx_packets - pk0 == ROUND && (a->c.tx_calls - calls0) * 8 <= ROUND, what);
	sleep_ms(50);
	got = drain(b, &first);
	snprintf(what, sizeof(what), "received %d of %d, the first receive %d", got, ROUND, first);
	check(got == ROUND && first == 64, what);
	lock_checks(a, b, ntohl(dst.s_addr));
	send_round(a, ntohl(dst.s_addr), ROUND);
	sleep_ms(50);
	got = drain(b, NULL);
	snprintf(what, sizeof(what), "received %d of %d after the frames came back", got, ROUND);
	check(got == ROUND, what);
	homa_driver_close(a);
	homa_driver_close(b);
	printf("xdp_batch: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
