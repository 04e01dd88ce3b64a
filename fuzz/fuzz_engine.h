/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_engine.h
 * State of the single-engine fuzz target (fuzz_engine.c): one engine under
 * test, several simulated peers that send it packets chosen by the fuzz
 * input, and the bookkeeping the checks (fuzz_engine_check.c) need to
 * verify everything the engine emits or delivers.
 */
#ifndef HOMA_FUZZ_ENGINE_H
#define HOMA_FUZZ_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "fuzz_alloc.h"
#include "fuzz_input.h"
#include "homa/engine.h"

/** Simulated peers with pattern-checked traffic, plus one "raw" peer. */
#define FE_PEERS 4
#define FE_RAW_PEER FE_PEERS
/** Simulated peer whose packets are shaped as the Linux module's (sim/modpeer.h). */
#define FE_MODULE_PEER 1
#define FE_PORTS 2
#define FE_MAX_CLIENT 64
#define FE_MAX_TUPLES 256
#define FE_MAX_SERVER 64
#define FE_MAX_HELD 16

/**
 * Documented slack of the rx cap: a DATA packet may straddle two message
 * chunks that are both new, so one chunk (64 KiB) beyond the check.
 */
#define FE_RX_SLACK (64u * 1024)

/** A client RPC the engine under test started. */
struct fe_client {
	uint64_t id;
	uint64_t seed;     /**< request bytes pattern */
	uint32_t len;
	int peer, port;
	bool done;         /**< final event seen, or aborted */
};

/** A request some simulated client may have sent (id c, length len). */
struct fe_tuple {
	int peer, port;
	uint64_t c;
	uint32_t len;
};

/** A request the engine delivered to us as a server. */
struct fe_server {
	uint64_t handle;
	int peer, port;
	uint64_t c;        /**< client's wire id (when not ambiguous) */
	bool ambiguous;    /**< several requests have these bytes: wire id unknown */
	bool open;         /**< no reply or abort yet */
};

/** Everything one fuzz run needs. */
struct fe_world {
	struct fz_in in;
	struct fz_alloc fa;
	struct homa_alloc hooks;
	struct homa_settings s;
	homa_engine *e;
	homa_addr local;
	uint16_t lport;
	homa_addr peer[FE_PEERS + 1];
	uint64_t now;
	struct fe_client cl[FE_MAX_CLIENT];
	int ncl;
	struct fe_tuple tu[FE_MAX_TUPLES];
	int ntu;
	struct fe_server sv[FE_MAX_SERVER];
	int nsv;
	/** anon[peer][port]: an anonymous-seed reply went to that client port */
	bool anon[FE_PEERS][FE_PORTS];
	homa_msg *held[FE_MAX_HELD];
	int nheld;
	uint8_t pkt[70000];
	uint8_t pay[70000];
	uint8_t out[70000];
};

/** fe_port() - Port number of simulated port index @i. */
static inline uint16_t fe_port(int i)
{
	return (uint16_t)(5000 + i);
}

/** fe_request_seed() - Pattern seed of a simulated client's request. */
static inline uint64_t fe_request_seed(int peer, int port, uint64_t c, uint32_t len)
{
	return ((uint64_t)peer << 56) ^ ((uint64_t)port << 48) ^ (c * 31) ^ ((uint64_t)len << 20) ^ 0x5151;
}

/** fe_response_seed() - Pattern seed of a simulated server's response to client RPC @id. */
static inline uint64_t fe_response_seed(int peer, int port, uint64_t id, uint32_t len)
{
	return fe_request_seed(peer, port, id, len) ^ 0xa5a5a5a5a5ull;
}

/** fe_reply_seed() - Pattern seed of the engine's reply to simulated client @c. */
static inline uint64_t fe_reply_seed(int peer, int port, uint64_t c)
{
	return fe_request_seed(peer, port, c, 0) ^ 0x77777777ull;
}

/** Client id in the seed of a reply to an ambiguous request (never on the wire: odd). */
#define FE_ANON_C 0xffffffffffffffffull

/* fuzz_engine_check.c */
int fe_peer_index(const struct fe_world *w, const homa_addr *a);
void fe_check_memory(struct fe_world *w);
void fe_drain_output(struct fe_world *w, int max);
void fe_take_events(struct fe_world *w, bool hold);
void fe_release_held(struct fe_world *w);
void fe_finish(struct fe_world *w);

#endif
