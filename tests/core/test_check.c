/* SPDX-License-Identifier: MIT */
/**
 * @file test_check.c
 * The debug invariant checker (src/core/check.c): a consistent engine
 * passes at every step of a granted transfer; each kind of broken
 * accounting (grant totals, outstanding list, memory, eviction buckets,
 * SRPT order, per-message bounds, the grant budget) is named by
 * homa_check_engine(); and, in HOMA_INVARIANTS builds, the next entry
 * point catches a corruption and calls the failure handler.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "internal.h"

/** Drops every client packet after the first @ctx (so the request stays partial). */
static bool drop_late(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	(void)pkt;
	(void)len;
	return from == 0 && n >= *(uint64_t *)ctx;
}

/** Failure handler that records the description instead of aborting. */
struct caught {
	int n;
	const char *why;
};

/** record() - check_fail hook: remember the broken invariant. */
static void record(void *ctx, const char *why)
{
	struct caught *c = ctx;

	c->n++;
	c->why = why;
}

/**
 * partial() - A client sends a 500,000-byte request and all but its first
 * @keep packets are lost: the server holds a partly received, granted
 * message (on the grantable list, counted in total_incoming).
 */
static void partial(struct th_pair *p, uint64_t *keep)
{
	static uint8_t buf[500000];
	struct homa_iov iov = {buf, sizeof(buf)};
	uint64_t id;

	th_pair_init(p, NULL);
	p->filter = drop_late;
	p->filter_ctx = keep;
	th_pattern(buf, sizeof(buf), 7);
	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, 1,
						  p->now, &id), 0);
	th_pair_run(p, 200000);
	assert_false(homa_list_empty(&p->e[1]->grantable));
	assert_true(p->e[1]->total_incoming > 0);
}

/** check__consistent_engine_passes() - No false alarm along a whole RPC. */
static void check__consistent_engine_passes(void **state)
{
	struct th_pair p;
	uint64_t keep = 40;
	int i;

	(void)state;
	partial(&p, &keep);
	assert_null(homa_check_engine(p.e[0]));
	assert_null(homa_check_engine(p.e[1]));
	keep = UINT64_MAX; /* the losses stop: RESENDs recover the rest */
	for (i = 0; i < 200; i++) {
		th_pair_run(&p, 1000000);
		assert_null(homa_check_engine(p.e[0]));
		assert_null(homa_check_engine(p.e[1]));
	}
	assert_int_equal(p.e[0]->check_failures + p.e[1]->check_failures, 0);
	th_pair_free(&p);
}

/** expect_broken() - homa_check_engine(@e) names a broken invariant containing @what. */
static void expect_broken(homa_engine *e, const char *what)
{
	const char *why = homa_check_engine(e);

	assert_non_null(why);
	if (!strstr(why, what))
		fail_msg("expected '%s', got '%s'", what, why);
}

/** grantable_head() - The server's first grantable RPC. */
static struct homa_rpc *grantable_head(homa_engine *e)
{
	return homa_container_of(e->grantable.next, struct homa_rpc, in.grant_link);
}

/** check__each_corruption_is_named() - Break one invariant at a time. */
static void check__each_corruption_is_named(void **state)
{
	struct th_pair p;
	uint64_t keep = 20;
	homa_engine *s;
	struct homa_rpc *r;
	uint32_t was;

	(void)state;
	partial(&p, &keep);
	s = p.e[1];
	r = grantable_head(s);

	s->total_incoming += 1400;
	expect_broken(s, "total_incoming");
	s->total_incoming -= 1400;

	s->unsched_incoming += 1;
	expect_broken(s, "unsched_incoming");
	s->unsched_incoming -= 1;

	s->outstanding_msgs++;
	expect_broken(s, "outstanding");
	s->outstanding_msgs--;

	s->rx_buffered += 64;
	expect_broken(s, "rx_buffered");
	s->rx_buffered -= 64;

	s->evict_bytes[HOMA_EVICT_BUCKETS - 1] += 1;
	expect_broken(s, "eviction");
	s->evict_bytes[HOMA_EVICT_BUCKETS - 1] -= 1;

	was = r->in.received;
	r->in.received = r->in.length + 1;
	expect_broken(s, "past its length");
	r->in.received = was;

	r->in.counted += 1;
	s->total_incoming += 1;
	expect_broken(s, "granted - received");
	r->in.counted -= 1;
	s->total_incoming -= 1;

	s->check_budget = 0;
	expect_broken(s, "grant budget");
	homa_check_budget_note(s);

	s->nevents++;
	expect_broken(s, "event queue");
	s->nevents--;

	was = s->done_unindexed;
	s->done_unindexed = s->done_count + 1;
	expect_broken(s, "to index");
	s->done_unindexed = was;

	assert_null(homa_check_engine(s));
	th_pair_free(&p);
}

/**
 * check__srpt_order_is_checked() - Two partial messages from two clients
 * swapped on the grantable list.
 */
static void check__srpt_order_is_checked(void **state)
{
	static uint8_t buf[300000];
	struct th_net n;
	struct homa_iov iov = {buf, 0};
	struct homa_link *a, *b;
	uint64_t id;
	int s;

	(void)state;
	th_net_init(&n, "abs", NULL);
	s = th_net_node(&n, 's');
	homa_engine_set_server(n.e[s], true);
	iov.len = 300000;
	assert_int_equal(homa_engine_send_request(n.e[0], &n.addr[s], n.port[s], &iov, 1, 1, 0,
						  &id), 0);
	iov.len = 100000;
	assert_int_equal(homa_engine_send_request(n.e[1], &n.addr[s], n.port[s], &iov, 1, 2, 0,
						  &id), 0);
	th_net_move(&n, 0, 2);
	th_net_move(&n, 1, 2);
	a = n.e[s]->grantable.next;
	b = a->next;
	assert_ptr_not_equal(b, &n.e[s]->grantable);
	assert_null(homa_check_engine(n.e[s]));
	homa_list_del(a);
	homa_list_insert_before(b->next, a); /* longer message first */
	expect_broken(n.e[s], "not sorted");
	th_net_free(&n);
}

/**
 * check__entry_point_catches_corruption() - In HOMA_INVARIANTS builds the
 * next entry point runs the checker: the handler sees the broken invariant
 * (and the engine counts it). Without the option nothing runs.
 */
static void check__entry_point_catches_corruption(void **state)
{
	struct caught c = {0, NULL};
	struct th_pair p;
	uint64_t keep = 20;
	homa_engine *s;

	(void)state;
	partial(&p, &keep);
	s = p.e[1];
	s->check_fail = record;
	s->check_ctx = &c;
	s->total_incoming += 1400;
	homa_engine_on_timer(s, s->next_tick_ns);
#ifdef HOMA_INVARIANTS
	assert_true(c.n >= 1);
	assert_non_null(strstr(c.why, "total_incoming"));
	assert_int_equal(s->check_failures, (uint64_t)c.n);
#else
	assert_int_equal(c.n, 0);
#endif
	s->total_incoming -= 1400;
	s->check_fail = NULL;
	th_pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(check__consistent_engine_passes),
		cmocka_unit_test(check__each_corruption_is_named),
		cmocka_unit_test(check__srpt_order_is_checked),
		cmocka_unit_test(check__entry_point_catches_corruption),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
