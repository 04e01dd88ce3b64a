/* SPDX-License-Identifier: MIT */
/**
 * @file test_interop.c
 * The engine against packets shaped as the Linux module builds them
 * (PlatformLab/HomaModule homa_outgoing.c): flags 6 and urgent 0xb97d on
 * every packet, window 0, original DATA with segment offset -1 and the
 * offset in seq, RESEND(0, -1) for "everything", RPC_UNKNOWN when it lost
 * an RPC. Also the rules that keep our side safe for a module peer:
 * bounded restarts only before the response starts, no extension toward a
 * peer not known to be ours (settings.compat), ids unique per host.
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

#define TICK 1000000ull

static uint8_t big[2000000];

/**
 * module_shape() - Rewrite a packet encoded by us into the module's
 * conventions: flags 6, urgent 0xb97d, window 0 (no marker), and for an
 * original DATA packet the offset moved to seq with -1 in its place.
 */
static void module_shape(uint8_t *b)
{
	b[13] = 6;
	b[14] = b[15] = 0;
	b[18] = 0xb9;
	b[19] = 0x7d;
	if (b[11] == HOMA_PKT_DATA && b[48] == 0) {
		memcpy(b + 4, b + 52, 4);
		memset(b + 52, 0xff, 4);
	}
}

/** module_input() - Encode @k, shape it as the module would, feed it to @e from @src. */
static int module_input(homa_engine *e, const homa_addr *src, const struct homa_pkt *k,
			uint64_t now)
{
	uint8_t buf[2100];
	int len = homa_wire_encode(k, buf, sizeof(buf));

	assert_true(len > 0);
	module_shape(buf);
	return homa_engine_input(e, src, buf, (size_t)len, now);
}

/** pkt() - A packet of @type from @sport to @dport for wire id @sender_id. */
static struct homa_pkt pkt(uint8_t type, uint16_t sport, uint16_t dport, uint64_t sender_id)
{
	struct homa_pkt k;

	memset(&k, 0, sizeof(k));
	k.type = type;
	k.sport = sport;
	k.dport = dport;
	k.sender_id = sender_id;
	return k;
}

/** data_pkt() - A whole message of @len (<= 1000) pattern bytes in one DATA packet. */
static struct homa_pkt data_pkt(uint16_t sport, uint16_t dport, uint64_t sender_id, uint32_t len)
{
	struct homa_pkt k = pkt(HOMA_PKT_DATA, sport, dport, sender_id);

	k.u.data.message_length = len;
	k.u.data.incoming = len;
	k.u.data.payload = big;
	k.u.data.payload_len = len;
	return k;
}

/** send() - The pair's client sends @len pattern bytes (seed 11). Return: the id. */
static uint64_t send(struct th_pair *p, size_t len)
{
	struct homa_iov iov = {big, len};
	uint64_t id;

	th_pattern(big, len, 11);
	assert_int_equal(homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, 1,
						  p->now, &id), 0);
	return id;
}

/** drain() - Take every packet @e emits within @ns. Return: highest DATA byte end seen. */
static uint32_t drain(homa_engine *e, uint64_t *now, uint64_t ns, int *data_pkts, int *rx)
{
	uint64_t end = *now + ns;
	uint32_t top = 0;
	struct th_pkt t;

	for (; *now < end; *now += 1000) {
		while (th_take(e, *now, &t) > 0) {
			if (!t.ok || t.k.type != HOMA_PKT_DATA)
				continue;
			if (t.k.u.data.offset + t.k.u.data.payload_len > top)
				top = t.k.u.data.offset + t.k.u.data.payload_len;
			if (data_pkts)
				(*data_pkts)++;
			if (rx && t.k.u.data.retransmit)
				(*rx)++;
		}
		homa_engine_on_timer(e, *now);
	}
	return top;
}

/**
 * module_data__request_delivered() - A 3000-byte request from a module
 * client, in three original DATA packets (offset -1, real offset in seq,
 * flags 6), arriving last first, is delivered bit-exact (each packet was
 * dropped as a bad offset).
 */
static void module_data__request_delivered(void **state)
{
	homa_addr mod = homa_addr_ipv4(0x0a000009);
	struct th_pair p;
	int i;

	(void)state;
	th_pair_init(&p, NULL);
	th_pattern(big, 3000, 5);
	for (i = 2; i >= 0; i--) {
		struct homa_pkt k = pkt(HOMA_PKT_DATA, 40000, p.port[1], 100);

		k.u.data.message_length = 3000;
		k.u.data.incoming = 3000;
		k.u.data.offset = (uint32_t)i * 1000;
		k.u.data.payload = big + i * 1000;
		k.u.data.payload_len = 1000;
		assert_int_equal(module_input(p.e[1], &mod, &k, 0), 0);
	}
	assert_true(th_take_msg(p.e[1], HOMA_EV_REQUEST, 5, 0, TH_ANY_LEN));
	th_pair_free(&p);
}

