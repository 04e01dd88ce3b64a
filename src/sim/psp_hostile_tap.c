/* SPDX-License-Identifier: MIT */
/**
 * @file psp_hostile_tap.c
 * What the PSP hostile peer (psp_hostile.h) sees on the network: the
 * sealed packets delivered to honest hosts (kept for its moves, and the
 * highest IV of each SPI), the packets it steals (and whose RPCs they
 * belonged to), and which of its own
 * packets the network delivered (counted by the reason each must get).
 */
#include <string.h>

#include "sim/psp_hostile_int.h"

/** ph_is_sealed() - See psp_hostile_int.h. */
bool ph_is_sealed(const uint8_t *b, uint32_t len)
{
	return len >= PH_MIN_SEALED && len <= PH_BYTES && b[0] == HOMA_PSP_NEXT_HDR && b[1] == 1;
}

/** ph_spi_of() - See psp_hostile_int.h. */
uint32_t ph_spi_of(const uint8_t *b)
{
	return (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
}

/** ph_iv_of() - See psp_hostile_int.h. */
uint64_t ph_iv_of(const uint8_t *b)
{
	uint64_t iv = 0;

	for (int i = 8; i < 16; i++)
		iv = iv << 8 | b[i];
	return iv;
}

/** ph_set_iv() - See psp_hostile_int.h. */
void ph_set_iv(uint8_t *b, uint64_t iv)
{
	for (int i = 0; i < 8; i++)
		b[8 + i] = (uint8_t)(iv >> (56 - 8 * i));
}

/** find_spi() - The entry of (@dst, @spi), or NULL. */
static struct ph_spi *find_spi(const struct homa_sim_psp_hostile *h, int dst, uint32_t spi)
{
	for (uint32_t i = 0; i < h->nspis; i++)
		if (h->spis[i].dst == dst && h->spis[i].spi == spi)
			return (struct ph_spi *)&h->spis[i];
	return NULL;
}

/** ph_top() - See psp_hostile_int.h. */
uint64_t ph_top(const struct homa_sim_psp_hostile *h, int dst, uint32_t spi)
{
	const struct ph_spi *s = find_spi(h, dst, spi);

	return s ? s->top : 0;
}

/** note_iv() - Raise the top IV of the SPI of delivered packet @pkt (table full: ignored). */
static void note_iv(struct homa_sim_psp_hostile *h, const struct homa_sim_pkt *pkt)
{
	uint32_t spi = ph_spi_of(pkt->data);
	uint64_t iv = ph_iv_of(pkt->data);
	struct ph_spi *s = find_spi(h, pkt->dst, spi);

	if (!s && h->nspis < PH_SPIS) {
		s = &h->spis[h->nspis++];
		s->dst = pkt->dst;
		s->spi = spi;
		s->top = 0;
	}
	if (s && iv > s->top)
		s->top = iv;
}

/** capture() - Copy @pkt into @c; @fresh: its IV never reaches its receiver. */
static void capture(struct ph_cap *c, const struct homa_sim_pkt *pkt, bool fresh)
{
	c->at = pkt->sent_ns;
	c->src = pkt->src;
	c->dst = pkt->dst;
	c->len = pkt->len;
	c->fresh = fresh;
	memcpy(c->b, pkt->data, pkt->len);
}

/** sniff() - Keep an honest sealed packet just delivered. */
static void sniff(struct homa_sim_psp_hostile *h, const struct homa_sim_pkt *pkt)
{
	note_iv(h, pkt);
	capture(&h->recent[h->nrecent++ % PH_RECENT], pkt, false);
	if (pkt->dst == h->cfg.victim) {
		capture(&h->last, pkt, false);
		if (h->nold < PH_OLD)
			capture(&h->old[h->nold++], pkt, false);
	}
	h->st.sniffed++;
}

/** own_emitted() - Remember the move and expected reason of its packet @uid. */
static void own_emitted(struct homa_sim_psp_hostile *h, uint64_t uid)
{
	struct ph_sent *s = &h->sent[uid % PH_SENT];

	s->uid = uid;
	s->move = h->cur_move;
	s->expect = h->cur_expect;
}

/** own_delivered() - Count its packet @uid delivered, by move and expected reason. */
static void own_delivered(struct homa_sim_psp_hostile *h, uint64_t uid)
{
	const struct ph_sent *s = &h->sent[uid % PH_SENT];

	if (s->uid != uid)
		return; /* more than PH_SENT of its packets in flight: not counted */
	h->st.delivered[s->move]++;
	if (s->expect == PH_UNKNOWN)
		h->st.undetermined++;
	else
		h->st.expect[s->expect]++;
}

/** observe() - Network observer: sniff, account for its own packets, chain. */
static void observe(void *ctx, const struct homa_sim_pkt *pkt, int what, uint64_t now)
{
	struct homa_sim_psp_hostile *h = ctx;

	if (pkt->src == h->host && what == HOMA_SIM_EMIT)
		own_emitted(h, pkt->uid);
	else if (pkt->src == h->host && what == HOMA_SIM_DELIVER)
		own_delivered(h, pkt->uid);
	else if (what == HOMA_SIM_DELIVER && pkt->dst >= 0 && ph_is_sealed(pkt->data, pkt->len))
		sniff(h, pkt);
	if (h->prev_obs)
		h->prev_obs(h->prev_ctx, pkt, what, now);
}

/**
 * log_stolen() - Record whose RPC stolen packet @pkt belonged to, from its
 * clear common header (type at byte 11, sender_id at bytes 20-27, after
 * the PSP header); beyond HOMA_SIM_PSP_STOLEN_LOG packets, nothing.
 */
static void log_stolen(struct homa_sim_psp_hostile *h, const struct homa_sim_pkt *pkt)
{
	const uint8_t *c = pkt->data + HOMA_PSP_HDR_LEN;
	struct homa_sim_psp_stolen *s;

	if (h->st.stolen >= HOMA_SIM_PSP_STOLEN_LOG)
		return;
	s = &h->stolen_log[h->st.stolen];
	s->src = pkt->src;
	s->dst = pkt->dst;
	s->type = c[11];
	s->sent_ns = pkt->sent_ns;
	s->sender_id = 0;
	for (int i = 20; i < 28; i++)
		s->sender_id = s->sender_id << 8 | c[i];
}

/**
 * steal() - Packet filter: take every cfg.steal_every-th sealed packet to
 * the victim emitted from cfg.steal_from_ns on off the network (up to
 * cfg.steal_max) and keep it.
 */
static void steal(void *ctx, const struct homa_sim_pkt *pkt, uint64_t now,
		  struct homa_sim_fate *fate)
{
	struct homa_sim_psp_hostile *h = ctx;

	(void)now;
	if (pkt->src == h->host || pkt->dst != h->cfg.victim || pkt->sent_ns < h->cfg.steal_from_ns ||
	    !ph_is_sealed(pkt->data, pkt->len))
		return;
	if (++h->to_victim % h->cfg.steal_every || h->st.stolen >= h->cfg.steal_max)
		return;
	log_stolen(h, pkt);
	capture(&h->stolen[h->st.stolen++ % PH_STOLEN], pkt, true);
	fate->copies = 0;
}

/** ph_tap_install() - See psp_hostile_int.h. */
void ph_tap_install(struct homa_sim_psp_hostile *h)
{
	homa_sim_get_observer(h->net, &h->prev_obs, &h->prev_ctx);
	homa_sim_set_observer(h->net, observe, h);
	if (h->cfg.steal_every)
		homa_sim_set_filter(h->net, steal, h);
}
