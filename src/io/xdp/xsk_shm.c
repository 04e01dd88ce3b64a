/* SPDX-License-Identifier: MIT */
/**
 * @file xsk_shm.c
 * A queue's UMEM segment shared between processes (see xsk_shm.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "homa_xsk.h"
#include "xdp_slots.h"
#include "xsk_shm.h"

/** Marks an initialised control block. */
#define SHM_MAGIC 0x484d5853u
/** Bytes of the control block rounded up to pages: the UMEM starts there. */
#define CTL_BYTES (((sizeof(struct homa_xsk_shm) + 4095) / 4096) * 4096)
/** Bytes of the segment. */
#define SEG_BYTES (CTL_BYTES + (size_t)HOMA_XSK_FRAMES * HOMA_XSK_FRAME)

_Static_assert(HOMA_XSK_FRAMES == 2 * HOMA_XSK_RING, "a UMEM has 2 x HOMA_XSK_RING frames");

/** alive() - See homa_xdp_pid_alive(). */
static bool alive(int32_t pid)
{
	return homa_xdp_pid_alive(pid);
}

/** homa_xdp_pid_alive() - See xsk_shm.h. */
bool homa_xdp_pid_alive(int32_t pid)
{
	char path[64], buf[128];
	const char *st;
	ssize_t n;
	int fd;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return false;
	/* a zombie has closed its sockets but not been waited for */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;  /* no /proc: kill() said it exists */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	st = strrchr(buf, ')');
	return !(st && st[1] == ' ' && (st[2] == 'Z' || st[2] == 'X'));
}

/** any_alive() - True if a member of @sh other than this process is alive. */
static bool any_alive(const struct homa_xsk_shm *sh)
{
	for (int i = 0; i < HOMA_XSK_MEMBERS; i++)
		if (sh->pid[i] != getpid() && alive(sh->pid[i]))
			return true;
	return false;
}

/** init_ctl() - A fresh control block: robust shared lock, every send frame free. */
static void init_ctl(struct homa_xsk_shm *sh)
{
	pthread_mutexattr_t a;

	memset(sh, 0, sizeof(*sh));
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&sh->lock, &a);
	pthread_mutexattr_destroy(&a);
	for (uint32_t i = 0; i < HOMA_XSK_FRAMES / 2; i++)
		sh->tx_free[sh->n_tx_free++] = (uint64_t)(HOMA_XSK_RING + i) * HOMA_XSK_FRAME;
	__atomic_store_n(&sh->magic, SHM_MAGIC, __ATOMIC_RELEASE);
}

/**
 * open_locked() - Open (creating) the segment named s->name and flock()
 * it; retried while the name was removed under us. Return: fd or -errno.
 */
static int open_locked(struct homa_xsk_seg *s)
{
	for (;;) {
		struct stat st;
		int fd = shm_open(s->name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX) || fstat(fd, &st)) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (st.st_nlink)
			return fd;
		close(fd);  /* the last member removed it meanwhile: make it anew */
	}
}

/**
 * stale() - True if the segment open on @fd (flock()ed by the caller) is
 * initialised and no process in it is alive.
 */
static bool stale(int fd)
{
	struct homa_xsk_shm *sh;
	struct stat st;
	bool dead;

	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*sh))
		return false;
	sh = mmap(NULL, sizeof(*sh), PROT_READ, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		return false;
	dead = __atomic_load_n(&sh->magic, __ATOMIC_ACQUIRE) == SHM_MAGIC && !any_alive(sh);
	munmap(sh, sizeof(*sh));
	return dead;
}

/**
 * remove_stale() - Remove the queue segments and slot tables
 * (/dev/shm/homa-xdp-*) of every network namespace whose processes all
 * died without closing (killed, or their namespace gone), so their memory
 * is freed. Those flock()ed by a process setting them up are left alone.
 */
static void remove_stale(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char name[300];
		int fd;

		if (strncmp(e->d_name, "homa-xdp-", 9))
			continue;
		snprintf(name, sizeof(name), "/%s", e->d_name);
		fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB) &&
		    (strstr(e->d_name, "-slots") ? homa_xdp_slots_stale(fd) : stale(fd)))
			shm_unlink(name);
		close(fd);
	}
	if (d)
		closedir(d);
}