/**
 * module_unknown__flags_6_restarts() - The module's RPC_UNKNOWN (flags 6,
 * no marker) for a request whose response has not started makes our
 * client send the request again from byte 0; it is not read as "finished"
 * (it failed the RPC with HOMA_EABANDONED).
 */
static void module_unknown__flags_6_restarts(void **state)
{
	struct homa_pkt k;
	struct homa_event ev;
	struct homa_stats st;
	struct th_pkt t;
	struct th_pair p;
	uint64_t id;

	(void)state;
	th_pair_init(&p, NULL);
	id = send(&p, 100);
	assert_true(th_take(p.e[0], 0, &t) > 0 && t.ok && t.k.type == HOMA_PKT_DATA);
	k = pkt(HOMA_PKT_RPC_UNKNOWN, p.port[1], p.port[0], id ^ 1);
	assert_int_equal(module_input(p.e[0], &p.addr[1], &k, 10), 0);
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
	assert_true(th_take(p.e[0], 20, &t) > 0 && t.ok);
	assert_int_equal(t.k.type, HOMA_PKT_DATA);
	assert_int_equal(t.k.u.data.offset, 0);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpc_restarts, 1);
	th_pair_free(&p);
}

/**
 * module_unknown__after_response_bytes_no_restart() - Once response bytes
 * arrived, an RPC_UNKNOWN does not restart the request (the module server
 * remembers no finished RPC, so a late restart could run it twice); the
 * client sends no DATA (it restarted the request).
 */
static void module_unknown__after_response_bytes_no_restart(void **state)
{
	struct homa_stats st;
	struct homa_pkt k;
	struct th_pkt t;
	struct th_pair p;
	uint64_t id, now = 0;
	int data = 0;

	(void)state;
	th_pair_init(&p, NULL);
	id = send(&p, 100);
	while (th_take(p.e[0], 0, &t) > 0)
		;
	k = pkt(HOMA_PKT_DATA, p.port[1], p.port[0], id ^ 1);
	k.u.data.message_length = 5000;
	k.u.data.incoming = 5000;
	k.u.data.payload = big;
	k.u.data.payload_len = 1000;
	assert_int_equal(module_input(p.e[0], &p.addr[1], &k, 10), 0);
	k = pkt(HOMA_PKT_RPC_UNKNOWN, p.port[1], p.port[0], id ^ 1);
	module_input(p.e[0], &p.addr[1], &k, 20);
	drain(p.e[0], &now, 3 * TICK, &data, NULL);
	assert_int_equal(data, 0);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpc_restarts, 0);
	th_pair_free(&p);
}

/**
 * not_server__fails_with_enoserver() - A request to an endpoint of ours
 * that does not serve fails with HOMA_ENOSERVER at its first RPC_UNKNOWN,
 * which says so (HOMA_EXT_NOSERVER), without a restart (it was restarted
 * max_restarts times first: the same error as a request lost every time).
 */
static void not_server__fails_with_enoserver(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	uint64_t id, t;
	bool got = false;

	(void)state;
	th_pair_init(&p, NULL);
	p.logging = false;
	homa_engine_set_server(p.e[1], false);
	id = send(&p, 100);
	for (t = 0; t < 300 && !got; t++) {
		th_pair_run(&p, TICK);
		got = homa_engine_next_event(p.e[0], &ev) == 1;
	}
	assert_true(got);
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_true(ev.id == id);
	assert_int_equal(ev.error, HOMA_ENOSERVER);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpc_restarts, 0);
	assert_int_equal(st.rpcs_timed_out, 0);
	th_pair_free(&p);
}

/**
 * lost_request__restarts_end_abandoned() - A server that answers every
 * RESEND with a plain RPC_UNKNOWN (the module's answer when every copy of
 * the request was lost) ends the RPC after max_restarts restarts with
 * HOMA_EABANDONED, not HOMA_ENOSERVER: a server does answer at that port
 * (it was HOMA_ENOSERVER, the same error as a port that does not serve).
 */
