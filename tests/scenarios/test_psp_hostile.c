/* SPDX-License-Identifier: MIT */
/**
 * @file test_psp_hostile.c
 * Attacks on encrypted traffic in the simulated network: hosts 0-2 run
 * honest RPCs of 100 B to 300 KB against host 3, every host sealing with
 * PSP (psp_world.h); host 4 is the PSP hostile peer (sim/psp_hostile.h):
 * forged packets, every bit of captured sealed packets flipped in turn,
 * wrong and expired SPIs, truncations, replays inside and outside the
 * window, cleartext requests. Each scenario runs the same honest
 * workload twice, without and with the attackers (same keys, same
 * rotations), and checks that every honest RPC completes once,
 * bit-exact; that every attack packet delivered to an encrypted host is
 * rejected and counted (the hosts' rejections sum to the packets the
 * attackers delivered, per reason wherever the attacker can tell the
 * reason).
 *
 * The attacker also steals two packets: for the RPCs it robs it is a
 * lossy network. Each robbed RPC must still complete once, bit-exact,
 * recovered by RESEND, within 2x of its time without attackers plus one
 * recovery (recover_ns()) per stolen packet. So must the other RPCs of
 * the robbed client that were in flight meanwhile (held_back(): the
 * server grants to at most two messages per peer with granted bytes in
 * flight, and stolen bytes stay in flight until recovered). The P50 and
 * P99 of the honest RPCs untouched by thefts must stay within 2x of the
 * same RPCs in the run without attackers. The robbed RPCs are found by
 * the sender and the sender_id of each stolen packet's clear common
 * header (homa_sim_psp_hostile_stolen()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "psp_world.h"

#define CLIENTS 3
#define SERVER 3
#define HOSTS 4
#define PER_CLIENT 160
#define NRPCS (CLIENTS * PER_CLIENT)
#define WINDOW_NS 20000000ull    /**< honest RPCs start within this */
#define ROTATE1_NS 15000001ull   /**< the server's first master-key rotation */
#define ROTATE2_NS 18000001ull   /**< the second: SPIs issued before ROTATE1_NS expire */
#define STEAL_FROM_NS 16000000ull /**< late packets: few newer IVs follow them */
#define MAX_SLOWDOWN 2.0

/** How one arm attacks. */
struct attack {
	int version;               /**< PSP version of every host */
	uint32_t moves;            /**< PSP hostile moves (0: no PSP attacker) */
	uint64_t interval_ns;      /**< its packet interval */
	uint64_t stop_ns;          /**< it stops sending */
	bool rotate;               /**< the server rotates at ROTATE1_NS and ROTATE2_NS */
	bool clear_peer;           /**< also the cleartext hostile peer (sim/hostile.h) */
};

/** One arm's figures. */
struct arm {
	uint64_t lat[NRPCS];                   /**< completion time of each honest RPC, ns */
	uint32_t robbed[NRPCS];                /**< its packets the attacker stole */
	uint32_t held[NRPCS];                  /**< packets stolen of its client's other RPCs
						*   while it was in flight (held_back()) */
	uint64_t unattributed;                 /**< stolen packets of no honest RPC */
	uint64_t recover_ns;                   /**< longest recovery of one lost packet (recover_ns()) */
	struct homa_sim_psp_hostile_stats ps;  /**< PSP attacker */
	uint64_t clear_delivered;              /**< cleartext peer's packets delivered to hosts */
	uint64_t rejected[HOMA_PSP_REJ_REASONS];
	uint64_t verify_drops;                 /**< engines' HOMA_DROP_VERIFY, all hosts */
};

/** Counter of the cleartext peer's packets delivered to engine hosts. */
struct clear_count {
	int peer;                  /**< its host id (-1: none yet) */
	uint64_t delivered;
};

/** count_clear() - Observer: count the cleartext peer's packets delivered to engine hosts. */
static void count_clear(void *ctx, const struct homa_sim_pkt *pkt, int what, uint64_t now)
{
	struct clear_count *c = ctx;

	(void)now;
	if (what == HOMA_SIM_DELIVER && pkt->src == c->peer && pkt->dst >= 0 && pkt->dst < HOSTS)
		c->delivered++;
}

