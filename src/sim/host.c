/* SPDX-License-Identifier: MIT */
/**
 * @file host.c
 * Hosts: service their agent (timers, then output while the NIC is free),
 * deliver received packets, and apply the packet filter at emission.
 */
#include <stddef.h>
#include <string.h>

#include "sim/net_priv.h"

static void host_service(struct homa_sim_host *h);

/** host_wake() - Event: the scheduled wakeup of host @obj. */
static void host_wake(void *obj, void *ptr, uint64_t now)
{
	struct homa_sim_host *h = obj;

	(void)ptr;
	(void)now;
	h->wake_at = UINT64_MAX;
	host_service(h);
}

/**
 * host_schedule_wake() - Make sure host @h is serviced at @t (UINT64_MAX:
 * no need). Only an earlier time than the one already scheduled changes
 * anything: the host's one wakeup event moves there (a service always
 * schedules its successor, so the later time is not lost).
 */
void host_schedule_wake(struct homa_sim_host *h, uint64_t t)
{
	struct homa_sim_net *net = h->net;

	if (t == UINT64_MAX || t >= h->wake_at)
		return;
	if (t < net->now)
		t = net->now;
	if (homa_sim_eventq_arm(&net->q, &h->wake, t, host_wake, h, NULL)) {
		net->st.alloc_failures++;
		return;
	}
	h->wake_at = t;
}

/** copy_pkt() - Duplicate @pkt for the filter. Return: NULL if out of memory. */
static struct homa_sim_pkt *copy_pkt(struct homa_sim_net *net,
				     const struct homa_sim_pkt *pkt, int copy)
{
	struct homa_sim_pkt *dup = homa_sim_pool_get(&net->pool);

	if (!dup) {
		net->st.alloc_failures++;
		return NULL;
	}
	memcpy(dup, pkt, offsetof(struct homa_sim_pkt, data) + pkt->len);
	dup->next = NULL;
	dup->copy = (uint8_t)copy;
	net->st.duplicates++;
	return dup;
}

/** apply_fate() - Put @pkt on @h's NIC as the filter decided. */
static void apply_fate(struct homa_sim_host *h, struct homa_sim_pkt *pkt)
{
	struct homa_sim_net *net = h->net;
	struct homa_sim_fate fate;
	struct homa_sim_pkt *dups[HOMA_SIM_MAX_COPIES];
	uint64_t depart;
	int i;

	memset(&fate, 0, sizeof(fate));
	fate.copies = 1;
	if (net->filter)
		net->filter(net->filter_ctx, pkt, net->now, &fate);
	if (fate.copies > HOMA_SIM_MAX_COPIES)
		fate.copies = HOMA_SIM_MAX_COPIES;
	if (fate.copies <= 0) {
		port_occupy(h->nic, pkt);
		net_drop(net, pkt, HOMA_SIM_DROP_FILTER);
		return;
	}
	for (i = 1; i < fate.copies; i++)
		dups[i] = copy_pkt(net, pkt, i);
	depart = port_send(h->nic, pkt, fate.extra_delay_ns[0]);
	for (i = 1; i < fate.copies; i++)
		if (dups[i])
			port_send_copy(h->nic, dups[i], depart, fate.extra_delay_ns[i]);
}

/**
 * host_emit() - Ask @h's agent for one packet and put it on the NIC.
 * Return: true if a packet was produced.
 */
