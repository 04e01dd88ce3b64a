/* SPDX-License-Identifier: MIT */
/**
 * @file test_single_loss.c
 * Scenario 4, exhaustive single loss: one RPC whose request and response
 * are 20 packets each (with unsched_bytes of 5 packets, so both need
 * GRANTs) is first run loss-free while the network records every packet.
 * Then, for each packet of that trace in turn (DATA, GRANT, CUTOFFS, ACK,
 * START_MSG in START_MSG mode, ...), the same run is repeated with exactly
 * that packet dropped: the RPC still completes exactly once, bit-exact,
 * the server runs it once, and both engines free their state. A second
 * test also drops, together with each first loss, each recovery packet
 * (RESEND, BUSY, NEED_ACK, RPC_UNKNOWN, retransmitted DATA, ...) that the
 * first loss caused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "world.h"

#define PKTS 20
#define RUN_NS 5000000000ull

/** init() - Two hosts; scheduled messages; trace EMIT and filter drops. */
static void init(struct world *w, bool start_msg)
{
	struct world_opts o;
	uint32_t payload;

	world_opts_default(&o);
	o.trace = true;
	payload = o.settings.mtu - HOMA_DATA_HDR_LEN;
	o.settings.unsched_bytes = 5 * payload;
	o.settings.start_msg = start_msg;
	assert_int_equal(world_init(w, &o), 0);
	w->trace.what_mask = HOMA_SIM_TRACE_MASK(HOMA_SIM_EMIT) |
			     HOMA_SIM_TRACE_MASK(HOMA_SIM_DROP_FILTER);
}

/** rpc_len() - Bytes of a 20-packet message in @w. */
static uint32_t rpc_len(const struct world *w)
{
	return PKTS * (w->o.settings.mtu - HOMA_DATA_HDR_LEN);
}

/**
 * run_dropping() - Run the RPC with packets @drops[0..n) dropped; check
 * exactly-once completion and that both engines end with no state.
 * @dropped_type: if not NULL, receives the type of the first dropped packet.
 * The world is left for the caller to inspect and free.
 */
static void run_dropping(struct world *w, bool start_msg, const uint64_t *drops,
			 size_t n, uint8_t *dropped_type)
{
	struct homa_stats st;
	size_t i;
	int h;

	init(w, start_msg);
	world_chaos(w, 1);
	w->chaos.drop_uids = drops;
	w->chaos.ndrop_uids = n;
	world_rpc(w, 0, 1, rpc_len(w), rpc_len(w));
	if (world_run(w, RUN_NS) != 0)
		fail_msg("drop %llu: RPC did not complete", (unsigned long long)drops[0]);
	homa_sim_run_until(w->net, homa_sim_now(w->net) +
			   3 * w->o.settings.timeout_ticks * w->o.settings.tick_ns);
	assert_int_equal(w->rpcs[0].status, 1);
	assert_int_equal(w->rpcs[0].responses, 1);
	assert_int_equal(w->rpcs[0].execs, 1);
	assert_true(w->rpcs[0].resp_ok);
	assert_int_equal(w->bad_requests + w->unmatched + w->send_errors, 0);
	for (h = 0; h < 2; h++) {
		world_stats(w, h, &st);
		if (st.active_rpcs || st.rx_buffered_bytes || st.tx_buffered_bytes)
			fail_msg("drop %llu: host %d keeps %llu rpcs",
				 (unsigned long long)drops[0], h,
				 (unsigned long long)st.active_rpcs);
	}
	assert_int_equal(w->chaos.dropped, n);
	for (i = 0; dropped_type && i < w->trace.len; i++) {
		if (w->trace.recs[i].what == HOMA_SIM_DROP_FILTER) {
			*dropped_type = w->trace.recs[i].pkt.type;
			break;
		}
	}
}

