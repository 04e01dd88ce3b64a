/* SPDX-License-Identifier: MIT */
/**
 * @file test_psp_hostile.c
 * Unit tests of the PSP hostile peer (src/sim/psp_hostile.c) without an
 * engine or a cipher: a scripted sender emits packets shaped like sealed
 * PSP packets to a sink that records what it receives, and the peer
 * attacks the sink with one move at a time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "homa/wire.h"
#include "sim/psp_hostile.h"

#define SEALED_LEN 80     /**< the sender's packet */
#define MAX_RX 1024

/** A host that emits one sealed-looking packet to host 1 at time 0. */
struct sender {
	int sent;
	uint8_t pkt[SEALED_LEN];
};

/** A host that records the packets it receives. */
struct sink {
	int n;
	uint32_t len[MAX_RX];
	uint8_t b[MAX_RX][SEALED_LEN];
};

/** sender_output() - Agent op: the packet, once. */
static int sender_output(void *agent, uint64_t now, uint8_t *buf, size_t cap, struct homa_tx *tx)
{
	struct sender *s = agent;

	(void)now;
	if (s->sent || cap < SEALED_LEN)
		return 0;
	s->sent = 1;
	memcpy(buf, s->pkt, SEALED_LEN);
	tx->dst = homa_sim_host_addr(1);
	tx->len = SEALED_LEN;
	return SEALED_LEN;
}

/** sink_input() - Agent op: record the packet (its first SEALED_LEN bytes). */
static void sink_input(void *agent, const homa_addr *src, uint8_t *buf, size_t len, uint64_t now)
{
	struct sink *k = agent;

	(void)src;
	(void)now;
	if (k->n >= MAX_RX)
		return;
	k->len[k->n] = (uint32_t)len;
	memcpy(k->b[k->n++], buf, len < SEALED_LEN ? len : SEALED_LEN);
}

/** nothing_output() - Agent op of the sink: sends nothing. */
static int nothing_output(void *agent, uint64_t now, uint8_t *buf, size_t cap,
			  struct homa_tx *tx)
{
	(void)agent, (void)now, (void)buf, (void)cap, (void)tx;
	return 0;
}

/** ignore_input() - Agent op of the sender: receives nothing it keeps. */
static void ignore_input(void *agent, const homa_addr *src, uint8_t *buf, size_t len,
			 uint64_t now)
{
	(void)agent, (void)src, (void)buf, (void)len, (void)now;
}

static const struct homa_sim_agent_ops sender_ops = {.input = ignore_input,
						     .output = sender_output};
static const struct homa_sim_agent_ops sink_ops = {.input = sink_input,
						   .output = nothing_output};

/** A network of sender (0), sink (1) and the peer (2). */
struct rig {
	struct homa_sim_net *net;
	struct sender s;
	struct sink k;
	struct homa_sim_psp_hostile *h;
	struct homa_sim_psp_hostile_stats st;
};

/** rig_run() - Build the rig with @cfg (victim 1), run 10 ms, read the peer's stats. */
static void rig_run(struct rig *r, struct homa_sim_psp_hostile_cfg *cfg)
{
	struct homa_sim_link_cfg link = {25000, 1000, 0};
	static const uint8_t hdr[16] = {HOMA_PSP_NEXT_HDR, 1, HOMA_PSP_CRYPT_OFF, 0x01,
					0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 9};

	memset(r, 0, sizeof(*r));
	memcpy(r->s.pkt, hdr, sizeof(hdr));
	for (int i = 16; i < SEALED_LEN; i++)
		r->s.pkt[i] = (uint8_t)(i * 13);
	assert_int_equal(homa_sim_net_new(&r->net, NULL), 0);
	assert_int_equal(homa_sim_add_host(r->net, &sender_ops, &r->s), 0);
	assert_int_equal(homa_sim_add_host(r->net, &sink_ops, &r->k), 1);
	cfg->victim = 1;
	assert_int_equal(homa_sim_psp_hostile_add(r->net, cfg, &r->h), 2);
	assert_true(homa_sim_star(r->net, &link) >= 0);
	for (int i = 0; i < 3; i++)
		homa_sim_host_kick(r->net, i);
	homa_sim_run_until(r->net, 10000000);
	homa_sim_psp_hostile_stats(r->h, &r->st);
}

