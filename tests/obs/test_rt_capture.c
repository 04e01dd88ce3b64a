/* SPDX-License-Identifier: MIT */
/**
 * @file test_rt_capture.c
 * Real traffic through the runtime with capture on (pcap_path), for the
 * UDP and the raw IP driver over IPv4 and IPv6, decoded by tshark with the
 * Lua dissector: every packet is Homa and well formed, the packets of each
 * type and priority match the engine's own counters, the DATA packets of
 * every message cover it exactly from offset 0 to its length, and every
 * packet one side received carries the priority the other side sent it
 * with (read back from the DSCP by the driver), as /metrics also counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/homa.h"
#include "homa/obs.h"
#include "homa/wire.h"
#include "rt_util.h"
#include "tmpdir.h"

/*
 * The sockets take ephemeral ports, and tshark gives some of those ports
 * (44818, 47808, ...) to other protocols before it tries heuristics such
 * as Homa's: try the heuristics first.
 */
#define HEUR_FIRST "-o udp.try_heuristic_first:TRUE"

#define MAX_MSGS 32
#define MAX_RANGES 2048


/** Request and response sizes of the RPCs (some need grants). */
static const size_t sizes[][2] = {
	{100, 100}, {1500, 20}, {5000, 70000}, {60000, 3000}, {300000, 200000}, {40, 1000000},
};
#define NRPC (sizeof(sizes) / sizeof(sizes[0]))

/** One message seen in the capture: its DATA ranges. */
struct msg {
	uint64_t rpc_id;
	int tx;                      /**< sent by the client (request) */
	uint32_t length;
	int n;
	uint32_t lo[MAX_RANGES], hi[MAX_RANGES];
};

/** One captured packet, as far as matching a receipt to its sending goes. */
struct pkt {
	uint64_t sender_id;
	uint32_t offset, plen;       /**< 0 for types without them */
	uint8_t type, prio;
};

/** A growing list of packets. */
struct pkts {
	struct pkt *p;
	size_t n, cap;
};

/** What the capture says. */
struct capture {
	uint64_t tx_type[HOMA_PKT_TYPES], rx_type[HOMA_PKT_TYPES], tx_prio[8], rx_prio[8];
	uint64_t frames;
	struct pkts tx, rx;          /**< every packet sent and received */
	int nmsgs;
	struct msg msgs[MAX_MSGS];
};

/** find_msg() - The message (@rpc_id, @tx), added if new. */
static struct msg *find_msg(struct capture *c, uint64_t rpc_id, int tx)
{
	int i;

	for (i = 0; i < c->nmsgs; i++)
		if (c->msgs[i].rpc_id == rpc_id && c->msgs[i].tx == tx)
			return &c->msgs[i];
	assert_true(c->nmsgs < MAX_MSGS);
	memset(&c->msgs[c->nmsgs], 0, sizeof(c->msgs[0]));
	c->msgs[c->nmsgs].rpc_id = rpc_id;
	c->msgs[c->nmsgs].tx = tx;
	return &c->msgs[c->nmsgs++];
}

/** column() - Numeric value of tab-separated column @k of @line (0 if empty). */
static unsigned long long column(const char *line, int k)
{
	while (k-- > 0) {
		line = strchr(line, '\t');
		assert_non_null(line);
		line++;
	}
	return strtoull(line, NULL, 0);
}

/** push() - Append @p to @l. */
static void push(struct pkts *l, const struct pkt *p)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->p = realloc(l->p, l->cap * sizeof(*l->p));
		assert_non_null(l->p);
	}
	l->p[l->n++] = *p;
}

/**
 * add_frame() - Account one frame "sport dport type rpc_id offset plen mlen
 * prio sender_id" of the capture of the side whose port is @me ("tx" =
 * sent by that side).
 */
