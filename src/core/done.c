/* SPDX-License-Identifier: MIT */
/**
 * @file done.c
 * Memory of recently finished server RPCs, for at-most-once execution
 * when the network delivers a request packet again after the server
 * already executed the request, replied and was acked (a duplicated or
 * long-delayed packet would otherwise start the RPC anew). A direct-mapped
 * table of 64-bit fingerprints of (client id, client address, client port):
 * constant memory (32 KiB per engine), one compare per new RPC. An entry
 * is forgotten when a later RPC maps to the same slot, so the guarantee
 * covers the last few thousand RPCs, far longer than any packet lives in
 * a datacenter network.
 */
#include "internal.h"

/** fingerprint() - 64-bit fingerprint of an RPC's wire identity (never 0). */
static uint64_t fingerprint(uint64_t id, const homa_addr *addr, uint16_t port)
{
	uint64_t h = (id ^ ((uint64_t)port << 48)) * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)homa_hash_addr(addr) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 31;
	return h ? h : 1;
}

/** homa_done_init() - Allocate the table. Return: 0 or HOMA_ENOMEM. */
int homa_done_init(homa_engine *e)
{
	e->done = homa_mem_zalloc(e, HOMA_DONE_SLOTS * sizeof(*e->done));
	return e->done ? 0 : HOMA_ENOMEM;
}

/** homa_done_free() - Free the table. */
void homa_done_free(homa_engine *e)
{
	homa_mem_free(e, e->done, HOMA_DONE_SLOTS * sizeof(*e->done));
	e->done = NULL;
}

/** homa_done_add() - Remember that server RPC @rpc was executed and is finished. */
void homa_done_add(homa_engine *e, const struct homa_rpc *rpc)
{
	uint64_t f = fingerprint(rpc->id, &rpc->peer->addr, rpc->dport);

	e->done[f % HOMA_DONE_SLOTS] = f;
}

/** homa_done_seen() - True if the server RPC (@id, @addr, @port) finished recently. */
bool homa_done_seen(const homa_engine *e, uint64_t id, const homa_addr *addr, uint16_t port)
{
	uint64_t f = fingerprint(id, addr, port);

	return e->done[f % HOMA_DONE_SLOTS] == f;
}
