/* SPDX-License-Identifier: MIT */
/**
 * @file scan.c
 * The timer's scan order: engine.all_rpcs (which stays the order's
 * owner) mirrored by an array of slots that a tick walks, skipping the
 * slots of parked RPCs without touching the RPCs. So the tick's cost
 * follows the RPCs that have something to do, not every forged partial
 * message a flood leaves behind.
 *
 * timer.c parks a server RPC still receiving its request (only a packet
 * can end its waiting, and a packet unparks it: homa_rpc_heard()) in
 * one of two ways:
 * - quiet: its next RESEND turn or its timeout is ticks away; the slot
 *   is skipped until the tick due;
 * - behind its peer: its RESEND is due, but another RPC of the same peer
 *   took the peer's one RESEND of the tick; the slot is skipped for as
 *   long as each tick reaching it finds the peer's RESEND taken and the
 *   RPC unable to time out (its silence short of timeout_ticks, or its
 *   peer heard within them), which the slot's copy of the peer pointer
 *   and its timeout tick tell.
 * A parked RPC's silence goes on counting from the tick that parked it
 * (homa_scan_wake()), so the timer acts on exactly the ticks, and in
 * exactly the order, that the walk over every RPC did.
 *
 * When the slots cannot grow the scan is "broken": ticks walk the list
 * as before, nothing parks, and the next tick that can allocate the
 * slots rebuilds them.
 */
#include <string.h>

#include "internal.h"

/** SCAN_MIN_CAP - Slots allocated at first. */
#define SCAN_MIN_CAP 64u

/**
 * grow() - Give @e's slots room for @need (keeping their contents).
 * Return: false if the allocation failed (the slots are unchanged).
 */
static bool grow(homa_engine *e, uint32_t need)
{
	struct homa_scan *s = &e->scan;
	uint32_t cap = s->cap ? s->cap : SCAN_MIN_CAP;
	struct homa_scan_slot *slot;

	while (cap < need)
		cap *= 2;
	if (cap == s->cap)
		return true;
	slot = homa_mem_alloc(e, (size_t)cap * sizeof(*slot));
	if (!slot)
		return false;
	if (s->len)
		memcpy(slot, s->slot, (size_t)s->len * sizeof(*slot));
	homa_mem_free(e, s->slot, (size_t)s->cap * sizeof(*slot));
	s->slot = slot;
	s->cap = cap;
	return true;
}

/** compact() - Close @e's holes, keeping the order (not while a tick walks). */
static void compact(homa_engine *e)
{
	struct homa_scan *s = &e->scan;
	uint32_t i, j = 0;

	for (i = 0; i < s->len; i++) {
		if (!s->slot[i].rpc)
			continue;
		if (i != j) {
			s->slot[j] = s->slot[i];
			s->slot[j].rpc->scan_slot = j;
		}
		j++;
	}
	s->len = j;
	s->holes = 0;
}

/** maybe_compact() - compact() once holes are at least half of many slots. */
static void maybe_compact(homa_engine *e)
{
	struct homa_scan *s = &e->scan;

	if (!s->walking && !s->broken && s->holes >= 32 && 2 * s->holes >= s->len)
		compact(e);
}

/**
 * break_scan() - The slots could not grow: give them up (counted in
 * broken_count). The next tick walks the list and then rebuilds them
 * (walk_list()).
 */
static void break_scan(struct homa_scan *s)
{
	s->broken = true;
	s->broken_count++;
}

/** append() - Give @rpc the slot after the last (the list's tail), due every tick. */
static void append(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_scan *s = &e->scan;

	if (s->broken)
		return;
	if (s->len == s->cap && !s->walking && s->holes && 4 * s->holes >= s->len)
		compact(e);
	if (s->len == s->cap && !grow(e, s->len + 1)) {
		break_scan(s);
		return;
	}
	rpc->scan_slot = s->len;
	memset(&s->slot[s->len], 0, sizeof(s->slot[s->len]));
	s->slot[s->len].rpc = rpc;
	s->len++;
}

/** unslot() - Make @rpc's slot a hole. */
static void unslot(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_scan *s = &e->scan;

	if (s->broken)
		return;
	s->slot[rpc->scan_slot].rpc = NULL;
	s->holes++;
}

/** homa_scan_add() - See internal.h. */
void homa_scan_add(homa_engine *e, struct homa_rpc *rpc)
{
	rpc->parked = false;
	homa_list_add_tail(&e->all_rpcs, &rpc->all_link);
	append(e, rpc);
}

/** homa_scan_del() - See internal.h. */
void homa_scan_del(homa_engine *e, struct homa_rpc *rpc)
{
	homa_list_del(&rpc->all_link);
	unslot(e, rpc);
	maybe_compact(e);
}

