/* SPDX-License-Identifier: MIT */
/**
 * @file test_rpc_flow.c
 * End-to-end RPC flows between two engines on an ideal wire, asserting the
 * exact packets exchanged.
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

/** send_pattern() - Client sends a request of @len pattern bytes. Return: the id. */
static uint64_t send_pattern(struct th_pair *p, size_t len, uint32_t seed)
{
	uint8_t *buf = malloc(len);
	struct homa_iov iov = {buf, len};
	uint64_t id = 0;

	th_pattern(buf, len, seed);
	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1,
						  seed, p->now, &id), 0);
	free(buf);
	return id;
}

/** take_response() - The client's next event must be the response to @id, bit-exact. */
static void take_response(struct th_pair *p, uint64_t id, uint32_t seed, size_t len)
{
	struct homa_event ev;

	assert_int_equal(homa_engine_next_event(p->e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_int_equal(ev.id, id);
	assert_int_equal(ev.cookie, seed);
	assert_int_equal(homa_msg_length(ev.msg), len);
	assert_true(th_check_pattern(ev.msg, seed));
	homa_engine_msg_release(p->e[0], ev.msg);
}

/** small_rpc__packets() - A 100-byte echo: one DATA each way, cutoffs learned, state freed. */
static void small_rpc__packets(void **state)
{
	struct th_pair p;
	struct homa_stats st;
	uint64_t id;

	th_pair_init(&p, NULL);
	p.echo = true;
	id = send_pattern(&p, 100, 7);
	th_pair_run(&p, 50000000);
	assert_string_equal(p.log, "c>s DATA 100@0 p7; s>c CUTOFFS p7; s>c DATA 100@0 p7; "
				   "c>s CUTOFFS p7; c>s ACK p7");
	take_response(&p, id, 7, 100);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.active_rpcs, 0);
	assert_int_equal(st.acks_received, 1);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.active_rpcs, 0);
	th_pair_free(&p);
}

/** echo_sizes() - Echo RPCs of several sizes one after another; all bit-exact. */
static void echo_sizes(const struct homa_settings *s)
{
	static const size_t sizes[] = {1, 1416, 40000, 40001, 1000000, 10000000};
	struct th_pair p;
	struct homa_stats st;
	size_t i;

	th_pair_init(&p, s);
	p.echo = true;
	p.logging = false;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t id = send_pattern(&p, sizes[i], (uint32_t)i + 1);

		th_pair_run(&p, 2000000000ull);
		take_response(&p, id, (uint32_t)i + 1, sizes[i]);
	}
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.active_rpcs, 0);
	assert_int_equal(st.rx_buffered_bytes, 0);
	assert_int_equal(st.tx_buffered_bytes, 0);
	assert_int_equal(st.retransmitted_bytes, 0);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.active_rpcs, 0);
	assert_int_equal(st.rx_buffered_bytes, 0);
	th_pair_free(&p);
}

/** echo__sizes_classic() - 1 B to 10 MB complete bit-exact with unscheduled bytes and grants. */
static void echo__sizes_classic(void **state)
{
	echo_sizes(NULL);
}

/** echo__sizes_start_msg() - The same in START_MSG mode. */
static void echo__sizes_start_msg(void **state)
{
	struct homa_settings s;

	homa_settings_default(&s);
	s.start_msg = true;
	echo_sizes(&s);
}

/** drop_nth() - Filter: drop exactly packet number *ctx. */
static bool drop_nth(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	(void)from, (void)pkt, (void)len;
	return n == *(uint64_t *)ctx;
}

/**
 * empty_echo() - An empty request answered by an empty response, with
 * packet @drop lost (UINT64_MAX: none): the response arrives, empty, and
 * both engines forget the RPC. Return: packets that crossed.
 */
static uint64_t empty_echo(uint64_t drop, char *log, size_t cap)
{
	struct th_pair p;
	struct homa_stats st;
	uint64_t id, n;

	th_pair_init(&p, NULL);
	p.echo = true;
	p.filter = drop_nth;
	p.filter_ctx = &drop;
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], NULL, 0,
						  3, p.now, &id), HOMA_EINVAL);
	id = send_pattern(&p, 0, 3);
	th_pair_run(&p, 5000000000ull);
	if (log)
		snprintf(log, cap, "%s", p.log);
	take_response(&p, id, 3, 0);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.server_requests_received, 1);
	assert_int_equal(st.active_rpcs, 0);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.active_rpcs, 0);
	n = p.npkts;
	th_pair_free(&p);
	return n;
}

/** empty_rpc__packets() - An empty request and response: one DATA 0@0 each way. */
static void empty_rpc__packets(void **state)
{
	static char log[65536];

	empty_echo(UINT64_MAX, log, sizeof(log));
	assert_string_equal(log, "c>s DATA 0@0 p7; s>c CUTOFFS p7; s>c DATA 0@0 p7; "
				 "c>s CUTOFFS p7; c>s ACK p7");
}

/** empty_rpc__each_packet_lost() - Losing any one packet of it still completes it. */
static void empty_rpc__each_packet_lost(void **state)
{
	uint64_t total = empty_echo(UINT64_MAX, NULL, 0);

	for (uint64_t k = 0; k < total; k++)
		empty_echo(k, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_rpc__packets),
		cmocka_unit_test(echo__sizes_classic),
		cmocka_unit_test(echo__sizes_start_msg),
		cmocka_unit_test(empty_rpc__packets),
		cmocka_unit_test(empty_rpc__each_packet_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
