/* SPDX-License-Identifier: MIT */
/** @file world.c Scenario harness (see world.h). */
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"
#include "world.h"

#define REQ_HDR 12

/** mix() - A 64-bit hash of (@key, @block). */
static uint64_t mix(uint64_t key, uint64_t block)
{
	uint64_t z = key * 0x9e3779b97f4a7c15ull + block * 0xd6e8feb86659fd93ull + 1;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/** world_pattern() - See world.h. */
uint8_t world_pattern(uint64_t tag, int dir, uint64_t off)
{
	return (uint8_t)(mix(tag * 2 + (uint64_t)dir, off >> 3) >> ((off & 7) * 8));
}

/** fill() - Write the pattern bytes [off, off + len) of (@tag, @dir) into @buf. */
static void fill(uint8_t *buf, uint64_t off, size_t len, uint64_t tag, int dir)
{
	uint64_t key = tag * 2 + (uint64_t)dir, word = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t o = off + i;

		if (i == 0 || (o & 7) == 0)
			word = mix(key, o >> 3);
		buf[i] = (uint8_t)(word >> ((o & 7) * 8));
	}
}

/** check_msg() - True if @m holds the pattern of (@tag, @dir) from byte @from on. */
static bool check_msg(const homa_msg *m, uint64_t tag, int dir, size_t from)
{
	static uint8_t want[65536];
	size_t off = from, len = homa_msg_length(m);

	while (off < len) {
		const uint8_t *p;
		size_t n = homa_msg_segment(m, off, &p);

		if (n == 0)
			return false;
		if (n > sizeof(want))
			n = sizeof(want);
		fill(want, off, n, tag, dir);
		if (memcmp(p, want, n) != 0)
			return false;
		off += n;
	}
	return true;
}

/** world_opts_default() - See world.h. */
void world_opts_default(struct world_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->nhosts = 2;
	o->mbps = 25000;
	o->delay_ns = 1000;
	o->seed = 1;
	homa_settings_default(&o->settings);
}

/**
 * find_short() - The oldest unexecuted RPC from @client to @server with a
 * @len-byte request.
 */
static struct world_rpc *find_short(struct world *w, int client, int server,
				    size_t len)
{
	size_t i;

	for (i = 0; i < w->nrpcs; i++) {
		struct world_rpc *r = &w->rpcs[i];

		if (r->client == client && r->server == server && r->req_len == len &&
		    r->execs == 0 && r->status == 0)
			return r;
	}
	return NULL;
}

/** match_request() - The RPC a request to @server belongs to, or NULL. */
static struct world_rpc *match_request(struct world *w, int client, int server,
				       const homa_msg *m)
{
	size_t len = homa_msg_length(m);
	uint8_t hdr[REQ_HDR];
	uint64_t tag;

	if (len < REQ_HDR)
		return find_short(w, client, server, len);
	homa_msg_copy(m, 0, hdr, REQ_HDR);
	memcpy(&tag, hdr, sizeof(tag));
	if (tag >= w->nrpcs || w->rpcs[tag].client != client ||
	    w->rpcs[tag].server != server || w->rpcs[tag].req_len != len)
		return NULL;
	return &w->rpcs[tag];
}

/** serve_stranger() - Answer a request that matches no RPC (if stranger_resp is set). */
static void serve_stranger(struct world *w, struct homa_sim_engine_host *eh,
			   const struct homa_event *ev)
{
	uint8_t *buf;

	if (!w->serve || !w->stranger_resp)
		return;
	buf = calloc(1, w->stranger_resp);
	if (!buf || homa_sim_engine_host_reply(eh, ev->id, buf, w->stranger_resp))
		w->send_errors++;
	else
		w->strangers++;
	free(buf);
}

/** serve() - The server application: check, count, reply. */
static void serve(struct world *w, struct homa_sim_engine_host *eh,
		  const struct homa_event *ev)
{
	int client = homa_sim_host_of(w->net, &ev->peer);
	struct world_rpc *r = match_request(w, client, eh->host, ev->msg);
	uint64_t tag;
	uint8_t *buf;

	if (!r) {
		w->unmatched++;
		serve_stranger(w, eh, ev);
		return;
	}
	tag = (uint64_t)(r - w->rpcs);
	r->execs++;
	if (!check_msg(ev->msg, tag, 0, r->req_len < REQ_HDR ? 0 : REQ_HDR))
		w->bad_requests++;
	if (!w->serve)
		return;
	buf = malloc(r->resp_len);
	if (!buf) {
		w->send_errors++;
		return;
	}
	fill(buf, 0, r->resp_len, tag, 1);
	if (homa_sim_engine_host_reply(eh, ev->id, buf, r->resp_len))
		w->send_errors++;
	free(buf);
}

