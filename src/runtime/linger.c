/* SPDX-License-Identifier: MIT */
/**
 * @file linger.c
 * Descriptors handed out by homa_fd() outlive their socket for a moment.
 * homa_close() makes the descriptor readable so that an epoll/poll loop
 * waiting on it in another thread wakes; closing it at once would take it
 * out of the loop's epoll set before that thread collects the event (and
 * the wake-up would be lost). So such descriptors are closed later:
 * RT_LINGER_NS after homa_close(), by whichever homa_open() or
 * homa_close() of the process comes next (or at once when more than
 * RT_LINGER_MAX wait).
 */
#include <pthread.h>
#include <unistd.h>

#include "rt.h"

/** How long a closed socket's exported descriptor stays open. */
#define RT_LINGER_NS 1000000000ull
/** Most descriptors kept open at once. */
#define RT_LINGER_MAX 64

/** A descriptor waiting to be closed. */
struct grave {
	int fd;
	uint64_t at;   /**< close at or after this time */
};

static pthread_mutex_t linger_lock = PTHREAD_MUTEX_INITIALIZER;
static struct grave graves[RT_LINGER_MAX];
static int ngraves;

/** reap() - Under linger_lock: close the descriptors whose time came. */
static void reap(uint64_t now)
{
	int kept = 0;

	for (int i = 0; i < ngraves; i++) {
		if (graves[i].at <= now)
			close(graves[i].fd);
		else
			graves[kept++] = graves[i];
	}
	ngraves = kept;
}

/** homa_rt_linger_reap() - See rt.h. */
void homa_rt_linger_reap(void)
{
	pthread_mutex_lock(&linger_lock);
	reap(homa_rt_now());
	pthread_mutex_unlock(&linger_lock);
}

/** homa_rt_linger_close() - See rt.h. */
void homa_rt_linger_close(int fd)
{
	uint64_t now = homa_rt_now();

	if (fd < 0)
		return;
	pthread_mutex_lock(&linger_lock);
	reap(now);
	if (ngraves == RT_LINGER_MAX) {
		/* full: the oldest goes now (entries are in time order) */
		close(graves[0].fd);
		for (int i = 1; i < ngraves; i++)
			graves[i - 1] = graves[i];
		ngraves--;
	}
	graves[ngraves++] = (struct grave){fd, now + RT_LINGER_NS};
	pthread_mutex_unlock(&linger_lock);
}
