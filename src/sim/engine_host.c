/* SPDX-License-Identifier: MIT */
/**
 * @file engine_host.c
 * Agent operations that run a homa_engine on a simulated host.
 */
#include <stdlib.h>

#include "core/internal.h"
#include "homa/wire.h"
#include "sim/engine_host.h"
#include "sim/modpeer.h"

/** drain_events() - Hand every pending engine event to the callback. */
static void drain_events(struct homa_sim_engine_host *eh, uint64_t now)
{
	struct homa_event ev;

	while (eh->engine && homa_engine_next_event(eh->engine, &ev) == 1) {
		eh->events++;
		if (eh->on_event)
			eh->on_event(eh->ctx, eh, &ev, now);
		if (ev.msg && eh->engine)
			homa_engine_msg_release(eh->engine, ev.msg);
	}
}

/** eh_input() - Agent op: a packet for the engine. */
static void eh_input(void *agent, const homa_addr *src, uint8_t *buf,
		     size_t len, uint64_t now)
{
	struct homa_sim_engine_host *eh = agent;

	if (!eh->engine || (eh->module && !homa_sim_module_rx(buf, len)))
		return;
	homa_engine_input(eh->engine, src, buf, len, now);
	drain_events(eh, now);
}

/** eh_output() - Agent op: the engine's next packet. */
static int eh_output(void *agent, uint64_t now, uint8_t *buf, size_t cap,
		     struct homa_tx *tx)
{
	struct homa_sim_engine_host *eh = agent;
	int len;

	if (!eh->engine)
		return 0;
	len = homa_engine_output(eh->engine, now, buf, cap, tx);
	if (eh->module && len > 0)
		homa_sim_module_tx(buf, (size_t)len, homa_engine_settings(eh->engine)->unsched_bytes);
	return len;
}

/** eh_next_deadline() - Agent op: the engine's next deadline. */
static uint64_t eh_next_deadline(void *agent)
{
	struct homa_sim_engine_host *eh = agent;

	return eh->engine ? homa_engine_next_deadline(eh->engine) : UINT64_MAX;
}

/** eh_on_timer() - Agent op: run the engine's timers, then its events. */
static void eh_on_timer(void *agent, uint64_t now)
{
	struct homa_sim_engine_host *eh = agent;

	if (!eh->engine)
		return;
	homa_engine_on_timer(eh->engine, now);
	drain_events(eh, now);
}

/** eh_destroy() - Agent op: free the engine and the host record. */
static void eh_destroy(void *agent)
{
	struct homa_sim_engine_host *eh = agent;

	homa_engine_free(eh->engine);
	free(eh);
}

static const struct homa_sim_agent_ops engine_ops = {
	.input = eh_input,
	.output = eh_output,
	.next_deadline = eh_next_deadline,
	.on_timer = eh_on_timer,
	.destroy = eh_destroy,
};

/** homa_sim_engine_host_add() - See engine_host.h. */
int homa_sim_engine_host_add(struct homa_sim_net *net,
			     const struct homa_settings *s, uint16_t port,
			     bool server, homa_sim_event_cb cb, void *ctx,
			     struct homa_sim_engine_host **out)
{
	struct homa_sim_engine_host *eh = calloc(1, sizeof(*eh));
	homa_addr addr = homa_sim_host_addr(homa_sim_num_hosts(net));
	int rc;

	if (!eh)
		return HOMA_ENOMEM;
	rc = homa_engine_new(&eh->engine, s, &addr, port, homa_sim_engine_alloc(net),
			     homa_sim_now(net));
	if (rc) {
		free(eh);
		return rc;
	}
	homa_engine_set_server(eh->engine, server);
	eh->net = net;
	eh->on_event = cb;
	eh->ctx = ctx;
	rc = homa_sim_add_host(net, &engine_ops, eh);
	if (rc < 0) {
		eh_destroy(eh);
		return rc;
	}
	eh->host = rc;
	if (out)
		*out = eh;
	return rc;
}

/** homa_sim_engine_host_get() - See engine_host.h. */
struct homa_sim_engine_host *homa_sim_engine_host_get(struct homa_sim_net *net,
						      int host)
{
	return homa_sim_host_agent(net, host);
}

/** homa_sim_engine_host_crash() - See engine_host.h. */
void homa_sim_engine_host_crash(struct homa_sim_engine_host *eh)
{
	homa_sim_host_set_down(eh->net, eh->host, true);
	homa_engine_free(eh->engine);
	eh->engine = NULL;
}

/** homa_sim_engine_host_request() - See engine_host.h. */
int homa_sim_engine_host_request(struct homa_sim_engine_host *eh, int dst,
				 uint16_t dport, const void *buf, size_t len,
				 uint64_t cookie, uint64_t *id)
{
	struct homa_iov iov = {buf, len};
	homa_addr addr = homa_sim_host_addr(dst);
	int rc;

	if (!eh->engine)
		return HOMA_ESHUTDOWN;
	rc = homa_engine_send_request(eh->engine, &addr, dport, &iov, 1, cookie,
				      homa_sim_now(eh->net), id);
	homa_sim_host_kick(eh->net, eh->host);
	return rc;
}

/** homa_sim_engine_host_request_ref() - See engine_host.h. */
int homa_sim_engine_host_request_ref(struct homa_sim_engine_host *eh, int dst,
				     uint16_t dport, const struct homa_iov *iov,
				     int iovcnt, uint64_t cookie, uint64_t *id)
{
	homa_addr addr = homa_sim_host_addr(dst);
	int rc;

	if (!eh->engine)
		return HOMA_ESHUTDOWN;
	rc = homa_engine_send_request_ref(eh->engine, &addr, dport, iov, iovcnt, cookie,
					  homa_sim_now(eh->net), id);
	homa_sim_host_kick(eh->net, eh->host);
	return rc;
}

/** homa_sim_engine_host_reply() - See engine_host.h. */
int homa_sim_engine_host_reply(struct homa_sim_engine_host *eh, uint64_t id,
			       const void *buf, size_t len)
{
	struct homa_iov iov = {buf, len};
	int rc;

	if (!eh->engine)
		return HOMA_ESHUTDOWN;
	rc = homa_engine_send_reply(eh->engine, id, &iov, 1, homa_sim_now(eh->net));
	homa_sim_host_kick(eh->net, eh->host);
	return rc;
}

/** homa_sim_module_host_add() - See engine_host.h. */
int homa_sim_module_host_add(struct homa_sim_net *net, const struct homa_settings *s,
			     uint16_t port, bool server, homa_sim_event_cb cb, void *ctx,
			     struct homa_sim_engine_host **out)
{
	struct homa_sim_engine_host *eh;
	struct homa_settings m;
	int rc;

	if (s)
		m = *s;
	else
		homa_settings_default(&m);
	m.max_message = HOMA_MODULE_MAX_MESSAGE;
	m.start_msg = false;
	m.incast_threshold = 0;
	m.compat = HOMA_COMPAT_MODULE;
	m.max_done_rpcs = 0;  /* the module remembers no finished server RPC */
	m.fifo_grant_increment = 50000; /* the module's default (homa_grant.c) */
	rc = homa_sim_engine_host_add(net, &m, port, server, cb, ctx, &eh);
	if (rc < 0)
		return rc;
	eh->module = true; /* packets translated in eh_input/eh_output */
	homa_grant_module_set(eh->engine, true); /* the module's grant algorithm */
	if (out)
		*out = eh;
	return rc;
}
