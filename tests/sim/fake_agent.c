/* SPDX-License-Identifier: MIT */
/** @file fake_agent.c A scripted agent for network tests (see fake_agent.h). */
#include <string.h>

#include "fake_agent.h"
#include "homa/wire.h"

/** fake_input() - Record a received packet. */
static void fake_input(void *agent, const homa_addr *src, uint8_t *buf,
		       size_t len, uint64_t now)
{
	struct fake_agent *a = agent;
	struct homa_pkt pkt;
	struct fake_rx *r;

	if (a->nrx >= FAKE_MAX_RX)
		return;
	r = &a->rx[a->nrx++];
	memset(r, 0, sizeof(*r));
	r->time = now;
	r->src = homa_sim_host_of(a->net, src);
	r->len = (uint32_t)len;
	if (homa_wire_decode(buf, len, &pkt) == 0) {
		r->id = pkt.sender_id;
		if (pkt.type == HOMA_PKT_GRANT)
			r->prio_field = pkt.u.grant.priority;
	}
}

/** fake_output() - Emit the next scripted packet if its time has come. */
static int fake_output(void *agent, uint64_t now, uint8_t *buf, size_t cap,
		       struct homa_tx *tx)
{
	static uint8_t payload[4096];
	struct fake_agent *a = agent;
	struct fake_out *o;
	struct homa_pkt pkt;
	int n;

	if (a->next_out >= a->nout || a->out[a->next_out].at > now)
		return 0;
	o = &a->out[a->next_out];
	memset(&pkt, 0, sizeof(pkt));
	pkt.sport = 1;
	pkt.dport = 1;
	pkt.type = o->type;
	pkt.sender_id = o->id;
	if (o->type == HOMA_PKT_DATA) {
		pkt.u.data.message_length = o->offset + o->payload;
		pkt.u.data.offset = o->offset;
		pkt.u.data.payload = payload;
		pkt.u.data.payload_len = o->payload;
	} else {
		pkt.u.grant.offset = o->offset;
		pkt.u.grant.priority = o->prio;
	}
	n = homa_wire_encode(&pkt, buf, cap);
	if (n < 0)
		return n;
	tx->dst = homa_sim_host_addr(o->dst);
	tx->dport = 1;
	tx->priority = o->prio;
	tx->type = o->type;
	tx->len = (size_t)n;
	a->emit_time[a->next_out++] = now;
	return n;
}

/** fake_deadline() - The next scripted time, or the timer deadline. */
static uint64_t fake_deadline(void *agent)
{
	struct fake_agent *a = agent;
	uint64_t d = a->timer_deadline ? a->timer_deadline : UINT64_MAX;

	if (a->next_out < a->nout && a->out[a->next_out].at < d)
		d = a->out[a->next_out].at;
	return d;
}

/** fake_timer() - Count timer calls; clear the timer deadline once it passed. */
static void fake_timer(void *agent, uint64_t now)
{
	struct fake_agent *a = agent;

	a->timer_calls++;
	a->last_timer = now;
	if (a->timer_deadline && a->timer_deadline <= now)
		a->timer_deadline = 0;
}

const struct homa_sim_agent_ops fake_agent_ops = {
	.input = fake_input,
	.output = fake_output,
	.next_deadline = fake_deadline,
	.on_timer = fake_timer,
};

/** fake_add() - See fake_agent.h. */
int fake_add(struct homa_sim_net *net, struct fake_agent *a)
{
	memset(a, 0, sizeof(*a));
	a->net = net;
	a->host = homa_sim_add_host(net, &fake_agent_ops, a);
	return a->host;
}

/** fake_script() - See fake_agent.h. */
void fake_script(struct fake_agent *a, uint64_t at, int dst, uint8_t prio,
		 uint8_t type, uint32_t payload, uint32_t offset, uint64_t id)
{
	struct fake_out *o = &a->out[a->nout++];

	o->at = at;
	o->dst = dst;
	o->prio = prio;
	o->type = type;
	o->payload = payload;
	o->offset = offset;
	o->id = id;
}
