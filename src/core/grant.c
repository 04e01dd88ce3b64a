/* SPDX-License-Identifier: MIT */
/**
 * @file grant.c
 * The receiver's scheduler. Incoming messages that need grants sit on
 * engine.grantable sorted by bytes still to receive (SRPT). Each pass
 * grants to the shortest message of each peer, at most max_overcommit
 * messages, keeping granted-but-unreceived bytes under max_incoming; each
 * active message may have about unsched_bytes (one RTT) outstanding, and
 * a message starts receiving grants only while fewer than max_overcommit
 * messages have explicitly granted bytes in flight. A message whose sender
 * went silent (our RESEND for it is unanswered) does not hold its peer's
 * slot, so a dead process cannot block live ones on the same host.
 * Priorities go by rank, using the lowest scheduled levels when few
 * messages are active. A grant_fifo_fraction share of granted bytes goes
 * to the oldest message that SRPT is not serving and whose previous FIFO
 * grant has arrived, so none starves. GRANTs move a window in steps of
 * homa_grant_step(), not per packet. A message nothing of which came
 * while our link was idle for grant_silence_rtts round trips is silent:
 * its sender serves shorter messages of other receivers first, so it
 * stops holding a max_overcommit slot and up to two windows of such bytes
 * stop holding the budget. One peer counts at most HOMA_PEER_UNSCHED_WINDOWS
 * windows of unscheduled claims against longer messages and has at most
 * HOMA_PEER_OUTSTANDING messages with granted bytes in flight, so a peer
 * announcing messages it never sends cannot hold the whole budget.
 */
#include "internal.h"

/**
 * Messages of one peer that may have explicitly granted bytes in flight
 * at once. A peer that opens message after message, each announcing
 * unscheduled bytes it never sends, otherwise took every max_overcommit
 * slot and the grant budget until its messages timed out (hostile peer
 * LYING_DATA and REPLAY moves in homa-sim: honest P99 x600).
 */
#define HOMA_PEER_OUTSTANDING 2

/** left() - Bytes @in still has to receive (the SRPT key). */
static uint32_t left(const struct homa_msgin *in)
{
	return in->length - in->received;
}

/** uncount() - Take @in's share out of total_incoming (and unsched_incoming). */
static void uncount(homa_engine *e, struct homa_msgin *in)
{
	e->total_incoming -= in->counted;
	if (in->counted_unsched)
		e->unsched_incoming -= in->counted;
	in->counted = 0;
	in->counted_unsched = false;
}

/**
 * set_outstanding() - Record whether @in has explicitly granted bytes in
 * flight: engine.outstanding_msgs and the engine.outstanding list follow.
 */
static void set_outstanding(homa_engine *e, struct homa_msgin *in, bool out)
{
	struct homa_peer *peer = homa_container_of(in, struct homa_rpc, in)->peer;

	if (out == in->outstanding)
		return;
	if (out) {
		e->outstanding_msgs++;
		peer->grant_outstanding++;
		homa_list_add_tail(&e->outstanding, &in->out_link);
	} else {
		e->outstanding_msgs--;
		peer->grant_outstanding--;
		homa_list_del(&in->out_link);
	}
	in->outstanding = out;
}

/**
 * recount() - Bring @in's share of total_incoming (and of unsched_incoming
 * while we never granted it), and whether it counts among the messages
 * with explicitly granted bytes in flight, up to date.
 */
static inline void recount(homa_engine *e, struct homa_msgin *in)
{
	uint32_t now = in->granted > in->received ? in->granted - in->received : 0;
	bool out = in->explicit_grant && now > 0;
	uint32_t un_was = in->counted_unsched ? in->counted : 0;
	uint32_t un_now = in->explicit_grant ? 0 : now;

	e->total_incoming = e->total_incoming - in->counted + now;
	e->unsched_incoming = e->unsched_incoming - un_was + un_now;
	in->counted = now;
	in->counted_unsched = !in->explicit_grant;
	set_outstanding(e, in, out);
}

/** homa_grant_recount() - recount() for grant_module.c. */
void homa_grant_recount(homa_engine *e, struct homa_msgin *in)
{
	recount(e, in);
}

