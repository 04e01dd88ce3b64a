/* SPDX-License-Identifier: MIT */
/**
 * @file zc.c
 * Zero-copy sends (homa_send_request_zc(), homa_reply_zc()): the message
 * borrows the application's buffers (homa_msg_build_ref()) and carries a
 * record that tells the application, through its release function, when
 * the library reads them no more. The engine frees a message under
 * rt->lock; the record then joins rt->zc_done and the release functions
 * run after the lock is dropped (homa_rt_unlock()), or when the socket
 * is freed (homa_close()). Records come from the socket's chunk cache
 * (pool.c keeps small blocks), not from malloc() per message.
 */

#include "rt.h"

/** One zero-copy message's release notice. */
struct rt_zc {
	struct rt_zc *next;
	struct homa_rt *rt;
	homa_release_fn release;
	void *arg;
	bool attached;   /**< the engine holds the message: report its release */
};

/** zc_free() - Return record @z to its socket's chunk cache. */
static void zc_free(struct rt_zc *z)
{
	struct homa_alloc *a = &z->rt->chunk_alloc;

	a->free(a->ctx, z, sizeof(*z));
}

/**
 * zc_done() - The message of @ctx was freed. Attached: queue the notice
 * (the engine runs under rt->lock, or alone while the socket is freed).
 * Never attached (the send failed, the caller keeps its buffers): drop
 * the record without a notice.
 */
static void zc_done(void *ctx)
{
	struct rt_zc *z = ctx;

	if (!z->attached) {
		zc_free(z);
		return;
	}
	z->next = z->rt->zc_done;
	z->rt->zc_done = z;
}

/** homa_rt_zc_build() - See rt.h. */
int homa_rt_zc_build(struct homa_rt *rt, const struct homa_iov *iov, int iovcnt,
		     homa_release_fn release, void *arg, homa_msg **msg, struct rt_zc **out)
{
	struct rt_zc *z;
	int err;

	if (!release)
		return HOMA_EINVAL;
	z = rt->chunk_alloc.alloc(rt->chunk_alloc.ctx, sizeof(*z));
	if (!z)
		return HOMA_ENOMEM;
	*z = (struct rt_zc){ .rt = rt, .release = release, .arg = arg };
	err = homa_msg_build_ref(&rt->chunk_alloc, iov, iovcnt, zc_done, z, msg);
	if (err) {
		zc_free(z);
		return err;
	}
	*out = z;
	return 0;
}

/** homa_rt_zc_attached() - See rt.h. */
void homa_rt_zc_attached(struct rt_zc *z)
{
	if (z)
		z->attached = true;
}

/** homa_rt_zc_take() - See rt.h. */
struct rt_zc *homa_rt_zc_take(struct homa_rt *rt)
{
	struct rt_zc *list = rt->zc_done;

	rt->zc_done = NULL;
	return list;
}

/** homa_rt_zc_notify() - See rt.h. */
void homa_rt_zc_notify(struct rt_zc *list)
{
	while (list) {
		struct rt_zc *next = list->next;

		list->release(list->arg);
		zc_free(list);
		list = next;
	}
}
