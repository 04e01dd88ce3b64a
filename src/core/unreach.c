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
 * matches() - True if @rpc goes to @dst, and to port @dport unless the
 * whole host is unreachable (@kind HOMA_UNREACH_PROTO).
 */
static bool matches(const struct homa_rpc *rpc, const homa_addr *dst, int kind, uint16_t dport)
{
	return homa_addr_equal(&rpc->peer->addr, dst) &&
	       (kind == HOMA_UNREACH_PROTO || rpc->dport == dport);
}

/**
 * homa_unreach() - Handle a report that the Homa packet quoted in
 * @q/@len, sent to @dst, could not be delivered (@kind). If it quotes a
 * packet of one of our RPCs (our port as source, a live RPC with that id
 * to @dst and the quoted port), every client RPC to that port (to any port
 * of @dst for HOMA_UNREACH_PROTO) fails with HOMA_ENOSERVER and every such
 * server RPC is freed. Only the RPCs with that host are examined
 * (peer.rpc_list): a flood of forged requests from other hosts, whose
 * answers come back as ICMP, no longer makes each report walk every RPC.
 * Return: the number of RPCs ended (0: the report named no RPC of ours,
 * or was too short or of an unknown kind).
 */
int homa_unreach(homa_engine *e, const homa_addr *dst, int kind, const uint8_t *q, size_t len)
{
	struct homa_link *l, *next, *head;
	struct homa_rpc *named;
	uint16_t dport;
	int ended = 0;

	if ((kind != HOMA_UNREACH_PORT && kind != HOMA_UNREACH_PROTO) || len < QUOTE_MIN ||
	    homa_get16(q) != e->port)
		return 0;
	dport = homa_get16(q + 2);
	named = homa_rpc_find(e, homa_get64(q + 20), dst, dport);
	if (!named)
		return 0;
	/* freeing the peer's last RPC may free the peer (homa_peer_put()):
	 * the loop never reads the list head after that */
	head = &named->peer->rpc_list;
	for (l = head->next; l != head; l = next) {
		struct homa_rpc *rpc = homa_container_of(l, struct homa_rpc, peer_link);

		bool last;

		next = l->next;
		last = next == head;
		e->unreach_visits++;
		if (!matches(rpc, dst, kind, dport))
			continue;
		homa_rpc_fail(e, rpc, HOMA_ENOSERVER);
		ended++;
		if (last)
			break;
	}
	e->st.unreachable_received++;
	return ended;
}
