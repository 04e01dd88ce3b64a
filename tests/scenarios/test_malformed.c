/* SPDX-License-Identifier: MIT */
/**
 * @file test_malformed.c
 * Scenario 7: while three real RPCs run between hosts 0 (client) and 1
 * (server), a third host injects a corpus of malformed and forged packets
 * at both: truncated, unknown type, inconsistent lengths, offsets past the
 * message, message_length above the maximum, wrong port, unknown ids, and
 * GRANT/RESEND/ACK/RPC_UNKNOWN/BUSY forged for nonexistent RPCs or for the
 * real RPCs' ids from the wrong address. Every one is dropped and counted
 * under its reason in stats.drops, and the real RPCs complete bit-exact,
 * once each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "homa/stats.h"
#include "homa/wire.h"
#include "world.h"

#define MAX_BAD 64
#define INJECTOR 2

/** One packet of the corpus. */
struct bad_pkt {
	int dst;             /**< host 0 or 1 */
	int reason;          /**< expected HOMA_DROP_* */
	size_t len;
	uint8_t bytes[256];
};

/** The injecting host's agent: sends the corpus, one packet every 5 us. */
struct injector {
	struct bad_pkt pkts[MAX_BAD];
	int n, next;
	uint64_t start_ns;
};

/** inj_output() - Agent op: the next corpus packet once its time has come. */
static int inj_output(void *agent, uint64_t now, uint8_t *buf, size_t cap,
		      struct homa_tx *tx)
{
	struct injector *in = agent;
	struct bad_pkt *p;

	if (in->next >= in->n || now < in->start_ns + 5000ull * (uint64_t)in->next)
		return 0;
	p = &in->pkts[in->next++];
	if (p->len > cap)
		return HOMA_ENOSPC;
	memcpy(buf, p->bytes, p->len);
	tx->dst = homa_sim_host_addr(p->dst);
	tx->dport = WORLD_PORT;
	tx->priority = 7;
	tx->len = p->len;
	return (int)p->len;
}

/** inj_deadline() - Agent op: when the next packet is due. */
static uint64_t inj_deadline(void *agent)
{
	struct injector *in = agent;

	return in->next < in->n ? in->start_ns + 5000ull * (uint64_t)in->next : UINT64_MAX;
}

/** inj_input() - Agent op: replies (RPC_UNKNOWN, ...) are ignored. */
static void inj_input(void *agent, const homa_addr *src, uint8_t *buf, size_t len,
		      uint64_t now)
{
	(void)agent;
	(void)src;
	(void)buf;
	(void)len;
	(void)now;
}

/** inj_timer() - Agent op: nothing to do; output follows the deadline. */
static void inj_timer(void *agent, uint64_t now)
{
	(void)agent;
	(void)now;
}

static const struct homa_sim_agent_ops inj_ops = {
	.input = inj_input, .output = inj_output,
	.next_deadline = inj_deadline, .on_timer = inj_timer,
};

/** add() - Encode @pkt (with @payload bytes of DATA), truncate or extend to @len (0: as encoded). */
static struct bad_pkt *add(struct injector *in, int dst, int reason,
			   struct homa_pkt *pkt, uint32_t payload, size_t len)
{
	static const uint8_t zeros[200];
	struct bad_pkt *p = &in->pkts[in->n++];
	int n;

	assert_true(in->n <= MAX_BAD);
	p->dst = dst;
	p->reason = reason;
	pkt->sport = WORLD_PORT;
	if (!pkt->dport)
		pkt->dport = WORLD_PORT;
	if (pkt->type == HOMA_PKT_DATA) {
		pkt->u.data.payload = zeros;
		pkt->u.data.payload_len = payload;
	}
	n = homa_wire_encode(pkt, p->bytes, sizeof(p->bytes));
	assert_true(n > 0);
	p->len = len ? len : (size_t)n;
	return p;
}

/** pkt_of() - A zeroed packet of @type with @sender_id. */
static struct homa_pkt pkt_of(uint8_t type, uint64_t sender_id)
{
	struct homa_pkt p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.sender_id = sender_id;
	return p;
}