static void add_frame(struct capture *c, const char *line, uint16_t me)
{
	unsigned type = (unsigned)column(line, 2);
	int tx = column(line, 0) == me;
	unsigned prio = (unsigned)column(line, 7);
	struct pkt p = {.sender_id = column(line, 8), .offset = (uint32_t)column(line, 4),
			.plen = (uint32_t)column(line, 5), .type = (uint8_t)type,
			.prio = (uint8_t)prio};

	c->frames++;
	assert_true(type >= HOMA_PKT_FIRST && type < HOMA_PKT_FIRST + HOMA_PKT_TYPES);
	assert_true(tx || column(line, 1) == me);
	assert_true(prio < 8);
	(tx ? c->tx_type : c->rx_type)[type - HOMA_PKT_FIRST]++;
	(tx ? c->tx_prio : c->rx_prio)[prio]++;
	push(tx ? &c->tx : &c->rx, &p);
	if (type == HOMA_PKT_DATA) {
		struct msg *m = find_msg(c, column(line, 3), tx);
		uint32_t off = (uint32_t)column(line, 4);

		assert_true(m->n < MAX_RANGES);
		m->length = (uint32_t)column(line, 6);
		m->lo[m->n] = off;
		m->hi[m->n++] = off + (uint32_t)column(line, 5);
	}
}

/** free_capture() - Free the packet lists of @c. */
static void free_capture(struct capture *c)
{
	free(c->tx.p);
	free(c->rx.p);
	memset(c, 0, sizeof(*c));
}

/** decode() - Decode the capture @pcap of port @me into @c. Also asserts nothing is malformed. */
static void decode(const char *pcap, uint16_t me, struct capture *c)
{
	char cmd[1024], line[1024];
	FILE *p;

	free_capture(c);
	snprintf(cmd, sizeof(cmd),
		 "%s -n -r %s -X lua_script:%s " HEUR_FIRST " -T fields -e homa.sport "
		 "-e homa.dport -e homa.type -e homa.rpc_id -e homa.offset -e homa.payload_len "
		 "-e homa.message_length -e homa.ip_priority -e homa.sender_id 2>/dev/null",
		 HOMA_TSHARK, pcap, HOMA_LUA);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		add_frame(c, line, me);
	assert_int_equal(pclose(p), 0);
	snprintf(cmd, sizeof(cmd), "%s -n -r %s -X lua_script:%s " HEUR_FIRST
		 " -Y 'homa.malformed || !homa' 2>/dev/null | wc -l", HOMA_TSHARK, pcap, HOMA_LUA);
	p = popen(cmd, "r");
	assert_non_null(fgets(line, sizeof(line), p));
	pclose(p);
	assert_int_equal(atoi(line), 0);
}

/** covered() - True if the ranges of @m cover [0, length) (overlaps allowed). */
static int covered(struct msg *m)
{
	uint32_t reach = 0;
	int progress = 1, i;

	while (progress) {
		progress = 0;
		for (i = 0; i < m->n; i++)
			if (m->lo[i] <= reach && m->hi[i] > reach) {
				reach = m->hi[i];
				progress = 1;
			}
	}
	return reach == m->length;
}

/** check_messages() - Every request and response of the test, fully covered. */
static void check_messages(struct capture *c)
{
	size_t k;
	int i, found;

	for (k = 0; k < NRPC; k++) {
		int dir;

		for (dir = 0; dir < 2; dir++) {
			uint32_t want = (uint32_t)sizes[k][dir ? 0 : 1];

			found = 0;
			for (i = 0; i < c->nmsgs; i++)
				if (c->msgs[i].tx == dir && c->msgs[i].length == want) {
					found = 1;
					if (!covered(&c->msgs[i]))
						fail_msg("message of %u bytes not covered", want);
				}
			if (!found)
				fail_msg("no %s of %u bytes in the capture",
					 dir ? "request" : "response", want);
		}
	}
}

/** What one run produced. */
struct run {
	struct homa_stats cst;       /**< the client engine's counters at the end */
	uint16_t cport, sport;
	double rx_prio[8];           /**< the client's /metrics received-by-priority */
};

/**
 * scrape_client() - The client's homa_packets_received_by_priority_total
 * into @r; its chunk cache served some of the long messages (chunks freed
 * by one RPC are reused by the next) and holds no more than its limit.
 */
static void scrape_client(uint16_t mport, struct run *r)
{
	char *t = rt_scrape(mport), more[32];
	int p;

	assert_true(rt_metric(t, "homa_pool_reuses_total", r->cport, "") > 0);
	assert_true(rt_metric(t, "homa_pool_cached_bytes", r->cport, "") <=
		    rt_metric(t, "homa_pool_cached_limit_bytes", r->cport, ""));
	assert_true(rt_metric(t, "homa_pool_cached_limit_bytes", r->cport, "") > 0);

	for (p = 0; p < 8; p++) {
		snprintf(more, sizeof(more), ",priority=\"%d\"", p);
		r->rx_prio[p] = rt_metric(t, "homa_packets_received_by_priority_total",
					  r->cport, more);
	}
	free(t);
}

