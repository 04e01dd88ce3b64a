/* SPDX-License-Identifier: MIT */
/**
 * @file hostile.c
 * The hostile peer (see hostile.h): an agent that builds each packet with
 * homa_wire_encode() from fields it chooses to lie in.
 */
#include <stdlib.h>
#include <string.h>

#include "homa/wire.h"
#include "sim/hostile.h"
#include "sim/moves.h"
#include "util/rng.h"

#define HOGS 4           /**< GRANT_HOG messages kept alive */
#define OWN 256          /**< earlier one-packet requests remembered */
#define ANSWERED 64      /**< responses remembered */
#define SNIFF 64         /**< honest packets remembered */
#define SNIFF_BYTES 2048 /**< longest packet remembered */
#define FLOOD_LEN 100    /**< ID_FLOOD request length */
#define LIAR_LEN 60000   /**< LYING_DATA message length (before its lies) */

/** A sniffed honest packet. */
struct sniffed {
	int src, dst;
	uint32_t len;
	uint8_t bytes[SNIFF_BYTES];
};

/** The hostile peer. */
struct homa_sim_hostile {
	struct homa_sim_net *net;
	int host;
	struct homa_sim_hostile_cfg cfg;
	struct homa_rng rng;
	uint64_t next_ns;
	uint64_t flood_seq;
	struct { uint64_t id; uint32_t off; } hog[HOGS];
	uint64_t liar_id;
	uint64_t own[OWN];          /**< ids of its one-packet requests */
	uint32_t nown;
	struct { uint64_t id; uint32_t len; } answered[ANSWERED];
	uint32_t nanswered;
	struct sniffed sniff[SNIFF];
	uint32_t nsniff;
	homa_sim_observe_fn prev_obs;
	void *prev_ctx;
	struct homa_sim_hostile_stats st;
};

/** One packet being built: where it goes and at which wire priority. */
struct out {
	struct homa_pkt p;
	int dst;
	uint8_t prio;
	const uint8_t *raw;  /**< REPLAY: bytes sent as they are */
	uint32_t raw_len;
};

/** below() - Uniform in [0, @n). */
static uint64_t below(struct homa_sim_hostile *h, uint64_t n)
{
	return homa_rng_below(&h->rng, n);
}

/** payload_max() - DATA payload that fits the peer's mtu. */
static uint32_t payload_max(const struct homa_sim_hostile *h)
{
	return h->cfg.mtu - HOMA_DATA_HDR_LEN;
}

/** data_pkt() - A DATA packet of request @id to the victim. */
static void data_pkt(struct homa_sim_hostile *h, struct out *o, uint64_t id, uint32_t length,
		     uint32_t off, uint32_t len, uint32_t incoming)
{
	static const uint8_t zeros[SNIFF_BYTES];

	o->p.type = HOMA_PKT_DATA;
	o->p.sender_id = id;
	o->p.u.data.message_length = length;
	o->p.u.data.offset = off;
	o->p.u.data.incoming = incoming;
	o->p.u.data.payload = zeros;
	o->p.u.data.payload_len = len;
	o->dst = h->cfg.victim;
}

/** remember_own() - Keep one-packet request @id for REPLAY and RESTART. */
static void remember_own(struct homa_sim_hostile *h, uint64_t id)
{
	h->own[h->nown++ % OWN] = id;
}

/** move_hog() - GRANT_HOG: open a hog or trickle one packet of one, claiming it all. */
static void move_hog(struct homa_sim_hostile *h, struct out *o)
{
	uint32_t i = (uint32_t)below(h, HOGS), len = payload_max(h);

	if (!h->hog[i].id)
		h->hog[i].id = 2 * (1 + i);
	if (h->hog[i].off + len >= h->cfg.hog_length)
		h->hog[i].off = 0; /* never the last byte: the message never completes */
	data_pkt(h, o, h->hog[i].id, h->cfg.hog_length, h->hog[i].off, len, h->cfg.hog_length);
	h->hog[i].off += len;
}