static void lost_request__restarts_end_abandoned(void **state)
{
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	uint64_t id;
	uint32_t i;

	(void)state;
	th_pair_init(&p, NULL);
	id = send(&p, 100);
	for (i = 0; i <= homa_engine_settings(p.e[0])->max_restarts; i++) {
		struct homa_pkt k = pkt(HOMA_PKT_RPC_UNKNOWN, p.port[1], p.port[0], id ^ 1);
		bool resent = false;
		struct th_pkt t;

		/* the client's next RESEND, which the RPC_UNKNOWN answers */
		for (int tick = 0; tick < 100 && !resent; tick++) {
			homa_engine_on_timer(p.e[0], p.now += TICK);
			while (th_take(p.e[0], p.now, &t) > 0)
				resent |= t.ok && t.k.type == HOMA_PKT_RESEND;
		}
		assert_true(resent);
		assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
		assert_int_equal(module_input(p.e[0], &p.addr[1], &k, p.now += TICK), 0);
	}
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_true(ev.id == id);
	assert_int_equal(ev.error, HOMA_EABANDONED);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.rpc_restarts, homa_engine_settings(p.e[0])->max_restarts);
	th_pair_free(&p);
}

/**
 * quoted() - The first packet @e sends (our request's DATA), as an ICMP
 * error quotes it, into @q. Return: its length.
 */
static size_t quoted(homa_engine *e, uint64_t now, uint8_t *q)
{
	struct th_pkt t;

	assert_true(th_take(e, now, &t) > 0 && t.ok);
	memcpy(q, t.buf, HOMA_COMMON_LEN + 8);
	return HOMA_COMMON_LEN + 8;
}

/**
 * unreachable__port_fails_rpcs_at_once() - ICMP port unreachable quoting
 * our request fails every RPC to that port with HOMA_ENOSERVER at once,
 * and leaves an RPC to another port alone (nothing read ICMP: the RPC
 * waited for restarts or the timeout).
 */
static void unreachable__port_fails_rpcs_at_once(void **state)
{
	struct homa_iov iov = {big, 100};
	struct homa_event ev;
	struct homa_stats st;
	struct th_pair p;
	uint64_t id, id2, other;
	uint8_t q[64];
	size_t n;

	(void)state;
	th_pair_init(&p, NULL);
	id = send(&p, 100);
	n = quoted(p.e[0], 0, q);
	id2 = send(&p, 200);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], (uint16_t)(p.port[1] + 1),
						  &iov, 1, 2, 0, &other), 0);
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], HOMA_UNREACH_PORT, q, n, 1), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(homa_engine_next_event(p.e[0], &ev), 1);
		assert_int_equal(ev.type, HOMA_EV_ERROR);
		assert_int_equal(ev.error, HOMA_ENOSERVER);
		assert_true(ev.id == id || ev.id == id2);
	}
	assert_int_equal(homa_engine_next_event(p.e[0], &ev), 0);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.unreachable_received, 1);
	assert_int_equal(st.active_rpcs, 1);
	th_pair_free(&p);
}

/**
 * unreachable__examines_only_that_host() - With 300 RPCs to another host
 * (a server's forged requests from a flood, here a client's requests),
 * a port-unreachable report for one RPC to the pair's server examines
 * only the RPCs with that host (homa_unreach() walked every RPC: 301
 * visits per report, and a flood's ICMP made that a hot spot).
 */
static void unreachable__examines_only_that_host(void **state)
{
	homa_addr other = homa_addr_ipv4(0x0a000063);
	struct homa_iov iov = {big, 100};
	struct th_pair p;
	uint64_t id;
	uint8_t q[64];
	size_t n;

	(void)state;
	th_pair_init(&p, NULL);
	send(&p, 100);
	n = quoted(p.e[0], 0, q);
	for (int i = 0; i < 300; i++)
		assert_int_equal(homa_engine_send_request(p.e[0], &other, 4000, &iov, 1, 3, 0, &id),
				 0);
	p.e[0]->unreach_visits = 0;
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], HOMA_UNREACH_PORT, q, n, 1), 1);
	assert_true(p.e[0]->unreach_visits <= 1);
	assert_int_equal(homa_engine_unreachable(p.e[0], &other, HOMA_UNREACH_PROTO, q, n, 1), 0);
	th_pair_free(&p);
}

/**
 * unreachable__examines_only_that_port() - With 300 RPCs to other ports
 * of the same host (a server's requests from a flood's many source
 * ports), a port-unreachable report examines only the RPCs with the
 * reported port (homa_unreach() walked the host's every RPC: 301 visits);
 * a protocol-unreachable report for the host examines exactly the RPCs it
 * ends, all 300.
 */
static void unreachable__examines_only_that_port(void **state)
{
	struct homa_iov iov = {big, 100};
	struct homa_stats st;
	struct th_pair p;
	uint8_t q[64], q2[64];
	size_t n, n2;
	uint64_t id;

	(void)state;
	th_pair_init(&p, NULL);
	send(&p, 100);
	n = quoted(p.e[0], 0, q);
	for (int i = 0; i < 300; i++)
		assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], (uint16_t)(5000 + i),
							  &iov, 1, 3, 0, &id), 0);
	n2 = quoted(p.e[0], 0, q2);
	p.e[0]->unreach_visits = 0;
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], HOMA_UNREACH_PORT, q, n, 1), 1);
	assert_true(p.e[0]->unreach_visits <= 1);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.active_rpcs, 300);
	p.e[0]->unreach_visits = 0;
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], HOMA_UNREACH_PROTO, q2, n2, 1),
			 300);
	assert_int_equal(p.e[0]->unreach_visits, 300);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.active_rpcs, 0);
	th_pair_free(&p);
}