/*
 * The sockets of the running case, static so that a failed check (which
 * leaves the case at once) leaves nothing on a dead stack: the teardown
 * closes the client and stops the server, joining its thread, before the
 * next case starts.
 */
static struct rt_server srv;
static homa_socket *client;

/** run_traffic() - Server and client on @addr with capture on; RPCs; stats; close. */
static void run_traffic(int driver, const char *addr, const char *cpath,
			const char *spath, struct run *r)
{
	struct homa_open_opts so, co;
	struct homa_settings st;
	size_t k;
	int err;

	rt_settings(&st);
	homa_open_opts_default(&so);
	so.driver = driver;
	so.bind_addr = addr;
	so.pcap_path = spath;
	so.settings = &st;
	err = rt_server_start(&srv, &so);
	if (err == HOMA_EPERM)
		skip();
	assert_int_equal(err, 0);
	homa_open_opts_default(&co);
	co.driver = driver;
	co.bind_addr = addr;
	co.pcap_path = cpath;
	co.settings = &st;
	co.metrics_port = rt_free_tcp_port();
	assert_int_equal(homa_open(&client, &co), 0);
	r->cport = (uint16_t)homa_local_port(client);
	r->sport = srv.port;
	for (k = 0; k < NRPC; k++)
		assert_int_equal(rt_rpc_addr(client, addr, srv.port, sizes[k][0], sizes[k][1]), 0);
	assert_int_equal(rt_quiesce(client, srv.s, 10000), 0);
	assert_int_equal(homa_socket_stats(client, &r->cst), 0);
	scrape_client(co.metrics_port, r);
	err = homa_close(client);
	client = NULL;
	assert_int_equal(err, 0);
	rt_server_stop(&srv);
	assert_int_equal(srv.served, (int)NRPC);
}

/**
 * stop_sockets() - Per-case teardown: close the client and stop the
 * server (joining its thread) if a failed check left them open.
 * Return: 0.
 */
static int stop_sockets(void **state)
{
	(void)state;
	if (client)
		homa_close(client);
	client = NULL;
	rt_server_stop(&srv);
	return 0;
}

/** pkt_cmp() - qsort order of struct pkt: every field. */
static int pkt_cmp(const void *x, const void *y)
{
	const struct pkt *a = x, *b = y;

	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->sender_id != b->sender_id)
		return a->sender_id < b->sender_id ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->plen != b->plen)
		return a->plen < b->plen ? -1 : 1;
	return (int)a->prio - (int)b->prio;
}

/**
 * check_received() - Every packet in @rx (one side's receipts) was sent,
 * at the same priority, in @tx (the other side's sendings): @rx is a
 * sub-multiset of @tx on (type, sender id, offset, length, priority).
 * Receipts may be fewer (a kernel socket buffer may overflow), never
 * different. Sorts both lists.
 */
static void check_received(const char *what, struct pkts *rx, struct pkts *tx)
{
	size_t i, j = 0;

	qsort(rx->p, rx->n, sizeof(*rx->p), pkt_cmp);
	qsort(tx->p, tx->n, sizeof(*tx->p), pkt_cmp);
	for (i = 0; i < rx->n; i++, j++) {
		const struct pkt *p = &rx->p[i];

		while (j < tx->n && pkt_cmp(&tx->p[j], p) < 0)
			j++;
		if (j == tx->n || pkt_cmp(&tx->p[j], p))
			fail_msg("%s: %s id %llu offset %u len %u received at priority %u, "
				 "not sent so", what, homa_wire_type_name(p->type),
				 (unsigned long long)p->sender_id, p->offset, p->plen, p->prio);
	}
}

/**
 * check_rx_priorities() - Receipts match sendings at their priority both
 * ways; the client's /metrics count by priority equals its capture; and
 * the priorities in use are more than one (GRANTs at the top level).
 */