/** base_trace() - The loss-free run: every emitted packet's type by uid. */
static size_t base_trace(bool start_msg, uint8_t *types, size_t cap, uint32_t *seen)
{
	struct world w;
	size_t i, n = 0;

	run_dropping(&w, start_msg, NULL, 0, NULL);
	*seen = 0;
	for (i = 0; i < w.trace.len; i++) {
		const struct homa_sim_trace_rec *r = &w.trace.recs[i];

		if (r->what != HOMA_SIM_EMIT)
			continue;
		assert_true(r->uid == n && n < cap);
		types[n++] = r->pkt.type;
		*seen |= 1u << (r->pkt.type - HOMA_PKT_FIRST);
	}
	world_free(&w);
	return n;
}

/** type_bit() - The bit of @type in a seen-mask. */
static uint32_t type_bit(uint8_t type)
{
	return 1u << (type - HOMA_PKT_FIRST);
}

/** exhaustive() - Drop each packet of the loss-free trace in turn. */
static void exhaustive(bool start_msg)
{
	uint8_t types[512];
	uint32_t seen;
	size_t n, k;

	n = base_trace(start_msg, types, 512, &seen);
	assert_true(n >= 2 * PKTS);
	assert_true(seen & type_bit(HOMA_PKT_DATA));
	assert_true(seen & type_bit(HOMA_PKT_GRANT));
	assert_true(seen & type_bit(HOMA_PKT_CUTOFFS));
	if (start_msg)
		assert_true(seen & type_bit(HOMA_PKT_START_MSG));
	for (k = 0; k < n; k++) {
		struct world w;
		uint64_t uid = k;
		uint8_t t = 0;

		run_dropping(&w, start_msg, &uid, 1, &t);
		assert_int_equal(t, types[k]);
		world_free(&w);
	}
}

/** single_loss__classic() - Every packet of a classic-mode RPC. */
static void single_loss__classic(void **state)
{
	(void)state;
	exhaustive(false);
}

/** single_loss__start_msg() - Every packet of a START_MSG-mode RPC. */
static void single_loss__start_msg(void **state)
{
	(void)state;
	exhaustive(true);
}

/**
 * recovery_losses() - For each first loss k, drop also each packet the
 * recovery added (uids beyond what the loss-free run emitted up to that
 * point are not comparable, so: each non-DATA control packet emitted after
 * the first loss, and each retransmitted DATA).
 */
static void recovery_losses(bool start_msg)
{
	uint8_t types[512];
	uint32_t seen;
	size_t n, k, i, pairs = 0;

	n = base_trace(start_msg, types, 512, &seen);
	for (k = 0; k < n; k++) {
		struct world w;
		uint64_t drops[2] = {k, 0};
		uint64_t second[64];
		size_t ns = 0;

		run_dropping(&w, start_msg, drops, 1, NULL);
		for (i = 0; i < w.trace.len && ns < 64; i++) {
			const struct homa_sim_trace_rec *r = &w.trace.recs[i];

			if (r->what != HOMA_SIM_EMIT || r->uid <= k)
				continue;
			if (r->pkt.type == HOMA_PKT_RESEND || r->pkt.type == HOMA_PKT_BUSY ||
			    r->pkt.type == HOMA_PKT_NEED_ACK ||
			    r->pkt.type == HOMA_PKT_RPC_UNKNOWN ||
			    (r->pkt.type == HOMA_PKT_DATA && r->pkt.u.data.retransmit))
				second[ns++] = r->uid;
		}
		world_free(&w);
		for (i = 0; i < ns; i++) {
			drops[1] = second[i];
			run_dropping(&w, start_msg, drops, 2, NULL);
			world_free(&w);
			pairs++;
		}
	}
	assert_true(pairs > 0);
}

/** single_loss__recovery_packets_classic() - First loss plus a lost recovery packet. */
static void single_loss__recovery_packets_classic(void **state)
{
	(void)state;
	recovery_losses(false);
}

/** single_loss__recovery_packets_start_msg() - The same in START_MSG mode. */
static void single_loss__recovery_packets_start_msg(void **state)
{
	(void)state;
	recovery_losses(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(single_loss__classic),
		cmocka_unit_test(single_loss__start_msg),
		cmocka_unit_test(single_loss__recovery_packets_classic),
		cmocka_unit_test(single_loss__recovery_packets_start_msg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