/** workload() - The honest RPCs: the same for every arm (own generator). */
static void workload(struct world *w)
{
	world_mixed_rpcs(w, CLIENTS, PER_CLIENT, SERVER, WINDOW_NS, 42);
}

/** cmp_u64() - qsort order. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/** check_honest() - Every honest RPC ended once, bit-exact; record its completion time. */
static void check_honest(struct world *w, struct arm *a)
{
	assert_int_equal(w->nrpcs, NRPCS);
	for (size_t i = 0; i < w->nrpcs; i++) {
		const struct world_rpc *r = &w->rpcs[i];

		if (r->status != 1 || r->responses != 1 || r->execs != 1 || !r->resp_ok)
			fail_msg("honest RPC %zu (%u/%u bytes): status %d, %u responses, %u runs",
				 i, r->req_len, r->resp_len, r->status, r->responses, r->execs);
		a->lat[i] = r->done_ns - r->sent_ns;
	}
	assert_int_equal(w->bad_requests + w->bad_responses + w->send_errors + w->unmatched, 0);
}

/**
 * tag_of() - The honest RPC stolen packet @s belonged to: its clear
 * header's sender_id is the client's RPC id (even) from the client, that
 * id + 1 from the server. Return: its tag, or -1 if none.
 */
static long tag_of(const struct world *w, const struct homa_sim_psp_stolen *s)
{
	int client = s->sender_id & 1 ? s->dst : s->src;
	uint64_t id = s->sender_id & ~1ull;

	for (size_t i = 0; i < w->nrpcs; i++)
		if (w->rpcs[i].client == client && w->rpcs[i].id == id)
			return (long)i;
	return -1;
}

/**
 * held_back() - Count, for each honest RPC of the client of robbed RPC
 * @tag that was in flight between the theft (@stolen_ns) and @tag's
 * completion, the stolen packet in a->held: the server grants to at most
 * two messages of one peer with granted bytes in flight, and bytes lost
 * on the way stay in flight until the RESEND recovers them, so a peer's
 * two robbed messages hold back its other scheduled messages that long.
 */
static void held_back(const struct world *w, size_t tag, uint64_t stolen_ns, struct arm *a)
{
	const struct world_rpc *robbed = &w->rpcs[tag];

	for (size_t i = 0; i < w->nrpcs; i++) {
		const struct world_rpc *r = &w->rpcs[i];

		if (i != tag && r->client == robbed->client && r->sent_ns < robbed->done_ns &&
		    r->done_ns > stolen_ns)
			a->held[i]++;
	}
}

/**
 * mark_robbed() - Count the packets @h stole of each honest RPC into
 * a->robbed, and those that held back other RPCs into a->held.
 */
static void mark_robbed(const struct world *w, const struct homa_sim_psp_hostile *h,
			struct arm *a)
{
	struct homa_sim_psp_stolen log[HOMA_SIM_PSP_STOLEN_LOG];
	size_t n = homa_sim_psp_hostile_stolen(h, log, HOMA_SIM_PSP_STOLEN_LOG);

	assert_int_equal(n, a->ps.stolen);  /* every stolen packet is accounted for */
	for (size_t i = 0; i < n; i++) {
		long tag = tag_of(w, &log[i]);

		if (tag < 0) {
			a->unattributed++;
			continue;
		}
		a->robbed[tag]++;
		held_back(w, (size_t)tag, log[i].sent_ns, a);
	}
}

/** untouched() - True if the attacker of @att stole no packet of RPC @i nor held it back. */
static bool untouched(const struct arm *att, size_t i)
{
	return !att->robbed[i] && !att->held[i];
}

/**
 * percentiles() - P50 and P99 of the completion times in @a of the honest
 * RPCs untouched() in @att.
 */