/** homa_grant_heard() - Note that @in's sender was heard from, or granted, now (silent_share()). */
static void homa_grant_heard(const homa_engine *e, struct homa_msgin *in)
{
	in->heard_ns = e->now;
	in->heard_rx_ns = e->rx_link_ns;
}

/** homa_grant_add() - Enter @rpc's incoming message in the scheduler. */
void homa_grant_add(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_link *pos;
	uint32_t mine = left(&rpc->in);

	for (pos = e->grantable.next; pos != &e->grantable; pos = pos->next) {
		struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, in.grant_link);

		if (left(&r->in) > mine)
			break;
	}
	homa_list_insert_before(pos, &rpc->in.grant_link);
	recount(e, &rpc->in);
	e->st.incoming_msgs++;
}

/** homa_grant_remove() - Take @rpc's message out of the scheduler (no-op if absent). */
void homa_grant_remove(homa_engine *e, struct homa_rpc *rpc)
{
	if (!homa_list_linked(&rpc->in.grant_link))
		return;
	homa_list_del(&rpc->in.grant_link);
	uncount(e, &rpc->in);
	set_outstanding(e, &rpc->in, false);
	e->st.incoming_msgs--;
}

/**
 * homa_grant_received() - @newbytes more bytes of @rpc's message arrived:
 * update the incoming total and move the message toward the head.
 */
void homa_grant_received(homa_engine *e, struct homa_rpc *rpc, uint32_t newbytes)
{
	struct homa_link *l = &rpc->in.grant_link;

	if (!homa_list_linked(l) || !newbytes)
		return;
	homa_grant_heard(e, &rpc->in);
	recount(e, &rpc->in);
	while (l->prev != &e->grantable) {
		struct homa_rpc *p = homa_container_of(l->prev, struct homa_rpc, in.grant_link);

		if (left(&p->in) <= left(&rpc->in))
			break;
		homa_list_del(l);
		homa_list_insert_before(&p->in.grant_link, l);
	}
}

/** homa_grant_rank_priority() - Grant priority of the message at @rank of @active. */
uint8_t homa_grant_rank_priority(const homa_engine *e, uint32_t rank, uint32_t active)
{
	int levels = (int)e->s.num_priorities - (int)e->s.num_unsched_priorities;
	int max_prio = levels > 0 ? levels - 1 : 0;
	int extra = max_prio + 1 - (int)active;
	int prio = max_prio - (int)rank - (extra > 0 ? extra : 0);

	return (uint8_t)(prio < 0 ? 0 : prio);
}

/**
 * step_for() - Bytes by which a GRANT moves a window of @window bytes at
 * least: @step (grant_step), or a third of @window rounded up to whole
 * packets and at least two packets, held within one packet (or unsched_bytes if
 * smaller) .. @window, and to max_incoming in whole packets: a GRANT
 * never moves a window by more than the budget, so a larger step would
 * never be sent and every scheduled message would stall until it timed out.
 * Per-packet GRANTs took 8% of a sender's downlink (one ~120-byte GRANT
 * per 1538-byte DATA frame); at 80% load homa-sim then delivered 2.5%
 * (W4) to 4% (W5) less than the ideal SRPT reference on 16 hosts, 1.9%
 * and 2.2% on 144 (docs/SIMULATION.md, "GRANT batching").
 */
static uint32_t step_for(const homa_engine *e, uint32_t window, uint32_t step)
{
	uint32_t pkt = homa_data_payload(e);

	if (!step) {
		uint32_t third = (window + 2) / 3;

		step = (third + pkt - 1) / pkt * pkt;
		if (step < 2 * pkt)
			step = 2 * pkt; /* like TCP's delayed ACK: one per two packets */
	}
	if (step < pkt)
		step = pkt;
	if (step > e->s.max_incoming) /* grant_one() never had room for it: every message stalled */
		step = e->s.max_incoming >= pkt ? e->s.max_incoming / pkt * pkt : e->s.max_incoming;
	return step < window ? step : window;
}