/**
 * unreachable__forged_ignored() - A report that does not quote a live RPC
 * of ours (wrong id, wrong source port, wrong host, truncated, another
 * kind) ends nothing: anyone can send ICMP.
 */
static void unreachable__forged_ignored(void **state)
{
	homa_addr other = homa_addr_ipv4(0x0a000063);
	struct homa_stats st;
	struct th_pair p;
	uint8_t q[64], bad[64];
	size_t n;

	(void)state;
	th_pair_init(&p, NULL);
	send(&p, 100);
	n = quoted(p.e[0], 0, q);
	memcpy(bad, q, n);
	bad[27] ^= 2;  /* another id */
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], HOMA_UNREACH_PORT, bad, n, 1), 0);
	memcpy(bad, q, n);
	bad[1] ^= 1;   /* not our port */
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], HOMA_UNREACH_PORT, bad, n, 1), 0);
	assert_int_equal(homa_engine_unreachable(p.e[0], &other, HOMA_UNREACH_PORT, q, n, 1), 0);
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], HOMA_UNREACH_PORT, q, 27, 1), 0);
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], 99, q, n, 1), 0);
	assert_int_equal(homa_engine_unreachable(NULL, &p.addr[1], HOMA_UNREACH_PORT, q, n, 1),
			 HOMA_EINVAL);
	homa_engine_stats(p.e[0], &st);
	assert_int_equal(st.active_rpcs, 1);
	assert_int_equal(st.unreachable_received, 0);
	/* protocol unreachable: the whole host runs no Homa */
	assert_int_equal(homa_engine_unreachable(p.e[0], &p.addr[1], HOMA_UNREACH_PROTO, q, n, 2), 1);
	th_pair_free(&p);
}

/**
 * serve_one() - Module host @mod (port 40000) sends request @id (100 B) to
 * the pair's server; the server replies and sends the whole reply, so the
 * RPC waits for an ack (RPC_DONE).
 */
static void serve_one(struct th_pair *p, const homa_addr *mod, uint64_t id)
{
	struct homa_pkt k = data_pkt(40000, p->port[1], id, 100);
	struct homa_iov iov = {big, 100};
	struct homa_event ev;
	uint64_t now = 0;

	assert_int_equal(module_input(p->e[1], mod, &k, 0), 0);
	assert_int_equal(homa_engine_next_event(p->e[1], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_REQUEST);
	homa_engine_msg_release(p->e[1], ev.msg);
	assert_int_equal(homa_engine_send_reply(p->e[1], ev.id, &iov, 1, 0), 0);
	drain(p->e[1], &now, 10000, NULL, NULL);
}

/** acks_received() - The server's count of RPCs freed by an ack. */
static uint64_t acks_received(struct th_pair *p)
{
	struct homa_stats st;

	homa_engine_stats(p->e[1], &st);
	return st.acks_received;
}

/**
 * host_acks__from_another_client_port() - The module keeps one ack list
 * per host: an ack for our server RPC arrives piggybacked on a request
 * from another client socket (port) of that host, and frees the RPC (it
 * was looked up with the packet's source port and missed).
 */
static void host_acks__from_another_client_port(void **state)
{
	homa_addr mod = homa_addr_ipv4(0x0a000009);
	struct th_pair p;
	struct homa_pkt k;

	(void)state;
	th_pair_init(&p, NULL);
	serve_one(&p, &mod, 100);
	k = data_pkt(40001, p.port[1], 202, 10);
	k.u.data.ack.client_id = 100;
	k.u.data.ack.server_port = p.port[1];
	assert_int_equal(module_input(p.e[1], &mod, &k, TICK), 0);
	assert_int_equal(acks_received(&p), 1);
	th_pair_free(&p);
}

/**
 * host_acks__on_packets_to_other_ports() - An ack for our port riding on a
 * DATA or ACK packet to another port of this host (which a raw socket also
 * sees) frees our server RPC; the rest of the packet is not ours and is
 * dropped as WRONG_PORT (the whole packet was dropped).
 */
static void host_acks__on_packets_to_other_ports(void **state)
{
	homa_addr mod = homa_addr_ipv4(0x0a000009);
	uint16_t other;
	struct homa_stats st;
	struct th_pair p;
	struct homa_pkt k;
	uint8_t buf[200];
	int len;

	(void)state;
	th_pair_init(&p, NULL);
	other = (uint16_t)(p.port[1] + 1);
	serve_one(&p, &mod, 100);
	serve_one(&p, &mod, 104);
	k = data_pkt(40001, other, 202, 10);
	k.u.data.ack.client_id = 100;
	k.u.data.ack.server_port = p.port[1];
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_true(homa_wire_acks_port(buf, (size_t)len, p.port[1]));
	assert_false(homa_wire_acks_port(buf, (size_t)len, other));
	assert_int_equal(module_input(p.e[1], &mod, &k, TICK), 0);
	assert_int_equal(acks_received(&p), 1);
	k = pkt(HOMA_PKT_ACK, 40002, other, 300);
	k.u.ack.num_acks = 2;
	k.u.ack.acks[0] = (struct homa_ack){300, other};
	k.u.ack.acks[1] = (struct homa_ack){104, p.port[1]};
	len = homa_wire_encode(&k, buf, sizeof(buf));
	assert_true(homa_wire_acks_port(buf, (size_t)len, p.port[1]));
	assert_int_equal(module_input(p.e[1], &mod, &k, TICK), 0);
	assert_int_equal(acks_received(&p), 2);
	/* nothing for us: still a wrong-port drop */
	assert_int_equal(module_input(p.e[1], &mod, &k, TICK), HOMA_INPUT_DROPPED + HOMA_DROP_WRONG_PORT);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.active_rpcs, 0);
	th_pair_free(&p);
}

