/* SPDX-License-Identifier: MIT */
/* The collective scenario's shared step board and barrier (coll_sync.h). */
#define _GNU_SOURCE
#include "coll_sync.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "homa/errors.h"

/** board_len() - Bytes of a board for @ndev devices and @nsteps steps. */
static size_t board_len(uint32_t ndev, uint32_t nsteps)
{
	return sizeof(struct coll_board) + ((size_t)nsteps + 1) * sizeof(uint64_t) +
	       (size_t)nsteps * ndev * sizeof(struct homa_step_dev);
}

int coll_sync_open(struct coll_sync *s, const char *path, uint32_t ndev, uint32_t nsteps)
{
	void *p;

	memset(s, 0, sizeof(*s));
	if (ndev < 2 || ndev > COLL_MAX_DEVICES || nsteps < 1 || nsteps > COLL_MAX_STEPS)
		return HOMA_EINVAL;
	s->len = board_len(ndev, nsteps);
	if (!path) {
		p = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	} else {
		struct stat st;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return HOMA_EIO;
		if (fstat(fd, &st) || (st.st_size && (size_t)st.st_size != s->len) ||
		    (!st.st_size && ftruncate(fd, (off_t)s->len))) {
			close(fd);
			return st.st_size && (size_t)st.st_size != s->len ? HOMA_EINVAL : HOMA_EIO;
		}
		p = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	}
	if (p == MAP_FAILED)
		return HOMA_EIO;
	s->b = p;
	s->bound = (uint64_t *)(s->b + 1);
	s->dev = (struct homa_step_dev *)(s->bound + nsteps + 1);
	s->b->ndev = ndev;
	s->b->nsteps = nsteps;
	return 0;
}

void coll_sync_close(struct coll_sync *s)
{
	if (s->b)
		munmap(s->b, s->len);
	s->b = NULL;
}

/** futex() - FUTEX_WAIT (up to @ns) or FUTEX_WAKE on a shared word. */
static void futex(_Atomic uint32_t *w, int op, uint32_t val, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	syscall(SYS_futex, (uint32_t *)w, op, val, op == FUTEX_WAIT ? &ts : NULL, NULL, 0);
}

void coll_sync_fail(struct coll_sync *s)
{
	atomic_store(&s->b->failed, 1);
	atomic_fetch_add(&s->b->gen, 1);
	futex(&s->b->gen, FUTEX_WAKE, INT_MAX, 0);
}

int coll_sync_barrier(struct coll_sync *s, uint64_t deadline_ns, uint64_t *release_ns)
{
	struct coll_board *b = s->b;
	uint32_t g = atomic_load(&b->gen);

	if (atomic_load(&b->failed))
		return HOMA_ECANCELED;
	if (atomic_fetch_add(&b->arrived, 1) + 1 == b->ndev) {
		atomic_store(&b->release_ns, bench_now_ns());
		atomic_store(&b->arrived, 0);
		atomic_fetch_add(&b->gen, 1);
		futex(&b->gen, FUTEX_WAKE, INT_MAX, 0);
	} else {
		while (atomic_load(&b->gen) == g) {
			uint64_t now = bench_now_ns();
			if (now >= deadline_ns) {
				coll_sync_fail(s);
				return HOMA_ETIMEDOUT;
			}
			uint64_t left = deadline_ns - now;
			futex(&b->gen, FUTEX_WAIT, g, left < 100000000u ? left : 100000000u);
		}
	}
	if (atomic_load(&b->failed))
		return HOMA_ECANCELED;
	*release_ns = atomic_load(&b->release_ns);
	return 0;
}