/** finish() - Record the outcome of client RPC @tag. */
static void finish(struct world *w, const struct homa_event *ev, uint64_t now)
{
	struct world_rpc *r;

	if (ev->cookie >= w->nrpcs) {
		w->unmatched++;
		return;
	}
	r = &w->rpcs[ev->cookie];
	if (ev->type == HOMA_EV_RESPONSE) {
		r->responses++;
		r->resp_ok = homa_msg_length(ev->msg) == r->resp_len &&
			     check_msg(ev->msg, ev->cookie, 1, 0);
		if (!r->resp_ok)
			w->bad_responses++;
	}
	if (r->status != 0)
		return;
	r->status = ev->type == HOMA_EV_RESPONSE ? 1 : ev->error;
	r->done_ns = now;
	w->pending--;
}

/** on_event() - Engine event callback of every host. */
static void on_event(void *ctx, struct homa_sim_engine_host *eh,
		     struct homa_event *ev, uint64_t now)
{
	struct world *w = ctx;

	if (ev->type == HOMA_EV_REQUEST)
		serve(w, eh, ev);
	else
		finish(w, ev, now);
}

/** world_init() - See world.h. */
int world_init(struct world *w, const struct world_opts *o)
{
	struct homa_sim_config cfg;
	struct homa_sim_link_cfg link = {o->mbps, o->delay_ns, o->queue_bytes};
	int i, rc;

	memset(w, 0, sizeof(*w));
	w->o = *o;
	w->o.settings.link_mbps = o->mbps;
	w->serve = true;
	if (o->nhosts < 1 || o->nhosts > WORLD_MAX_HOSTS)
		return HOMA_EINVAL;
	homa_sim_config_default(&cfg);
	cfg.seed = o->seed;
	rc = homa_sim_net_new(&w->net, &cfg);
	for (i = 0; !rc && i < o->nhosts; i++) {
		rc = (o->module_hosts >> i) & 1
		     ? homa_sim_module_host_add(w->net, &w->o.settings, WORLD_PORT, true,
						on_event, w, &w->eh[i])
		     : homa_sim_engine_host_add(w->net, &w->o.settings, WORLD_PORT, true,
						on_event, w, &w->eh[i]);
		rc = rc < 0 ? rc : 0;
	}
	if (!rc)
		rc = homa_sim_star(w->net, &link);
	if (rc < 0)
		return rc;
	if (o->trace)
		homa_sim_trace_attach(&w->trace, w->net, 0);
	return 0;
}

/** world_free() - See world.h. */
void world_free(struct world *w)
{
	homa_sim_net_free(w->net);
	homa_sim_trace_free(&w->trace);
	free(w->rpcs);
	memset(w, 0, sizeof(*w));
}

/** world_chaos() - See world.h. */
void world_chaos(struct world *w, uint64_t seed)
{
	homa_sim_chaos_init(&w->chaos, seed);
	homa_sim_set_filter(w->net, homa_sim_chaos_filter, &w->chaos);
}

/** new_rpc() - Append a pending record. Return: its tag. */
static size_t new_rpc(struct world *w, int client, int server, uint32_t req_len,
		      uint32_t resp_len)
{
	struct world_rpc *r;

	if (w->nrpcs == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct world_rpc *n = realloc(w->rpcs, cap * sizeof(*n));

		if (!n)
			abort();
		w->rpcs = n;
		w->cap = cap;
	}
	r = &w->rpcs[w->nrpcs];
	memset(r, 0, sizeof(*r));
	r->client = client;
	r->server = server;
	r->req_len = req_len;
	r->resp_len = resp_len;
	w->pending++;
	return w->nrpcs++;
}

