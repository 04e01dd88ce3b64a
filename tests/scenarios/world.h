/* SPDX-License-Identifier: MIT */
/**
 * @file world.h
 * Scenario harness: N hosts, each running a real homa_engine (port 100,
 * client and server), on the simulated network of src/sim. The harness
 * issues RPCs, plays the server application (verifies each request
 * bit-exact, counts executions per RPC, replies with the requested number
 * of pattern bytes) and checks each response bit-exact.
 *
 * Requests of 12 bytes or more start with the RPC's tag (u64) and the
 * response length (u32); shorter requests are matched to the oldest
 * unexecuted RPC of the same client, server and length (so tests that run
 * such short RPCs concurrently between one pair cannot tell them apart).
 */
#ifndef HOMA_TEST_WORLD_H
#define HOMA_TEST_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa/engine.h"
#include "sim/chaos.h"
#include "sim/engine_host.h"
#include "sim/hostile.h"
#include "sim/net.h"
#include "sim/trace.h"

#define WORLD_MAX_HOSTS 16
#define WORLD_PORT 100

/** How to build a world. */
struct world_opts {
	int nhosts;
	uint64_t mbps;             /**< every link (25000) */
	uint64_t delay_ns;         /**< every link (1000) */
	uint64_t queue_bytes;      /**< switch port buffers (0: unlimited) */
	uint64_t seed;             /**< network seed (1) */
	bool trace;                /**< record emitted and dropped packets */
	struct homa_settings settings; /**< for every engine (link_mbps = mbps) */
	uint32_t module_hosts;     /**< bit h: host h is module-shaped (sim/modpeer.h) */
};

/** One RPC issued by the harness; its index is its tag (the client's cookie). */
struct world_rpc {
	int client, server;
	uint64_t id;               /**< client RPC id */
	uint32_t req_len, resp_len;
	uint64_t sent_ns, done_ns;
	int status;                /**< 0 pending, 1 response ok, < 0 HOMA_E* error */
	uint32_t responses;        /**< RESPONSE events seen (must end at 1) */
	uint32_t execs;            /**< times the server application ran it */
	bool resp_ok;              /**< response bytes were bit-exact */
};

/** The world. */
struct world {
	struct world_opts o;
	struct homa_sim_net *net;
	struct homa_sim_engine_host *eh[WORLD_MAX_HOSTS];
	struct world_rpc *rpcs;
	size_t nrpcs, cap;
	size_t pending;            /**< RPCs without a final outcome */
	uint64_t bad_requests;     /**< request bytes not as sent */
	uint64_t bad_responses;    /**< response bytes not as sent */
	uint64_t unmatched;        /**< requests that match no unexecuted RPC */
	uint64_t send_errors;      /**< send_request / send_reply failures */
	bool serve;                /**< the server application replies (true) */
	uint32_t stranger_resp;    /**< if not 0: requests that match no RPC get a reply this long */
	uint64_t strangers;        /**< requests answered so (counted in unmatched too) */
	struct homa_sim_trace trace;
	struct homa_sim_chaos chaos;
};

/** world_opts_default() - 2 hosts, 25 Gbps, 1 us links, default engine settings. */
void world_opts_default(struct world_opts *o);

/** world_init() - Build @w from @o (copied). Return: 0 or a HOMA_E* error. */
int world_init(struct world *w, const struct world_opts *o);

/** world_free() - Destroy the network, engines and records. */
void world_free(struct world *w);

/** world_chaos() - Route every packet through w->chaos (set its fields after). */
void world_chaos(struct world *w, uint64_t seed);

/**
 * world_rpc() - Start an RPC now from @client to @server.
 * Return: its tag (index in w->rpcs); a send error is recorded as the
 * RPC's status and in send_errors.
 */
size_t world_rpc(struct world *w, int client, int server, uint32_t req_len,
		 uint32_t resp_len);

/** world_rpc_at() - Like world_rpc() but started at simulated time @t. Return: the tag. */
size_t world_rpc_at(struct world *w, uint64_t t, int client, int server,
		    uint32_t req_len, uint32_t resp_len);

/**
 * world_run() - Run until every RPC has an outcome or @max_ns of
 * simulated time passed. Return: 0 or HOMA_ETIMEDOUT.
 */
int world_run(struct world *w, uint64_t max_ns);

/**
 * world_link() - Link host @id (an agent just added to w->net) to the
 * world's switch like every host, and kick it so it sends.
 * Return: @id, or a HOMA_E* error of homa_sim_connect_host().
 */
int world_link(struct world *w, int id);

/**
 * world_mixed_rpcs() - The honest workload of the hostile scenarios:
 * @per_client RPCs from each of hosts 0 .. @clients - 1 to @server,
 * started uniformly within @window_ns, requests of 100 B to 300 KB and
 * responses of 100 B to 100 KB, drawn from a generator seeded with @seed
 * (the same RPCs for every compiler and every call).
 */
void world_mixed_rpcs(struct world *w, int clients, int per_client, int server,
		      uint64_t window_ns, uint64_t seed);

/**
 * world_add_hostile() - Add a hostile peer (sim/hostile.h) configured by
 * @cfg and link it to the world's switch like every host.
 * Return: its host id, or a HOMA_E* error.
 */
int world_add_hostile(struct world *w, const struct homa_sim_hostile_cfg *cfg,
		      struct homa_sim_hostile **out);

/** world_engine() - Engine of host @h (NULL after a crash). */
homa_engine *world_engine(struct world *w, int h);

/** world_stats() - Stats of host @h's engine into @st. */
void world_stats(struct world *w, int h, struct homa_stats *st);

/** world_pattern() - The byte at @off of message @dir (0 request, 1 response) of @tag. */
uint8_t world_pattern(uint64_t tag, int dir, uint64_t off);

/** world_count() - Emitted packets of @type in the trace (0: all types). */
size_t world_count(const struct world *w, uint8_t type);

#endif
