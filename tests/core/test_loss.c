/* SPDX-License-Identifier: MIT */
/**
 * @file test_loss.c
 * Loss recovery between two engines: every packet of a 20-packet request
 * and response exchange is dropped in turn, and random loss; each RPC must
 * complete exactly once, bit-exact. A lost scheduled packet is asked for
 * and sent again at the highest priority.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "homa/wire.h"

#define MSG_LEN (20 * 1416)

/** drop_nth() - Filter: drop exactly packet number *ctx. */
static bool drop_nth(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	return n == *(uint64_t *)ctx;
}

/** settings_for() - Small unscheduled window so grants matter; fast timers. */
static void settings_for(struct homa_settings *s, bool start_msg)
{
	homa_settings_default(s);
	s->unsched_bytes = 10000;
	s->start_msg = start_msg;
}

/**
 * echo_rpc() - Set up @p (settings_for(), server echoes), send one MSG_LEN
 * request of pattern @seed through @filter and run until both engines are
 * quiet. The caller frees @p.
 */
static void echo_rpc(struct th_pair *p, bool start_msg, th_filter filter, void *ctx, uint32_t seed)
{
	struct homa_settings s;
	uint8_t buf[MSG_LEN];
	struct homa_iov iov = {buf, sizeof(buf)};
	uint64_t id;

	settings_for(&s, start_msg);
	th_pair_init(p, &s);
	p->echo = true;
	p->filter = filter;
	p->filter_ctx = ctx;
	th_pattern(buf, sizeof(buf), seed);
	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, 5, 0, &id), 0);
	th_pair_run(p, 5000000000ull);
}

/**
 * run_one() - One echo RPC with packet @drop dropped (UINT64_MAX: none).
 * Checks exactly one response, bit-exact, and one server execution.
 * Return: packets that crossed.
 */
static uint64_t run_one(bool start_msg, uint64_t drop, char *log, size_t cap)
{
	struct th_pair p;
	struct homa_event ev;
	struct homa_stats st;
	uint64_t n;

	echo_rpc(&p, start_msg, drop_nth, &drop, 99);
	if (log)
		snprintf(log, cap, "%s", p.log);
	if (getenv("TH_DEBUG"))
		fprintf(stderr, "drop %llu: %s\n", (unsigned long long)drop, p.log);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 99, 0, TH_ANY_LEN));
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.server_requests_received, 1);
	assert_int_equal(st.active_rpcs, 0);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.active_rpcs, 0);
	n = p.npkts;
	th_pair_free(&p);
	return n;
}

/** exhaustive() - Drop each packet of the loss-free trace in turn. */
static void exhaustive(bool start_msg)
{
	static char log[65536];
	uint64_t total = run_one(start_msg, UINT64_MAX, log, sizeof(log));
	uint64_t k;

	assert_true(total >= 40);
	for (k = 0; k < total; k++)
		run_one(start_msg, k, NULL, 0);
}

/** single_loss__every_packet_classic() - Classic mode survives any single loss. */
static void single_loss__every_packet_classic(void **state)
{
	exhaustive(false);
}

/** single_loss__every_packet_start_msg() - START_MSG mode survives any single loss. */
static void single_loss__every_packet_start_msg(void **state)
{
	exhaustive(true);
}

/** Random loss state: xorshift generator and drop rate in percent. */
struct rnd_loss {
	uint32_t x;
	uint32_t pct;
};

/** drop_random() - Filter: drop a packet with probability pct%. */
static bool drop_random(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct rnd_loss *r = ctx;

	r->x ^= r->x << 13;
	r->x ^= r->x >> 17;
	r->x ^= r->x << 5;
	return r->x % 100 < r->pct;
}

/**
 * random_loss__many_concurrent() - 300 concurrent echo RPCs of mixed sizes
 * under 5% loss: every one completes once, bit-exact; the server runs each
 * request exactly once and ends with no state.
 */