/** homa_grant_step() - step_for() of the full window (unsched_bytes, grant_step). */
uint32_t homa_grant_step(const homa_engine *e)
{
	return step_for(e, e->s.unsched_bytes, e->s.grant_step);
}

/**
 * homa_grant_window() - Bytes each scheduled message may have granted
 * ahead of what it received: unsched_bytes, or grant_short_window (held
 * within one packet .. unsched_bytes) for one tick after a message that
 * needed no grant started arriving (engine.short_rx_ns).
 */
uint32_t homa_grant_window(const homa_engine *e)
{
	uint32_t w = e->s.grant_short_window, pkt = homa_data_payload(e);

	if (!w || !e->short_rx_seen || e->now - e->short_rx_ns >= e->s.tick_ns)
		return e->s.unsched_bytes;
	if (w < pkt)
		w = pkt;
	return w < e->s.unsched_bytes ? w : e->s.unsched_bytes;
}

/**
 * grant_one() - Raise @rpc's grant toward received + @window (plus
 * the batching slack of homa_grant_step()) within the max_incoming budget,
 * of which @used is taken, and send a GRANT if it moved by at least @step
 * or to the end (@window: homa_grant_window(); @step: its step; both once
 * per pass). A target
 * less than @step short of the end becomes the end: a GRANT for so short
 * a tail would cost the sender a wake-up (and a round trip) of its own
 * for less than one step (on loopback, 65 KB packets and 200 KB windows:
 * a 500 KB message then takes two exchanges instead of three).
 * Return: bytes newly granted.
 */
static uint32_t grant_one(homa_engine *e, struct homa_rpc *rpc, uint8_t prio, uint64_t used,
			  uint32_t window, uint32_t step)
{
	struct homa_msgin *in = &rpc->in;
	uint32_t pkt = homa_data_payload(e);
	uint64_t target = (uint64_t)in->received + window + (step > pkt ? step - pkt : 0);
	uint64_t avail;

	if (target > in->length || in->length - target < step)
		target = in->length;  /* no tail shorter than a step: one exchange less */
	if (target <= in->granted)
		return 0;
	avail = used < e->s.max_incoming ? e->s.max_incoming - used : 0;
	if (target - in->granted > avail)
		target = in->granted + avail;
	if (target < in->length && target - in->granted < step)
		return 0;
	avail = target - in->granted;
	in->granted = (uint32_t)target;
	in->explicit_grant = true;
	homa_grant_heard(e, in);
	recount(e, in);
	homa_ctl_grant(e, rpc, in->granted, prio);
	return (uint32_t)avail;
}

/** is_chosen() - True if @r is one of the @n messages SRPT chose. */
static bool is_chosen(struct homa_rpc *const *chosen, uint32_t n, const struct homa_rpc *r)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (chosen[i] == r)
			return true;
	return false;
}

/** fifo_increment() - Bytes per FIFO grant: fifo_grant_increment, or one window (unsched_bytes). */
static uint32_t fifo_increment(const homa_engine *e)
{
	return e->s.fifo_grant_increment ? e->s.fifo_grant_increment : e->s.unsched_bytes;
}

/**
 * grant_fifo() - Give fifo_increment() bytes to the oldest message SRPT
 * did not choose and whose previous FIFO grant has arrived whole. The
 * oldest messages at high load are long ones whose senders serve shorter
 * messages first; granting one of them again and again piled FIFO bytes
 * into max_incoming that nobody sent, and the budget left for SRPT shrank
 * (homa-sim, W4 at 89% offered on 144 hosts over 374 ms: 0.963 of the
 * ideal SRPT schedule with repeated 50000-byte FIFO grants, 0.997 with
 * this rule and one-window grants, 1.000 with no FIFO grants at all;
 * docs/SIMULATION.md, "FIFO grants").
 */
