/* SPDX-License-Identifier: MIT */
/**
 * @file fabric.c
 * Builds the simulated datacenter: one engine per host on a leaf-spine
 * fabric, with engine settings sized to the fabric (link_mbps = host link
 * rate, unsched_bytes = host link rate x unloaded RTT). Also the unloaded
 * ("best possible") time of a message, from which slowdowns are computed.
 */
#include <stdlib.h>
#include <string.h>

#include "homa/wire.h"
#include "sim.h"

/** mbps() - Gbit/s option as an integer Mbit/s (at least 1). */
static uint64_t mbps(double gbps)
{
	uint64_t m = (uint64_t)(gbps * 1000.0 + 0.5);

	return m ? m : 1;
}

/** ls_cfg() - The leaf-spine configuration the options describe. */
static void ls_cfg(const struct sim_opts *o, struct homa_sim_leafspine_cfg *c)
{
	homa_sim_leafspine_cfg_default(c);
	c->racks = o->racks;
	c->spines = o->spines;
	c->host_mbps = mbps(o->host_gbps);
	c->core_mbps = mbps(o->core_gbps);
	c->switch_delay_ns = o->switch_delay_ns;
	c->queue_bytes = o->queue_bytes;
	c->host_delay_ns = o->host_delay_ns;
}

/** sim_wire_bytes() - Wire bytes of a @size-byte message: data, DATA headers, framing. */
uint64_t sim_wire_bytes(const struct sim_fabric *f, const struct sim_opts *o, uint32_t size)
{
	uint64_t n = (size + f->payload - 1) / f->payload;

	return size + n * (HOMA_DATA_HDR_LEN + o->wire_overhead);
}

/** sim_host_ser_ns() - Time the sender's NIC needs for a @size-byte message. */
uint64_t sim_host_ser_ns(const struct sim_fabric *f, const struct sim_opts *o, uint32_t size)
{
	uint64_t m = f->ls.cfg.host_mbps;
	uint64_t n = (size + f->payload - 1) / f->payload;
	uint64_t full = f->payload + HOMA_DATA_HDR_LEN + o->wire_overhead;
	uint64_t last = size - (n - 1) * f->payload + HOMA_DATA_HDR_LEN + o->wire_overhead;

	return (n - 1) * ((full * 8000 + m - 1) / m) + (last * 8000 + m - 1) / m;
}

/**
 * sim_best_ns() - Unloaded completion time of a @size-byte message from
 * host @src to @dst: its packets store-and-forwarded over every hop of the
 * path on an idle fabric, plus the receiver's software time.
 */
uint64_t sim_best_ns(const struct sim_fabric *f, const struct sim_opts *o,
		     uint32_t size, int src, int dst)
{
	uint32_t n = (size + f->payload - 1) / f->payload;
	uint32_t over = HOMA_DATA_HDR_LEN + o->wire_overhead;
	uint32_t last = size - (n - 1) * f->payload + over;

	return homa_sim_leafspine_unloaded_ns(&f->ls,
					      homa_sim_leafspine_same_rack(&f->ls, src, dst),
					      f->payload + over, last, n, 0);
}

/**
 * set_unsched_prios() - Use @n of the priority levels for unscheduled
 * data, with starting cutoffs (the engine's dynamic cutoffs replace them
 * once it has seen enough messages).
 */
static void set_unsched_prios(struct homa_settings *s, uint32_t n)
{
	static const uint32_t start[] = {200, 1000, 2800, 8000, 15000, 60000, 250000};
	uint32_t top = s->num_priorities - 1, i;

	if (n > s->num_priorities)
		n = s->num_priorities;
	s->num_unsched_priorities = n;
	memset(s->unsched_cutoffs, 0, sizeof(s->unsched_cutoffs));
	for (i = 0; i + 1 < n; i++)
		s->unsched_cutoffs[top - i] = start[i];
	s->unsched_cutoffs[top - (n - 1)] = 0xffffffffu;
}