/**
 * move_cfg() - Fill @cfg with the defaults but only @move enabled, the
 * peer sending from @start_ns until @stop_ns.
 */
static void move_cfg(struct homa_sim_psp_hostile_cfg *cfg, int move, uint64_t start_ns,
		     uint64_t stop_ns)
{
	homa_sim_psp_hostile_cfg_default(cfg);
	cfg->moves = 1u << move;
	cfg->start_ns = start_ns;
	cfg->stop_ns = stop_ns;
}

/**
 * rig_steal_one() - rig_run() with @cfg set to steal the first packet
 * seen and no other; asserts exactly one was stolen.
 */
static void rig_steal_one(struct rig *r, struct homa_sim_psp_hostile_cfg *cfg)
{
	cfg->steal_every = 1;
	cfg->steal_max = 1;
	rig_run(r, cfg);
	assert_int_equal(r->st.stolen, 1);
}

/** rig_free() - Free the network (and the peer). */
static void rig_free(struct rig *r)
{
	homa_sim_net_free(r->net);
}

/** homa_sim_psp_hostile_add__bad_cfg() - No move, interval 0, EXPIRED without a time. */
static void homa_sim_psp_hostile_add__bad_cfg(void **state)
{
	struct homa_sim_psp_hostile_cfg cfg;
	struct homa_sim_net *net;

	(void)state;
	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	homa_sim_psp_hostile_cfg_default(&cfg);
	cfg.moves = 0;
	assert_int_equal(homa_sim_psp_hostile_add(net, &cfg, NULL), HOMA_EINVAL);
	homa_sim_psp_hostile_cfg_default(&cfg);
	cfg.interval_ns = 0;
	assert_int_equal(homa_sim_psp_hostile_add(net, &cfg, NULL), HOMA_EINVAL);
	homa_sim_psp_hostile_cfg_default(&cfg);
	cfg.moves |= 1u << HOMA_PSP_HOSTILE_EXPIRED;
	assert_int_equal(homa_sim_psp_hostile_add(net, &cfg, NULL), HOMA_EINVAL);
	assert_int_equal(homa_sim_num_hosts(net), 0);
	homa_sim_net_free(net);
}

/**
 * homa_sim_psp_hostile_flip__every_bit_once() - After the packet is
 * delivered, FLIP sends each of its one-bit variants exactly once, in
 * order, and tells the reason of each by its byte: "not PSP" (bytes 0-1),
 * "bad header" (2-3), undetermined (SPI, IV), "replay" (the rest of a
 * delivered packet).
 */
