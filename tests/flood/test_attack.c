/* SPDX-License-Identifier: MIT */
/**
 * @file test_attack.c
 * homa-flood's forged packets (tools/flood/attack.c, flood_packet()):
 * every one decodes as a Homa packet and is aimed at a socket of the run;
 * --data-only (flood_attack.data_only) forges only DATA, all to the
 * server, while the default mix sends every forged type to both sockets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flood.h"
#include "homa/pkt_type.h"
#include "homa/wire.h"

/** Packets each case forges. */
#define N 20000

/** Forged packets counted by type and by target. */
struct tally {
	uint64_t type[256];
	uint64_t to_server, to_client;
};

/** forge() - Forge N packets with @data_only and tally them (each must decode). */
static void forge(int data_only, struct tally *t)
{
	struct flood_attack a;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	uint8_t buf[1500];

	memset(&a, 0, sizeof(a));
	memset(t, 0, sizeof(*t));
	a.server_port = 4001;
	a.client_port = 4000;
	a.data_only = data_only;
	for (int i = 0; i < N; i++) {
		struct homa_pkt p;
		int to_server = -1;
		int len = flood_packet(&rng, &a, buf, &to_server);

		assert_true(len > 0);
		assert_int_equal(homa_wire_decode(buf, (size_t)len, &p), 0);
		assert_int_equal(p.dport, to_server ? a.server_port : a.client_port);
		t->type[p.type]++;
		if (to_server == 1)
			t->to_server++;
		else if (to_server == 0)
			t->to_client++;
		else
			fail_msg("to_server not set");
	}
}

/**
 * flood_packet__data_only() - With data_only every forged packet is DATA
 * and goes to the server; its DATA claims (incoming) the whole message.
 */
static void flood_packet__data_only(void **state)
{
	struct tally t;

	(void)state;
	forge(1, &t);
	assert_int_equal(t.type[HOMA_PKT_DATA], N);
	assert_int_equal(t.to_server, N);
	assert_int_equal(t.to_client, 0);
}

/**
 * flood_packet__mix() - Without data_only the flood forges every type it
 * documents (DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY, CUTOFFS, NEED_ACK,
 * ACK) and aims at both sockets: the case above would notice a
 * data_only that changed nothing.
 */
static void flood_packet__mix(void **state)
{
	static const uint8_t types[] = {HOMA_PKT_DATA, HOMA_PKT_GRANT, HOMA_PKT_RESEND,
					HOMA_PKT_RPC_UNKNOWN, HOMA_PKT_BUSY, HOMA_PKT_CUTOFFS,
					HOMA_PKT_NEED_ACK, HOMA_PKT_ACK};
	uint64_t sum = 0;
	struct tally t;

	(void)state;
	forge(0, &t);
	for (size_t i = 0; i < sizeof(types); i++) {
		assert_true(t.type[types[i]] > 0);
		sum += t.type[types[i]];
	}
	assert_int_equal(sum, N);
	assert_true(t.to_server > N / 4 && t.to_client > N / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flood_packet__data_only),
		cmocka_unit_test(flood_packet__mix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
