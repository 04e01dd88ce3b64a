/* SPDX-License-Identifier: MIT */
/**
 * @file rpcs.c
 * The RPCs of one socket as the module's API sees them: client RPCs from
 * sendmsg() until recvmsg() returns their response (cookie, peer, private
 * flag), server RPCs from recvmsg() until their reply; the ids aborted
 * recently (a response already on its way is dropped); private responses
 * parked until their receiver asks; failures made up by HOMAIOCABORT for
 * any-message receivers. The caller holds the socket's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/** slot() - The bucket of @id. */
static struct shim_rpc **slot(struct shim_rpcs *t, uint64_t id)
{
	return &t->bucket[(id >> 1) % SHIM_RPC_BUCKETS];
}

/** shim_rpcs_init() - Empty tables. */
void shim_rpcs_init(struct shim_rpcs *t)
{
	memset(t, 0, sizeof(*t));
	t->shared_tail = &t->shared;
}

/** shim_ready_free() - See shim.h. */
void shim_ready_free(struct shim_ready *r)
{
	if (r->has_msg)
		homa_message_release(&r->msg);
	free(r);
}

/** shim_rpcs_destroy() - See shim.h. */
void shim_rpcs_destroy(struct shim_rpcs *t)
{
	for (int i = 0; i < SHIM_RPC_BUCKETS; i++) {
		while (t->bucket[i]) {
			struct shim_rpc *r = t->bucket[i];

			t->bucket[i] = r->next;
			free(r);
		}
	}
	for (struct shim_ready *r = t->parked, *n; r; r = n) {
		n = r->next;
		shim_ready_free(r);
	}
	for (struct shim_ready *r = t->shared, *n; r; r = n) {
		n = r->next;
		shim_ready_free(r);
	}
	shim_rpcs_init(t);
}

/** shim_rpcs_add() - See shim.h. */
int shim_rpcs_add(struct shim_rpcs *t, const struct shim_rpc *r)
{
	struct shim_rpc *e = malloc(sizeof(*e));
	struct shim_rpc **b = slot(t, r->id);

	if (!e)
		return ENOMEM;
	*e = *r;
	e->next = *b;
	*b = e;
	t->count++;
	return 0;
}

/** shim_rpcs_find() - See shim.h. */
struct shim_rpc *shim_rpcs_find(struct shim_rpcs *t, uint64_t id)
{
	for (struct shim_rpc *e = *slot(t, id); e; e = e->next)
		if (e->id == id)
			return e;
	return NULL;
}

/** shim_rpcs_remove() - See shim.h. */
bool shim_rpcs_remove(struct shim_rpcs *t, uint64_t id, struct shim_rpc *out)
{
	for (struct shim_rpc **p = slot(t, id); *p; p = &(*p)->next) {
		struct shim_rpc *e = *p;

		if (e->id != id)
			continue;
		*p = e->next;
		if (out)
			*out = *e;
		free(e);
		t->count--;
		return true;
	}
	return false;
}

/** shim_rpcs_mark_aborted() - See shim.h. */
void shim_rpcs_mark_aborted(struct shim_rpcs *t, uint64_t id)
{
	t->aborted[t->aborted_next] = id;
	t->aborted_next = (t->aborted_next + 1) % SHIM_ABORTED_RING;
}

/** shim_rpcs_was_aborted() - See shim.h. */
bool shim_rpcs_was_aborted(const struct shim_rpcs *t, uint64_t id)
{
	for (int i = 0; i < SHIM_ABORTED_RING; i++)
		if (t->aborted[i] == id && id != 0)
			return true;
	return false;
}

/** shim_rpcs_park() - See shim.h. */
void shim_rpcs_park(struct shim_rpcs *t, struct shim_ready *r)
{
	r->next = t->parked;
	t->parked = r;
}

/** shim_rpcs_unpark() - See shim.h. */
struct shim_ready *shim_rpcs_unpark(struct shim_rpcs *t, uint64_t id)
{
	for (struct shim_ready **p = &t->parked; *p; p = &(*p)->next) {
		struct shim_ready *r = *p;

		if (r->id == id) {
			*p = r->next;
			r->next = NULL;
			return r;
		}
	}
	return NULL;
}

/** shim_rpcs_push_shared() - See shim.h. */
void shim_rpcs_push_shared(struct shim_rpcs *t, struct shim_ready *r)
{
	r->next = NULL;
	*t->shared_tail = r;
	t->shared_tail = &r->next;
}

/** shim_rpcs_pop_shared() - See shim.h. */
struct shim_ready *shim_rpcs_pop_shared(struct shim_rpcs *t)
{
	struct shim_ready *r = t->shared;

	if (!r)
		return NULL;
	t->shared = r->next;
	if (!t->shared)
		t->shared_tail = &t->shared;
	r->next = NULL;
	return r;
}

/** shim_rpcs_each() - See shim.h. */
uint32_t shim_rpcs_each(struct shim_rpcs *t, void (*fn)(const struct shim_rpc *, void *),
			void *arg)
{
	for (int i = 0; i < SHIM_RPC_BUCKETS; i++)
		for (struct shim_rpc *e = t->bucket[i]; e; e = e->next)
			fn(e, arg);
	return t->count;
}
