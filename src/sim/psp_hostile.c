/* SPDX-License-Identifier: MIT */
/**
 * @file psp_hostile.c
 * The PSP hostile peer (see psp_hostile.h): an agent that builds each
 * packet from sealed bytes it captured (psp_hostile_tap.c) and knows,
 * from the order in which a receiver checks a packet (header, SPI,
 * replay window, ICV), the reason the receiver must reject it for.
 */
#include <stdlib.h>
#include <string.h>

#include "homa/wire.h"
#include "sim/moves.h"
#include "sim/psp_hostile_int.h"

#define W HOMA_PSP_REPLAY_WINDOW
#define SLACK 256                /**< IVs the window may move while a packet flies */
#define GUARD_NS 1000000ull      /**< reasons around an expiry are not told */
#define CLEAR_LEN 100            /**< CLEAR request length */
#define MAX_SEALED 1532          /**< longest FORGE packet */

/** One packet being built. */
struct out {
	uint8_t *buf;
	size_t cap;
	int dst;
	int expect;   /**< enum homa_psp_reject or PH_UNKNOWN */
};

/** below() - Uniform in [0, @n). */
static uint64_t below(struct homa_sim_psp_hostile *h, uint64_t n)
{
	return homa_rng_below(&h->rng, n);
}

/**
 * live() - @reason, unless captured packet @c carries an SPI the victim
 * has expired by now (HOMA_PSP_REJ_EXPIRED_SPI: the SPI is looked up
 * before the window and the ICV) or expires around now (undetermined).
 */
static int live(const struct homa_sim_psp_hostile *h, const struct ph_cap *c, uint64_t now,
		int reason)
{
	if (!h->cfg.expire_at_ns || c->at >= h->cfg.expire_before_ns)
		return reason;
	if (now >= h->cfg.expire_at_ns)
		return HOMA_PSP_REJ_EXPIRED_SPI;
	return now + GUARD_NS >= h->cfg.expire_at_ns ? PH_UNKNOWN : reason;
}

/**
 * window() - The reason the receiver gives an unchanged-header copy of
 * @c with a good SPI: its IV is left of the window (too old), else a
 * delivered IV is a replay and a fresh one fails the ICV; undetermined
 * near the window's left edge.
 */
static int window(const struct homa_sim_psp_hostile *h, const struct ph_cap *c)
{
	uint64_t top = ph_top(h, c->dst, ph_spi_of(c->b)), iv = ph_iv_of(c->b);

	if (iv > top)
		return c->fresh ? HOMA_PSP_REJ_AUTH : PH_UNKNOWN;
	if (top - iv >= W)
		return HOMA_PSP_REJ_TOO_OLD;
	if (top - iv + SLACK >= W)
		return PH_UNKNOWN;
	return c->fresh ? HOMA_PSP_REJ_AUTH : HOMA_PSP_REJ_REPLAY;
}

/** put() - Copy @len bytes of @c into @o, to @c's destination. Return: @len or 0. */
static int put(struct out *o, const struct ph_cap *c, uint32_t len)
{
	if (len > o->cap)
		return 0;
	memcpy(o->buf, c->b, len);
	o->dst = c->dst;
	return (int)len;
}

/** fresh_iv() - An IV past any an honest sender uses. */
static uint64_t fresh_iv(struct homa_sim_psp_hostile *h)
{
	return 1ull << 63 | homa_rng_next(&h->rng) >> 1;
}

/** move_forge() - FORGE: random bytes behind the victim's live header, a fresh IV. */
static int move_forge(struct homa_sim_psp_hostile *h, struct out *o, uint64_t now)
{
	uint32_t len = PH_MIN_SEALED + (uint32_t)below(h, MAX_SEALED - PH_MIN_SEALED + 1);

	if (!h->last.len || len > o->cap)
		return 0;
	memcpy(o->buf, h->last.b, HOMA_PSP_HDR_LEN);
	ph_set_iv(o->buf, fresh_iv(h));
	for (uint32_t i = HOMA_PSP_HDR_LEN; i < len; i++)
		o->buf[i] = (uint8_t)homa_rng_next(&h->rng);
	o->dst = h->last.dst;
	o->expect = live(h, &h->last, now, HOMA_PSP_REJ_AUTH);
	return (int)len;
}