static void percentiles(const struct arm *a, const struct arm *att, double *p50, double *p99)
{
	uint64_t lat[NRPCS];
	size_t n = 0;

	for (size_t i = 0; i < NRPCS; i++)
		if (untouched(att, i))
			lat[n++] = a->lat[i];
	assert_true(n > 0);
	qsort(lat, n, sizeof(*lat), cmp_u64);
	*p50 = (double)lat[n / 2];
	*p99 = (double)lat[n * 99 / 100];
}

/** add_psp_attacker() - The PSP hostile peer of @at against the server. */
static struct homa_sim_psp_hostile *add_psp_attacker(struct psp_world *pw,
						     const struct attack *at)
{
	struct homa_sim_psp_hostile_cfg cfg;
	struct homa_sim_psp_hostile *h = NULL;

	homa_sim_psp_hostile_cfg_default(&cfg);
	cfg.moves = at->moves;
	cfg.victim = SERVER;
	cfg.port = WORLD_PORT;
	cfg.interval_ns = at->interval_ns;
	cfg.stop_ns = at->stop_ns;
	cfg.steal_every = 97;
	cfg.steal_max = 2;
	cfg.steal_from_ns = STEAL_FROM_NS;
	if (at->rotate) {
		cfg.expire_before_ns = ROTATE1_NS;
		cfg.expire_at_ns = ROTATE2_NS;
	}
	assert_true(psp_world_add_attacker(pw, &cfg, &h) >= HOSTS);
	return h;
}

/** add_clear_peer() - The cleartext hostile peer: every move but REPLAY (sealed bytes). */
static void add_clear_peer(struct world *w, const struct attack *at, struct clear_count *cc)
{
	struct homa_sim_hostile_cfg cfg;

	homa_sim_set_observer(w->net, count_clear, cc);
	homa_sim_hostile_cfg_default(&cfg);
	cfg.moves = HOMA_HOSTILE_ALL & ~(1u << HOMA_HOSTILE_REPLAY);
	cfg.victim = SERVER;
	cfg.port = WORLD_PORT;
	cfg.interval_ns = 4000;
	cfg.stop_ns = at->stop_ns;
	cfg.seed = 7;
	cc->peer = world_add_hostile(w, &cfg, NULL);
	assert_true(cc->peer >= HOSTS);
}

/** gather() - The hosts' rejections and verify drops into @a. */
static void gather(struct psp_world *pw, struct arm *a)
{
	struct homa_stats st;

	psp_world_rejected(pw, a->rejected);
	for (int h = 0; h < HOSTS; h++) {
		world_stats(pw->w, h, &st);
		a->verify_drops += st.drops[HOMA_DROP_VERIFY];
	}
}

/**
 * recover_ns() - The longest an RPC waits for one lost packet under
 * @s: the receiver asks for the first gap of a message by RESEND once the
 * RPC has been silent resend_ticks ticks; the sender's own RESEND (sent
 * after as many silent ticks of its own) counts as activity and restarts
 * that count once; one more tick for the phase of the tick.
 */
static uint64_t recover_ns(const struct homa_settings *s)
{
	return (2ull * s->resend_ticks + 1) * s->tick_ns;
}

/** run_arm() - One run of the workload; with the attackers of @at if @attack. */
static void run_arm(const struct attack *at, bool attack, struct arm *a)
{
	struct homa_sim_psp_hostile *h = NULL;
	struct clear_count cc = {-1, 0};
	struct psp_world pw;
	struct world_opts o;
	struct world w;

	memset(a, 0, sizeof(*a));
	world_opts_default(&o);
	o.nhosts = HOSTS;
	a->recover_ns = recover_ns(&o.settings);
	assert_int_equal(world_init(&w, &o), 0);
	assert_int_equal(psp_world_init(&pw, &w, at->version), 0);
	if (at->rotate) {
		assert_int_equal(psp_world_rotate_at(&pw, ROTATE1_NS, SERVER), 0);
		assert_int_equal(psp_world_rotate_at(&pw, ROTATE2_NS, SERVER), 0);
	}
	if (attack && at->clear_peer)
		add_clear_peer(&w, at, &cc);
	if (attack && at->moves)
		h = add_psp_attacker(&pw, at);
	workload(&w);
	assert_int_equal(world_run(&w, 2000000000ull), 0);
	homa_sim_run_until(w.net, at->stop_ns + 1000000); /* every attack packet delivered */
	check_honest(&w, a);
	assert_int_equal(pw.rotate_errors, 0);
	assert_int_equal(pw.rotations, at->rotate ? 2 : 0);
	if (h) {
		homa_sim_psp_hostile_stats(h, &a->ps);
		mark_robbed(&w, h, a);
	}
	a->clear_delivered = cc.delivered;
	gather(&pw, a);
	world_free(&w);
	psp_world_free(&pw);
}

