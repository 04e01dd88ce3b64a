/* SPDX-License-Identifier: MIT */
/**
 * @file hash.c
 * Keyed hashing of identifiers a peer chooses (RPC ids, addresses, ports)
 * for the engine's tables. An unkeyed hash lets a sender pick ids that all
 * land in one bucket and turn each lookup into a walk over every RPC; with
 * a secret per-engine key it cannot predict buckets. The function is
 * SipHash-1-3 (Aumasson and Bernstein) over 64-bit words: one compression
 * round per word and three finalization rounds, enough for hash-table
 * keys. The engine has no randomness of its own: the caller passes the key
 * (homa_engine_set_hash_key()); until then a key derived from the creation
 * time and the local address is used, which differs between engines but
 * is not secret.
 */
#include <string.h>

#include "internal.h"

/** SipHash computations on this thread (see internal.h; for the tests). */
__thread uint64_t homa_hash_calls;

/** rotl() - Rotate @x left by @b bits. */
static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

/** sip_round() - One SipRound over the state @v. */
static inline void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rotl(v[1], 13) ^ v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl(v[1], 17) ^ v[2];
	v[2] = rotl(v[2], 32);
}

/**
 * homa_siphash() - SipHash-1-3 of the @n 64-bit words @m under @key.
 * Counts the call in homa_hash_calls. Return: the 64-bit hash.
 */
uint64_t homa_siphash(const struct homa_hash_key *key, const uint64_t *m, int n)
{
	uint64_t v[4] = {key->k0 ^ 0x736f6d6570736575ull, key->k1 ^ 0x646f72616e646f6dull,
			 key->k0 ^ 0x6c7967656e657261ull, key->k1 ^ 0x7465646279746573ull};
	uint64_t last = (uint64_t)(n * 8) << 56;

	homa_hash_calls++;
	for (int i = 0; i < n; i++) {
		v[3] ^= m[i];
		sip_round(v);
		v[0] ^= m[i];
	}
	v[3] ^= last;
	sip_round(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	sip_round(v);
	sip_round(v);
	sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/** homa_hash_addr() - Keyed hash of host address @a (peer table, done memory). */
uint32_t homa_hash_addr(const homa_engine *e, const homa_addr *a)
{
	uint64_t w[2];

	memcpy(w, a->b, sizeof(w));
	return (uint32_t)homa_siphash(&e->hash_key, w, 2);
}

/** homa_hash_rpc() - Keyed hash of an RPC's wire identity (@id, @a, @port). */
uint64_t homa_hash_rpc(const homa_engine *e, uint64_t id, const homa_addr *a, uint16_t port)
{
	uint64_t w[4];

	memcpy(w, a->b, 2 * sizeof(uint64_t));
	w[2] = id;
	w[3] = port;
	return homa_siphash(&e->hash_key, w, 4);
}

/**
 * homa_hash_default_key() - The key an engine uses until the caller sets
 * one: derived from the creation time @now, the local address and port.
 * Differs between engines, but an attacker who knows them can compute it.
 */
void homa_hash_default_key(homa_engine *e, uint64_t now)
{
	static const struct homa_hash_key fixed = {0x486f6d61456e6731ull, 0x6b65792d64657269ull};
	uint64_t w[4];

	memcpy(w, e->local.b, 2 * sizeof(uint64_t));
	w[2] = now;
	w[3] = e->port;
	e->hash_key.k0 = homa_siphash(&fixed, w, 4);
	w[3] ^= 0x5a5a5a5a00000000ull;
	e->hash_key.k1 = homa_siphash(&fixed, w, 4);
}

/** homa_engine_set_hash_key() - See engine.h. */
int homa_engine_set_hash_key(homa_engine *e, const uint8_t key[HOMA_HASH_KEY_LEN])
{
	if (!e || !key || e->rpcs.count || e->peers.count || e->handles.count ||
	    homa_done_count(e))
		return HOMA_EINVAL;
	memcpy(&e->hash_key.k0, key, 8);
	memcpy(&e->hash_key.k1, key + 8, 8);
	return 0;
}