/** start_rpc() - Send the request of RPC @tag now. */
static void start_rpc(struct world *w, uint64_t tag)
{
	struct world_rpc *r = &w->rpcs[tag];
	uint8_t *buf = malloc(r->req_len ? r->req_len : 1);
	int rc;

	if (!buf)
		abort();
	fill(buf, 0, r->req_len, tag, 0);
	if (r->req_len >= REQ_HDR) {
		memcpy(buf, &tag, 8);
		memcpy(buf + 8, &r->resp_len, 4);
	}
	r->sent_ns = homa_sim_now(w->net);
	rc = homa_sim_engine_host_request(w->eh[r->client], r->server, WORLD_PORT,
					  buf, r->req_len, tag, &r->id);
	free(buf);
	if (rc) {
		w->send_errors++;
		r->status = rc;
		w->pending--;
	}
}

/** world_rpc() - See world.h. */
size_t world_rpc(struct world *w, int client, int server, uint32_t req_len,
		 uint32_t resp_len)
{
	size_t tag = new_rpc(w, client, server, req_len, resp_len);

	start_rpc(w, tag);
	return tag;
}

/** start_event() - Event: start a scheduled RPC (@ptr is its tag). */
static void start_event(void *obj, void *ptr, uint64_t now)
{
	(void)now;
	start_rpc(obj, (uint64_t)(uintptr_t)ptr);
}

/** world_rpc_at() - See world.h. */
size_t world_rpc_at(struct world *w, uint64_t t, int client, int server,
		    uint32_t req_len, uint32_t resp_len)
{
	size_t tag = new_rpc(w, client, server, req_len, resp_len);

	if (homa_sim_schedule(w->net, t, start_event, w, (void *)(uintptr_t)tag))
		abort();
	return tag;
}

/** pending() - Run condition: RPCs without an outcome remain. */
static bool pending(void *ctx)
{
	return ((struct world *)ctx)->pending > 0;
}

/** world_run() - See world.h. */
int world_run(struct world *w, uint64_t max_ns)
{
	return homa_sim_run_while(w->net, homa_sim_now(w->net) + max_ns, pending, w);
}

/** world_link() - See world.h. */
int world_link(struct world *w, int id)
{
	struct homa_sim_link_cfg link = {w->o.mbps, w->o.delay_ns, w->o.queue_bytes};
	int rc = homa_sim_connect_host(w->net, id, 0, &link, &link);

	if (rc < 0)
		return rc;
	homa_sim_host_kick(w->net, id);
	return id;
}

/**
 * mixed_rpc() - Schedule one RPC from @client to @server with sizes and
 * start time drawn from @rng. One draw per statement, in a fixed order:
 * as arguments of one call their order would be unspecified in C and
 * differ between compilers (gcc and clang), and so would the workload.
 */
static void mixed_rpc(struct world *w, struct homa_rng *rng, int client, int server,
		      uint64_t window_ns)
{
	static const uint32_t req[] = {100, 100, 1000, 10000, 60000, 300000};
	static const uint32_t resp[] = {100, 100, 1000, 5000, 100000};
	uint32_t resp_len = resp[homa_rng_below(rng, 5)];
	uint32_t req_len = req[homa_rng_below(rng, 6)];
	uint64_t start = homa_rng_below(rng, window_ns);

	world_rpc_at(w, start, client, server, req_len, resp_len);
}

/** world_mixed_rpcs() - See world.h. */
void world_mixed_rpcs(struct world *w, int clients, int per_client, int server,
		      uint64_t window_ns, uint64_t seed)
{
	struct homa_rng rng;

	homa_rng_seed(&rng, seed);
	for (int c = 0; c < clients; c++)
		for (int i = 0; i < per_client; i++)
			mixed_rpc(w, &rng, c, server, window_ns);
}

/** world_add_hostile() - See world.h. */
int world_add_hostile(struct world *w, const struct homa_sim_hostile_cfg *cfg,
		      struct homa_sim_hostile **out)
{
	int id = homa_sim_hostile_add(w->net, cfg, out);

	return id < 0 ? id : world_link(w, id);
}

/** world_engine() - See world.h. */
homa_engine *world_engine(struct world *w, int h)
{
	return w->eh[h]->engine;
}

/** world_stats() - See world.h. */
void world_stats(struct world *w, int h, struct homa_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (w->eh[h]->engine)
		homa_engine_stats(w->eh[h]->engine, st);
}

/** world_count() - See world.h. */
size_t world_count(const struct world *w, uint8_t type)
{
	size_t i, n = 0;

	for (i = 0; i < w->trace.len; i++) {
		const struct homa_sim_trace_rec *r = &w->trace.recs[i];

		if (r->what == HOMA_SIM_EMIT && (!type || r->pkt.type == type))
			n++;
	}
	return n;
}