/**
 * host_ids__same_id_other_port_refused() - Ids are unique per host: a
 * request reusing the id of a live server RPC from another port of the
 * same host is refused, not made a second RPC with that id and host.
 */
static void host_ids__same_id_other_port_refused(void **state)
{
	homa_addr mod = homa_addr_ipv4(0x0a000009);
	struct homa_stats st;
	struct th_pair p;
	struct homa_pkt k;

	(void)state;
	th_pair_init(&p, NULL);
	serve_one(&p, &mod, 100);
	k = data_pkt(40001, p.port[1], 100, 10);
	assert_int_equal(module_input(p.e[1], &mod, &k, TICK), HOMA_INPUT_DROPPED + HOMA_DROP_BAD_FIELD);
	homa_engine_stats(p.e[1], &st);
	assert_int_equal(st.active_rpcs, 1);
	th_pair_free(&p);
}

/**
 * no_done_memory__late_duplicate_runs_again() - With max_done_rpcs 0 (the
 * module-shaped host's setting: the module remembers no finished server
 * RPC) a late copy of an acked request creates a new server RPC and is
 * delivered again, as on a module host; the default memory drops it. (0
 * was refused: the module-shaped peer always had a memory.)
 */
static void no_done_memory__late_duplicate_runs_again(void **state)
{
	homa_addr mod = homa_addr_ipv4(0x0a000009);
	struct homa_settings s;
	struct homa_event ev;
	struct th_pair p;
	struct homa_pkt k;

	(void)state;
	homa_settings_default(&s);
	s.max_done_rpcs = 0;
	assert_int_equal(homa_settings_validate(&s, NULL), 0);
	for (int memory = 0; memory < 2; memory++) {
		th_pair_init(&p, memory ? NULL : &s);
		serve_one(&p, &mod, 100);
		k = pkt(HOMA_PKT_ACK, 40000, p.port[1], 100);
		assert_int_equal(module_input(p.e[1], &mod, &k, TICK), 0);
		assert_int_equal(acks_received(&p), 1);
		k = data_pkt(40000, p.port[1], 100, 100);
		module_input(p.e[1], &mod, &k, 2 * TICK);
		assert_int_equal(homa_engine_next_event(p.e[1], &ev), memory ? 0 : 1);
		if (!memory)
			homa_engine_msg_release(p.e[1], ev.msg);
		th_pair_free(&p);
	}
}

/**
 * module_resend_all__not_a_grant() - The module's RESEND(0, -1) ("all you
 * sent", it has received nothing) to a server sending a 500 KB reply
 * retransmits what was sent and grants nothing: no byte goes past the
 * unscheduled window (the whole reply went out).
 */