static void check_rx_priorities(const char *name, struct capture *cc, struct capture *sc,
				const struct run *r)
{
	int p, levels = 0;

	check_received(name, &cc->rx, &sc->tx);
	check_received(name, &sc->rx, &cc->tx);
	for (p = 0; p < 8; p++) {
		if ((double)cc->rx_prio[p] != r->rx_prio[p])
			fail_msg("%s: priority %d: captured %llu received, /metrics says %.0f", name,
				 p, (unsigned long long)cc->rx_prio[p], r->rx_prio[p]);
		levels += cc->rx_prio[p] > 0;
	}
	assert_true(levels >= 2);
	assert_true(cc->rx_prio[HOMA_MAX_PRIORITIES - 1] >=
		    cc->rx_type[HOMA_PKT_GRANT - HOMA_PKT_FIRST]);
}

/** check_driver() - The whole check for one driver over one address family. */
static void check_driver(int driver, const char *addr, const char *name)
{
	static struct capture cc, sc; /* large: not on the stack */
	char cpath[128], spath[128];
	struct homa_stats st;
	struct run r;
	int i;

	snprintf(cpath, sizeof(cpath), "%s/%s_client.pcap", tmpdir, name);
	snprintf(spath, sizeof(spath), "%s/%s_server.pcap", tmpdir, name);
	run_traffic(driver, addr, cpath, spath, &r);
	st = r.cst;
	decode(cpath, r.cport, &cc);
	decode(spath, r.sport, &sc);
	for (i = 0; i < HOMA_PKT_TYPES; i++) {
		if (cc.tx_type[i] != st.pkts_sent[i] || cc.rx_type[i] != st.pkts_recv[i])
			fail_msg("%s %s: captured tx %llu rx %llu, engine sent %llu received %llu",
				 name, homa_wire_type_name((uint8_t)(HOMA_PKT_FIRST + i)),
				 (unsigned long long)cc.tx_type[i], (unsigned long long)cc.rx_type[i],
				 (unsigned long long)st.pkts_sent[i], (unsigned long long)st.pkts_recv[i]);
		/*
		 * The server's capture holds the same conversation: it
		 * received at most what the client sent, and sent at least
		 * what the client received (equal unless a kernel socket
		 * buffer overflowed).
		 */
		if (sc.rx_type[i] > cc.tx_type[i] || sc.tx_type[i] < cc.rx_type[i])
			fail_msg("%s %s: client capture %llu/%llu, server capture %llu/%llu", name,
				 homa_wire_type_name((uint8_t)(HOMA_PKT_FIRST + i)),
				 (unsigned long long)cc.tx_type[i], (unsigned long long)cc.rx_type[i],
				 (unsigned long long)sc.tx_type[i], (unsigned long long)sc.rx_type[i]);
		assert_true(sc.tx_type[i] + sc.rx_type[i] > 0 || cc.tx_type[i] + cc.rx_type[i] == 0);
	}
	for (i = 0; i < 8; i++)
		assert_true(cc.tx_prio[i] == st.pkts_sent_prio[i]);
	assert_true(cc.rx_type[HOMA_PKT_GRANT - HOMA_PKT_FIRST] > 0); /* long requests were granted */
	check_messages(&cc);
	check_rx_priorities(name, &cc, &sc, &r);
	free_capture(&cc);
	free_capture(&sc);
}

/** rt_capture__udp_driver() - UDP driver over IPv4, decoded as UDP by the heuristic. */
static void rt_capture__udp_driver(void **state)
{
	check_driver(HOMA_DRIVER_UDP, "127.0.0.1", "udp");
}

/** rt_capture__udp_driver_ipv6() - UDP driver over IPv6 (IPV6_RECVTCLASS). */
static void rt_capture__udp_driver_ipv6(void **state)
{
	check_driver(HOMA_DRIVER_UDP, "::1", "udp6");
}

/** rt_capture__raw_driver() - Raw IP protocol 146 over IPv4 (needs root). */
static void rt_capture__raw_driver(void **state)
{
	if (geteuid() != 0)
		skip();
	check_driver(HOMA_DRIVER_RAW, "127.0.0.1", "raw");
}

/** rt_capture__raw_driver_ipv6() - Raw IP protocol 146 over IPv6 (needs root). */
static void rt_capture__raw_driver_ipv6(void **state)
{
	if (geteuid() != 0)
		skip();
	check_driver(HOMA_DRIVER_RAW, "::1", "raw6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(rt_capture__udp_driver, stop_sockets),
		cmocka_unit_test_teardown(rt_capture__udp_driver_ipv6, stop_sockets),
		cmocka_unit_test_teardown(rt_capture__raw_driver, stop_sockets),
		cmocka_unit_test_teardown(rt_capture__raw_driver_ipv6, stop_sockets),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
