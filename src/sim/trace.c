/* SPDX-License-Identifier: MIT */
/**
 * @file trace.c
 * Recording and rendering of packet traces.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/trace.h"

/** homa_sim_trace_attach() - See trace.h. */
void homa_sim_trace_attach(struct homa_sim_trace *t, struct homa_sim_net *net,
			   uint32_t what_mask)
{
	t->what_mask = what_mask;
	homa_sim_get_observer(net, &t->next, &t->next_ctx);
	homa_sim_set_observer(net, homa_sim_trace_observe, t);
}

/** append() - Room for one more record. Return: the slot, or NULL. */
static struct homa_sim_trace_rec *append(struct homa_sim_trace *t)
{
	if (t->max_recs && t->len >= t->max_recs) {
		t->truncated = true;
		return NULL;
	}
	if (t->len == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct homa_sim_trace_rec *n = realloc(t->recs, cap * sizeof(*n));

		if (!n) {
			t->truncated = true;
			return NULL;
		}
		t->recs = n;
		t->cap = cap;
	}
	return &t->recs[t->len++];
}

/** homa_sim_trace_observe() - See trace.h. */
void homa_sim_trace_observe(void *ctx, const struct homa_sim_pkt *pkt, int what,
			    uint64_t now)
{
	struct homa_sim_trace *t = ctx;
	struct homa_sim_trace_rec *r;

	if (t->next)
		t->next(t->next_ctx, pkt, what, now);
	if (t->what_mask && !(t->what_mask & HOMA_SIM_TRACE_MASK(what)))
		return;
	r = append(t);
	if (!r)
		return;
	r->time = now;
	r->uid = pkt->uid;
	r->src = pkt->src;
	r->dst = pkt->dst;
	r->what = (uint8_t)what;
	r->prio = pkt->prio;
	r->copy = pkt->copy;
	r->len = pkt->len;
	r->decode_err = homa_wire_decode(pkt->data, pkt->len, &r->pkt);
	if (r->pkt.type == HOMA_PKT_DATA)
		r->pkt.u.data.payload = NULL;
}

/** homa_sim_trace_clear() - See trace.h. */
void homa_sim_trace_clear(struct homa_sim_trace *t)
{
	t->len = 0;
	t->truncated = false;
}

/** homa_sim_trace_free() - See trace.h. */
void homa_sim_trace_free(struct homa_sim_trace *t)
{
	free(t->recs);
	memset(t, 0, sizeof(*t));
}

/** format_body() - Type-specific part of a record's text. */
static int format_body(const struct homa_pkt *p, char *buf, size_t cap)
{
	switch (p->type) {
	case HOMA_PKT_DATA:
		return snprintf(buf, cap, " %" PRIu32 "@%" PRIu32 "%s",
				p->u.data.payload_len, p->u.data.offset,
				p->u.data.retransmit ? " retx" : "");
	case HOMA_PKT_GRANT:
		return snprintf(buf, cap, " %" PRIu32 " gp%u", p->u.grant.offset,
				p->u.grant.priority);
	case HOMA_PKT_RESEND:
		if (p->u.resend.length == HOMA_RESEND_ALL)
			return snprintf(buf, cap, " %" PRIu32 "+all", p->u.resend.offset);
		return snprintf(buf, cap, " %" PRIu32 "+%" PRIu32, p->u.resend.offset,
				p->u.resend.length);
	case HOMA_PKT_CUTOFFS:
		return snprintf(buf, cap, " v%u", p->u.cutoffs.version);
	case HOMA_PKT_ACK:
		return snprintf(buf, cap, " n=%u", p->u.ack.num_acks);
	case HOMA_PKT_START_MSG:
		return snprintf(buf, cap, " %" PRIu32, p->u.start.message_length);
	default:
		return snprintf(buf, cap, "%s", "");
	}
}

/** put() - Advance a snprintf cursor by @n, clamping at the end of the buffer. */
static void put(char **buf, size_t *cap, int n, int *total)
{
	size_t used = n < 0 ? 0 : (size_t)n;

	*total += n < 0 ? 0 : n;
	if (used >= *cap)
		used = *cap ? *cap - 1 : 0;
	*buf += used;
	*cap -= used;
}

/** homa_sim_trace_format() - See trace.h. */
int homa_sim_trace_format(const struct homa_sim_trace_rec *r, unsigned flags,
			  char *buf, size_t cap)
{
	char tmp[1];
	int total = 0;

	if (!cap) {
		buf = tmp;
		cap = 1;
	}
	buf[0] = 0;
	if (flags & HOMA_SIM_TRACE_UID)
		put(&buf, &cap, snprintf(buf, cap, "#%" PRIu64 " ", r->uid), &total);
	if (flags & HOMA_SIM_TRACE_TIME)
		put(&buf, &cap, snprintf(buf, cap, "@%" PRIu64 " ", r->time), &total);
	put(&buf, &cap, snprintf(buf, cap, "h%d->h%d ", r->src, r->dst), &total);
	if (r->decode_err) {
		put(&buf, &cap, snprintf(buf, cap, "BAD(%d) len %" PRIu32,
					 r->decode_err, r->len), &total);
	} else {
		put(&buf, &cap, snprintf(buf, cap, "%s", homa_wire_type_name(r->pkt.type)), &total);
		if (flags & HOMA_SIM_TRACE_ID)
			put(&buf, &cap, snprintf(buf, cap, " id%" PRIu64, r->pkt.sender_id), &total);
		put(&buf, &cap, format_body(&r->pkt, buf, cap), &total);
	}
	put(&buf, &cap, snprintf(buf, cap, " p%u", r->prio), &total);
	if (r->copy)
		put(&buf, &cap, snprintf(buf, cap, " dup%u", r->copy), &total);
	if (r->what != HOMA_SIM_EMIT)
		put(&buf, &cap, snprintf(buf, cap, " [%s]", homa_sim_event_name(r->what)), &total);
	return total;
}

/** homa_sim_trace_render() - See trace.h. */
char *homa_sim_trace_render(const struct homa_sim_trace *t, uint32_t what_mask,
			    unsigned flags)
{
	size_t i, len = 0, cap = 256;
	char *out = malloc(cap), *n;
	int need;

	if (!out)
		return NULL;
	out[0] = 0;
	for (i = 0; i < t->len; i++) {
		const struct homa_sim_trace_rec *r = &t->recs[i];

		if (what_mask && !(what_mask & HOMA_SIM_TRACE_MASK(r->what)))
			continue;
		need = homa_sim_trace_format(r, flags, NULL, 0) + 3;
		while (len + (size_t)need >= cap) {
			cap *= 2;
			n = realloc(out, cap);
			if (!n) {
				free(out);
				return NULL;
			}
			out = n;
		}
		if (len)
			len += (size_t)snprintf(out + len, cap - len, "; ");
		len += (size_t)homa_sim_trace_format(r, flags, out + len, cap - len);
	}
	return out;
}
