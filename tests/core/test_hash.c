/* SPDX-License-Identifier: MIT */
/**
 * @file test_hash.c
 * Keyed hashing of the engine's tables (src/core/hash.c): ids a peer
 * chooses to collide under a fixed hash spread under the keyed one, and
 * the key can only be set while the tables are empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "internal.h"

/** Multiplier of the fixed (unkeyed) RPC hash the engine used to have. */
#define OLD_MUL 0x9e3779b97f4a7c15ull

/** inverse() - Multiplicative inverse of odd @a modulo 2^64 (Newton's method). */
static uint64_t inverse(uint64_t a)
{
	uint64_t x = a;

	for (int i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

/**
 * colliding_id() - The @j-th server-side id of a family whose products
 * with OLD_MUL agree in their low 48 bits: under the old hash
 * ((id * OLD_MUL) ^ addr ^ port, folded by >> 29) they all share a bucket
 * in any table of up to 2^19 buckets. The id is odd (a server RPC); its
 * client sends it as id ^ 1.
 */
static uint64_t colliding_id(uint64_t j)
{
	return inverse(OLD_MUL) * (0x123456789abcdull + (j << 48));
}

/** forge_request() - Feed server @s a one-packet request from @src:@sport with client id @cid. */
static int forge_request(homa_engine *s, const homa_addr *src, uint16_t sport, uint64_t cid)
{
	static const uint8_t byte = 1;
	struct th_data d = {.sport = sport, .dport = homa_engine_port(s), .sender_id = cid,
			    .length = 1, .incoming = 1, .payload = &byte, .payload_len = 1};

	return th_data_in(s, src, &d, 0);
}

/** longest_chain() - Most RPCs in one bucket of @e's RPC table. */
static uint32_t longest_chain(const homa_engine *e)
{
	uint32_t most = 0;

	for (uint32_t b = 0; b < e->rpcs.nbuckets; b++) {
		uint32_t n = 0;

		for (const struct homa_rpc *r = e->rpcs.buckets[b]; r; r = r->hash_next)
			n++;
		if (n > most)
			most = n;
	}
	return most;
}

/**
 * rpc_table__colliding_ids_spread() - 4096 requests whose ids a peer chose
 * to share one bucket of the old fixed hash: with a random key, no bucket
 * holds more than a few (the old hash chained all 4096, and each lookup
 * walked them).
 */
static void rpc_table__colliding_ids_spread(void **state)
{
	homa_addr local = homa_addr_ipv4(0x0a000001), peer = homa_addr_ipv4(0x0a000002);
	const uint8_t key[HOMA_HASH_KEY_LEN] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
	homa_engine *s;

	assert_int_equal(homa_engine_new(&s, NULL, &local, 4000, NULL, 0), 0);
	assert_int_equal(homa_engine_set_hash_key(s, key), 0);
	homa_engine_set_server(s, true);
	for (uint64_t j = 0; j < 4096; j++)
		assert_int_equal(forge_request(s, &peer, 5000, colliding_id(j) ^ 1), 0);
	assert_int_equal(s->rpcs.count, 4096);
	assert_true(longest_chain(s) <= 16);
	homa_engine_free(s);
}

/**
 * rpc_table__client_rpcs_spread() - 4096 requests of one client engine,
 * whose RPCs are keyed by their own sequential ids without SipHash, spread
 * over the table as evenly as forged server RPCs do, and each is found by
 * its id and server (as a response packet finds it); an id the engine
 * never gave out, or a right id from another host, finds nothing.
 */
static void rpc_table__client_rpcs_spread(void **state)
{
	homa_addr local = homa_addr_ipv4(0x0a000001), srv = homa_addr_ipv4(0x0a000002);
	homa_addr other = homa_addr_ipv4(0x0a000003);
	static uint64_t ids[4096];
	uint8_t byte = 1;
	struct homa_iov iov = {&byte, 1};
	homa_engine *c;

	(void)state;
	assert_int_equal(homa_engine_new(&c, NULL, &local, 4000, NULL, 0), 0);
	for (int j = 0; j < 4096; j++)
		assert_int_equal(homa_engine_send_request(c, &srv, 4001, &iov, 1, 0, 0, &ids[j]), 0);
	assert_int_equal(c->rpcs.count, 4096);
	assert_true(longest_chain(c) <= 16);
	uint64_t before = homa_hash_calls;

	for (int j = 0; j < 4096; j++) {
		struct homa_rpc *r = homa_rpc_find_host(c, ids[j], &srv);

		assert_non_null(r);
		assert_true(r->id == ids[j]);
		assert_null(homa_rpc_find_host(c, ids[j], &other));
		assert_null(homa_rpc_find_host(c, ids[j] + 4096 * 2, &srv));
	}
	assert_true(homa_hash_calls == before);  /* no SipHash for our own ids */
	homa_engine_free(c);
}

/**
 * set_hash_key__only_while_empty() - The key cannot change under entries
 * hashed with the old one: HOMA_EINVAL once an RPC exists, and for NULL.
 */
static void set_hash_key__only_while_empty(void **state)
{
	homa_addr local = homa_addr_ipv4(0x0a000001), peer = homa_addr_ipv4(0x0a000002);
	const uint8_t key[HOMA_HASH_KEY_LEN] = {1};
	homa_engine *s;

	assert_int_equal(homa_engine_new(&s, NULL, &local, 4000, NULL, 0), 0);
	assert_int_equal(homa_engine_set_hash_key(NULL, key), HOMA_EINVAL);
	assert_int_equal(homa_engine_set_hash_key(s, NULL), HOMA_EINVAL);
	homa_engine_set_server(s, true);
	assert_int_equal(forge_request(s, &peer, 5000, 2), 0);
	assert_int_equal(homa_engine_set_hash_key(s, key), HOMA_EINVAL);
	homa_engine_free(s);
}

/**
 * siphash__key_and_input_matter() - Different keys, or inputs differing
 * in one bit, give different hashes; the same give the same.
 */
static void siphash__key_and_input_matter(void **state)
{
	struct homa_hash_key a = {1, 2}, b = {1, 3};
	uint64_t m[2] = {42, 7}, m2[2] = {43, 7};

	assert_true(homa_siphash(&a, m, 2) == homa_siphash(&a, m, 2));
	assert_true(homa_siphash(&a, m, 2) != homa_siphash(&b, m, 2));
	assert_true(homa_siphash(&a, m, 2) != homa_siphash(&a, m2, 2));
	assert_true(homa_siphash(&a, m, 1) != homa_siphash(&a, m, 2));
}

/**
 * hashes__per_small_rpc() - A 100-byte echo RPC costs both engines
 * together at most 5 keyed hashes (the client: its RPC group key; the
 * server: the RPC table key once, a lookup per packet, its group key being
 * its finished-RPC fingerprint's client hash, made once for both; the
 * client's own RPC ids need none: rpc_table__client_rpcs_spread). Keys are
 * made once and kept, and the finished-RPC memory hashes nothing more
 * while no watermark is live.
 */
static void hashes__per_small_rpc(void **state)
{
	struct th_pair p;
	uint64_t before;
	const int n = 50;

	(void)state;
	th_pair_init(&p, NULL);
	p.echo = true;
	assert_true(th_echo_rpc(&p, 1)); /* peers and cutoffs on both sides */
	before = homa_hash_calls;
	for (int i = 0; i < n; i++)
		assert_true(th_echo_rpc(&p, 2 + (uint32_t)i));
	print_message("keyed hashes per RPC: %.2f\n", (double)(homa_hash_calls - before) / n);
	assert_true(homa_hash_calls - before <= 5 * (uint64_t)n);
	th_pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpc_table__colliding_ids_spread),
		cmocka_unit_test(rpc_table__client_rpcs_spread),
		cmocka_unit_test(set_hash_key__only_while_empty),
		cmocka_unit_test(siphash__key_and_input_matter),
		cmocka_unit_test(hashes__per_small_rpc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
