/* SPDX-License-Identifier: MIT */
/**
 * @file check.c
 * The debug invariant checker: the engine's accounting, recomputed from
 * its records and compared with the running totals that the grant
 * scheduler, the memory budget and the tables keep. Built when the core
 * is compiled with HOMA_INVARIANTS (CMake option of that name, on in test
 * and sanitizer builds, off in Release); every public entry point that
 * changes state then runs homa_check_run() before it returns, and a
 * broken invariant calls engine.check_fail (abort() unless a test
 * installed another handler).
 *
 * Invariants:
 * - tables: rpcs.count == handles.count == length of all_rpcs; every RPC
 *   is found again by its id and by its handle; nevents == length of
 *   events; ctl_count <= ctl_cap; done_unindexed <= done_count <= done_cap;
 * - messages: received <= length, recv_end <= length, the send cursor
 *   within the message, granted <= length on both sides;
 * - grant accounting: total_incoming == sum of the grantable messages'
 *   counted shares, unsched_incoming == sum of those never explicitly
 *   granted; each share equals granted - received; a message off the
 *   grantable list counts nothing; grantable is sorted by bytes left;
 *   outstanding_msgs == length of the outstanding list == grantable
 *   messages marked outstanding;
 * - budget bound: explicitly granted, unreceived bytes stay within
 *   max_incoming + (max_overcommit + 2) x homa_unsched_window(), plus one FIFO
 *   increment per message whose FIFO grant is still arriving (grant.c);
 * - partial requests: engine.partial_in == the RPCs marked partial;
 * - scan order (unless broken): the slots hold all_rpcs in its order, the
 *   holes counted; a parked RPC is a server RPC receiving its request,
 *   parked at a tick gone and due at a later one; any other RPC is due
 *   every tick;
 * - memory: rx_buffered == the RPC records, their gap arrays and message
 *   buffers, plus the messages delivered (queued in an event or handed
 *   to the application) and not yet released; each eviction bucket's bytes == its requests' charges.
 *
 * The walk is linear in the RPCs. With more than HOMA_CHECK_FULL RPCs it
 * runs on one call in about count / HOMA_CHECK_FULL, so it costs about as
 * much per call as a walk over HOMA_CHECK_FULL RPCs (tests/scenarios
 * random_loss: 4.3 s of CPU with checks, 4.1 s without).
 */
#include <stdlib.h>

#include "internal.h"

/** RPCs up to which every entry point runs the whole walk (the sampling unit). */
#define HOMA_CHECK_FULL 4

/** left() - Bytes @in still has to receive. */
static uint32_t left(const struct homa_msgin *in)
{
	return in->length - in->received;
}

/** list_len() - Entries on list @h. */
static uint64_t list_len(const struct homa_link *h)
{
	const struct homa_link *p;
	uint64_t n = 0;

	for (p = h->next; p != h; p = p->next)
		n++;
	return n;
}

/** check_rpc() - Per-RPC bounds and lookups. Return: the broken invariant or NULL. */
static const char *check_rpc(const homa_engine *e, const struct homa_rpc *r)
{
	const struct homa_msgin *in = &r->in;
	const struct homa_msgout *out = &r->out;

	if (in->received > in->length || in->recv_end > in->length || in->granted > in->length)
		return "incoming message: received, recv_end or granted past its length";
	if (in->received > in->recv_end)
		return "incoming message: received past recv_end";
	if (out->next_xmit > out->length || out->granted > out->length)
		return "outgoing message: send cursor or grant past its length";
	if (homa_rpc_find((homa_engine *)e, r->id, &r->peer->addr, r->dport) != r)
		return "rpc table: an RPC is not found by its id";
	if (homa_rpc_find_handle((homa_engine *)e, r->handle) != r)
		return "handle table: an RPC is not found by its handle";
	if (r->pport && homa_pport_find((homa_engine *)e, r->peer, r->dport) != r->pport)
		return "port groups: an RPC's group is not found by its peer and port";
	if (!homa_list_linked(&in->grant_link) && (in->counted || in->outstanding))
		return "grant accounting: a message off the grantable list counts bytes";
	if (homa_list_linked(&in->grant_link) &&
	    in->counted != (in->granted > in->received ? in->granted - in->received : 0))
		return "grant accounting: a message's share is not granted - received";
	if (in->evict_tracked && in->evict_bucket >= HOMA_EVICT_BUCKETS)
		return "eviction: bucket out of range";
	return NULL;
}

/** check_scan() - The timer's slots against all_rpcs. Return: the broken invariant or NULL. */
static const char *check_scan(const homa_engine *e)
{
	const struct homa_scan *s = &e->scan;
	const struct homa_link *p;
	uint32_t next = 0, n = 0;

	if (s->broken)
		return NULL;
	for (p = e->all_rpcs.next; p != &e->all_rpcs; p = p->next, n++) {
		const struct homa_rpc *r = homa_container_of(p, struct homa_rpc, all_link);
		const struct homa_scan_slot *sl = &s->slot[r->scan_slot];

		if (r->scan_slot < next || r->scan_slot >= s->len || sl->rpc != r)
			return "scan order: an RPC's slot is out of all_rpcs' order";
		next = r->scan_slot + 1;
		if (!r->parked && (sl->due || sl->peer))
			return "scan order: an RPC not parked is skipped";
		if (r->parked && (sl->since > e->tick || homa_is_client_id(r->id) ||
				  r->state != RPC_INCOMING || (sl->due <= e->tick && sl->peer != r->peer)))
			return "scan order: a parked RPC is not a waiting request skipped for a reason";
	}
	if (n + s->holes != s->len)
		return "scan order: slots are not the RPCs and the holes";
	return NULL;
}

