/* SPDX-License-Identifier: MIT */
/**
 * @file xsk_lockdie.c
 * Test helper for xdp_lockdead.sh: acts on the shared UMEM control block
 * of queue 0 of an interface (src/io/xdp/xsk_shm.h) from outside the
 * library, in the network namespace of the processes using it.
 *
 *   xsk_lockdie die IFNAME    enter as a member, take the robust lock,
 *                             take 100 free send frames as its own, lose
 *                             the rest of the free list (n_tx_free = 0:
 *                             a process killed in the middle of an
 *                             update), then die by SIGKILL holding the lock
 *   xsk_lockdie check IFNAME  take the lock (it must be usable: not
 *                             ENOTRECOVERABLE) and check that the free
 *                             send frames are exactly the send frames
 *                             nobody owns, each listed once; print the
 *                             counts; exit 0 if so, 1 if not
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xsk_shm.h"

/** The first send frame (receive frames come first, half of them). */
#define TX_FIRST (HOMA_XSK_FRAMES / 2)
/** Bytes of a UMEM frame (XSK_UMEM__DEFAULT_FRAME_SIZE). */
#define FRAME_BYTES 4096u

/**
 * map_block() - Map the control block of queue 0 of @ifname in this
 * network namespace (the name homa_xsk_seg_open() gives it).
 * Return: the block, or NULL (with a message).
 */
static struct homa_xsk_shm *map_block(const char *ifname)
{
	struct stat ns = {0};
	char name[64];
	unsigned idx = if_nametoindex(ifname);
	void *m;
	int fd;

	if (!idx || stat("/proc/self/ns/net", &ns)) {
		fprintf(stderr, "xsk_lockdie: no interface %s\n", ifname);
		return NULL;
	}
	snprintf(name, sizeof(name), "/homa-xdp-%llu-%u-0", (unsigned long long)ns.st_ino, idx);
	fd = shm_open(name, O_RDWR, 0);
	if (fd < 0) {
		fprintf(stderr, "xsk_lockdie: %s: %s\n", name, strerror(errno));
		return NULL;
	}
	m = mmap(NULL, sizeof(struct homa_xsk_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "xsk_lockdie: mmap: %s\n", strerror(errno));
		return NULL;
	}
	return m;
}

/** die() - The "die" mode (see the file comment); never returns on success. */
static int die(struct homa_xsk_shm *sh)
{
	int k, e = pthread_mutex_lock(&sh->lock), took = 0;

	if (e && e != EOWNERDEAD) {
		fprintf(stderr, "xsk_lockdie: lock: %s\n", strerror(e));
		return 1;
	}
	if (e == EOWNERDEAD)
		pthread_mutex_consistent(&sh->lock);
	for (k = 0; k < HOMA_XSK_MEMBERS && sh->pid[k]; k++)
		;
	if (k == HOMA_XSK_MEMBERS) {
		fprintf(stderr, "xsk_lockdie: no free member entry\n");
		pthread_mutex_unlock(&sh->lock);
		return 1;
	}
	sh->pid[k] = getpid();
	sh->fd[k] = -1;
	while (took < 100 && sh->n_tx_free) {
		uint64_t a = sh->tx_free[--sh->n_tx_free];

		__atomic_store_n(&sh->owner[a / FRAME_BYTES], (uint16_t)(k + 1), __ATOMIC_RELAXED);
		took++;
	}
	sh->n_tx_free = 0;
	printf("member %d took %d send frames, dying with the lock\n", k, took);
	fflush(stdout);
	kill(getpid(), SIGKILL);
	return 1;
}

/** check() - The "check" mode (see the file comment). Return: 0 or 1. */
static int check(struct homa_xsk_shm *sh)
{
	static uint8_t listed[HOMA_XSK_FRAMES];
	uint32_t unowned = 0, bad = 0;
	int e = pthread_mutex_lock(&sh->lock);

	if (e == EOWNERDEAD) {
		/* nobody took it since the helper died: not what the test set up */
		fprintf(stderr, "xsk_lockdie: the lock was still left by a dead holder\n");
		pthread_mutex_consistent(&sh->lock);
		pthread_mutex_unlock(&sh->lock);
		return 1;
	}
	if (e) {
		fprintf(stderr, "xsk_lockdie: lock: %s (not made consistent after its holder died)\n",
			strerror(e));
		return 1;
	}
	for (uint32_t i = 0; i < sh->n_tx_free && i < TX_FIRST; i++) {
		uint64_t f = sh->tx_free[i] / FRAME_BYTES;

		if (sh->tx_free[i] % FRAME_BYTES || f < TX_FIRST || f >= HOMA_XSK_FRAMES ||
		    listed[f]++ || sh->owner[f])
			bad++;
	}
	for (uint32_t f = TX_FIRST; f < HOMA_XSK_FRAMES; f++)
		if (!sh->owner[f]) {
			unowned++;
			bad += !listed[f];
		}
	printf("free send frames %u, unowned %u, inconsistent %u, reclaimed %llu\n",
	       sh->n_tx_free, unowned, bad, (unsigned long long)sh->reclaimed);
	/* judged under the lock: the first process keeps sending meanwhile */
	bad += sh->n_tx_free != unowned;
	pthread_mutex_unlock(&sh->lock);
	return bad ? 1 : 0;
}

/** main() - See the file comment. */
int main(int argc, char **argv)
{
	struct homa_xsk_shm *sh;

	if (argc != 3 || (strcmp(argv[1], "die") && strcmp(argv[1], "check"))) {
		fprintf(stderr, "usage: xsk_lockdie die|check IFNAME\n");
		return 2;
	}
	sh = map_block(argv[2]);
	if (!sh)
		return 1;
	return strcmp(argv[1], "die") ? check(sh) : die(sh);
}