/** next_subject() - Take the packet FLIP walks next: the newest stolen one, else the last seen. */
static bool next_subject(struct homa_sim_psp_hostile *h)
{
	if (h->st.stolen > h->walk_src) {
		h->walk = h->stolen[(h->st.stolen - 1) % PH_STOLEN];
		h->walk_src = h->st.stolen;
	} else if (h->last.len) {
		h->walk = h->last;
	} else {
		return false;
	}
	h->walk_bit = 0;
	return true;
}

/**
 * flip_reason() - The reason for @c with byte @byte changed: the first
 * two bytes say "not PSP", the next two break the header, a changed SPI
 * or IV gives a reason that depends on the receiver's state.
 */
static int flip_reason(const struct homa_sim_psp_hostile *h, const struct ph_cap *c,
		       uint64_t byte, uint64_t now)
{
	if (byte < 2)
		return HOMA_PSP_REJ_NOT_PSP;
	if (byte < 4)
		return HOMA_PSP_REJ_BAD_HEADER;
	if (byte < HOMA_PSP_HDR_LEN)
		return PH_UNKNOWN;
	return live(h, c, now, window(h, c));
}

/** move_flip() - FLIP: the walked packet with its next bit flipped. */
static int move_flip(struct homa_sim_psp_hostile *h, struct out *o, uint64_t now)
{
	uint64_t bit;
	int n;

	if (!h->walk.len && !next_subject(h))
		return 0;
	bit = h->walk_bit;
	n = put(o, &h->walk, h->walk.len);
	if (!n)
		return 0;
	o->buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	o->expect = flip_reason(h, &h->walk, bit / 8, now);
	if (++h->walk_bit == (uint64_t)h->walk.len * 8) {
		h->st.walked++;
		if (h->walk.len > h->st.walked_max)
			h->st.walked_max = h->walk.len;
		h->walk.len = 0;
	}
	return n;
}

/** move_wrong_spi() - WRONG_SPI: the last packet to the victim under an SPI never issued. */
static int move_wrong_spi(struct homa_sim_psp_hostile *h, struct out *o, uint64_t now)
{
	uint32_t spi;
	int n;

	(void)now;
	if (!h->last.len || !(n = put(o, &h->last, h->last.len)))
		return 0;
	spi = (ph_spi_of(o->buf) & 0x80000000u) | 0x7fff0000u | (uint32_t)below(h, 65536);
	for (int i = 0; i < 4; i++)
		o->buf[4 + i] = (uint8_t)(spi >> (24 - 8 * i));
	ph_set_iv(o->buf, fresh_iv(h));
	o->expect = HOMA_PSP_REJ_UNKNOWN_SPI;
	return n;
}

/** move_expired() - EXPIRED: an early packet, once the victim expired its SPI. */
static int move_expired(struct homa_sim_psp_hostile *h, struct out *o, uint64_t now)
{
	const struct ph_cap *c;

	if (!h->nold || now < h->cfg.expire_at_ns)
		return 0;
	c = &h->old[below(h, h->nold)];
	if (c->at >= h->cfg.expire_before_ns)
		return 0;
	o->expect = HOMA_PSP_REJ_EXPIRED_SPI;
	return put(o, c, c->len);
}