static void grant_fifo(homa_engine *e, struct homa_rpc *const *chosen, uint32_t n)
{
	struct homa_rpc *oldest = NULL;
	struct homa_link *pos;
	uint64_t target;

	for (pos = e->grantable.next; pos != &e->grantable; pos = pos->next) {
		struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, in.grant_link);

		if (r->in.granted >= r->in.length || is_chosen(chosen, n, r))
			continue;
		if (r->in.received < r->in.fifo_end)
			continue; /* our last FIFO grant to it is still to come */
		if (!r->in.outstanding && r->peer->grant_outstanding >= HOMA_PEER_OUTSTANDING)
			continue;
		if (!oldest || r->in.birth < oldest->in.birth)
			oldest = r;
	}
	if (!oldest)
		return;
	target = (uint64_t)oldest->in.granted + fifo_increment(e);
	oldest->in.granted = target < oldest->in.length ? (uint32_t)target : oldest->in.length;
	oldest->in.fifo_end = oldest->in.granted;
	oldest->in.explicit_grant = true;
	homa_grant_heard(e, &oldest->in);
	recount(e, &oldest->in);
	homa_ctl_grant(e, oldest, oldest->in.granted, 0);
	e->st.fifo_grants_sent++;
}

/**
 * has_room() - True if the rx budget can absorb max_incoming more bytes (or
 * all @in still needs, if less) for @in, counting what requests with more bytes left hold (a shorter message
 * evicts them, evict.c): the backpressure. A flood of forged long messages
 * that fills the budget therefore does not stop grants to shorter ones.
 */
static bool has_room(const homa_engine *e, const struct homa_msgin *in)
{
	uint64_t want = left(in) < e->s.max_incoming ? left(in) : e->s.max_incoming;

	return !homa_evict_pressure(e) || homa_evict_headroom(e, left(in)) >= want;
}

/**
 * room_deficit() - rx bytes that must be freed before has_room() holds
 * for @in (0 if it holds): a release frees them one for one, both from
 * the pressure and from the headroom (a delivered message is not among
 * the evictable requests).
 */
static uint64_t room_deficit(const homa_engine *e, const struct homa_msgin *in)
{
	uint64_t want = left(in) < e->s.max_incoming ? left(in) : e->s.max_incoming;
	uint64_t pressure = e->rx_buffered + e->s.max_incoming, room;

	if (pressure <= e->s.max_rx_buffered)
		return 0;
	room = homa_evict_headroom(e, left(in));
	if (room >= want)
		return 0;
	pressure -= e->s.max_rx_buffered;
	return want - room < pressure ? want - room : pressure;
}

/**
 * homa_grant_defer() - Input changed what a grant pass would decide (a
 * scheduled message's bytes arrived, or it completed): ask for one pass,
 * run by homa_grant_flush() before the engine's next output or tick. A
 * receive batch of N such packets then runs one pass, not N: under a
 * flood every forged scheduled DATA packet ran a pass over the forged
 * partial messages, and only the last pass of a batch decides the GRANTs
 * that go out (earlier ones were merged away). Owns nothing; no errors.
 */
void homa_grant_defer(homa_engine *e)
{
	e->grant_pending = true;
}

/**
 * homa_grant_flush() - Run the pass homa_grant_defer() asked for, if
 * no pass ran since. Called by the engine's output and timer entry
 * points, so no GRANT leaves later than it did with a pass per packet.
 */
void homa_grant_flush(homa_engine *e)
{
	if (e->grant_pending)
		homa_grant_check(e);
}

/**
 * homa_grant_released() - The application released a delivered message
 * of @bytes rx bytes. A pass runs only once the bytes released since the
 * latest pass reach the smallest room_deficit() that pass met: a release
 * changes nothing else a pass looks at. Honest short messages released
 * under a flood ran a pass each over up to max_peer_partial_msgs forged
 * partial messages per host (half of homa_grant_check()'s 12% of the
 * victim's samples under homa-flood). The module's algorithm runs its
 * pass on every release.
 */
void homa_grant_released(homa_engine *e, uint64_t bytes)
{
	e->grant_room_freed += bytes;
	if (e->grant_module || e->grant_room_freed >= e->grant_room_need)
		homa_grant_check(e);
}