/** homa_scan_rotate() - See internal.h. */
void homa_scan_rotate(homa_engine *e, struct homa_rpc *rpc)
{
	homa_list_del(&rpc->all_link);
	homa_list_add_tail(&e->all_rpcs, &rpc->all_link);
	unslot(e, rpc);
	append(e, rpc);
}

/** park() - Mark @rpc parked now; return its slot (NULL while broken). */
static struct homa_scan_slot *park(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_scan_slot *sl;

	if (e->scan.broken)
		return NULL;
	sl = &e->scan.slot[rpc->scan_slot];
	rpc->parked = true;
	sl->since = e->tick;
	return sl;
}

/** homa_scan_park() - See internal.h. */
void homa_scan_park(homa_engine *e, struct homa_rpc *rpc, uint64_t due)
{
	struct homa_scan_slot *sl = due > e->tick ? park(e, rpc) : NULL;

	if (sl)
		sl->due = due;
}

/** homa_scan_park_behind() - See internal.h. */
void homa_scan_park_behind(homa_engine *e, struct homa_rpc *rpc)
{
	uint32_t left = rpc->silent_ticks < e->s.timeout_ticks
			? e->s.timeout_ticks - rpc->silent_ticks : 0;
	struct homa_scan_slot *sl = park(e, rpc);

	if (!sl)
		return;
	sl->peer = rpc->peer;
	sl->timeout_at = e->tick + left;
}

/** homa_scan_wake() - See internal.h. */
void homa_scan_wake(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_scan_slot *sl;

	if (!rpc->parked)
		return;
	/* the ticks skipped since it was parked were silent ones; a broken
	 * scan's slots stay as they were, so its since is still right */
	sl = &e->scan.slot[rpc->scan_slot];
	rpc->silent_ticks += (uint32_t)(e->tick - sl->since - 1);
	homa_scan_unpark(e, rpc);
}

/**
 * rebuild() - Make the slots again from the list (after they could not
 * grow). Nothing is parked then: a broken scan's ticks woke every RPC.
 */
static void rebuild(homa_engine *e)
{
	struct homa_scan *s = &e->scan;
	struct homa_link *pos;

	s->len = 0;
	s->holes = 0;
	if (!grow(e, e->rpcs.count + 1))
		return;
	s->broken = false;
	for (pos = e->all_rpcs.next; pos != &e->all_rpcs; pos = pos->next)
		append(e, homa_container_of(pos, struct homa_rpc, all_link));
}

/** walk_list() - The broken scan's tick: @visit every RPC in list order. */
static void walk_list(homa_engine *e, void (*visit)(homa_engine *, struct homa_rpc *))
{
	uint32_t n = e->rpcs.count;
	struct homa_link *pos = e->all_rpcs.next;

	while (n-- && pos != &e->all_rpcs) {
		struct homa_link *next = pos->next;

		e->timer_visits++;
		visit(e, homa_container_of(pos, struct homa_rpc, all_link));
		pos = next;
	}
	rebuild(e);
}

/**
 * skip() - True if this tick's visit to @sl's RPC would only count a
 * silent tick: it is parked quiet until a later tick, or behind its peer
 * whose RESEND an earlier slot took this tick, and cannot time out.
 */
static bool skip(const homa_engine *e, const struct homa_scan_slot *sl)
{
	if (sl->due > e->tick)
		return true;
	if (!sl->peer || sl->peer->resend_tick != e->tick)
		return false;
	return e->tick < sl->timeout_at || e->tick - sl->peer->heard_tick < e->s.timeout_ticks;
}

/** homa_scan_walk() - See internal.h. */
void homa_scan_walk(homa_engine *e, bool all, void (*visit)(homa_engine *, struct homa_rpc *))
{
	struct homa_scan *s = &e->scan;
	uint32_t end, i;

	/* room for every RPC to rotate: the slots never break mid-walk */
	if (!s->broken && s->len + e->rpcs.count > s->cap) {
		compact(e);
		if (!grow(e, s->len + e->rpcs.count))
			break_scan(s);
	}
	if (s->broken) {
		walk_list(e, visit);
		return;
	}
	s->walking = true;
	for (i = 0, end = s->len; i < end; i++) {
		struct homa_scan_slot *sl = &s->slot[i];

		if (!sl->rpc || (!all && skip(e, sl)))
			continue;
		e->timer_visits++;
		visit(e, sl->rpc);
	}
	s->walking = false;
	maybe_compact(e);
}

/** homa_scan_free() - See internal.h. */
void homa_scan_free(homa_engine *e)
{
	homa_mem_free(e, e->scan.slot, (size_t)e->scan.cap * sizeof(*e->scan.slot));
	memset(&e->scan, 0, sizeof(e->scan));
}