/** data_of() - A DATA header. */
static struct homa_pkt data_of(uint64_t sender_id, uint32_t length, uint32_t offset)
{
	struct homa_pkt p = pkt_of(HOMA_PKT_DATA, sender_id);

	p.u.data.message_length = length;
	p.u.data.offset = offset;
	p.u.data.incoming = length;
	return p;
}

/** build_corpus() - The malformed and forged packets; @real is a live client id. */
static void build_corpus(struct injector *in, uint64_t real)
{
	struct homa_pkt p;
	struct bad_pkt *b;

	p = pkt_of(HOMA_PKT_CUTOFFS, 0);       /* from a host that is no peer */
	add(in, 1, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	p = pkt_of(HOMA_PKT_GRANT, 1001);
	add(in, 1, HOMA_DROP_TRUNCATED, &p, 0, 10);       /* shorter than any header */
	p = data_of(1002, 5000, 0);
	add(in, 1, HOMA_DROP_TRUNCATED, &p, 100, 40);     /* DATA cut inside its header */
	p = pkt_of(HOMA_PKT_GRANT, 1003);
	add(in, 1, HOMA_DROP_TRUNCATED, &p, 0, 30);       /* GRANT cut short */
	p = pkt_of(HOMA_PKT_BUSY, 1005);
	b = add(in, 1, HOMA_DROP_BAD_TYPE, &p, 0, 0);
	b->bytes[11] = 0x30;                              /* unknown type */
	p = pkt_of(HOMA_PKT_BUSY, 1007);
	b = add(in, 0, HOMA_DROP_BAD_TYPE, &p, 0, 0);
	b->bytes[11] = 0x0f;
	p = data_of(1008, 100, 0);
	add(in, 1, HOMA_DROP_BAD_OFFSET, &p, 200, 0);     /* payload past message_length */
	p = data_of(1010, 1000, 5000);
	add(in, 1, HOMA_DROP_BAD_OFFSET, &p, 100, 0);     /* offset past the message */
	p = data_of(1012, 1000, 0);
	add(in, 1, HOMA_DROP_BAD_OFFSET, &p, 0, 0);       /* no payload at all */
	p = data_of(1014, 0x80000000u, 0);
	add(in, 1, HOMA_DROP_TOO_LONG, &p, 100, 0);       /* message_length above max */
	p = pkt_of(HOMA_PKT_START_MSG, 1016);
	p.u.start.message_length = 0x80000000u;
	add(in, 1, HOMA_DROP_TOO_LONG, &p, 0, 0);
	p = pkt_of(HOMA_PKT_START_MSG, 1018);
	add(in, 1, HOMA_DROP_BAD_FIELD, &p, 0, 0);        /* START_MSG of 0 bytes */
	p = pkt_of(HOMA_PKT_GRANT, 1021);
	p.u.grant.priority = 9;
	add(in, 0, HOMA_DROP_BAD_FIELD, &p, 0, 0);        /* priority out of range */
	p = pkt_of(HOMA_PKT_RESEND, 1022);
	p.u.resend.priority = 200;
	add(in, 1, HOMA_DROP_BAD_FIELD, &p, 0, 0);
	p = pkt_of(HOMA_PKT_ACK, 1024);
	b = add(in, 1, HOMA_DROP_BAD_FIELD, &p, 0, 0);
	b->bytes[29] = 9;                                 /* num_acks 9 > 5 */
	p = pkt_of(HOMA_PKT_NEED_ACK, 1026);              /* even: not a server id */
	add(in, 0, HOMA_DROP_BAD_FIELD, &p, 0, 0);
	p = pkt_of(HOMA_PKT_GRANT, 1029);
	p.dport = 999;
	add(in, 0, HOMA_DROP_WRONG_PORT, &p, 0, 0);       /* not this endpoint's port */
	p = data_of(1031, 150, 0);
	add(in, 0, HOMA_DROP_UNKNOWN_RPC, &p, 150, 0);    /* response for no client RPC */
	p = pkt_of(HOMA_PKT_GRANT, 1033);
	add(in, 0, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);      /* nonexistent RPCs ... */
	p = pkt_of(HOMA_PKT_RESEND, 1034);
	add(in, 1, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	p = pkt_of(HOMA_PKT_ACK, 1036);
	add(in, 1, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	p = pkt_of(HOMA_PKT_RPC_UNKNOWN, 1039);
	add(in, 0, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	p = pkt_of(HOMA_PKT_BUSY, 1041);
	add(in, 0, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	/* the real RPC's id, forged from the wrong address */
	p = pkt_of(HOMA_PKT_GRANT, real ^ 1);
	p.u.grant.offset = 10000000;
	add(in, 0, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	p = pkt_of(HOMA_PKT_RPC_UNKNOWN, real ^ 1);
	add(in, 0, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	p = pkt_of(HOMA_PKT_BUSY, real ^ 1);
	add(in, 0, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	p = pkt_of(HOMA_PKT_RESEND, real);
	p.u.resend.length = HOMA_RESEND_ALL;
	add(in, 1, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
	p = pkt_of(HOMA_PKT_ACK, real);
	p.u.ack.num_acks = 1;
	p.u.ack.acks[0].client_id = real;
	p.u.ack.acks[0].server_port = WORLD_PORT;
	add(in, 1, HOMA_DROP_UNKNOWN_RPC, &p, 0, 0);
}

/** malformed__all_dropped_rpcs_unharmed() - The scenario. */
static void malformed__all_dropped_rpcs_unharmed(void **state)
{
	static struct injector in;
	struct world w;
	struct world_opts o;
	struct homa_stats st;
	uint64_t want[2][HOMA_DROP_REASONS] = {{0}};
	size_t i, t0;
	int h, r;

	(void)state;
	world_opts_default(&o);
	assert_int_equal(world_init(&w, &o), 0);
	memset(&in, 0, sizeof(in));
	assert_int_equal(homa_sim_add_host(w.net, &inj_ops, &in), INJECTOR);
	assert_int_equal(homa_sim_connect_host(w.net, INJECTOR, 0,
		&(struct homa_sim_link_cfg){o.mbps, o.delay_ns, 0},
		&(struct homa_sim_link_cfg){o.mbps, o.delay_ns, 0}), INJECTOR);
	t0 = world_rpc(&w, 0, 1, 1000000, 100);
	world_rpc(&w, 0, 1, 100, 1000000);
	world_rpc(&w, 0, 1, 5000, 5000);
	build_corpus(&in, w.rpcs[t0].id);
	in.start_ns = 10000;
	homa_sim_host_kick(w.net, INJECTOR);
	assert_int_equal(world_run(&w, 1000000000ull), 0);
	assert_int_equal(in.next, in.n);
	homa_sim_run_until(w.net, homa_sim_now(w.net) + 10 * o.settings.tick_ns);

	for (i = 0; i < w.nrpcs; i++) {
		assert_int_equal(w.rpcs[i].status, 1);
		assert_int_equal(w.rpcs[i].responses, 1);
		assert_int_equal(w.rpcs[i].execs, 1);
		assert_true(w.rpcs[i].resp_ok);
	}
	assert_int_equal(w.bad_requests + w.unmatched + w.send_errors, 0);
	for (i = 0; i < (size_t)in.n; i++)
		want[in.pkts[i].dst][in.pkts[i].reason]++;
	for (h = 0; h < 2; h++) {
		world_stats(&w, h, &st);
		for (r = 0; r < HOMA_DROP_REASONS; r++)
			if (st.drops[r] != want[h][r])
				fail_msg("host %d: %llu drops for %s, expected %llu", h,
					 (unsigned long long)st.drops[r], homa_drop_reason_name(r),
					 (unsigned long long)want[h][r]);
		assert_int_equal(st.active_rpcs, 0);
		assert_int_equal(st.rpc_restarts, 0);
	}
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(malformed__all_dropped_rpcs_unharmed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
