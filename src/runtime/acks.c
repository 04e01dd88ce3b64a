/* SPDX-License-Identifier: MIT */
/**
 * @file acks.c
 * The process's ack pool (homa_engine_set_ack_pool()): acks its sockets
 * owe Linux module hosts, kept per peer host as the module keeps them,
 * so that any socket's packet to a host carries the acks every socket of
 * the process owes it. A fixed table under one mutex, a leaf lock taken
 * inside the engines' calls (under a socket's rt->lock). When the table
 * or a host's list is full the engine keeps the ack itself.
 */
#include <pthread.h>
#include <string.h>

#include "rt.h"

/** Hosts the pool holds acks for at most. */
#define RT_ACK_HOSTS 64
/** Acks per host at most. */
#define RT_ACK_PER_HOST 32

/** The acks owed to one host (n == 0: slot free). */
struct rt_ack_host {
	homa_addr addr;
	uint64_t ids[RT_ACK_PER_HOST];
	uint16_t ports[RT_ACK_PER_HOST];
	uint32_t head, n;               /**< ring: oldest at head */
};

static pthread_mutex_t ack_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rt_ack_host ack_hosts[RT_ACK_HOSTS];

/** find() - ack_mu held: @host's slot, or (@add) a free one for it; NULL if none. */
static struct rt_ack_host *find(const homa_addr *host, bool add)
{
	struct rt_ack_host *free_slot = NULL;

	for (int i = 0; i < RT_ACK_HOSTS; i++) {
		struct rt_ack_host *h = &ack_hosts[i];

		if (h->n && homa_addr_equal(&h->addr, host))
			return h;
		if (!h->n && !free_slot)
			free_slot = h;
	}
	if (!add || !free_slot)
		return NULL;
	free_slot->addr = *host;
	free_slot->head = 0;
	return free_slot;
}

/** pool_put() - struct homa_ack_pool.put: keep the ack unless @host's list (or the table) is full. */
static bool pool_put(void *ctx, const homa_addr *host, uint64_t client_id, uint16_t server_port)
{
	struct rt_ack_host *h;
	bool ok = false;

	(void)ctx;
	pthread_mutex_lock(&ack_mu);
	h = find(host, true);
	if (h && h->n < RT_ACK_PER_HOST) {
		uint32_t at = (h->head + h->n) % RT_ACK_PER_HOST;

		h->ids[at] = client_id;
		h->ports[at] = server_port;
		h->n++;
		ok = true;
	}
	pthread_mutex_unlock(&ack_mu);
	return ok;
}

/** pool_take() - struct homa_ack_pool.take: the oldest ack owed to @host. */
static bool pool_take(void *ctx, const homa_addr *host, uint64_t *client_id,
		      uint16_t *server_port)
{
	struct rt_ack_host *h;

	(void)ctx;
	pthread_mutex_lock(&ack_mu);
	h = find(host, false);
	if (h) {
		*client_id = h->ids[h->head];
		*server_port = h->ports[h->head];
		h->head = (h->head + 1) % RT_ACK_PER_HOST;
		h->n--;
	}
	pthread_mutex_unlock(&ack_mu);
	return h != NULL;
}

/** homa_rt_ack_pool_attach() - See rt.h. */
void homa_rt_ack_pool_attach(homa_engine *e)
{
	static const struct homa_ack_pool pool = {.put = pool_put, .take = pool_take};

	homa_engine_set_ack_pool(e, &pool);
}