static bool host_emit(struct homa_sim_host *h)
{
	struct homa_sim_net *net = h->net;
	struct homa_sim_pkt *pkt = homa_sim_pool_get(&net->pool);
	struct homa_tx tx;
	int n;

	if (!pkt) {
		net->st.alloc_failures++;
		return false;
	}
	memset(&tx, 0, sizeof(tx));
	n = h->ops->output(h->agent, net->now, pkt->data, net->cfg.max_pkt_bytes, &tx);
	if (n <= 0 || (uint32_t)n > net->cfg.max_pkt_bytes) {
		if (n != 0)
			net->st.output_errors++;
		homa_sim_pool_put(&net->pool, pkt);
		return false;
	}
	pkt->uid = net->next_uid++;
	pkt->sent_ns = net->now;
	pkt->src = h->id;
	pkt->dst = homa_sim_host_of(net, &tx.dst);
	pkt->len = (uint32_t)n;
	pkt->wire_len = (uint32_t)n + net->cfg.wire_overhead;
	pkt->prio = tx.priority & 7;
	pkt->type = n > 11 ? pkt->data[11] : 0;
	net->st.pkts_emitted++;
	net->st.bytes_emitted += pkt->len;
	net_observe(net, pkt, HOMA_SIM_EMIT);
	apply_fate(h, pkt);
	return true;
}

/**
 * host_service() - Run @h's due timers, send while the NIC is free, and
 * schedule the next wakeup: when the NIC frees up if it is busy (the agent
 * may have more to send, and an agent's deadline mixes timers with "more
 * to send", so a due timer then runs at most one packet time late), else
 * at the agent's deadline. An agent whose deadline stays in the past with
 * the NIC idle is polled every nanosecond and counted in busy_wakeups.
 */
static void host_service(struct homa_sim_host *h)
{
	struct homa_sim_net *net = h->net;
	const struct homa_sim_agent_ops *ops = h->ops;
	uint64_t now = net->now, next = UINT64_MAX;

	if (h->down || !h->nic)
		return;
	if (ops->next_deadline && ops->on_timer && ops->next_deadline(h->agent) <= now)
		ops->on_timer(h->agent, now);
	while (h->nic->busy_until <= now && !h->down && host_emit(h))
		;
	if (h->nic->busy_until > now)
		next = h->nic->busy_until;
	else if (ops->next_deadline)
		next = ops->next_deadline(h->agent);
	if (next <= now) {
		h->net->st.busy_wakeups++;
		next = now + 1;
	}
	host_schedule_wake(h, next);
}

/** host_rx() - Hand @pkt to @h's agent, recycle it, then service the host. */
static void host_rx(struct homa_sim_host *h, struct homa_sim_pkt *pkt)
{
	struct homa_sim_net *net = h->net;
	homa_addr src;

	if (h->down || pkt->src < 0 || pkt->src >= net->nhosts ||
	    net->hosts[pkt->src]->down) {
		net_drop(net, pkt, HOMA_SIM_DROP_HOST_DOWN);
		return;
	}
	net->st.pkts_delivered++;
	net->st.bytes_delivered += pkt->len;
	net_observe(net, pkt, HOMA_SIM_DELIVER);
	src = homa_sim_host_addr(pkt->src);
	h->ops->input(h->agent, &src, pkt->data, pkt->len, net->now);
	homa_sim_pool_put(&net->pool, pkt);
	host_service(h);
}

/** host_rx_event() - Event: a packet held for the host software delay is due. */
static void host_rx_event(void *obj, void *ptr, uint64_t now)
{
	(void)now;
	host_rx(obj, ptr);
}

/** host_deliver() - @pkt reached host @h's NIC; apply the software delay, if any. */
void host_deliver(struct homa_sim_host *h, struct homa_sim_pkt *pkt)
{
	struct homa_sim_net *net = h->net;

	if (!net->cfg.host_rx_delay_ns) {
		host_rx(h, pkt);
		return;
	}
	if (homa_sim_eventq_push(&net->q, net->now + net->cfg.host_rx_delay_ns,
				 host_rx_event, h, pkt)) {
		net->st.alloc_failures++;
		homa_sim_pool_put(&net->pool, pkt);
	}
}

/** homa_sim_host_kick() - See net.h. */
int homa_sim_host_kick(struct homa_sim_net *net, int id)
{
	if (!net || id < 0 || id >= net->nhosts)
		return HOMA_EINVAL;
	host_schedule_wake(net->hosts[id], net->now);
	return 0;
}