/** move_flood() - ID_FLOOD: a whole 100-byte request under a fresh colliding id. */
static void move_flood(struct homa_sim_hostile *h, struct out *o)
{
	uint64_t id = ++h->flood_seq << 20;

	data_pkt(h, o, id, FLOOD_LEN, 0, FLOOD_LEN, FLOOD_LEN);
	remember_own(h, id);
}

/** move_lying_data() - LYING_DATA: one message, a new length and range each packet. */
static void move_lying_data(struct homa_sim_hostile *h, struct out *o)
{
	uint32_t length = LIAR_LEN - 4000 + (uint32_t)below(h, 8000);
	uint32_t len = 1 + (uint32_t)below(h, payload_max(h));
	uint32_t off = (uint32_t)below(h, length - len + 1);

	if (!h->liar_id || below(h, 64) == 0)
		h->liar_id = 2 * (HOGS + 1 + below(h, 1000));
	data_pkt(h, o, h->liar_id, length, off, len, (uint32_t)below(h, (uint64_t)length + 1));
	o->p.u.data.retransmit = (uint8_t)below(h, 2);
	o->p.u.data.cutoff_version = (uint16_t)below(h, 65536);
	o->p.u.data.ack.client_id = below(h, 4) ? 0 : 2 * below(h, 1u << 30);
	o->p.u.data.ack.server_port = h->cfg.port;
}

/** move_cutoffs() - CUTOFFS: unordered, or ordered at the extremes. */
static void move_cutoffs(struct homa_sim_hostile *h, struct out *o)
{
	int i;

	o->p.type = HOMA_PKT_CUTOFFS;
	o->p.sender_id = h->hog[0].id ? h->hog[0].id : 2;
	for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
		o->p.u.cutoffs.cutoffs[i] = below(h, 2) ? (uint32_t)homa_rng_next(&h->rng)
						       : (i ? 0xffffffffu : 1u);
	o->p.u.cutoffs.version = (uint16_t)below(h, 65536);
	o->dst = h->cfg.victim;
}

/** pick_sniffed() - A remembered honest packet, or NULL. */
static const struct sniffed *pick_sniffed(struct homa_sim_hostile *h)
{
	uint32_t n = h->nsniff < SNIFF ? h->nsniff : SNIFF;

	return n ? &h->sniff[below(h, n)] : NULL;
}

/** move_forge() - FORGE: a control packet about an honest RPC, to one of its ends. */
static void move_forge(struct homa_sim_hostile *h, struct out *o)
{
	static const uint8_t types[] = {HOMA_PKT_ACK, HOMA_PKT_RPC_UNKNOWN, HOMA_PKT_GRANT,
					HOMA_PKT_RESEND, HOMA_PKT_BUSY, HOMA_PKT_NEED_ACK};
	const struct sniffed *s = pick_sniffed(h);
	uint64_t id, client_id;

	if (!s) {
		move_flood(h, o);
		return;
	}
	id = (uint64_t)s->bytes[20] << 56 | (uint64_t)s->bytes[21] << 48 |
	     (uint64_t)s->bytes[22] << 40 | (uint64_t)s->bytes[23] << 32 |
	     (uint64_t)s->bytes[24] << 24 | (uint64_t)s->bytes[25] << 16 |
	     (uint64_t)s->bytes[26] << 8 | s->bytes[27];
	client_id = id & ~1ull;
	o->p.type = types[below(h, sizeof(types))];
	/* to the receiver (the id as its sender knows it) or to the sender (as it knows it) */
	if (below(h, 2)) {
		o->dst = s->dst;
		o->p.sender_id = id;
	} else {
		o->dst = s->src;
		o->p.sender_id = id ^ 1;
	}
	o->p.u.ack.num_acks = 0;
	if (o->p.type == HOMA_PKT_ACK) {
		o->p.u.ack.num_acks = 1;
		o->p.u.ack.acks[0].client_id = client_id;
		o->p.u.ack.acks[0].server_port = h->cfg.port;
	} else if (o->p.type == HOMA_PKT_GRANT) {
		o->p.u.grant.offset = 0xfffffff0u;
		o->p.u.grant.priority = 7;
	} else if (o->p.type == HOMA_PKT_RESEND) {
		o->p.u.resend.length = HOMA_RESEND_ALL;
		o->p.u.resend.priority = 7;
	}
}