/**
 * size_settings() - Engine settings sized to the fabric: the pacer runs
 * at the host link rate, unscheduled bytes cover one unloaded RTT between
 * racks (a full DATA packet out, a GRANT back), rounded up to whole packets,
 * and max_incoming allows max_overcommit such windows (a FIFO grant is one
 * window by the engine's default).
 */
static void size_settings(struct sim_fabric *f, const struct sim_opts *o)
{
	struct homa_settings *s = &f->settings;
	int far = f->ls.hosts - 1;
	uint32_t grant_wire = HOMA_GRANT_LEN + o->wire_overhead;
	uint64_t bytes;

	homa_settings_default(s);
	s->link_mbps = f->ls.cfg.host_mbps;
	s->start_msg = o->start_msg;
	if (o->overcommit)
		s->max_overcommit = o->overcommit;
	if (o->unsched_prios)
		set_unsched_prios(s, o->unsched_prios);
	if (o->tick_us)
		s->tick_ns = o->tick_us * 1000;
	s->grant_step = o->grant_step;
	f->payload = s->mtu - HOMA_DATA_HDR_LEN;
	f->rtt_ns = sim_best_ns(f, o, f->payload, 0, far) +
		    homa_sim_leafspine_unloaded_ns(&f->ls, f->ls.cfg.racks < 2, grant_wire,
						   grant_wire, 1, 0);
	bytes = f->rtt_ns * f->ls.cfg.host_mbps / 8000;
	bytes = (bytes + f->payload - 1) / f->payload * f->payload;
	s->unsched_bytes = o->unsched_bytes ? o->unsched_bytes : (uint32_t)bytes;
	s->max_incoming = o->max_incoming ? o->max_incoming
					  : s->max_overcommit * s->unsched_bytes;
	s->fifo_grant_increment = o->fifo_increment; /* 0: the engine's, one window */
	if (o->grant_silence_rtts)
		s->grant_silence_rtts = o->grant_silence_rtts;
	if (o->no_grant_silence)
		s->grant_silence_rtts = 0;
	if (o->max_tx_buffered)
		s->max_tx_buffered = o->max_tx_buffered;
}

/**
 * sim_fabric_build() - Create the network with @o->hosts engine hosts
 * (each a server too, events to @cb), wire them into a leaf-spine fabric.
 * Return: 0, HOMA_EINVAL (settings or topology rejected), HOMA_ENOMEM.
 */
int sim_fabric_build(struct sim_fabric *f, const struct sim_opts *o,
		     homa_sim_event_cb cb, void *ctx)
{
	struct homa_sim_leafspine_cfg lc;
	struct homa_sim_config nc;
	int i, rc;

	memset(f, 0, sizeof(*f));
	homa_sim_config_default(&nc);
	nc.seed = o->seed;
	nc.wire_overhead = o->wire_overhead;
	nc.engine_cache_bytes = SIM_ENGINE_CACHE_BYTES;
	rc = homa_sim_net_new(&f->net, &nc);
	if (rc)
		return rc;
	f->eh = calloc((size_t)o->hosts, sizeof(*f->eh));
	if (!f->eh)
		return HOMA_ENOMEM;
	/* The layout is needed to size the settings: fill it before the engines exist. */
	ls_cfg(o, &lc);
	f->ls.cfg = lc;
	f->ls.hosts = o->hosts;
	f->ls.per_rack = (o->hosts + lc.racks - 1) / lc.racks;
	size_settings(f, o);
	for (i = 0; i < o->hosts; i++) {
		rc = homa_sim_engine_host_add(f->net, &f->settings, SIM_PORT, true, cb, ctx,
					      &f->eh[i]);
		if (rc < 0)
			return rc;
	}
	return homa_sim_leafspine_build(f->net, &lc, &f->ls);
}

/** sim_fabric_free() - Free the network (and its engines). */
void sim_fabric_free(struct sim_fabric *f)
{
	homa_sim_net_free(f->net);
	free(f->eh);
	memset(f, 0, sizeof(*f));
}