static void module_resend_all__not_a_grant(void **state)
{
	struct homa_iov iov = {big, 500000};
	homa_addr mod = homa_addr_ipv4(0x0a000009);
	struct homa_event ev;
	struct homa_pkt k;
	struct th_pair p;
	uint64_t now = 0;
	uint32_t top;
	int rx = 0;

	(void)state;
	th_pair_init(&p, NULL);
	k = data_pkt(40000, p.port[1], 100, 100);
	assert_int_equal(module_input(p.e[1], &mod, &k, 0), 0);
	assert_int_equal(homa_engine_next_event(p.e[1], &ev), 1);
	homa_engine_msg_release(p.e[1], ev.msg);
	assert_int_equal(homa_engine_send_reply(p.e[1], ev.id, &iov, 1, 0), 0);
	top = drain(p.e[1], &now, 100000, NULL, NULL);
	assert_int_equal(top, homa_engine_settings(p.e[1])->unsched_bytes);
	k = pkt(HOMA_PKT_RESEND, 40000, p.port[1], 100);
	k.u.resend.offset = 0;
	k.u.resend.length = HOMA_RESEND_ALL;
	k.u.resend.priority = 7;
	assert_int_equal(module_input(p.e[1], &mod, &k, now), 0);
	top = drain(p.e[1], &now, 100000, NULL, &rx);
	assert_true(rx > 0);
	assert_true(top <= homa_engine_settings(p.e[1])->unsched_bytes);
	th_pair_free(&p);
}

/** compat_settings() - Defaults with compat = HOMA_COMPAT_MODULE and START_MSG on. */
static struct homa_settings compat_settings(void)
{
	struct homa_settings s;

	homa_settings_default(&s);
	s.compat = HOMA_COMPAT_MODULE;
	s.start_msg = true;
	return s;
}

/** first_type() - Type of the first packet @e sends now. */
static uint8_t first_type(homa_engine *e, uint64_t now)
{
	struct th_pkt t;

	assert_true(th_take(e, now, &t) > 0 && t.ok);
	return t.k.type;
}

/** mark_ours() - @e hears one packet from the pair's server carrying our marker. */
static void mark_ours(struct th_pair *p)
{
	struct homa_pkt k = pkt(HOMA_PKT_BUSY, p->port[1], p->port[0], 12345);
	uint8_t buf[64];
	int len = homa_wire_encode(&k, buf, sizeof(buf));

	homa_engine_input(p->e[0], &p->addr[1], buf, (size_t)len, p->now);
}

/**
 * compat_module__start_msg_only_to_ours() - In module-compatible mode a
 * long request to a peer not known to be ours goes as unscheduled DATA
 * (the module drops START_MSG silently); once the peer sent our marker,
 * START_MSG is used.
 */
static void compat_module__start_msg_only_to_ours(void **state)
{
	struct homa_settings s = compat_settings();
	struct th_pkt t;
	struct th_pair p;

	(void)state;
	th_pair_init(&p, &s);
	send(&p, 100000);
	assert_int_equal(first_type(p.e[0], 0), HOMA_PKT_DATA);
	while (th_take(p.e[0], p.now += 100000, &t) > 0)
		;
	mark_ours(&p);
	send(&p, 100000);
	assert_int_equal(first_type(p.e[0], p.now += 100000), HOMA_PKT_START_MSG);
	th_pair_free(&p);
}

/**
 * compat_module__message_limit() - In module-compatible mode a request
 * above 1,000,000 bytes to a peer not known to be ours is refused with
 * HOMA_EMSGSIZE (the module would answer RPC_UNKNOWN); 1,000,000 bytes
 * go; once the peer is known to be ours, 2,000,000 go too.
 */
static void compat_module__message_limit(void **state)
{
	struct homa_settings s = compat_settings();
	struct homa_iov over = {big, HOMA_MODULE_MAX_MESSAGE + 1};
	struct homa_iov limit = {big, HOMA_MODULE_MAX_MESSAGE};
	struct homa_iov two = {big, 2000000};
	struct th_pair p;
	uint64_t id;

	(void)state;
	th_pair_init(&p, &s);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &over, 1, 0, 0,
						  &id), HOMA_EMSGSIZE);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &limit, 1, 0, 0,
						  &id), 0);
	mark_ours(&p);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &two, 1, 0, 0,
						  &id), 0);
	th_pair_free(&p);
}

/**
 * answered_by() - @e sends a 100 B request to @dst at @dport, which
 * answers it whole in one DATA packet, module-shaped unless @ours (then
 * with our marker); the RPC completes and an ack for it is owed.
 * Return: the RPC's id.
 */