/** move_replay() - REPLAY: an honest packet, or one of its own requests, verbatim. */
static void move_replay(struct homa_sim_hostile *h, struct out *o)
{
	const struct sniffed *s = below(h, 2) ? pick_sniffed(h) : NULL;
	uint64_t id;

	if (s) {
		o->raw = s->bytes;
		o->raw_len = s->len;
		o->dst = s->dst;
		return;
	}
	if (!h->nown) {
		move_flood(h, o);
		return;
	}
	id = h->own[below(h, h->nown < OWN ? h->nown : OWN)];
	data_pkt(h, o, id, FLOOD_LEN, 0, FLOOD_LEN, FLOOD_LEN);
}

/** move_restart() - RESTART: an earlier request id, announced as a new, longer message. */
static void move_restart(struct homa_sim_hostile *h, struct out *o)
{
	uint64_t id;
	uint32_t length = FLOOD_LEN + 1 + (uint32_t)below(h, 200000);

	if (!h->nown) {
		move_flood(h, o);
		return;
	}
	id = h->own[below(h, h->nown < OWN ? h->nown : OWN)];
	data_pkt(h, o, id, length, 0, length < payload_max(h) ? length : payload_max(h), length);
}

/** move_amplify() - AMPLIFY: ask for a response again, or grant past its end. */
static void move_amplify(struct homa_sim_hostile *h, struct out *o)
{
	uint32_t i;

	if (!h->nanswered) {
		move_flood(h, o);
		return;
	}
	i = (uint32_t)below(h, h->nanswered < ANSWERED ? h->nanswered : ANSWERED);
	o->p.sender_id = h->answered[i].id;
	o->dst = h->cfg.victim;
	if (below(h, 2)) {
		o->p.type = HOMA_PKT_RESEND;
		o->p.u.resend.length = HOMA_RESEND_ALL;
		o->p.u.resend.priority = 7;
	} else {
		o->p.type = HOMA_PKT_GRANT;
		o->p.u.grant.offset = h->answered[i].len + 1000000;
		o->p.u.grant.priority = 7;
	}
}

/** Moves in enum order. */
static void (*const moves[HOMA_HOSTILE_MOVES])(struct homa_sim_hostile *, struct out *) = {
	move_hog, move_flood, move_lying_data, move_cutoffs,
	move_forge, move_replay, move_restart, move_amplify,
};

/** hs_output() - Agent op: the next lie, once its time has come. */
static int hs_output(void *agent, uint64_t now, uint8_t *buf, size_t cap, struct homa_tx *tx)
{
	struct homa_sim_hostile *h = agent;
	struct out o;
	int m, n;

	if (now < h->next_ns || (h->cfg.stop_ns && now >= h->cfg.stop_ns))
		return 0;
	h->next_ns = now + h->cfg.interval_ns;
	memset(&o, 0, sizeof(o));
	o.prio = (uint8_t)below(h, 8);
	m = homa_sim_pick_move(&h->rng, h->cfg.moves, HOMA_HOSTILE_MOVES);
	moves[m](h, &o);
	if (o.raw) {
		if (o.raw_len > cap)
			return 0;
		memcpy(buf, o.raw, o.raw_len);
		n = (int)o.raw_len;
	} else {
		o.p.sport = h->cfg.sport;
		o.p.dport = h->cfg.port;
		o.p.ours = true;
		n = homa_wire_encode(&o.p, buf, cap);
		if (n <= 0)
			return 0;
	}
	h->st.sent[m]++;
	tx->dst = homa_sim_host_addr(o.dst);
	tx->dport = h->cfg.port;
	tx->priority = o.prio;
	tx->type = buf[11];
	tx->len = (size_t)n;
	return n;
}

