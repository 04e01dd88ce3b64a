/* SPDX-License-Identifier: MIT */
/**
 * @file rpc.c
 * RPC lifetime: lookup (by wire identity and by application handle),
 * creation, freeing, failure, and the event queue.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

/** id_key() - Multiplicative hash of an id this engine gave out (client RPC ids, handles). */
static uint32_t id_key(uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32);
}

/**
 * rpc_key() - Table key of an RPC's id and peer host. A server RPC's id and
 * host are the peer's choice, so they get the keyed hash (hash.c); the
 * peer's port is left out: ids are unique per host (the Linux module's
 * convention and ours), so a server finds an RPC acked by any client
 * socket of that host (homa_rpc_find_host()), and a second RPC with the
 * same id and host is refused (new_server_rpc()), which keeps every chain
 * free of forced collisions. A client RPC's id is this engine's own,
 * unique and sequential (engine.c next_id()): a peer can only look one
 * up, never add one, so the multiplicative hash spreads them as well and
 * costs a multiply instead of a SipHash per response packet.
 */
static uint32_t rpc_key(const homa_engine *e, uint64_t id, const homa_addr *a)
{
	if (homa_is_client_id(id))
		return id_key(id);
	return (uint32_t)homa_hash_rpc(e, id, a, 0);
}

/** rpc_hash() - Table hash of an RPC by wire identity (its key, made once by homa_rpc_new()). */
static uint32_t rpc_hash(const homa_engine *e, const void *el)
{
	(void)e;
	return ((const struct homa_rpc *)el)->key;
}

/** handle_key() - Hash of an application handle (the engine gives them out). */
static uint32_t handle_key(uint64_t handle)
{
	return id_key(handle);
}

/** handle_hash() - Table hash of an RPC by handle. */
static uint32_t handle_hash(const homa_engine *e, const void *el)
{
	return handle_key(((const struct homa_rpc *)el)->handle);
}

/**
 * homa_rpc_find() - The RPC whose local wire id is @id and whose other
 * side is @addr:@port. Return: the RPC or NULL.
 */
struct homa_rpc *homa_rpc_find(homa_engine *e, uint64_t id, const homa_addr *addr, uint16_t port)
{
	struct homa_rpc *r = homa_rpc_find_host(e, id, addr);

	return r && r->dport == port ? r : NULL;
}

/** homa_rpc_key() - The RPC table's key of (@id, host @addr) (rpc_key()), for the *_key() calls. */
uint32_t homa_rpc_key(const homa_engine *e, uint64_t id, const homa_addr *addr)
{
	return rpc_key(e, id, addr);
}

/**
 * homa_rpc_find_host_key() - homa_rpc_find_host() with its key @key
 * (homa_rpc_key() of @id and @addr) made by the caller.
 */
struct homa_rpc *homa_rpc_find_host_key(homa_engine *e, uint32_t key, uint64_t id,
					const homa_addr *addr)
{
	struct homa_rpc *r = e->rpcs.buckets[key & (e->rpcs.nbuckets - 1)];

	while (r && !(r->id == id && homa_addr_equal(&r->peer->addr, addr)))
		r = r->hash_next;
	return r;
}

/**
 * homa_rpc_find_host() - The RPC whose local wire id is @id and whose
 * other side is host @addr, whatever its port (there is at most one).
 * Return: the RPC or NULL.
 */
struct homa_rpc *homa_rpc_find_host(homa_engine *e, uint64_t id, const homa_addr *addr)
{
	return homa_rpc_find_host_key(e, rpc_key(e, id, addr), id, addr);
}

/** homa_rpc_find_handle() - The RPC the application knows as @handle, or NULL. */
struct homa_rpc *homa_rpc_find_handle(homa_engine *e, uint64_t handle)
{
	struct homa_rpc *r = e->handles.buckets[handle_key(handle) & (e->handles.nbuckets - 1)];

	while (r && r->handle != handle)
		r = r->handle_next;
	return r;
}

/**
 * homa_rpc_new() - Create an RPC with wire id @id toward @peer:@dport and
 * insert it in the tables; takes over the caller's reference on @peer.
 * Client handles equal the id; server handles are fresh odd numbers.
 * Also reserves the node of the RPC's event (engine.spare_events).
 * Puts it in the group of its peer and port (pport.c).
 * Return: the RPC, or NULL (memory, or settings.max_rpcs reached).
 */
struct homa_rpc *homa_rpc_new(homa_engine *e, uint64_t id, struct homa_peer *peer, uint16_t dport)
{
	return homa_rpc_new_key(e, rpc_key(e, id, &peer->addr), id, peer, dport, NULL);
}

/**
 * homa_rpc_new_key() - homa_rpc_new() with its table key @key
 * (homa_rpc_key() of @id and the peer's address) made by the caller, and
 * the key of its RPC group @group_h if the caller made it (NULL if not:
 * homa_pport_add()).
 */
struct homa_rpc *homa_rpc_new_key(homa_engine *e, uint32_t key, uint64_t id,
				  struct homa_peer *peer, uint16_t dport, const uint64_t *group_h)
{
	struct homa_ev_node *n;
	struct homa_rpc *r;
	uint32_t b;