static void random_loss__many_concurrent(void **state)
{
	enum { N = 300 };
	static const size_t sizes[] = {1, 500, 1416, 5000, 30000, 120000};
	struct rnd_loss loss = {12345, 5};
	struct homa_settings s;
	struct th_pair p;
	struct homa_event ev;
	struct homa_stats st;
	static uint8_t buf[120000];
	static bool seen[N];
	int i, done = 0;

	homa_settings_default(&s);
	s.unsched_bytes = 10000;
	th_pair_init(&p, &s);
	p.echo = true;
	p.logging = false;
	p.filter = drop_random;
	p.filter_ctx = &loss;
	for (i = 0; i < N; i++) {
		struct homa_iov iov = {buf, sizes[i % 6]};
		uint64_t id;

		th_pattern(buf, sizes[i % 6], (uint32_t)i);
		assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1,
							  (uint64_t)i, 0, &id), 0);
	}
	th_pair_run(&p, 60000000000ull);
	while (homa_engine_next_event(p.e[0], &ev)) {
		assert_int_equal(ev.type, HOMA_EV_RESPONSE);
		assert_false(seen[ev.cookie]);
		seen[ev.cookie] = true;
		assert_int_equal(homa_msg_length(ev.msg), sizes[ev.cookie % 6]);
		assert_true(th_check_pattern(ev.msg, (uint32_t)ev.cookie));
		homa_engine_msg_release(p.e[0], ev.msg);
		done++;
	}
	assert_int_equal(done, N);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.server_requests_received, N);
	assert_int_equal(st.active_rpcs, 0);
	assert_true(st.resends_received > 0);
	th_pair_free(&p);
}

/**
 * First scheduled DATA packet of the client to drop, whether it was, and
 * the lowest priority the server's RESENDs asked for.
 */
struct sched_drop {
	uint32_t from_offset;
	bool dropped;
	int resends;
	uint8_t min_resend_prio;
};

/**
 * drop_first_sched() - Filter: drop the client's first DATA at or past
 * from_offset; note the priority each RESEND of the server asks for.
 */
static bool drop_first_sched(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct sched_drop *d = ctx;
	struct homa_pkt k;

	if (homa_wire_decode(pkt, len, &k))
		return false;
	if (from == 1 && k.type == HOMA_PKT_RESEND) {
		d->resends++;
		if (k.u.resend.priority < d->min_resend_prio)
			d->min_resend_prio = k.u.resend.priority;
	}
	if (d->dropped || from != 0 || k.type != HOMA_PKT_DATA || k.u.data.offset < d->from_offset)
		return false;
	d->dropped = true;
	return true;
}

/**
 * resend__lost_scheduled_data_comes_back_at_highest_priority() - The
 * client's first scheduled DATA packet (past unsched_bytes, sent at the
 * granted priority) is lost: the server's RESEND asks for it at priority
 * 7 (num_priorities - 1, as the Linux module does), the copy goes out at
 * priority 7, and the RPC completes. Granted data went out below 7.
 */
static void resend__lost_scheduled_data_comes_back_at_highest_priority(void **state)
{
	struct sched_drop drop = {12000, false, 0, UINT8_MAX};
	struct homa_settings s;
	struct th_pair p;
	char *line, *save = NULL;
	int copies = 0, sched_below_top = 0;

	settings_for(&s, false);
	echo_rpc(&p, false, drop_first_sched, &drop, 7);
	assert_true(drop.dropped);
	assert_true(th_take_msg(p.e[0], HOMA_EV_RESPONSE, 7, 0, TH_ANY_LEN));
	for (line = strtok_r(p.log, ";", &save); line; line = strtok_r(NULL, ";", &save)) {
		if (strstr(line, "c>s DATA") && strstr(line, " rx")) {
			assert_non_null(strstr(line, " rx p7"));
			copies++;
		} else if (strstr(line, "c>s DATA") && !strstr(line, " p7")) {
			sched_below_top++;
		}
	}
	assert_true(drop.resends >= 1);
	assert_int_equal(drop.min_resend_prio, s.num_priorities - 1);
	assert_true(copies >= 1);
	assert_true(sched_below_top >= 1);
	th_pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(single_loss__every_packet_classic),
		cmocka_unit_test(single_loss__every_packet_start_msg),
		cmocka_unit_test(random_loss__many_concurrent),
		cmocka_unit_test(resend__lost_scheduled_data_comes_back_at_highest_priority),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