static uint64_t answered_by(homa_engine *e, const homa_addr *dst, uint16_t dport, bool ours,
			    uint64_t now)
{
	struct homa_iov iov = {big, 100};
	struct homa_event ev;
	struct homa_pkt k;
	struct th_pkt t;
	uint8_t buf[2100];
	uint64_t id;
	int len;

	assert_int_equal(homa_engine_send_request(e, dst, dport, &iov, 1, 1, now, &id), 0);
	while (th_take(e, now, &t) > 0)
		;
	k = data_pkt(dport, homa_engine_port(e), id ^ 1, 100);
	if (ours) {
		len = homa_wire_encode(&k, buf, sizeof(buf));
		assert_int_equal(homa_engine_input(e, dst, buf, (size_t)len, now), 0);
	} else {
		assert_int_equal(module_input(e, dst, &k, now), 0);
	}
	assert_int_equal(homa_engine_next_event(e, &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	homa_engine_msg_release(e, ev.msg);
	return id;
}

/** answered() - answered_by() the pair's client, to the pair's server address (a module host). */
static uint64_t answered(struct th_pair *p, uint16_t dport)
{
	return answered_by(p->e[0], &p->addr[1], dport, false, p->now);
}

/** first_data_ack() - The ack riding on the first DATA packet @e sends now. */
static struct homa_ack first_data_ack(homa_engine *e, uint64_t now)
{
	struct th_pkt t;

	while (th_take(e, now, &t) > 0)
		if (t.ok && t.k.type == HOMA_PKT_DATA)
			return t.k.u.data.ack;
	fail_msg("no DATA packet");
	return (struct homa_ack){0, 0};
}

/**
 * client_acks__one_list_per_module_host() - Toward a module host (module-
 * compatible mode, a peer not known to be ours) our client keeps one ack
 * list per host, as the module does: the ack for an RPC to one port of
 * the host rides on the next request to another port, carrying its own
 * server port (only acks for the request's own port went, so the server
 * kept the RPC until a NEED_ACK or the next tick's ACK).
 */
static void client_acks__one_list_per_module_host(void **state)
{
	struct homa_settings s = compat_settings();
	struct homa_iov iov = {big, 100};
	struct homa_ack a;
	struct th_pair p;
	uint64_t id, id2;

	(void)state;
	th_pair_init(&p, &s);
	id = answered(&p, p.port[1]);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], (uint16_t)(p.port[1] + 1),
						  &iov, 1, 2, p.now, &id2), 0);
	a = first_data_ack(p.e[0], p.now);
	assert_int_equal(a.client_id, id);
	assert_int_equal(a.server_port, p.port[1]);
	th_pair_free(&p);
}

/**
 * client_acks__per_port_to_our_hosts() - Toward a host known to be ours
 * (which sees only packets to its own port over UDP) an ack goes only on
 * packets to its own server port: a request to another port carries none.
 */
static void client_acks__per_port_to_our_hosts(void **state)
{
	struct homa_settings s = compat_settings();
	struct homa_iov iov = {big, 100};
	struct th_pair p;
	uint64_t id, id2;

	(void)state;
	th_pair_init(&p, &s);
	id = answered(&p, p.port[1]);
	mark_ours(&p); /* the peer exists now: its packet with our marker counts */
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], (uint16_t)(p.port[1] + 1),
						  &iov, 1, 2, p.now, &id2), 0);
	assert_int_equal(first_data_ack(p.e[0], p.now).client_id, 0);
	assert_int_equal(homa_engine_send_request(p.e[0], &p.addr[1], p.port[1], &iov, 1, 3, p.now,
						  &id2), 0);
	assert_int_equal(first_data_ack(p.e[0], p.now).client_id, id);
	th_pair_free(&p);
}

/**
 * client_ids__unique_per_host() - Two engines on one address, started at
 * the same time, give out different RPC ids (the module finds an RPC by
 * client address and id: equal ids from two of our processes collided).
 */
static void client_ids__unique_per_host(void **state)
{
	homa_addr a = homa_addr_ipv4(0x0a000001), dst = homa_addr_ipv4(0x0a000002);
	struct homa_iov iov = {big, 10};
	homa_engine *e1, *e2;
	uint64_t id1, id2;
	int i;

	(void)state;
	assert_int_equal(homa_engine_new(&e1, NULL, &a, 5000, NULL, 123456789), 0);
	assert_int_equal(homa_engine_new(&e2, NULL, &a, 5001, NULL, 123456789), 0);
	for (i = 0; i < 100; i++) {
		assert_int_equal(homa_engine_send_request(e1, &dst, 99, &iov, 1, 0, 0, &id1), 0);
		assert_int_equal(homa_engine_send_request(e2, &dst, 99, &iov, 1, 0, 0, &id2), 0);
		assert_true(id1 != id2);
		assert_int_equal(id1 & 1, 0);
		assert_int_equal(id2 & 1, 0);
	}
	homa_engine_free(e1);
	homa_engine_free(e2);
}

/** A test ack pool (struct homa_ack_pool): one host's acks, oldest first. */
struct test_pool {
	homa_addr host;
	uint64_t ids[8];
	uint16_t ports[8];
	int n;
};

