/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_pair_liar.c
 * The lying peer of the two-engine fuzz target: a third host (10.0.0.3,
 * port 102) that runs no engine and injects well-formed packets whose
 * fields lie, chosen by the input: requests that claim their whole length
 * as `incoming`, DATA whose length and offsets change from packet to
 * packet, unordered CUTOFFS, ACK / RPC_UNKNOWN / BUSY / GRANT / RESEND /
 * NEED_ACK naming the honest client's RPCs (sent to either engine),
 * replays of honest packets from its own address, RESENDs and GRANTs past
 * the end for responses it was sent, and floods of new ids. It never
 * acknowledges a response. The honest invariants of fuzz_pair.c must hold
 * all the same; the server application answers the liar's requests with
 * a few bytes.
 */
#include <string.h>

#include "fuzz_pair.h"
#include "homa/wire.h"

/** liar_id() - One of the liar's own client ids (even, input-chosen). */
static uint64_t liar_id(struct fp_world *w)
{
	return 2 * (uint64_t)(1 + fz_u8(&w->in) % 32);
}

/** honest_id() - A real client RPC id (0 if none yet). */
static uint64_t honest_id(struct fp_world *w)
{
	return w->nreq ? w->req[fz_u8(&w->in) % w->nreq].id : 0;
}

/** inject() - Encode @p from the liar and hand it to engine @to at once. */
static void inject(struct fp_world *w, int to, struct homa_pkt *p)
{
	static const uint8_t zeros[FP_PKT_CAP];
	int n, r;

	p->sport = FP_LIAR_PORT;
	p->dport = w->port[to];
	p->ours = true;
	if (p->type == HOMA_PKT_DATA)
		p->u.data.payload = zeros;
	n = homa_wire_encode(p, w->liar_buf, sizeof(w->liar_buf));
	if (n <= 0)
		return;
	r = homa_engine_input(w->e[to], &w->liar, w->liar_buf, (size_t)n, w->now);
	if (r != 0 && r < HOMA_INPUT_DROPPED)
		fz_fail("input of a lying packet returned %d", r);
}

/** lie_data() - A request DATA packet with lying length, offset and incoming. */
static void lie_data(struct fp_world *w, struct homa_pkt *p)
{
	uint32_t length = 1 + fz_u32(&w->in) % 200000;
	uint32_t len = 1 + fz_u16(&w->in) % (w->s.mtu - HOMA_DATA_HDR_LEN);

	if (len > length)
		len = length;
	p->type = HOMA_PKT_DATA;
	p->sender_id = liar_id(w);
	p->u.data.message_length = length;
	p->u.data.offset = fz_u32(&w->in) % (length - len + 1);
	p->u.data.payload_len = len;
	p->u.data.incoming = fz_u8(&w->in) & 1 ? length : fz_u32(&w->in) % (length + 1);
	p->u.data.retransmit = fz_u8(&w->in) & 1;
	p->u.data.ack.client_id = fz_u8(&w->in) & 1 ? honest_id(w) : 0;
	p->u.data.ack.server_port = w->port[1];
	inject(w, 1, p);
}

/** lie_cutoffs() - CUTOFFS of input-chosen values (often unordered) to either engine. */
static void lie_cutoffs(struct fp_world *w, struct homa_pkt *p)
{
	int i;

	p->type = HOMA_PKT_CUTOFFS;
	p->sender_id = liar_id(w);
	for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
		p->u.cutoffs.cutoffs[i] = fz_u32(&w->in);
	p->u.cutoffs.version = fz_u16(&w->in);
	inject(w, fz_u8(&w->in) & 1, p);
}

