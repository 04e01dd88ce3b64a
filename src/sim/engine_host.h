/* SPDX-License-Identifier: MIT */
/**
 * @file engine_host.h
 * A simulated host that runs one unmodified homa_engine: received packets
 * go to homa_engine_input(), the host drains homa_engine_output() while its
 * NIC is free, runs homa_engine_on_timer() when homa_engine_next_deadline()
 * is due, and hands every engine event (completed messages, failed RPCs)
 * to a per-host callback.
 */
#ifndef HOMA_SIM_ENGINE_HOST_H
#define HOMA_SIM_ENGINE_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "homa/engine.h"
#include "sim/net.h"

#ifdef __cplusplus
extern "C" {
#endif

struct homa_sim_engine_host;

/**
 * Event callback. The callback may keep @ev->msg by setting it to NULL
 * (it must then release it with homa_engine_msg_release()); otherwise the
 * message is released when the callback returns.
 */
typedef void (*homa_sim_event_cb)(void *ctx, struct homa_sim_engine_host *eh,
				  struct homa_event *ev, uint64_t now);

/** A host running an engine. The network owns it (freed with the net). */
struct homa_sim_engine_host {
	struct homa_sim_net *net;
	int host;               /**< host id in @net */
	homa_engine *engine;    /**< NULL after homa_sim_engine_host_crash() */
	homa_sim_event_cb on_event;
	void *ctx;
	uint64_t events;        /**< events handed to on_event */
	bool module;            /**< module-shaped: packets translated at the edge (modpeer.h) */
};

/**
 * homa_sim_engine_host_add() - Add a host with a new engine to @net.
 * @s: engine settings (NULL: defaults); @port: its Homa port;
 * @server: accept requests; @cb, @ctx: event callback (NULL: events are
 * discarded and their messages released).
 * @out: if not NULL, receives the host.
 * Return: the host id, or HOMA_EINVAL / HOMA_ENOMEM (from the engine or net).
 */
int homa_sim_engine_host_add(struct homa_sim_net *net,
			     const struct homa_settings *s, uint16_t port,
			     bool server, homa_sim_event_cb cb, void *ctx,
			     struct homa_sim_engine_host **out);

/**
 * homa_sim_module_host_add() - Add a module-shaped host to @net (see
 * sim/modpeer.h), like homa_sim_engine_host_add() (same arguments and
 * return) but with @s (NULL: defaults) limited to the module's:
 * max_message 1,000,000, start_msg off, incast_threshold 0, compat
 * HOMA_COMPAT_MODULE, max_done_rpcs 0 (no finished-RPC memory), the
 * module's FIFO grant increment, and the module's grant algorithm
 * (core/grant_module.c); its packets are translated at the host's edge.
 */
int homa_sim_module_host_add(struct homa_sim_net *net, const struct homa_settings *s,
			     uint16_t port, bool server, homa_sim_event_cb cb, void *ctx,
			     struct homa_sim_engine_host **out);

/** homa_sim_engine_host_get() - The engine host with id @host, or NULL. */
struct homa_sim_engine_host *homa_sim_engine_host_get(struct homa_sim_net *net,
						      int host);

/**
 * homa_sim_engine_host_crash() - The host dies: it goes down (nothing in
 * or out) and its engine is freed without telling anyone.
 */
void homa_sim_engine_host_crash(struct homa_sim_engine_host *eh);

/**
 * homa_sim_engine_host_request() - Start a client RPC to host @dst, port
 * @dport, at the current simulated time, and wake the host to send it.
 * Return: as homa_engine_send_request(); HOMA_ESHUTDOWN after a crash.
 */
int homa_sim_engine_host_request(struct homa_sim_engine_host *eh, int dst,
				 uint16_t dport, const void *buf, size_t len,
				 uint64_t cookie, uint64_t *id);

/**
 * homa_sim_engine_host_request_ref() - Like homa_sim_engine_host_request(),
 * but the engine reads the request from the caller's bytes described by
 * @iov instead of copying them (homa_engine_send_request_ref()): they must
 * stay unchanged until the RPC ends.
 * Return: as homa_engine_send_request_ref(); HOMA_ESHUTDOWN after a crash.
 */
int homa_sim_engine_host_request_ref(struct homa_sim_engine_host *eh, int dst,
				     uint16_t dport, const struct homa_iov *iov,
				     int iovcnt, uint64_t cookie, uint64_t *id);

/**
 * homa_sim_engine_host_reply() - Answer server RPC @id now and wake the host.
 * Return: as homa_engine_send_reply(); HOMA_ESHUTDOWN after a crash.
 */
int homa_sim_engine_host_reply(struct homa_sim_engine_host *eh, uint64_t id,
			       const void *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_ENGINE_HOST_H */