/** tpool_put() - homa_ack_pool.put of a struct test_pool. */
static bool tpool_put(void *ctx, const homa_addr *host, uint64_t id, uint16_t port)
{
	struct test_pool *tp = ctx;

	if (tp->n == 8)
		return false;
	tp->host = *host;
	tp->ids[tp->n] = id;
	tp->ports[tp->n++] = port;
	return true;
}

/** tpool_take() - homa_ack_pool.take of a struct test_pool. */
static bool tpool_take(void *ctx, const homa_addr *host, uint64_t *id, uint16_t *port)
{
	struct test_pool *tp = ctx;

	if (!tp->n || !homa_addr_equal(&tp->host, host))
		return false;
	*id = tp->ids[0];
	*port = tp->ports[0];
	tp->n--;
	memmove(tp->ids, tp->ids + 1, (size_t)tp->n * sizeof(tp->ids[0]));
	memmove(tp->ports, tp->ports + 1, (size_t)tp->n * sizeof(tp->ports[0]));
	return true;
}

/**
 * host_acks__shared_by_engines() - Two engines of one process share an
 * ack pool: the ack one owes a module host rides on the other's next DATA
 * packet to that host (the module keeps one ack list per host, whatever
 * the ports), and a tick sends the pool's acks in an ACK packet; acks
 * owed to a host known to be ours stay with their engine.
 */
static void host_acks__shared_by_engines(void **state)
{
	struct homa_settings s = compat_settings();
	homa_addr local = homa_addr_ipv4(0x0a000001), mod = homa_addr_ipv4(0x0a000009);
	homa_addr ours = homa_addr_ipv4(0x0a000002);
	struct test_pool tp = {.n = 0};
	struct homa_ack_pool pool = {tpool_put, tpool_take, &tp};
	struct homa_iov iov = {big, 1};
	homa_engine *a, *b;
	struct homa_ack ack;
	struct th_pkt t;
	uint64_t ida, idb, now = 0;
	bool seen = false;

	(void)state;
	s.start_msg = false;
	assert_int_equal(homa_engine_new(&a, &s, &local, 40000, NULL, now), 0);
	assert_int_equal(homa_engine_new(&b, &s, &local, 40001, NULL, now), 0);
	homa_engine_set_ack_pool(a, &pool);
	homa_engine_set_ack_pool(b, &pool);
	ida = answered_by(a, &mod, 99, false, now);
	assert_int_equal(tp.n, 1);
	assert_int_equal(homa_engine_send_request(b, &mod, 99, &iov, 1, 0, now, &idb), 0);
	ack = first_data_ack(b, now);
	assert_true(ack.client_id == ida);
	assert_int_equal(ack.server_port, 99);
	assert_int_equal(tp.n, 0);

	ida = answered_by(a, &mod, 99, false, now); /* owed again; b's tick sends it */
	now += s.tick_ns;
	homa_engine_on_timer(b, now);
	while (th_take(b, now, &t) > 0)
		if (t.ok && t.k.type == HOMA_PKT_ACK && t.k.u.ack.acks[0].client_id == ida)
			seen = true;
	assert_true(seen);
	assert_int_equal(tp.n, 0);

	answered_by(a, &ours, 99, true, now); /* a host of ours: the ack is a's own */
	assert_int_equal(tp.n, 0);
	assert_int_equal(homa_engine_send_request(b, &ours, 99, &iov, 1, 0, now, &idb), 0);
	assert_true(first_data_ack(b, now).client_id == 0);
	homa_engine_free(a);
	homa_engine_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(module_data__request_delivered),
		cmocka_unit_test(module_unknown__flags_6_restarts),
		cmocka_unit_test(module_unknown__after_response_bytes_no_restart),
		cmocka_unit_test(not_server__fails_with_enoserver),
		cmocka_unit_test(lost_request__restarts_end_abandoned),
		cmocka_unit_test(unreachable__port_fails_rpcs_at_once),
		cmocka_unit_test(unreachable__examines_only_that_host),
		cmocka_unit_test(unreachable__examines_only_that_port),
		cmocka_unit_test(unreachable__forged_ignored),
		cmocka_unit_test(host_acks__from_another_client_port),
		cmocka_unit_test(host_acks__on_packets_to_other_ports),
		cmocka_unit_test(host_acks__shared_by_engines),
		cmocka_unit_test(client_acks__one_list_per_module_host),
		cmocka_unit_test(client_acks__per_port_to_our_hosts),
		cmocka_unit_test(host_ids__same_id_other_port_refused),
		cmocka_unit_test(no_done_memory__late_duplicate_runs_again),
		cmocka_unit_test(module_resend_all__not_a_grant),
		cmocka_unit_test(compat_module__start_msg_only_to_ours),
		cmocka_unit_test(compat_module__message_limit),
		cmocka_unit_test(client_ids__unique_per_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
