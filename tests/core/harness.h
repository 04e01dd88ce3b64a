/* SPDX-License-Identifier: MIT */
/**
 * @file harness.h
 * Test harness for the core: a client and a server engine joined by an
 * ideal wire with an optional drop filter, and a readable log of every
 * packet that crossed it ("c>s DATA 1416@0 p7; s>c GRANT 50000 p3").
 */
#ifndef HOMA_TEST_HARNESS_H
#define HOMA_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "homa/engine.h"

/** Decides whether the n-th packet crossing the wire is dropped. */
typedef bool (*th_filter)(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n);

/** Two endpoints: index 0 = client "c", 1 = server "s". */
struct th_pair {
	homa_engine *e[2];
	homa_addr addr[2];
	uint16_t port[2];
	uint64_t now;
	uint64_t npkts;           /**< packets that crossed (or were dropped) */
	th_filter filter;
	void *filter_ctx;
	char log[65536];          /**< packet log, "; "-separated */
	size_t loglen;
	bool logging;
	bool echo;                /**< server answers each request with its own bytes */
};

/** th_pair_init() - Create both engines with @s (NULL = defaults) at time 0; server serving. */
void th_pair_init(struct th_pair *p, const struct homa_settings *s);

/** th_pair_free() - Destroy both engines (releasing any messages in events). */
void th_pair_free(struct th_pair *p);

/**
 * th_pair_run() - Move packets and run timers until both engines are quiet
 * or @max_ns of simulated time passed. Events are left in the engines.
 * Return: packets moved.
 */
uint64_t th_pair_run(struct th_pair *p, uint64_t max_ns);

/** th_pattern() - Fill @buf with a pattern derived from @seed (for bit-exact checks). */
void th_pattern(uint8_t *buf, size_t len, uint32_t seed);

/** th_check_pattern() - True if message @m holds th_pattern(len, seed). */
bool th_check_pattern(const homa_msg *m, uint32_t seed);

/** th_take_msg()'s @len for a message of any length. */
#define TH_ANY_LEN SIZE_MAX

/**
 * th_take_msg() - Take @e's next event and release its message, if any.
 * Return: true if that event is of @type (HOMA_EV_REQUEST or
 * HOMA_EV_RESPONSE), has RPC id @id (0: any), @len bytes (TH_ANY_LEN:
 * any) and the payload th_pattern(@seed); false, after one line on
 * stderr naming what differed, otherwise or if there was no event.
 */
bool th_take_msg(homa_engine *e, int type, uint32_t seed, uint64_t id, size_t len);

/**
 * th_echo_rpc() - One 100-byte request of th_pattern(@seed) from the
 * client of @p (whose server echoes: p->echo) and its response: the pair
 * runs until quiet (at most 50 ms), the response is taken, checked and
 * released. Return: true if the next client event is that RPC's
 * response with the request's bytes.
 */
bool th_echo_rpc(struct th_pair *p, uint32_t seed);


/* ---- N endpoints and single-packet helpers (used by the module tests) ---- */

#include "homa/wire.h"

/** Most endpoints in one th_net. */
#define TH_MAX_NODES 8

/** One packet taken from an engine with homa_engine_output(). */
struct th_pkt {
	uint8_t buf[9100];
	int len;              /**< homa_engine_output()'s result */
	struct homa_tx tx;
	struct homa_pkt k;    /**< decoded (valid only if ok) */
	bool ok;              /**< len > 0 and the bytes decode */
};

/**
 * th_take() - Take the next packet @e wants to send at @now into @p.
 * Return: homa_engine_output()'s result (0 if nothing).
 */
int th_take(homa_engine *e, uint64_t now, struct th_pkt *p);

/**
 * th_drain_count() - Take every packet @e has to send at @now.
 * Return: how many of them decode as packets of type @type.
 */
int th_drain_count(homa_engine *e, uint64_t now, int type);

/** What th_data_in() puts in a forged DATA packet (other fields 0). */
struct th_data {
	uint16_t sport, dport;
	uint64_t sender_id;       /**< the sender's RPC id (even: a request) */
	uint32_t length;          /**< message_length */
	uint32_t incoming;        /**< unscheduled bytes (0: none announced) */
	uint32_t offset;          /**< of the payload in the message */
	const uint8_t *payload;   /**< caller-owned; at most 2000 bytes */
	uint32_t payload_len;
};

/**
 * th_data_in() - Encode @d as a DATA packet (asserts it encodes) and
 * hand it to @e as received from @src at @now.
 * Return: homa_engine_input()'s result.
 */
int th_data_in(homa_engine *e, const homa_addr *src, const struct th_data *d, uint64_t now);

/**
 * th_describe() - Write one packet as text: "DATA 1416@0 p4" (" rx" for a
 * retransmission, " incast" for the incast flag), "GRANT 11416 g2 p7"
 * (g = granted priority), "RESEND 1416@0 g3 p7", else "TYPE p7". With
 * @with_id, the sender's RPC id follows the type ("GRANT#3 ...").
 * Return: @out.
 */
char *th_describe(const uint8_t *buf, size_t len, uint8_t prio, bool with_id,
		  char *out, size_t cap);

/** Called after each packet the net delivered (for invariant checks). */
typedef void (*th_observer)(void *ctx, int from, int to, const uint8_t *pkt, size_t len);

/**
 * N endpoints on an ideal wire; node i has address 10.0.0.(i+1), port
 * 4000+i and a one-letter name used in the log ("a>s DATA 1416@0 p4").
 */
struct th_net {
	int n;
	homa_engine *e[TH_MAX_NODES];
	homa_addr addr[TH_MAX_NODES];
	uint16_t port[TH_MAX_NODES];
	char name[TH_MAX_NODES];
	bool echo[TH_MAX_NODES];  /**< answer each request with its own bytes */
	uint64_t now;
	uint64_t npkts;
	th_filter filter;         /**< from = sending node index */
	void *filter_ctx;
	th_observer observer;
	void *observer_ctx;
	bool logging;
	bool log_ids;
	char log[65536];
	size_t loglen;
};

/**
 * th_net_init() - Create one engine per letter of @names (at most
 * TH_MAX_NODES) with settings @s (NULL = defaults) at time 0. No engine
 * serves until homa_engine_set_server() is called. Logging is on.
 */
void th_net_init(struct th_net *net, const char *names, const struct homa_settings *s);

/** th_net_free() - Destroy every engine. */
void th_net_free(struct th_net *net);

/** th_net_node() - Index of the node named @c (aborts if none). */
int th_net_node(const struct th_net *net, char c);

/**
 * th_net_move() - Take up to @max packets node @from wants to send now and
 * deliver them (filter, log, observer apply). Return: packets taken.
 */
int th_net_move(struct th_net *net, int from, int max);

/**
 * th_net_run() - Move packets and run timers until all engines are quiet
 * or @max_ns of simulated time passed. Return: packets moved.
 */
uint64_t th_net_run(struct th_net *net, uint64_t max_ns);

/** th_net_clear_log() - Empty the packet log. */
void th_net_clear_log(struct th_net *net);

/** th_count() - Occurrences of @needle in @hay. */
int th_count(const char *hay, const char *needle);

#endif