/** move_truncate() - TRUNCATE: a stolen (else the last) packet cut short. */
static int move_truncate(struct homa_sim_psp_hostile *h, struct out *o, uint64_t now)
{
	const struct ph_cap *c = h->st.stolen ? &h->stolen[below(h, h->st.stolen < PH_STOLEN
								    ? h->st.stolen : PH_STOLEN)]
					     : &h->last;
	uint32_t len;

	if (!c->len)
		return 0;
	len = 1 + (uint32_t)below(h, c->len - 1);
	if (len < 2)
		o->expect = HOMA_PSP_REJ_NOT_PSP;
	else if (len < PH_MIN_SEALED)
		o->expect = HOMA_PSP_REJ_TRUNCATED;
	else
		o->expect = live(h, c, now, window(h, c));
	return put(o, c, len);
}

/** move_replay() - REPLAY: a packet just delivered, again to its destination. */
static int move_replay(struct homa_sim_psp_hostile *h, struct out *o, uint64_t now)
{
	const struct ph_cap *c;

	if (!h->nrecent)
		return 0;
	c = &h->recent[below(h, h->nrecent < PH_RECENT ? h->nrecent : PH_RECENT)];
	o->expect = live(h, c, now, window(h, c));
	return put(o, c, c->len);
}

/** move_too_old() - TOO_OLD: an early packet whose SPI moved more than a window on. */
static int move_too_old(struct homa_sim_psp_hostile *h, struct out *o, uint64_t now)
{
	uint32_t start = h->nold ? (uint32_t)below(h, h->nold) : 0;

	for (uint32_t k = 0; k < h->nold; k++) {
		const struct ph_cap *c = &h->old[(start + k) % h->nold];

		if (window(h, c) == HOMA_PSP_REJ_TOO_OLD) {
			o->expect = live(h, c, now, HOMA_PSP_REJ_TOO_OLD);
			return put(o, c, c->len);
		}
	}
	return 0;
}

/** move_clear() - CLEAR: a cleartext one-packet request to the victim. */
static int move_clear(struct homa_sim_psp_hostile *h, struct out *o, uint64_t now)
{
	static const uint8_t zeros[CLEAR_LEN];
	struct homa_pkt p;
	int n;

	(void)now;
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_DATA;
	p.sport = h->cfg.port;
	p.dport = h->cfg.port;
	p.sender_id = ++h->clear_seq * 2;
	p.u.data.message_length = CLEAR_LEN;
	p.u.data.incoming = CLEAR_LEN;
	p.u.data.payload = zeros;
	p.u.data.payload_len = CLEAR_LEN;
	n = homa_wire_encode(&p, o->buf, o->cap);
	o->dst = h->cfg.victim;
	o->expect = HOMA_PSP_REJ_NOT_PSP;
	return n > 0 ? n : 0;
}

/** Moves in enum order; each returns the packet's length, 0 if it cannot play now. */
static int (*const moves[HOMA_PSP_HOSTILE_MOVES])(struct homa_sim_psp_hostile *, struct out *,
						   uint64_t) = {
	move_forge, move_flip, move_wrong_spi, move_expired,
	move_truncate, move_replay, move_too_old, move_clear,
};

/**
 * ph_output() - Agent op: the next attack, once its time has come; a
 * move that cannot play yet (nothing captured) gives way to FORGE, then
 * to CLEAR.
 */
static int ph_output(void *agent, uint64_t now, uint8_t *buf, size_t cap, struct homa_tx *tx)
{
	struct homa_sim_psp_hostile *h = agent;
	struct out o = {buf, cap, 0, PH_UNKNOWN};
	int m, n;

	if (now < h->next_ns || (h->cfg.stop_ns && now >= h->cfg.stop_ns))
		return 0;
	h->next_ns = now + h->cfg.interval_ns;
	m = homa_sim_pick_move(&h->rng, h->cfg.moves, HOMA_PSP_HOSTILE_MOVES);
	n = moves[m](h, &o, now);
	if (!n)
		n = moves[m = HOMA_PSP_HOSTILE_FORGE](h, &o, now);
	if (!n)
		n = moves[m = HOMA_PSP_HOSTILE_CLEAR](h, &o, now);
	if (!n)
		return 0;
	h->st.sent[m]++;
	h->cur_move = m;
	h->cur_expect = o.expect;
	tx->dst = homa_sim_host_addr(o.dst);
	tx->dport = h->cfg.port;
	tx->priority = (uint8_t)below(h, 8);
	tx->type = n > 11 ? buf[11] : 0;
	tx->len = (size_t)n;
	return n;
}