static void homa_sim_psp_hostile_flip__every_bit_once(void **state)
{
	struct homa_sim_psp_hostile_cfg cfg;
	struct rig r;

	(void)state;
	move_cfg(&cfg, HOMA_PSP_HOSTILE_FLIP, 100000, 100000 + SEALED_LEN * 8 * 1000);
	cfg.interval_ns = 1000;
	rig_run(&r, &cfg);
	assert_int_equal(r.k.n, 1 + SEALED_LEN * 8);
	for (int bit = 0; bit < SEALED_LEN * 8; bit++) {
		uint8_t want[SEALED_LEN];

		memcpy(want, r.s.pkt, SEALED_LEN);
		want[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(r.k.len[1 + bit], SEALED_LEN);
		assert_memory_equal(r.k.b[1 + bit], want, SEALED_LEN);
	}
	assert_int_equal(r.st.walked, 1);
	assert_int_equal(r.st.walked_max, SEALED_LEN);
	assert_int_equal(r.st.delivered[HOMA_PSP_HOSTILE_FLIP], SEALED_LEN * 8);
	assert_int_equal(r.st.expect[HOMA_PSP_REJ_NOT_PSP], 16);
	assert_int_equal(r.st.expect[HOMA_PSP_REJ_BAD_HEADER], 16);
	assert_int_equal(r.st.undetermined, 12 * 8);
	assert_int_equal(r.st.expect[HOMA_PSP_REJ_REPLAY], (SEALED_LEN - 16) * 8);
	rig_free(&r);
}

/**
 * homa_sim_psp_hostile_steal__truncations_fresh() - A stolen packet never
 * reaches the sink; its truncations do, each shorter than it, with the
 * reason told by the length ("not PSP", "truncated", then "auth": its
 * IV was never delivered).
 */
static void homa_sim_psp_hostile_steal__truncations_fresh(void **state)
{
	struct homa_sim_psp_hostile_cfg cfg;
	uint64_t n[HOMA_PSP_REJ_REASONS] = {0};
	struct rig r;

	(void)state;
	move_cfg(&cfg, HOMA_PSP_HOSTILE_TRUNCATE, 100000, 1100000);
	rig_steal_one(&r, &cfg);
	assert_int_equal(r.k.n, 500);
	for (int i = 0; i < r.k.n; i++) {
		assert_true(r.k.len[i] < SEALED_LEN);
		n[r.k.len[i] < 2 ? HOMA_PSP_REJ_NOT_PSP
		  : r.k.len[i] < 60 ? HOMA_PSP_REJ_TRUNCATED : HOMA_PSP_REJ_AUTH]++;
	}
	for (int reason = 0; reason < HOMA_PSP_REJ_REASONS; reason++)
		assert_int_equal(r.st.expect[reason], n[reason]);
	assert_int_equal(r.st.undetermined, 0);
	assert_true(n[HOMA_PSP_REJ_AUTH] > 0 && n[HOMA_PSP_REJ_TRUNCATED] > 0);
	rig_free(&r);
}

/**
 * homa_sim_psp_hostile_stolen__from_clear_header() - A stolen packet is
 * recorded with its sender, receiver, and the type and sender_id of its
 * clear common header (bytes 11 and 20-27 after the PSP header); @max
 * limits what is copied.
 */
static void homa_sim_psp_hostile_stolen__from_clear_header(void **state)
{
	struct homa_sim_psp_stolen log[2];
	struct homa_sim_psp_hostile_cfg cfg;
	uint64_t id = 0;
	struct rig r;

	(void)state;
	move_cfg(&cfg, HOMA_PSP_HOSTILE_CLEAR, 0, 1);
	rig_steal_one(&r, &cfg);
	assert_int_equal(homa_sim_psp_hostile_stolen(r.h, log, 0), 0);
	assert_int_equal(homa_sim_psp_hostile_stolen(r.h, log, 2), 1);
	for (int i = 16 + 20; i < 16 + 28; i++)
		id = id << 8 | r.s.pkt[i];
	assert_int_equal(log[0].src, 0);
	assert_int_equal(log[0].dst, 1);
	assert_int_equal(log[0].type, r.s.pkt[16 + 11]);
	assert_int_equal(log[0].sender_id, id);
	assert_int_equal(log[0].sent_ns, 0);
	rig_free(&r);
}

/** homa_sim_psp_hostile_clear__decodes() - CLEAR sends Homa requests that must be "not PSP". */
static void homa_sim_psp_hostile_clear__decodes(void **state)
{
	struct homa_sim_psp_hostile_cfg cfg;
	struct rig r;

	(void)state;
	move_cfg(&cfg, HOMA_PSP_HOSTILE_CLEAR, 0, 20000);
	rig_run(&r, &cfg);
	assert_int_equal(r.k.n, 1 + 10);
	assert_int_equal(r.st.expect[HOMA_PSP_REJ_NOT_PSP], 10);
	for (int i = 0; i < r.k.n; i++) {
		if (r.k.b[i][0] == HOMA_PSP_NEXT_HDR)
			continue;  /* the sender's packet */
		assert_int_equal(r.k.len[i], HOMA_DATA_HDR_LEN + 100);
		assert_int_equal(r.k.b[i][11], HOMA_PKT_DATA);
	}
	rig_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_sim_psp_hostile_add__bad_cfg),
		cmocka_unit_test(homa_sim_psp_hostile_flip__every_bit_once),
		cmocka_unit_test(homa_sim_psp_hostile_steal__truncations_fresh),
		cmocka_unit_test(homa_sim_psp_hostile_stolen__from_clear_header),
		cmocka_unit_test(homa_sim_psp_hostile_clear__decodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
