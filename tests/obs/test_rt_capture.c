/* SPDX-License-Identifier: MIT */
/**
 * @file test_rt_capture.c
 * Real traffic through the runtime with capture on (pcap_path), for the
 * UDP and the raw IP driver, decoded by tshark with the Lua dissector:
 * every packet is Homa and well formed, the packets of each type and
 * priority match the engine's own counters, and the DATA packets of every
 * message cover it exactly from offset 0 to its length.
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
#include "rt_util.h"

#define MAX_MSGS 32
#define MAX_RANGES 2048

static char tmpdir[64];

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

/** What the capture says. */
struct capture {
	uint64_t tx_type[HOMA_PKT_TYPES], rx_type[HOMA_PKT_TYPES], tx_prio[8];
	uint64_t frames;
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

/** add_frame() - Account one frame "sport dport type rpc_id offset plen mlen prio". */
static void add_frame(struct capture *c, const char *line, uint16_t client_port)
{
	unsigned type = (unsigned)column(line, 2);
	int tx = column(line, 0) == client_port;

	c->frames++;
	assert_true(type >= HOMA_PKT_FIRST && type < HOMA_PKT_FIRST + HOMA_PKT_TYPES);
	assert_true(tx || column(line, 1) == client_port);
	(tx ? c->tx_type : c->rx_type)[type - HOMA_PKT_FIRST]++;
	if (tx)
		c->tx_prio[column(line, 7) & 7]++;
	if (type == HOMA_PKT_DATA) {
		struct msg *m = find_msg(c, column(line, 3), tx);
		uint32_t off = (uint32_t)column(line, 4);

		assert_true(m->n < MAX_RANGES);
		m->length = (uint32_t)column(line, 6);
		m->lo[m->n] = off;
		m->hi[m->n++] = off + (uint32_t)column(line, 5);
	}
}

/** decode() - Decode @pcap into @c. Also asserts nothing is malformed. */
static void decode(const char *pcap, uint16_t client_port, struct capture *c)
{
	char cmd[1024], line[1024];
	FILE *p;

	memset(c, 0, sizeof(*c));
	snprintf(cmd, sizeof(cmd),
		 "%s -n -r %s -X lua_script:%s -T fields -e homa.sport -e homa.dport -e homa.type "
		 "-e homa.rpc_id -e homa.offset -e homa.payload_len -e homa.message_length "
		 "-e homa.ip_priority 2>/dev/null", HOMA_TSHARK, pcap, HOMA_LUA);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		add_frame(c, line, client_port);
	assert_int_equal(pclose(p), 0);
	snprintf(cmd, sizeof(cmd), "%s -n -r %s -X lua_script:%s -Y 'homa.malformed || !homa' "
		 "2>/dev/null | wc -l", HOMA_TSHARK, pcap, HOMA_LUA);
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

/** run_traffic() - Server and client with capture on; RPCs; stats; close. */
static void run_traffic(int driver, const char *cpath, const char *spath,
			struct homa_stats *cst, uint16_t *cport)
{
	struct homa_open_opts so, co;
	struct rt_server srv;
	homa_socket *c;
	size_t k;
	int err;

	homa_open_opts_default(&so);
	so.driver = driver;
	so.pcap_path = spath;
	err = rt_server_start(&srv, &so);
	if (err == HOMA_EPERM)
		skip();
	assert_int_equal(err, 0);
	homa_open_opts_default(&co);
	co.driver = driver;
	co.bind_addr = "127.0.0.1";
	co.pcap_path = cpath;
	assert_int_equal(homa_open(&c, &co), 0);
	*cport = (uint16_t)homa_local_port(c);
	for (k = 0; k < NRPC; k++)
		assert_int_equal(rt_rpc(c, srv.port, sizes[k][0], sizes[k][1]), 0);
	assert_int_equal(rt_quiesce(c, srv.s, 10000), 0);
	assert_int_equal(homa_socket_stats(c, cst), 0);
	assert_int_equal(homa_close(c), 0);
	rt_server_stop(&srv);
	assert_int_equal(srv.served, (int)NRPC);
}

/** check_driver() - The whole check for one driver. */
static void check_driver(int driver, const char *name)
{
	static struct capture cc, sc; /* large: not on the stack */
	char cpath[128], spath[128];
	struct homa_stats st;
	uint16_t cport;
	int i;

	snprintf(cpath, sizeof(cpath), "%s/%s_client.pcap", tmpdir, name);
	snprintf(spath, sizeof(spath), "%s/%s_server.pcap", tmpdir, name);
	run_traffic(driver, cpath, spath, &st, &cport);
	decode(cpath, cport, &cc);
	decode(spath, cport, &sc);
	for (i = 0; i < HOMA_PKT_TYPES; i++) {
		if (cc.tx_type[i] != st.pkts_sent[i] || cc.rx_type[i] != st.pkts_recv[i])
			fail_msg("%s %s: captured tx %llu rx %llu, engine sent %llu received %llu",
				 name, homa_wire_type_name((uint8_t)(HOMA_PKT_FIRST + i)),
				 (unsigned long long)cc.tx_type[i], (unsigned long long)cc.rx_type[i],
				 (unsigned long long)st.pkts_sent[i], (unsigned long long)st.pkts_recv[i]);
		/*
		 * The server's capture holds the same conversation: at most
		 * what the client sent, at least what the client received
		 * (equal unless a kernel socket buffer overflowed).
		 */
		if (sc.tx_type[i] > cc.tx_type[i] || sc.rx_type[i] < cc.rx_type[i])
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
}

/** rt_capture__udp_driver() - UDP driver, decoded as UDP by the heuristic. */
static void rt_capture__udp_driver(void **state)
{
	check_driver(HOMA_DRIVER_UDP, "udp");
}

/** rt_capture__raw_driver() - Raw IP protocol 146 (needs root). */
static void rt_capture__raw_driver(void **state)
{
	if (geteuid() != 0)
		skip();
	check_driver(HOMA_DRIVER_RAW, "raw");
}

/** setup() - Temporary directory. */
static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/homa-obs-rt-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

/** teardown() - Remove it. */
static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rt_capture__udp_driver),
		cmocka_unit_test(rt_capture__raw_driver),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