/**
 * check_rejected() - Every attack packet delivered was rejected and
 * counted: the hosts' rejections sum to the packets delivered, and each
 * reason holds at least the packets that must get it and at most those
 * plus the undetermined ones.
 */
static void check_rejected(const struct arm *a)
{
	uint64_t delivered = a->clear_delivered + a->ps.undetermined, total = 0;

	for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++) {
		uint64_t want = a->ps.expect[r] + (r == HOMA_PSP_REJ_NOT_PSP ? a->clear_delivered : 0);

		printf("  %-11s rejected %6llu, attacker delivered %6llu of that reason\n",
		       homa_psp_reject_name(r), (unsigned long long)a->rejected[r],
		       (unsigned long long)want);
		if (a->rejected[r] < want || a->rejected[r] > want + a->ps.undetermined)
			fail_msg("reason %s: %llu rejected, %llu expected (+ up to %llu)",
				 homa_psp_reject_name(r), (unsigned long long)a->rejected[r],
				 (unsigned long long)want, (unsigned long long)a->ps.undetermined);
		delivered += a->ps.expect[r];
		total += a->rejected[r];
	}
	printf("  undetermined %llu; %llu delivered (%llu of them by the cleartext peer),"
	       " %llu rejected, %llu verify drops\n", (unsigned long long)a->ps.undetermined,
	       (unsigned long long)delivered, (unsigned long long)a->clear_delivered,
	       (unsigned long long)total, (unsigned long long)a->verify_drops);
	assert_int_equal(total, delivered);
	assert_int_equal(a->verify_drops, delivered);
}

/**
 * check_slowdown() - The honest RPCs the attacker stole no packet of and
 * held back none of keep P50 and P99 within MAX_SLOWDOWN of the same RPCs
 * without attackers.
 */
static void check_slowdown(const char *name, const struct arm *base, const struct arm *att)
{
	double b50, b99, a50, a99, r50, r99;

	percentiles(base, att, &b50, &b99);
	percentiles(att, att, &a50, &a99);
	r50 = a50 / b50;
	r99 = a99 / b99;
	printf("%s: honest P50 %.1f us -> %.1f us (x%.2f), P99 %.1f us -> %.1f us (x%.2f)"
	       " untouched by thefts\n", name, b50 / 1e3, a50 / 1e3, r50, b99 / 1e3,
	       a99 / 1e3, r99);
	if (r50 > MAX_SLOWDOWN || r99 > MAX_SLOWDOWN)
		fail_msg("%s: honest slowdown P50 x%.2f, P99 x%.2f (bound x%.1f)", name, r50, r99,
			 MAX_SLOWDOWN);
}

/**
 * check_robbed() - An RPC that lost k packets to the attacker (a lossy
 * network for it), or that was held back by k packets lost of its
 * client's other RPCs, completes within MAX_SLOWDOWN of its time without
 * attackers plus k recoveries (recover_ns(): the receiver asks for one
 * gap at a time). Return: how many RPCs were robbed or held back.
 */
