/* SPDX-License-Identifier: MIT */
/**
 * @file xsk_shm.h
 * The UMEM of one interface queue shared between processes. The first
 * process on a queue creates a POSIX shared memory segment
 * (/dev/shm/homa-xdp-NETNS-IFINDEX-QUEUE): a control block followed by the
 * UMEM frames, which it registers with the kernel. A later process maps
 * the same segment and binds its AF_XDP socket with XDP_SHARED_UMEM on a
 * bound socket of a live member (taken with pidfd_getfd()), then maps the
 * queue's fill and completion rings through its own socket. The control
 * block holds a robust process-shared lock over those rings and the free
 * send frames, the members, and the owner of every frame a process holds,
 * so that the frames of a process that died (SIGKILL) are taken back.
 */
#ifndef HOMA_IO_XDP_XSK_SHM_H
#define HOMA_IO_XDP_XSK_SHM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/** Processes that can share one queue's UMEM. */
#define HOMA_XSK_MEMBERS 16
/** Frames of a UMEM: receive frames, then send frames (2 x HOMA_XSK_RING). */
#define HOMA_XSK_FRAMES 4096
/** owner[] bit: the send frame is on a send ring (the kernel returns it). */
#define HOMA_XSK_POSTED 0x8000u

/** The control block at the start of a queue's segment (shared memory). */
struct homa_xsk_shm {
	uint32_t magic;                    /**< set once initialised */
	uint32_t zerocopy;                 /**< the UMEM is bound in zero-copy mode */
	pthread_mutex_t lock;              /**< robust, process-shared: rings, tx_free, owner[] */
	int32_t pid[HOMA_XSK_MEMBERS];     /**< member processes (0: free entry) */
	int32_t fd[HOMA_XSK_MEMBERS];      /**< a bound socket of each, its number there */
	uint64_t reclaimed;                /**< frames taken back from members that died */
	uint32_t n_tx_free;
	uint64_t tx_free[HOMA_XSK_FRAMES / 2]; /**< send frames not in any process's hands */
	uint16_t owner[HOMA_XSK_FRAMES];   /**< 0: kernel or free; member + 1, | HOMA_XSK_POSTED */
};

/** A process's view of one queue's segment. */
struct homa_xsk_seg {
	struct homa_xsk_shm *sh;
	uint8_t *area;         /**< the UMEM frames (page aligned) */
	int fd;                /**< the segment (flock()ed while a socket is set up) */
	int me;                /**< this process's member entry, -1 before homa_xsk_seg_join() */
	char name[64];
};

/**
 * homa_xdp_pid_alive() - True if process @pid exists and has not exited
 * (a zombie not yet waited for counts as gone). 0 and negative: false.
 */
bool homa_xdp_pid_alive(int32_t pid);

/**
 * homa_xsk_seg_open() - Map the segment of queue @queue of @ifindex in this
 * network namespace, creating it if needed, and hold its setup lock
 * (flock) until homa_xsk_seg_setup_done(). *@fresh tells whether no live
 * process uses it: the control block was (re)initialised and the caller
 * must create and register the UMEM on @s->area.
 * Return: 0; -errno (shm_open, ftruncate, mmap).
 */
int homa_xsk_seg_open(struct homa_xsk_seg *s, int ifindex, uint32_t queue, bool *fresh);

/** homa_xsk_seg_setup_done() - Release the setup lock homa_xsk_seg_open() took. */
void homa_xsk_seg_setup_done(struct homa_xsk_seg *s);

/**
 * homa_xsk_seg_peer_fd() - A descriptor, in this process, of a bound
 * socket of a live member (for XDP_SHARED_UMEM); close it once bound.
 * Return: the descriptor; -errno (no live member: -ESRCH; pidfd_getfd()).
 */
int homa_xsk_seg_peer_fd(struct homa_xsk_seg *s);

/**
 * homa_xsk_seg_join() - Enter this process as a member with bound socket
 * @fd. The caller holds the setup lock.
 * Return: 0; -EADDRINUSE (HOMA_XSK_MEMBERS live processes already).
 */
int homa_xsk_seg_join(struct homa_xsk_seg *s, int fd);

/**
 * homa_xsk_seg_lock() - Take the segment's lock. Return: true if its last
 * holder died holding it: the caller must repair what it guards and then
 * call pthread_mutex_consistent() before unlocking.
 */
bool homa_xsk_seg_lock(struct homa_xsk_seg *s);

/** homa_xsk_seg_unlock() - Release the segment's lock. */
void homa_xsk_seg_unlock(struct homa_xsk_seg *s);

/**
 * homa_xsk_seg_dead() - Members whose process is gone, as a bit mask,
 * their entries freed. The caller holds the lock and takes their frames
 * back (owner[] == member + 1).
 */
uint32_t homa_xsk_seg_dead(struct homa_xsk_seg *s);

/**
 * homa_xsk_seg_close() - Leave the segment (this process's entry freed),
 * unmap it, and remove its name if no live process uses it. The caller
 * has given its frames back.
 */
void homa_xsk_seg_close(struct homa_xsk_seg *s);

#endif /* HOMA_IO_XDP_XSK_SHM_H */