/** homa_xsk_seg_open() - See xsk_shm.h. */
int homa_xsk_seg_open(struct homa_xsk_seg *s, int ifindex, uint32_t queue, bool *fresh)
{
	struct stat ns = {0};
	void *m;

	remove_stale();
	stat("/proc/self/ns/net", &ns);
	memset(s, 0, sizeof(*s));
	s->me = -1;
	snprintf(s->name, sizeof(s->name), "/homa-xdp-%llu-%d-%u",
		 (unsigned long long)ns.st_ino, ifindex, queue);
	s->fd = open_locked(s);
	if (s->fd < 0)
		return s->fd;
	if (ftruncate(s->fd, (off_t)SEG_BYTES)) {
		int e = -errno;

		close(s->fd);
		return e;
	}
	m = mmap(NULL, SEG_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (m == MAP_FAILED) {
		int e = -errno;

		close(s->fd);
		return e;
	}
	s->sh = m;
	s->area = (uint8_t *)m + CTL_BYTES;
	*fresh = __atomic_load_n(&s->sh->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC ||
		 !any_alive(s->sh);
	if (*fresh)
		init_ctl(s->sh);
	return 0;
}

/** homa_xsk_seg_setup_done() - See xsk_shm.h. */
void homa_xsk_seg_setup_done(struct homa_xsk_seg *s)
{
	flock(s->fd, LOCK_UN);
}

/** homa_xsk_seg_peer_fd() - See xsk_shm.h. */
int homa_xsk_seg_peer_fd(struct homa_xsk_seg *s)
{
	for (int i = 0; i < HOMA_XSK_MEMBERS; i++) {
		int32_t pid = s->sh->pid[i];
		int pfd, fd;

		if (pid == getpid() || !alive(pid))
			continue;
		pfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pfd < 0)
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, pfd, s->sh->fd[i], 0);
		close(pfd);
		if (fd >= 0)
			return fd;
		if (errno == EPERM)
			return -EPERM;
	}
	return -ESRCH;
}

/** homa_xsk_seg_join() - See xsk_shm.h. */
int homa_xsk_seg_join(struct homa_xsk_seg *s, int fd)
{
	for (int i = 0; i < HOMA_XSK_MEMBERS; i++)
		if (!s->sh->pid[i]) {  /* a dead member's entry waits for its frames' reclaim */
			s->sh->pid[i] = getpid();
			s->sh->fd[i] = fd;
			s->me = i;
			return 0;
		}
	return -EADDRINUSE;
}

/** homa_xsk_seg_lock() - See xsk_shm.h. */
bool homa_xsk_seg_lock(struct homa_xsk_seg *s)
{
	return pthread_mutex_lock(&s->sh->lock) == EOWNERDEAD;
}

/** homa_xsk_seg_unlock() - See xsk_shm.h. */
void homa_xsk_seg_unlock(struct homa_xsk_seg *s)
{
	pthread_mutex_unlock(&s->sh->lock);
}

/** homa_xsk_seg_dead() - See xsk_shm.h. */
uint32_t homa_xsk_seg_dead(struct homa_xsk_seg *s)
{
	uint32_t dead = 0;

	for (int i = 0; i < HOMA_XSK_MEMBERS; i++)
		if (s->sh->pid[i] && !alive(s->sh->pid[i])) {
			s->sh->pid[i] = 0;
			dead |= 1u << i;
		}
	return dead;
}

/** homa_xsk_seg_close() - See xsk_shm.h. */
void homa_xsk_seg_close(struct homa_xsk_seg *s)
{
	if (!s->sh)
		return;
	flock(s->fd, LOCK_EX);
	if (s->me >= 0)
		s->sh->pid[s->me] = 0;
	if (!any_alive(s->sh))
		shm_unlink(s->name);
	munmap(s->sh, SEG_BYTES);
	close(s->fd);  /* drops the flock */
	memset(s, 0, sizeof(*s));
	s->me = -1;
}