/**
 * head_extra() - How far beyond max_incoming the shortest message may be
 * granted: one window for each of up to max_overcommit displaced messages
 * still draining theirs. One window only still leaves a new shortest
 * message blocked behind the window of the previous one when that sender
 * serves others first (W5 at 80% on 16 hosts: short-half P99 slowdown 23
 * with one window, 1.9 with this, 46 with none; largest ToR queue 138,
 * 373 and 153 KB; docs/SIMULATION.md, "The shortest message's grant budget").
 */
static uint64_t head_extra(const homa_engine *e)
{
	return (uint64_t)e->s.max_overcommit * e->s.unsched_bytes;
}

/**
 * Windows (unsched_bytes) of one peer's unscheduled claims that a grant
 * pass counts against the budget of longer messages. A peer that opened
 * many messages, each announcing unscheduled bytes it never sent, held
 * the budget of every longer honest message until its own timed out.
 */
#define HOMA_PEER_UNSCHED_WINDOWS 2

/**
 * peer_unsched() - The share of @r's counted unscheduled claim that grant
 * pass @gen counts: what is left of its peer's HOMA_PEER_UNSCHED_WINDOWS
 * windows in this pass.
 */
static uint32_t peer_unsched(const homa_engine *e, struct homa_rpc *r, uint64_t gen)
{
	struct homa_peer *p = r->peer;
	uint64_t cap = (uint64_t)HOMA_PEER_UNSCHED_WINDOWS * e->s.unsched_bytes;
	uint32_t share;

	if (p->unsched_gen != gen) {
		p->unsched_gen = gen;
		p->unsched_pass = 0;
	}
	share = p->unsched_pass >= cap ? 0
		: (uint32_t)(r->in.counted < cap - p->unsched_pass ? r->in.counted
								  : cap - p->unsched_pass);
	p->unsched_pass += share;
	return share;
}

/** Most bytes of silent messages (in windows) a pass leaves out of the budget. */
#define HOMA_SILENT_WINDOWS 2

/**
 * silent_share() - The explicitly granted bytes in flight of silent
 * messages, at most HOMA_SILENT_WINDOWS windows, and in @msgs how many
 * silent messages there are. A message is silent when, since our latest
 * GRANT or its latest DATA, our link was idle for more than
 * grant_silence_rtts round trips (unsched_bytes at link_mbps): time not
 * taken by the packets we received. Had its sender sent, its packets
 * would have come in that idle time; it is serving shorter messages of
 * other receivers first (sender-side SRPT). Elapsed time alone cannot
 * tell: a message ranked low waits in the switch behind the ones ranked
 * above it for as long as they keep coming, while the link is busy.
 * Counted in full, silent bytes and slots held the budget that senders
 * with nothing better to do could use (homa-sim, W4 at 89% offered:
 * docs/SIMULATION.md, "Silent grants"); the cap bounds the burst when
 * their senders come back. 0 and 0 when the rule is off.
 */
static uint64_t silent_share(const homa_engine *e, uint32_t *msgs)
{
	uint64_t wait = (uint64_t)e->s.grant_silence_rtts * e->s.unsched_bytes * 8000 /
			e->s.link_mbps;
	uint64_t cap = (uint64_t)HOMA_SILENT_WINDOWS * e->s.unsched_bytes, bytes = 0;
	const struct homa_link *pos;

	*msgs = 0;
	if (!e->s.grant_silence_rtts)
		return 0;
	for (pos = e->outstanding.next; pos != &e->outstanding; pos = pos->next) {
		const struct homa_msgin *in = homa_container_of(pos, struct homa_msgin, out_link);
		uint64_t busy = e->rx_link_ns - in->heard_rx_ns;

		if (e->now - in->heard_ns > busy + wait) {
			bytes += in->counted;
			(*msgs)++;
		}
	}
	return bytes < cap ? bytes : cap;
}

