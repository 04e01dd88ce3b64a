/* SPDX-License-Identifier: MIT */
/**
 * @file pacer.c
 * The pacer: a model of the NIC's transmit queue that keeps it short, so a
 * new short message never waits behind a long backlog. Every packet the
 * engine emits adds its wire time to link_idle_ns; DATA may go only while
 * that backlog is within the bound, and the engine asks to be called back
 * when it has drained to the wake-up mark.
 *
 * The host calls back late when its CPU is busy (a shared core, a VM, a
 * loaded application): with a bound of a few microseconds the link then
 * idles for the whole delay after every burst. The pacer measures how late
 * each call back comes (homa_pacer_note_call()) and keeps that much slack:
 * it asks to be called that much earlier and lets the backlog grow by as
 * much, up to max_pacer_slack_ns. A host that calls on time keeps the
 * configured bound (the slack decays to zero).
 */
#include "internal.h"


/**
 * Fewest full packets the pacer lets queue in the NIC, whatever
 * max_nic_queue_ns says: what the default 5 us holds at 10 Gbps, the rate
 * the Linux module's defaults were first tuned for (it keeps 5 us, about
 * ten packets, at 25 Gbps). On a slower link the floor is the bound, and
 * it sets how many packets each on-time output call sends: with a floor
 * of two, a process sending at 20 Mbit/s woke every 1.2 ms.
 */
#define HOMA_PACER_MIN_PKTS 4

/** Each on-time or less-late call back removes 1/2^HOMA_SLACK_DECAY_SHIFT of the slack. */
#define HOMA_SLACK_DECAY_SHIFT 3

/**
 * homa_pacer_configure() - Derive the NIC backlog bound from the settings:
 * max_nic_queue_ns, but at least HOMA_PACER_MIN_PKTS full packets of link
 * time (on slow links a few microseconds hold less than one packet: the
 * pacer would then release one packet per call, the link would idle for
 * the caller's whole wake-up delay after each one, and the caller would
 * wake once per packet). Whatever the bound, the deadline comes when one
 * packet is left in the backlog (pacer_wake_ns), so each on-time call
 * sends the bound's worth of packets (four at the floor): a longer bound
 * means fewer, larger output calls, never more.
 * Call after every change of e->s; the slack stays within the (new)
 * max_pacer_slack_ns.
 */
void homa_pacer_configure(homa_engine *e)
{
	uint64_t pkt_ns = homa_wire_ns(e, e->s.mtu);
	uint64_t min_ns = HOMA_PACER_MIN_PKTS * pkt_ns;

	e->nic_queue_ns = e->s.max_nic_queue_ns > min_ns ? e->s.max_nic_queue_ns : min_ns;
	e->pacer_wake_ns = pkt_ns;
	if (e->pacer_slack_ns > e->s.max_pacer_slack_ns)
		e->pacer_slack_ns = e->s.max_pacer_slack_ns;
}

/** homa_pacer_account() - Add a packet of @bytes to the modelled NIC queue. */
void homa_pacer_account(homa_engine *e, uint64_t now, size_t bytes)
{
	uint64_t ns = homa_wire_ns(e, bytes);

	if (e->link_idle_ns < now)
		e->link_idle_ns = now;
	e->link_idle_ns += ns;
}

/** homa_pacer_bound() - Backlog (ns of link time) within which DATA may go: bound plus slack. */
uint64_t homa_pacer_bound(const homa_engine *e)
{
	return e->nic_queue_ns + e->pacer_slack_ns;
}

/**
 * homa_pacer_deadline() - When the pacer wants the next output call: the
 * backlog is down to the wake-up mark plus the slack. UINT64_MAX if no
 * message waits, 0 if now.
 */
uint64_t homa_pacer_deadline(const homa_engine *e)
{
	uint64_t mark = e->pacer_wake_ns + e->pacer_slack_ns;

	if (homa_list_empty(&e->tx_list))
		return UINT64_MAX;
	return e->link_idle_ns > mark ? e->link_idle_ns - mark : 0;
}

/**
 * homa_pacer_note_call() - An output call at @now: if the pacer was
 * waiting for a deadline that has passed, learn how late the call came.
 * The slack jumps to a later lateness at once (the link idled for it) and
 * otherwise decays by an eighth per call, within max_pacer_slack_ns.
 */
void homa_pacer_note_call(homa_engine *e, uint64_t now)
{
	uint64_t late, decayed;

	if (!e->pacer_due_ns || now < e->pacer_due_ns)
		return;
	late = now - e->pacer_due_ns;
	e->pacer_due_ns = 0;
	decayed = e->pacer_slack_ns - (e->pacer_slack_ns >> HOMA_SLACK_DECAY_SHIFT);
	e->pacer_slack_ns = late > decayed ? late : decayed;
	if (e->pacer_slack_ns > e->s.max_pacer_slack_ns)
		e->pacer_slack_ns = e->s.max_pacer_slack_ns;
}

/**
 * homa_pacer_note_held() - The pacer held DATA back after an output call:
 * remember the deadline it asked for, to measure the next call against.
 */
void homa_pacer_note_held(homa_engine *e)
{
	uint64_t d = homa_pacer_deadline(e);

	e->pacer_due_ns = d == UINT64_MAX ? 0 : d;
}