	if (e->rpcs.count >= e->s.max_rpcs ||
	    e->rx_buffered + sizeof(*r) > e->s.max_rx_buffered)
		return NULL;
	r = homa_cache_get(e, &e->rpc_cache, sizeof(*r));
	n = r ? homa_cache_get(e, &e->ev_cache, sizeof(*n)) : NULL;
	if (r)
		memset(r, 0, sizeof(*r));
	if (n) {
		r->peer = peer;
		r->dport = dport;
	}
	if (!n || homa_pport_add(e, r, group_h)) {
		homa_cache_put(e, &e->ev_cache, n, sizeof(*n));
		homa_cache_put(e, &e->rpc_cache, r, sizeof(*r));
		return NULL;
	}
	homa_list_add_tail(&e->spare_events, &n->link);
	r->ev_reserved = true;
	r->id = id;
	r->heard_ns = e->now;
	r->handle = homa_is_client_id(id) ? id : (e->next_server_handle += 2);
	homa_list_init(&r->out.tx_link);
	homa_list_init(&r->in.grant_link);
	homa_list_init(&r->in.out_link);
	r->key = key;
	b = r->key & (e->rpcs.nbuckets - 1);
	r->hash_next = e->rpcs.buckets[b];
	e->rpcs.buckets[b] = r;
	e->rpcs.count++;
	b = handle_key(r->handle) & (e->handles.nbuckets - 1);
	r->handle_next = e->handles.buckets[b];
	e->handles.buckets[b] = r;
	e->handles.count++;
	homa_scan_add(e, r);
	e->rx_buffered += sizeof(*r);
	homa_table_maybe_grow(e, &e->rpcs, offsetof(struct homa_rpc, hash_next), rpc_hash);
	homa_table_maybe_grow(e, &e->handles, offsetof(struct homa_rpc, handle_next), handle_hash);
	homa_timer_arm(e);
	return r;
}

/** unlink_chain() - Remove @r from a chain whose head is *@pp, linked at @next_off. */
static void unlink_chain(void **pp, struct homa_rpc *r, size_t next_off)
{
	while (*pp != r)
		pp = (void **)((char *)*pp + next_off);
	*pp = *(void **)((char *)r + next_off);
}

/** take_spare() - Unlink and return one reserved event node (the caller owns it). */
static struct homa_ev_node *take_spare(homa_engine *e)
{
	struct homa_ev_node *n = homa_container_of(e->spare_events.next, struct homa_ev_node, link);

	homa_list_del(&n->link);
	return n;
}

/**
 * homa_rpc_free() - Remove @rpc from every structure and free it with its
 * message buffers (a message already handed to the application is not
 * touched: it was detached) and its unused event reservation. Releases
 * the peer reference.
 */
void homa_rpc_free(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_peer *peer = rpc->peer;

	if (!homa_is_client_id(rpc->id) && rpc->state != RPC_INCOMING)
		homa_done_add(e, rpc);
	unlink_chain(&e->rpcs.buckets[rpc->key & (e->rpcs.nbuckets - 1)],
		     rpc, offsetof(struct homa_rpc, hash_next));
	e->rpcs.count--;
	unlink_chain(&e->handles.buckets[handle_key(rpc->handle) & (e->handles.nbuckets - 1)],
		     rpc, offsetof(struct homa_rpc, handle_next));
	e->handles.count--;
	homa_scan_del(e, rpc);
	homa_pport_del(e, rpc);
	if (rpc->partial) {
		peer->partial_in--;
		e->partial_in--;
	}
	homa_grant_remove(e, rpc);
	homa_list_del(&rpc->out.tx_link);
	homa_msgin_destroy(e, &rpc->in);
	homa_msgout_destroy(e, &rpc->out);
	if (homa_is_client_id(rpc->id))
		peer->client_rpcs--;
	e->rx_buffered -= sizeof(*rpc);
	if (rpc->ev_reserved)
		homa_cache_put(e, &e->ev_cache, take_spare(e), sizeof(struct homa_ev_node));
	homa_cache_put(e, &e->rpc_cache, rpc, sizeof(*rpc));
	homa_peer_put(e, peer);
}

/**
 * homa_event_push() - Queue a copy of @ev for the application.
 * Return: 0 or HOMA_ENOMEM (the event is lost; callers count it).
 */
int homa_event_push(homa_engine *e, const struct homa_event *ev)
{
	struct homa_ev_node *n = homa_cache_get(e, &e->ev_cache, sizeof(*n));

	if (!n)
		return HOMA_ENOMEM;
	n->ev = *ev;
	homa_list_add_tail(&e->events, &n->link);
	e->nevents++;
	return 0;
}

/**
 * homa_rpc_event() - Queue event @ev of @rpc, in the node the RPC
 * reserved when it was created (so this cannot fail for an RPC's one
 * event). Return: 0, or HOMA_ENOMEM if the RPC had already used its
 * reservation and no memory was left.
 */
int homa_rpc_event(homa_engine *e, struct homa_rpc *rpc, const struct homa_event *ev)
{
	struct homa_ev_node *n;

	if (!rpc->ev_reserved)
		return homa_event_push(e, ev);
	rpc->ev_reserved = false;
	n = take_spare(e);
	n->ev = *ev;
	homa_list_add_tail(&e->events, &n->link);
	e->nevents++;
	return 0;
}

/**
 * homa_rpc_fail() - End RPC @rpc with @error. A client RPC reports an
 * HOMA_EV_ERROR event; a server RPC just disappears. Frees the RPC.
 */
void homa_rpc_fail(homa_engine *e, struct homa_rpc *rpc, int error)
{
	if (homa_is_client_id(rpc->id)) {
		struct homa_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.type = HOMA_EV_ERROR;
		ev.id = rpc->handle;
		ev.cookie = rpc->cookie;
		ev.error = error;
		ev.peer = rpc->peer->addr;
		ev.peer_port = rpc->dport;
		ev.start_ns = rpc->start_ns;
		homa_rpc_event(e, rpc, &ev);
	}
	homa_rpc_free(e, rpc);
}
