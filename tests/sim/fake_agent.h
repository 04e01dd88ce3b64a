/* SPDX-License-Identifier: MIT */
/**
 * @file fake_agent.h
 * A scripted traffic source for testing the network without an engine:
 * it emits real Homa packets (DATA or GRANT, encoded with homa_wire_encode)
 * from a script, each not before its time, and records what it receives.
 */
#ifndef HOMA_TEST_FAKE_AGENT_H
#define HOMA_TEST_FAKE_AGENT_H

#include <stdint.h>

#include "sim/net.h"

#define FAKE_MAX_OUT 256
#define FAKE_MAX_RX 1024

/** One scripted packet. */
struct fake_out {
	uint64_t at;       /**< earliest emission time */
	int dst;           /**< destination host id */
	uint8_t prio;
	uint8_t type;      /**< HOMA_PKT_DATA or HOMA_PKT_GRANT */
	uint32_t payload;  /**< DATA payload bytes */
	uint32_t offset;   /**< DATA offset or GRANT offset */
	uint64_t id;       /**< sender_id, to tell packets apart */
};

/** One received packet. */
struct fake_rx {
	uint64_t time;
	int src;
	uint64_t id;
	uint32_t len;
	uint8_t prio_field; /**< GRANT priority field, for checks */
};

/** The agent. */
struct fake_agent {
	struct homa_sim_net *net;
	int host;
	struct fake_out out[FAKE_MAX_OUT];
	int nout, next_out;
	uint64_t emit_time[FAKE_MAX_OUT];
	struct fake_rx rx[FAKE_MAX_RX];
	int nrx;
	uint64_t timer_deadline;   /**< extra deadline for on_timer tests */
	uint64_t timer_calls, last_timer;
};

/** Operations to pass to homa_sim_add_host(). */
extern const struct homa_sim_agent_ops fake_agent_ops;

/** fake_add() - Add a host running a zeroed @a to @net. Return: the host id. */
int fake_add(struct homa_sim_net *net, struct fake_agent *a);

/** fake_script() - Append a packet to @a's script. */
void fake_script(struct fake_agent *a, uint64_t at, int dst, uint8_t prio,
		 uint8_t type, uint32_t payload, uint32_t offset, uint64_t id);

#endif