/** hs_input() - Agent op: learn the ids of answered requests; never ack them. */
static void hs_input(void *agent, const homa_addr *src, uint8_t *buf, size_t len, uint64_t now)
{
	struct homa_sim_hostile *h = agent;
	struct homa_pkt p;
	uint32_t i, n;

	(void)src;
	(void)now;
	h->st.received++;
	if (homa_wire_decode(buf, len, &p) || p.type != HOMA_PKT_DATA || !(p.sender_id & 1))
		return;
	n = h->nanswered < ANSWERED ? h->nanswered : ANSWERED;
	for (i = 0; i < n; i++)
		if (h->answered[i].id == (p.sender_id ^ 1))
			return;
	h->answered[h->nanswered % ANSWERED].id = p.sender_id ^ 1;
	h->answered[h->nanswered % ANSWERED].len = p.u.data.message_length;
	h->nanswered++;
	h->st.responses++;
}

/**
 * hs_deadline() - Agent op: when the next packet is due (no on_timer:
 * output follows the deadline).
 */
static uint64_t hs_deadline(void *agent)
{
	struct homa_sim_hostile *h = agent;

	return homa_sim_paced_deadline(h->next_ns, h->cfg.stop_ns);
}

/** hs_observe() - Network observer: remember honest packets, then chain. */
static void hs_observe(void *ctx, const struct homa_sim_pkt *pkt, int what, uint64_t now)
{
	struct homa_sim_hostile *h = ctx;
	struct sniffed *s;

	if (what == HOMA_SIM_EMIT && pkt->src != h->host && pkt->dst >= 0 &&
	    pkt->len >= HOMA_COMMON_LEN && pkt->len <= SNIFF_BYTES) {
		s = &h->sniff[h->nsniff++ % SNIFF];
		s->src = pkt->src;
		s->dst = pkt->dst;
		s->len = pkt->len;
		memcpy(s->bytes, pkt->data, pkt->len);
		h->st.sniffed++;
	}
	if (h->prev_obs)
		h->prev_obs(h->prev_ctx, pkt, what, now);
}

static const struct homa_sim_agent_ops hostile_ops = {
	.input = hs_input, .output = hs_output,
	.next_deadline = hs_deadline, .destroy = homa_sim_peer_free,
};

/** homa_sim_hostile_cfg_default() - See hostile.h. */
void homa_sim_hostile_cfg_default(struct homa_sim_hostile_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->moves = HOMA_HOSTILE_ALL;
	c->port = 100;
	c->sport = 100;
	c->interval_ns = 2000;
	c->hog_length = 10000000;
	c->mtu = 1500;
	c->seed = 1;
}

/** homa_sim_hostile_add() - See hostile.h. */
int homa_sim_hostile_add(struct homa_sim_net *net, const struct homa_sim_hostile_cfg *cfg,
			 struct homa_sim_hostile **out)
{
	struct homa_sim_hostile *h;
	int id;

	if (!(cfg->moves & HOMA_HOSTILE_ALL) || !cfg->interval_ns || cfg->mtu < 128 ||
	    cfg->mtu > SNIFF_BYTES || cfg->hog_length <= cfg->mtu)
		return HOMA_EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return HOMA_ENOMEM;
	h->net = net;
	h->cfg = *cfg;
	h->next_ns = cfg->start_ns;
	homa_rng_seed(&h->rng, cfg->seed);
	id = homa_sim_add_host(net, &hostile_ops, h);
	if (id < 0) {
		free(h);
		return id;
	}
	h->host = id;
	homa_sim_get_observer(net, &h->prev_obs, &h->prev_ctx);
	homa_sim_set_observer(net, hs_observe, h);
	if (out)
		*out = h;
	return id;
}

/** homa_sim_hostile_stats() - See hostile.h. */
void homa_sim_hostile_stats(const struct homa_sim_hostile *h, struct homa_sim_hostile_stats *out)
{
	*out = h->st;
}

/** homa_sim_hostile_move_name() - See hostile.h. */
const char *homa_sim_hostile_move_name(int move)
{
	static const char *const names[HOMA_HOSTILE_MOVES] = {
		"grant_hog", "id_flood", "lying_data", "cutoffs",
		"forge", "replay", "restart", "amplify",
	};

	return move >= 0 && move < HOMA_HOSTILE_MOVES ? names[move] : "?";
}