/** lie_forge() - A control packet naming an honest RPC, to the client or the server. */
static void lie_forge(struct fp_world *w, struct homa_pkt *p)
{
	static const uint8_t types[] = {HOMA_PKT_ACK, HOMA_PKT_RPC_UNKNOWN, HOMA_PKT_BUSY,
					HOMA_PKT_GRANT, HOMA_PKT_RESEND, HOMA_PKT_NEED_ACK};
	uint64_t id = honest_id(w);
	int to = fz_u8(&w->in) & 1;

	p->type = types[fz_u8(&w->in) % sizeof(types)];
	p->sender_id = to ? id : id ^ 1; /* as the other end would name it */
	if (p->type == HOMA_PKT_NEED_ACK)
		p->sender_id = id | 1;
	if (p->type == HOMA_PKT_ACK) {
		p->u.ack.num_acks = 1;
		p->u.ack.acks[0].client_id = id;
		p->u.ack.acks[0].server_port = w->port[1];
	} else if (p->type == HOMA_PKT_GRANT) {
		p->u.grant.offset = fz_u32(&w->in);
		p->u.grant.priority = fz_u8(&w->in) % HOMA_MAX_PRIORITIES;
	} else if (p->type == HOMA_PKT_RESEND) {
		p->u.resend.offset = fz_u32(&w->in);
		p->u.resend.length = fz_u8(&w->in) & 1 ? HOMA_RESEND_ALL : fz_u32(&w->in);
		p->u.resend.priority = fz_u8(&w->in) % HOMA_MAX_PRIORITIES;
	}
	inject(w, to, p);
}

/** lie_replay() - The latest honest packet, again, from the liar's address. */
static void lie_replay(struct fp_world *w)
{
	int r;

	if (!w->sniff_len)
		return;
	memcpy(w->liar_buf, w->sniff, w->sniff_len);
	r = homa_engine_input(w->e[w->sniff_to], &w->liar, w->liar_buf, w->sniff_len, w->now);
	if (r != 0 && r < HOMA_INPUT_DROPPED)
		fz_fail("input of a replayed packet returned %d", r);
}

/** lie_amplify() - RESEND everything, or GRANT past the end, for one of its responses. */
static void lie_amplify(struct fp_world *w, struct homa_pkt *p)
{
	p->sender_id = liar_id(w);
	if (fz_u8(&w->in) & 1) {
		p->type = HOMA_PKT_RESEND;
		p->u.resend.length = HOMA_RESEND_ALL;
		p->u.resend.priority = HOMA_MAX_PRIORITIES - 1;
	} else {
		p->type = HOMA_PKT_GRANT;
		p->u.grant.offset = 0xfffffff0u;
		p->u.grant.priority = HOMA_MAX_PRIORITIES - 1;
	}
	inject(w, 1, p);
}

/** lie_flood() - Up to 16 whole one-packet requests under fresh colliding ids. */
static void lie_flood(struct fp_world *w, struct homa_pkt *p)
{
	int i, n = 1 + fz_u8(&w->in) % 16;

	for (i = 0; i < n; i++) {
		memset(p, 0, sizeof(*p));
		p->type = HOMA_PKT_DATA;
		p->sender_id = (uint64_t)++w->liar_flood << 20;
		p->u.data.message_length = 100;
		p->u.data.incoming = 100;
		p->u.data.payload_len = 100;
		inject(w, 1, p);
	}
}

/** fp_liar() - One lie, chosen by the input. */
void fp_liar(struct fp_world *w)
{
	struct homa_pkt p;

	memset(&p, 0, sizeof(p));
	switch (fz_u8(&w->in) % 6) {
	case 0: lie_data(w, &p); break;
	case 1: lie_cutoffs(w, &p); break;
	case 2: lie_forge(w, &p); break;
	case 3: lie_replay(w); break;
	case 4: lie_amplify(w, &p); break;
	default: lie_flood(w, &p); break;
	}
	w->lies++;
}

/** fp_liar_sniff() - Remember the latest packet engine @from sent (for replays). */
void fp_liar_sniff(struct fp_world *w, int from, const uint8_t *buf, uint32_t len)
{
	if (len > sizeof(w->sniff))
		return;
	memcpy(w->sniff, buf, len);
	w->sniff_len = len;
	w->sniff_to = !from;
}

/**
 * fp_liar_request() - If request @ev came from the liar, the server
 * application releases it and answers with 16 bytes (never acked).
 * Return: true if @ev was the liar's.
 */
bool fp_liar_request(struct fp_world *w, const struct homa_event *ev)
{
	static const uint8_t reply[16];
	struct homa_iov iov = {reply, sizeof(reply)};
	int err;

	if (!homa_addr_equal(&ev->peer, &w->liar))
		return false;
	homa_engine_msg_release(w->e[1], ev->msg);
	err = homa_engine_send_reply(w->e[1], ev->id, &iov, 1, w->now);
	if (err && err != HOMA_ENOTFOUND)
		fz_fail("reply to the liar failed with %d", err);
	return true;
}
