/* SPDX-License-Identifier: MIT */
/**
 * @file modpeer.h
 * A module-shaped peer: a simulated host that behaves on the wire as a
 * host running the Linux kernel module (PlatformLab/HomaModule), written
 * from the module's homa_outgoing.c, homa_incoming.c, homa_timer.c and
 * homa_peer.c. It runs one of our engines for the protocol logic, limited
 * to the module's settings (messages of at most 1,000,000 bytes, no
 * START_MSG, no incast bit), and translates every packet at the host's
 * edge:
 *
 * - out: the flags byte 6 and urgent 0xb97d (the module's TCP-hijacking
 *   marker, sent whether or not it hijacks), window 0 (so never our
 *   extension marker or bits), and every original DATA packet with the
 *   segment offset -1 and the real offset in seq (only retransmissions
 *   carry a real segment offset); a RESEND for a message of which nothing
 *   arrived asks for length -1 ("everything you sent");
 * - in: packet types the module does not know (START_MSG) are dropped
 *   silently, as are our extension bits (the module reads neither window
 *   nor flags).
 *
 * The host itself is added with homa_sim_module_host_add() (engine_host.h);
 * the fuzzers use the translation alone. Its engine remembers no finished
 * server RPC (settings.max_done_rpcs 0, as the module: a late duplicate of
 * a request runs again) and grants with the module's own algorithm
 * (core/grant_module.c: max_overcommit active messages, windows of
 * max_incoming / (active + 1) past the received bytes, priorities by rank
 * among the active messages, timed FIFO grants of 50000 bytes).
 * What it does not model: the module's pacer, its ICMP port unreachable
 * for a packet to a port where nothing serves (it drops the request and
 * answers RESENDs with RPC_UNKNOWN), and its per-host ack list on the
 * sending side (it acks per server port, as our engine does).
 */
#ifndef HOMA_SIM_MODPEER_H
#define HOMA_SIM_MODPEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * homa_sim_module_tx() - Rewrite the packet in @buf (@len bytes, written by
 * our encoder) into the module's conventions (see the file comment).
 * @unsched: the sending engine's settings.unsched_bytes (a RESEND from 0
 * of that length is its "nothing arrived" probe).
 */
void homa_sim_module_tx(uint8_t *buf, size_t len, uint32_t unsched);

/**
 * homa_sim_module_rx() - Prepare a received packet for the module-shaped
 * host's engine: clear what the module never reads (flags, window).
 * Return: false if the module drops the packet silently (unknown type or
 * shorter than a common header).
 */
bool homa_sim_module_rx(uint8_t *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_MODPEER_H */