/**
 * homa_grant_check() - Run one scheduling pass (after data arrives, a
 * message completes or leaves). A message is granted only while the rx
 * budget has room for it (has_room()). Its max_incoming budget counts all
 * explicitly granted bytes but only the unscheduled bytes of messages at
 * least as short (SRPT order): the unscheduled bytes a longer message
 * announced, genuine or forged and maybe never sent, do not hold back a
 * shorter one. The shortest message is exempt from the max_overcommit
 * limit and has a larger budget: as in the SIGCOMM 2018 design it is granted
 * its one-RTT window at once while the messages it displaced drain their
 * granted bytes. Otherwise longer messages whose senders serve others
 * first pin the whole budget and a new short message waits for a RESEND
 * timeout (docs/SIMULATION.md, "The shortest message's grant budget").
 * Its budget is larger by head_extra(), and silent_share() forgives at
 * most two windows, so
 * max_incoming + (max_overcommit + 2) * unsched_bytes is the hard bound on
 * granted-but-unreceived bytes.
 */
void homa_grant_check(homa_engine *e)
{
	struct homa_rpc *chosen[64];
	uint64_t ahead[64], unsched = 0, moved = 0, used, silent;
	uint32_t n = 0, i, granted = 0, step, quiet, window;
	uint64_t gen = ++e->grant_gen;
	struct homa_link *pos;

	e->grant_pending = false;
	e->grant_room_need = UINT64_MAX;
	e->grant_room_freed = 0;
	if (e->grant_module) {
		homa_grant_check_module(e);
		return;
	}
	if (homa_list_empty(&e->grantable))
		return;
	for (pos = e->grantable.next; pos != &e->grantable && n < e->s.max_overcommit; pos = pos->next) {
		struct homa_rpc *r = homa_container_of(pos, struct homa_rpc, in.grant_link);

		e->grant_visits++;
		if (r->in.counted_unsched)
			unsched += peer_unsched(e, r, gen);
		if (r->peer->grant_gen == gen)
			continue;
		if (r->in.granted >= r->in.length)
			continue; /* nothing left to grant: its peer's next message may go */
		if (r->probes)
			continue; /* silent since our RESEND: its peer's next message may go */
		r->peer->grant_gen = gen;
		ahead[n] = unsched;
		chosen[n++] = r;
	}
	window = homa_grant_window(e);
	step = homa_grant_step(e);
	if (window < e->s.unsched_bytes && step_for(e, window, 0) < step)
		step = step_for(e, window, 0); /* a third of the short window, at most the step */
	silent = silent_share(e, &quiet);
	for (i = 0; i < n; i++) {
		struct homa_msgin *in = &chosen[i]->in;
		uint64_t was = in->counted_unsched ? in->counted : 0;

		/* a message with no grant in flight may start only while fewer
		 * than max_overcommit messages that are not silent have granted
		 * bytes in flight (messages SRPT just displaced may still have some) */
		if (i > 0 && !in->outstanding && e->outstanding_msgs - quiet >= e->s.max_overcommit)
			continue;
		/* nor while its peer has HOMA_PEER_OUTSTANDING messages with
		 * granted bytes in flight (any message, the shortest too) */
		if (!in->outstanding && chosen[i]->peer->grant_outstanding >= HOMA_PEER_OUTSTANDING)
			continue;
		if (!has_room(e, in)) {
			uint64_t need = room_deficit(e, in);

			e->grant_room_need = need < e->grant_room_need ? need : e->grant_room_need;
			continue;
		}
		used = e->total_incoming - e->unsched_incoming + ahead[i] - moved;
		used = used > silent ? used - silent : 0;
		if (i == 0) /* the head's budget is larger (see above) */
			used = used > head_extra(e) ? used - head_extra(e) : 0;
		granted += grant_one(e, chosen[i], homa_grant_rank_priority(e, i, n), used, window,
				     step);
		if (!in->counted_unsched)
			moved += was; /* now among the explicit bytes: not twice */
	}
	e->st.granted_msgs = n;
	if (!e->s.grant_fifo_fraction)
		return;
	e->fifo_grant_credit += (uint64_t)granted * e->s.grant_fifo_fraction;
	if (e->fifo_grant_credit >= 1000ull * fifo_increment(e)) {
		e->fifo_grant_credit -= 1000ull * fifo_increment(e);
		grant_fifo(e, chosen, n);
	}
}