static size_t check_robbed(const struct arm *base, const struct arm *att)
{
	size_t touched = 0;

	for (size_t i = 0; i < NRPCS; i++) {
		uint32_t k = att->robbed[i] + att->held[i];
		uint64_t bound = (uint64_t)(MAX_SLOWDOWN * (double)base->lat[i]) + k * att->recover_ns;

		if (!k)
			continue;
		touched++;
		if (att->robbed[i])
			printf("  robbed RPC %zu: %u packets stolen, %.1f us -> %.1f us (bound %.1f us)\n",
			       i, att->robbed[i], base->lat[i] / 1e3, att->lat[i] / 1e3, bound / 1e3);
		if (att->lat[i] > bound)
			fail_msg("RPC %zu (%u packets stolen, held back by %u) took %llu ns, bound %llu ns",
				 i, att->robbed[i], att->held[i], (unsigned long long)att->lat[i],
				 (unsigned long long)bound);
	}
	return touched;
}

/**
 * compare() - Run both arms, check the rejections, the slowdown bound of
 * the honest RPCs the attacker stole nothing of and the bound of those
 * it did; every enabled PSP move must have been delivered.
 */
static void compare(const char *name, const struct attack *at, struct arm *att)
{
	static struct arm base;

	run_arm(at, false, &base);
	run_arm(at, true, att);
	printf("%s: %llu stolen (%llu of no honest RPC), %llu walked (longest %llu bytes)\n",
	       name, (unsigned long long)att->ps.stolen, (unsigned long long)att->unattributed,
	       (unsigned long long)att->ps.walked, (unsigned long long)att->ps.walked_max);
	for (int m = 0; m < HOMA_PSP_HOSTILE_MOVES; m++) {
		if (!(at->moves & (1u << m)))
			continue;
		printf("  %-9s %6llu sent, %6llu delivered\n", homa_sim_psp_hostile_move_name(m),
		       (unsigned long long)att->ps.sent[m], (unsigned long long)att->ps.delivered[m]);
		if (!att->ps.delivered[m])
			fail_msg("move %s never delivered", homa_sim_psp_hostile_move_name(m));
	}
	for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++)  /* honest traffic is never rejected */
		assert_int_equal(base.rejected[r], 0);
	check_rejected(att);
	printf("  %zu RPCs robbed or held back, each within its bound\n", check_robbed(&base, att));
	check_slowdown(name, &base, att);
}

/**
 * psp_hostile__all_attacks() - Every PSP move, a packet every 2 us, and
 * the cleartext hostile peer beside it (a packet every 4 us), while the
 * server rotates its master key twice (the SPIs of the first key expire):
 * AES-GCM-128.
 */
static void psp_hostile__all_attacks(void **state)
{
	struct attack at = {HOMA_PSP_AES_GCM_128, HOMA_PSP_HOSTILE_ALL, 3000,
			    WINDOW_NS + 20000000ull, true, true};
	static struct arm a;

	(void)state;
	compare("all_attacks", &at, &a);
	assert_true(a.ps.stolen >= 1);
	assert_true(a.clear_delivered > 1000);
	assert_true(a.rejected[HOMA_PSP_REJ_EXPIRED_SPI] > 0);
	assert_true(a.rejected[HOMA_PSP_REJ_TOO_OLD] > 0);
}

/**
 * psp_hostile__every_bit_flipped() - FLIP only, a packet every 1 us:
 * every bit of stolen sealed packets (a full-size DATA packet among
 * them) flipped in turn, AES-GCM-256; bits past the PSP header all fail
 * the ICV.
 */
static void psp_hostile__every_bit_flipped(void **state)
{
	struct attack at = {HOMA_PSP_AES_GCM_256, 1u << HOMA_PSP_HOSTILE_FLIP, 4000,
			    WINDOW_NS + 120000000ull, false, false};
	static struct arm a;

	(void)state;
	compare("every_bit_flipped", &at, &a);
	assert_true(a.ps.walked >= 2);
	assert_true(a.ps.walked_max >= 1400);
	assert_true(a.ps.expect[HOMA_PSP_REJ_AUTH] > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(psp_hostile__all_attacks),
		cmocka_unit_test(psp_hostile__every_bit_flipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
