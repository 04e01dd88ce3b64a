/* SPDX-License-Identifier: MIT */
/**
 * @file grant_module.c
 * The Linux kernel module's grant algorithm (PlatformLab/HomaModule,
 * homa_grant.c), for engines that model a module host (the module-shaped
 * peer, sim/modpeer.h); homa_grant_module_set() turns it on. Written from
 * the module's rules, not its code:
 *
 * - at most max_overcommit messages are active: the shortest message
 *   (fewest bytes left) of each peer first, then other messages while
 *   slots are free (the module evicts from the peer with the most active
 *   messages, so each peer keeps one while others wait);
 * - every active message may have a window of max_incoming / (active + 1)
 *   bytes granted past what it received ("dynamic queue length
 *   thresholds"), and each pass grants it up to there at once, however
 *   few bytes that is (a GRANT per DATA batch, not in steps), as long as
 *   granted-but-unreceived bytes of all messages stay under max_incoming;
 *   the shortest messages get the room first;
 * - priorities by rank among the active messages, using the lowest
 *   scheduled levels when few are active (the same rule as grant.c);
 * - FIFO grants by time, not by bytes granted: every
 *   fifo_grant_increment bytes at grant_fifo_fraction of link_mbps, the
 *   oldest message not yet fully granted that has less than a window plus
 *   two increments outstanding gets fifo_grant_increment more bytes, at
 *   the highest priority, whatever the budget.
 *
 * Not modelled: the module's needy bitmask and its races (each pass here
 * serves the active messages shortest first, as its needy pass does), and
 * its waiting for receive buffers before managing an RPC.
 */
#include "internal.h"

/** homa_grant_module_set() - See internal.h. */
void homa_grant_module_set(homa_engine *e, bool on)
{
	e->grant_module = on;
	e->fifo_grant_ns = 0;
}

/**
 * pick_active() - Fill @act (capacity max_overcommit, at most 64) with the
 * active messages in grantable (SRPT) order: each peer's shortest first,
 * then others while slots are free. Return: how many.
 */
static uint32_t pick_active(homa_engine *e, struct homa_rpc **act)
{
	uint32_t cap = e->s.max_overcommit < 64 ? e->s.max_overcommit : 64;
	uint64_t gen = ++e->grant_gen;
	bool head[64] = {false};
	struct homa_link *pos;
	uint32_t n = 0, heads = 0, extras = 0, i = 0;

	for (pos = e->grantable.next; pos != &e->grantable && i < 64 && heads < cap;
	     pos = pos->next, i++) {
		struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, in.grant_link);

		if (r->peer->grant_gen == gen)
			continue;
		r->peer->grant_gen = gen;
		head[i] = true;
		heads++;
	}
	i = 0;
	for (pos = e->grantable.next; pos != &e->grantable && i < 64 && n < cap;
	     pos = pos->next, i++) {
		if (!head[i] && heads + extras >= cap)
			continue;
		if (!head[i])
			extras++;
		act[n++] = homa_container_of(pos, struct homa_rpc, in.grant_link);
	}
	return n;
}

/** give() - Raise @rpc's grant to @target and queue a GRANT at @prio. */
static void give(homa_engine *e, struct homa_rpc *rpc, uint32_t target, uint8_t prio)
{
	rpc->in.granted = target;
	rpc->in.explicit_grant = true;
	rpc->in.heard_ns = e->now;
	rpc->in.heard_rx_ns = e->rx_link_ns;
	homa_grant_recount(e, &rpc->in);
	homa_ctl_grant(e, rpc, target, prio);
}

/**
 * fifo_interval_ns() - Time between FIFO grants: fifo_grant_increment
 * bytes at grant_fifo_fraction per mille of link_mbps (0: none).
 */
static uint64_t fifo_interval_ns(const homa_engine *e)
{
	uint64_t mbps = e->s.link_mbps * e->s.grant_fifo_fraction / 1000;

	if (!mbps || !e->s.fifo_grant_increment)
		return 0;
	return (uint64_t)e->s.fifo_grant_increment * 8000 / mbps;
}

/** module_fifo() - The module's timed FIFO grant (file comment), window @win. */
static void module_fifo(homa_engine *e, uint32_t win)
{
	uint64_t every = fifo_interval_ns(e), most, target;
	struct homa_rpc *oldest = NULL;
	struct homa_link *pos;

	if (!every || e->now < e->fifo_grant_ns)
		return;
	e->fifo_grant_ns = e->now + every;
	most = (uint64_t)win + 2ull * e->s.fifo_grant_increment;
	for (pos = e->grantable.next; pos != &e->grantable; pos = pos->next) {
		struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, in.grant_link);

		if (r->in.granted >= r->in.length || r->in.counted >= most)
			continue;
		if (!oldest || r->in.birth < oldest->in.birth)
			oldest = r;
	}
	if (!oldest)
		return;
	target = (uint64_t)oldest->in.granted + e->s.fifo_grant_increment;
	if (target > oldest->in.length)
		target = oldest->in.length;
	oldest->in.fifo_end = (uint32_t)target;
	give(e, oldest, (uint32_t)target, (uint8_t)(e->s.num_priorities - 1));
	e->st.fifo_grants_sent++;
}

/** homa_grant_check_module() - See internal.h. */
void homa_grant_check_module(homa_engine *e)
{
	struct homa_rpc *act[64];
	uint32_t n, i, win;

	if (homa_list_empty(&e->grantable))
		return;
	n = pick_active(e, act);
	win = e->s.max_incoming / (n + 1);
	for (i = 0; i < n; i++) {
		struct homa_msgin *in = &act[i]->in;
		uint64_t target = (uint64_t)in->received + win;

		if (target > in->length)
			target = in->length;
		if (target <= in->granted || e->total_incoming >= e->s.max_incoming)
			continue;
		if (target - in->granted > e->s.max_incoming - e->total_incoming)
			target = in->granted + (e->s.max_incoming - e->total_incoming);
		give(e, act[i], (uint32_t)target, homa_grant_rank_priority(e, i, n));
	}
	e->st.granted_msgs = n;
	module_fifo(e, win);
}