/** ph_input() - Agent op: count what it is sent (honest hosts send it nothing sealed). */
static void ph_input(void *agent, const homa_addr *src, uint8_t *buf, size_t len, uint64_t now)
{
	(void)src;
	(void)buf;
	(void)len;
	(void)now;
	((struct homa_sim_psp_hostile *)agent)->st.received++;
}

/**
 * ph_deadline() - Agent op: when the next packet is due (no on_timer:
 * output follows the deadline).
 */
static uint64_t ph_deadline(void *agent)
{
	struct homa_sim_psp_hostile *h = agent;

	return homa_sim_paced_deadline(h->next_ns, h->cfg.stop_ns);
}

static const struct homa_sim_agent_ops psp_hostile_ops = {
	.input = ph_input, .output = ph_output,
	.next_deadline = ph_deadline, .destroy = homa_sim_peer_free,
};

/** homa_sim_psp_hostile_cfg_default() - See psp_hostile.h. */
void homa_sim_psp_hostile_cfg_default(struct homa_sim_psp_hostile_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->moves = HOMA_PSP_HOSTILE_ALL & ~(1u << HOMA_PSP_HOSTILE_EXPIRED);
	c->port = 100;
	c->interval_ns = 2000;
	c->seed = 1;
}

/** homa_sim_psp_hostile_add() - See psp_hostile.h. */
int homa_sim_psp_hostile_add(struct homa_sim_net *net, const struct homa_sim_psp_hostile_cfg *cfg,
			     struct homa_sim_psp_hostile **out)
{
	struct homa_sim_psp_hostile *h;
	int id;

	if (!(cfg->moves & HOMA_PSP_HOSTILE_ALL) || !cfg->interval_ns ||
	    ((cfg->moves >> HOMA_PSP_HOSTILE_EXPIRED & 1) && !cfg->expire_at_ns))
		return HOMA_EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return HOMA_ENOMEM;
	h->net = net;
	h->cfg = *cfg;
	h->next_ns = cfg->start_ns;
	homa_rng_seed(&h->rng, cfg->seed);
	id = homa_sim_add_host(net, &psp_hostile_ops, h);
	if (id < 0) {
		free(h);
		return id;
	}
	h->host = id;
	ph_tap_install(h);
	if (out)
		*out = h;
	return id;
}

/** homa_sim_psp_hostile_stats() - See psp_hostile.h. */
void homa_sim_psp_hostile_stats(const struct homa_sim_psp_hostile *h,
				struct homa_sim_psp_hostile_stats *out)
{
	*out = h->st;
}

/** homa_sim_psp_hostile_stolen() - See psp_hostile.h. */
size_t homa_sim_psp_hostile_stolen(const struct homa_sim_psp_hostile *h,
				   struct homa_sim_psp_stolen *out, size_t max)
{
	size_t n = h->st.stolen < HOMA_SIM_PSP_STOLEN_LOG ? h->st.stolen : HOMA_SIM_PSP_STOLEN_LOG;

	if (n > max)
		n = max;
	memcpy(out, h->stolen_log, n * sizeof(*out));
	return n;
}

/** homa_sim_psp_hostile_move_name() - See psp_hostile.h. */
const char *homa_sim_psp_hostile_move_name(int move)
{
	static const char *const names[HOMA_PSP_HOSTILE_MOVES] = {
		"forge", "flip", "wrong_spi", "expired", "truncate", "replay", "too_old", "clear",
	};

	return move >= 0 && move < HOMA_PSP_HOSTILE_MOVES ? names[move] : "?";
}
