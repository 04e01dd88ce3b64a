/* SPDX-License-Identifier: MIT */
/**
 * @file unreach.c
 * Reports from the network that a packet we sent could not be delivered
 * (ICMP destination unreachable, read by the driver): the Linux module
 * answers a packet for a port where no socket serves with ICMP port
 * unreachable, and a host without Homa answers with protocol unreachable.
 * Anyone can send ICMP, so a report is acted on only when it quotes a
 * packet of an RPC this engine has to that host and port.
 */
#include <stdbool.h>
#include <stddef.h>

#include "bytes.h"
#include "internal.h"

/** Bytes of the quoted Homa packet needed: the whole common header. */
#define QUOTE_MIN HOMA_COMMON_LEN

/**
 * next_victim() - The next RPC a report of @kind about @dst (port @dport)
 * ends: the first RPC of the group of @dst and @dport, or for
 * HOMA_UNREACH_PROTO of the host's first group. Looked up afresh each
 * time: ending the last RPC of a group frees the group, and of a peer
 * may free the peer (homa_peer_put()). Return: the RPC or NULL.
 */
static struct homa_rpc *next_victim(homa_engine *e, const homa_addr *dst, int kind,
				    uint16_t dport)
{
	struct homa_peer *peer = homa_peer_find(e, dst);
	struct homa_pport *g;

	if (!peer)
		return NULL;
	if (kind == HOMA_UNREACH_PROTO)
		g = homa_list_empty(&peer->ports) ? NULL :
			homa_container_of(peer->ports.next, struct homa_pport, peer_link);
	else
		g = homa_pport_find(e, peer, dport);
	if (!g)
		return NULL;
	e->unreach_visits++;
	return homa_container_of(g->rpcs.next, struct homa_rpc, port_link);
}

/**
 * homa_unreach() - Handle a report that the Homa packet quoted in
 * @q/@len, sent to @dst, could not be delivered (@kind). If it quotes a
 * packet of one of our RPCs (our port as source, a live RPC with that id
 * to @dst and the quoted port), every client RPC to that port (to any port
 * of @dst for HOMA_UNREACH_PROTO) fails with HOMA_ENOSERVER and every such
 * server RPC is freed. Only the RPCs that end are examined (the groups
 * of pport.c): a flood of forged requests from other hosts or other ports
 * of that host, whose answers come back as ICMP, does not make each
 * report walk their RPCs.
 * Return: the number of RPCs ended (0: the report named no RPC of ours,
 * or was too short or of an unknown kind).
 */
int homa_unreach(homa_engine *e, const homa_addr *dst, int kind, const uint8_t *q, size_t len)
{
	struct homa_rpc *rpc;
	uint16_t dport;
	int ended = 0;

	if ((kind != HOMA_UNREACH_PORT && kind != HOMA_UNREACH_PROTO) || len < QUOTE_MIN ||
	    homa_get16(q) != e->port)
		return 0;
	dport = homa_get16(q + 2);
	if (!homa_rpc_find(e, homa_get64(q + 20), dst, dport))
		return 0;
	while ((rpc = next_victim(e, dst, kind, dport))) {
		homa_rpc_fail(e, rpc, HOMA_ENOSERVER);
		ended++;
	}
	e->st.unreachable_received++;
	return ended;
}