/** Sums over the RPCs, compared with the engine's totals. */
struct check_sums {
	uint64_t total, unsched, outstanding, explicit_bytes, fifo, rx, partial;
	uint64_t evict[HOMA_EVICT_BUCKETS];
};

/** add_rpc() - Add @r's shares to @s. */
static void add_rpc(const homa_engine *e, const struct homa_rpc *r, struct check_sums *s)
{
	const struct homa_msgin *in = &r->in;

	s->rx += sizeof(*r) + (uint64_t)in->gaps_cap * sizeof(struct homa_gap);
	s->partial += r->partial;
	if (in->msg)
		s->rx += in->msg->charged;
	if (in->evict_tracked)
		s->evict[in->evict_bucket] += in->evict_charge;
	if (!homa_list_linked(&in->grant_link))
		return;
	s->total += in->counted;
	if (in->counted_unsched)
		s->unsched += in->counted;
	else
		s->explicit_bytes += in->counted;
	s->outstanding += in->outstanding;
	if (in->fifo_end > in->received)
		s->fifo += e->s.fifo_grant_increment ? e->s.fifo_grant_increment : e->s.unsched_bytes;
}

/** check_lists() - Grantable order, lists against counters. Return: broken invariant or NULL. */
static const char *check_lists(const homa_engine *e)
{
	const struct homa_link *p;
	uint32_t prev = 0;

	for (p = e->grantable.next; p != &e->grantable; p = p->next) {
		const struct homa_rpc *r = homa_container_of(p, struct homa_rpc, in.grant_link);

		if (left(&r->in) < prev)
			return "grantable list: not sorted by bytes left";
		prev = left(&r->in);
	}
	if (list_len(&e->outstanding) != e->outstanding_msgs)
		return "outstanding list: length is not outstanding_msgs";
	if (list_len(&e->all_rpcs) != e->rpcs.count || e->handles.count != e->rpcs.count)
		return "rpc tables: counts disagree with the list of all RPCs";
	if (list_len(&e->events) != e->nevents)
		return "event queue: length is not nevents";
	if (e->ctl_count > e->ctl_cap)
		return "control ring: more packets than slots";
	if (e->done_count > e->done_cap)
		return "finished-RPC memory: more entries than slots";
	if (e->done_unindexed > e->done_count)
		return "finished-RPC memory: more entries to index than entries";
	return NULL;
}

/** check_totals() - The engine's running totals against @s. Return: broken invariant or NULL. */
static const char *check_totals(const homa_engine *e, const struct check_sums *s)
{
	const struct homa_link *p;
	uint64_t rx = s->rx, bound;
	uint32_t b;

	if (s->total != e->total_incoming)
		return "grant accounting: total_incoming is not the sum of the messages' shares";
	if (s->unsched != e->unsched_incoming)
		return "grant accounting: unsched_incoming is not the sum of never-granted shares";
	if (s->outstanding != e->outstanding_msgs)
		return "grant accounting: outstanding_msgs is not the outstanding messages";
	if (s->partial != e->partial_in)
		return "partial requests: partial_in is not the RPCs marked partial";
	bound = e->check_budget + s->fifo;
	if (s->explicit_bytes > bound)
		return "grant budget: explicitly granted bytes in flight exceed the hard bound";
	for (b = 0; b < HOMA_EVICT_BUCKETS; b++)
		if (s->evict[b] != e->evict_bytes[b])
			return "eviction: a bucket's bytes are not its requests' charges";
	for (p = e->delivered.next; p != &e->delivered; p = p->next)
		rx += homa_container_of(p, struct homa_msg, link)->charged;
	if (rx != e->rx_buffered)
		return "memory: rx_buffered is not what the RPCs and delivered messages hold";
	return NULL;
}

/**
 * homa_check_engine() - See internal.h. Its own lookups' hashes are left
 * out of homa_hash_calls, which counts what the engine's work costs.
 */
const char *homa_check_engine(const homa_engine *e)
{
	uint64_t hashes = homa_hash_calls;
	struct check_sums s = {0};
	const struct homa_link *p;
	const char *why;

	why = check_lists(e);
	if (!why)
		why = check_scan(e);
	for (p = e->all_rpcs.next; !why && p != &e->all_rpcs; p = p->next) {
		const struct homa_rpc *r = homa_container_of(p, struct homa_rpc, all_link);

		why = check_rpc(e, r);
		add_rpc(e, r, &s);
	}
	homa_hash_calls = hashes;
	return why ? why : check_totals(e, &s);
}

/** homa_check_budget_note() - See internal.h. */
void homa_check_budget_note(homa_engine *e)
{
	uint64_t b = e->s.max_incoming + ((uint64_t)e->s.max_overcommit + 2) * homa_unsched_window(e);

	if (b > e->check_budget)
		e->check_budget = b;
}

/** homa_check_run() - See internal.h. */
void homa_check_run(homa_engine *e)
{
	const char *why;

	if (e->rpcs.count > HOMA_CHECK_FULL &&
	    ++e->check_calls % (e->rpcs.count / HOMA_CHECK_FULL + 1))
		return;
	why = homa_check_engine(e);
	if (!why)
		return;
	e->check_failures++;
	if (e->check_fail)
		e->check_fail(e->check_ctx, why);
	else
		abort(); /* why: the broken invariant, for the debugger */
}
