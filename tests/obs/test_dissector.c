/* SPDX-License-Identifier: MIT */
/**
 * @file test_dissector.c
 * Capture tests: packets of every type, built with homa_wire_encode(),
 * are written by homa_pcap over UDP and raw IP (IPv4 and IPv6), decoded
 * by stock tshark with tools/wireshark/homa.lua, and compared field by
 * field with what was written. Malformed packets must be flagged.
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

#include "capture_pkts.h"
#include "homa/obs.h"
#include "tmpdir.h"

#define MAX_LINES 256


/** Output lines of one tshark run. */
struct lines {
	int n;
	char *l[MAX_LINES];
};

/** run_tshark() - Run tshark on @pcap with @args; collect stdout lines. */
static void run_tshark(const char *pcap, const char *args, struct lines *out)
{
	char cmd[2048], buf[8192];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s -n -r %s -X lua_script:%s %s 2>/dev/null",
		 HOMA_TSHARK, pcap, HOMA_LUA, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	out->n = 0;
	while (fgets(buf, sizeof(buf), p) && out->n < MAX_LINES) {
		buf[strcspn(buf, "\n")] = '\0';
		out->l[out->n++] = strdup(buf);
	}
	assert_int_equal(pclose(p), 0);
}

/** free_lines() - Free collected lines. */
static void free_lines(struct lines *ls)
{
	int i;

	for (i = 0; i < ls->n; i++)
		free(ls->l[i]);
	ls->n = 0;
}

/** split_tabs() - Split @line at tabs into @cols (at most @max). Return: count. */
static int split_tabs(char *line, char **cols, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *t = strchr(p, '\t');

		if (n < max)
			cols[n++] = p;
		if (!t)
			return n;
		*t = '\0';
		p = t + 1;
	}
}

/** set_addrs() - Source and destination of family v4 (@v6 0) or IPv6. */
static void set_addrs(struct homa_pcap_pkt *c, int v6)
{
	if (!v6) {
		c->src = homa_addr_ipv4(0x0a000001);
		c->dst = homa_addr_ipv4(0x0a000002);
		return;
	}
	memset(&c->src, 0, sizeof(c->src));
	c->src.b[0] = 0xfd;
	c->src.b[15] = 1;
	c->dst = c->src;
	c->dst.b[15] = 2;
}

/** write_raw() - Write @len bytes as one packet. */
static void write_raw(homa_pcap *pc, const uint8_t *b, size_t len, int transport,
		      int v6, int prio)
{
	struct homa_pcap_pkt c = {.data = b, .len = len, .priority = (uint8_t)prio,
				  .transport = (uint8_t)transport, .dir = HOMA_PCAP_TX,
				  .ts_ns = 1700000000000000000ull};

	set_addrs(&c, v6);
	assert_int_equal(homa_pcap_write(pc, &c), 1);
}

/** encap_of() - Encapsulation of packet number @k (10 per encapsulation). */
static void encap_of(int k, int *transport, int *v6)
{
	*transport = (k / 10) & 1 ? HOMA_PCAP_RAW : HOMA_PCAP_UDP;
	*v6 = k >= 20;
}

/** write_all_types() - 40 packets: every type over UDP/raw x IPv4/IPv6. */
static void write_all_types(const char *path)
{
	unsigned char payload[1400];
	uint8_t buf[2048];
	homa_pcap *pc;
	int k;

	assert_int_equal(homa_pcap_open(path, NULL, &pc), 0);
	for (k = 0; k < 40; k++) {
		struct homa_pkt p;
		int n, transport, v6;

		cap_build(k % 10, &p, payload);
		n = homa_wire_encode(&p, buf, sizeof(buf));
		assert_true(n > 0);
		encap_of(k, &transport, &v6);
		write_raw(pc, buf, (size_t)n, transport, v6, (k * 3) % 8);
	}
	assert_int_equal(homa_pcap_close(pc), 0);
}

/** check_encap() - The IP protocol and UDP port columns of packet @k. */
static void check_encap(int k, const struct homa_pkt *p, char **cols)
{
	int transport, v6;
	char want[16];

	encap_of(k, &transport, &v6);
	snprintf(want, sizeof(want), "%s", transport == HOMA_PCAP_UDP ? "17" : "146");
	assert_string_equal(cols[v6 ? 1 : 0], want);
	assert_string_equal(cols[v6 ? 0 : 1], "");
	snprintf(want, sizeof(want), "%u", p->dport);
	assert_string_equal(cols[2], transport == HOMA_PCAP_UDP ? want : "");
}

/** dissector__all_types_all_encapsulations() - Every field of every type. */
static void dissector__all_types_all_encapsulations(void **state)
{
	static const char *const fields[] = {CAP_FIELDS};
	char path[128], args[2048], want[256];
	unsigned char payload[1400];
	struct lines ls;
	size_t len;
	int k, f;

	snprintf(path, sizeof(path), "%s/all.pcap", tmpdir);
	write_all_types(path);
	len = (size_t)snprintf(args, sizeof(args),
			       "-T fields -E occurrence=a -E aggregator=, "
			       "-e ip.proto -e ipv6.nxt -e udp.dstport");
	for (f = 0; f < CAP_NFIELDS; f++)
		len += (size_t)snprintf(args + len, sizeof(args) - len, " -e %s", fields[f]);
	run_tshark(path, args, &ls);
	assert_int_equal(ls.n, 40);
	for (k = 0; k < 40; k++) {
		char *cols[3 + CAP_NFIELDS];
		struct homa_pkt p;

		assert_int_equal(split_tabs(ls.l[k], cols, 3 + CAP_NFIELDS), 3 + CAP_NFIELDS);
		cap_build(k % 10, &p, payload);
		check_encap(k, &p, cols);
		for (f = 0; f < CAP_NFIELDS; f++) {
			cap_expect(&p, (k * 3) % 8, f, want, sizeof(want));
			if (strcmp(cols[3 + f], want))
				fail_msg("packet %d field %s: got '%s' want '%s'", k + 1,
					 fields[f], cols[3 + f], want);
		}
	}
	free_lines(&ls);
}

/** put_common() - Zero the 128 bytes at @b and write a common header of @type. */
static void put_common(uint8_t *b, uint8_t type)
{
	memset(b, 0, 128);
	b[0] = 0x9c; /* sport 40000 */
	b[1] = 0x40;
	b[2] = 0x0f; /* dport 4000 */
	b[3] = 0xa0;
	b[11] = type;
	b[12] = type == HOMA_PKT_DATA ? 0xe0 : 0x50;
	b[27] = 2;
}

/**
 * write_malformed() - Alternating bad and good packets over @transport;
 * the bad ones are packets 1, 3, 5, ... Return: number of packets.
 */
static int write_malformed(homa_pcap *pc, int transport)
{
	uint8_t b[128];
	int n = 0;

	put_common(b, HOMA_PKT_GRANT);
	b[32] = 1;
	write_raw(pc, b, 20, transport, 0, 1), n++;           /* shorter than common */
	write_raw(pc, b, 33, transport, 0, 1), n++;           /* good GRANT */
	write_raw(pc, b, 30, transport, 0, 1), n++;           /* truncated GRANT */
	write_raw(pc, b, 33, transport, 1, 1), n++;           /* good, IPv6 */
	b[32] = 9;
	write_raw(pc, b, 33, transport, 0, 1), n++;           /* priority 9 */
	put_common(b, HOMA_PKT_BUSY);
	write_raw(pc, b, 28, transport, 0, 7), n++;           /* good BUSY */
	put_common(b, HOMA_PKT_ACK);
	b[29] = 7;
	write_raw(pc, b, 80, transport, 0, 7), n++;           /* num_acks 7 */
	put_common(b, HOMA_PKT_NEED_ACK);
	write_raw(pc, b, 28, transport, 0, 7), n++;           /* good NEED_ACK */
	put_common(b, HOMA_PKT_DATA);
	b[31] = 100;                                          /* message_length 100 */
	b[55] = 90;                                           /* offset 90 */
	write_raw(pc, b, 56 + 20, transport, 0, 0), n++;      /* data past the end */
	b[55] = 0;
	write_raw(pc, b, 56 + 20, transport, 0, 0), n++;      /* good DATA */
	put_common(b, HOMA_PKT_START_MSG);
	write_raw(pc, b, 32, transport, 0, 7), n++;           /* START_MSG length 0 */
	b[31] = 1;
	write_raw(pc, b, 32, transport, 0, 7), n++;           /* good START_MSG */
	put_common(b, 0x1f);
	write_raw(pc, b, 40, transport, 0, 7), n++;           /* unknown type */
	put_common(b, HOMA_PKT_FREEZE);
	write_raw(pc, b, 28, transport, 0, 7), n++;           /* good FREEZE */
	return n;
}

/** check_malformed_frames() - Exactly the odd frames are flagged. */
static void check_malformed_frames(const char *path, const char *opts, int n)
{
	char args[512];
	struct lines ls;
	int k;

	snprintf(args, sizeof(args), "%s -Y homa.malformed -T fields -e frame.number", opts);
	run_tshark(path, args, &ls);
	assert_int_equal(ls.n, n / 2);
	for (k = 0; k < ls.n; k++)
		assert_int_equal(atoi(ls.l[k]), 2 * k + 1);
	free_lines(&ls);
	snprintf(args, sizeof(args), "%s -Y homa -T fields -e frame.number", opts);
	run_tshark(path, args, &ls);
	assert_int_equal(ls.n, n);
	free_lines(&ls);
}

/** dissector__malformed_is_flagged() - Bad packets marked, good ones not; tshark survives. */
static void dissector__malformed_is_flagged(void **state)
{
	char path[128];
	homa_pcap *pc;
	int n;

	snprintf(path, sizeof(path), "%s/bad_raw.pcap", tmpdir);
	assert_int_equal(homa_pcap_open(path, NULL, &pc), 0);
	n = write_malformed(pc, HOMA_PCAP_RAW);
	assert_int_equal(homa_pcap_close(pc), 0);
	check_malformed_frames(path, "", n);

	snprintf(path, sizeof(path), "%s/bad_udp.pcap", tmpdir);
	assert_int_equal(homa_pcap_open(path, NULL, &pc), 0);
	n = write_malformed(pc, HOMA_PCAP_UDP);
	assert_int_equal(homa_pcap_close(pc), 0);
	/* the heuristic cannot claim garbage; the port preference does */
	check_malformed_frames(path, "-o homa.udp_ports:4000", n);
}

/** dissector__udp_port_preference() - Heuristic off: only the configured port decodes. */
static void dissector__udp_port_preference(void **state)
{
	char path[128];
	struct lines ls;

	snprintf(path, sizeof(path), "%s/all.pcap", tmpdir);
	write_all_types(path);
	run_tshark(path, "-o homa.heuristic:FALSE -Y homa -T fields -e frame.number", &ls);
	assert_int_equal(ls.n, 20); /* the raw IP packets only */
	free_lines(&ls);
	run_tshark(path, "-o homa.heuristic:FALSE -o homa.udp_ports:3990-4010 -Y homa "
			 "-T fields -e frame.number", &ls);
	assert_int_equal(ls.n, 40);
	free_lines(&ls);
	run_tshark(path, "-Y homa -T fields -e frame.number", &ls);
	assert_int_equal(ls.n, 40); /* heuristic on by default */
	free_lines(&ls);
}

/** dissector__snaplen_cut_data() - A DATA packet cut by snaplen keeps its true lengths. */
static void dissector__snaplen_cut_data(void **state)
{
	struct homa_pcap_opts o = {.snaplen = 128};
	unsigned char payload[1400];
	uint8_t buf[2048];
	struct homa_pkt p;
	char path[128];
	struct lines ls;
	homa_pcap *pc;
	int n;

	snprintf(path, sizeof(path), "%s/snap.pcap", tmpdir);
	assert_int_equal(homa_pcap_open(path, &o, &pc), 0);
	cap_build(0, &p, payload);
	n = homa_wire_encode(&p, buf, sizeof(buf));
	write_raw(pc, buf, (size_t)n, HOMA_PCAP_UDP, 1, 3);
	assert_int_equal(homa_pcap_close(pc), 0);
	run_tshark(path, "-T fields -e homa.payload_len -e homa.offset -e homa.ip_priority "
			 "-e frame.cap_len", &ls);
	assert_int_equal(ls.n, 1);
	assert_string_equal(ls.l[0], "1400\t2800\t3\t128");
	free_lines(&ls);
}

/**
 * dissector__reserved_fields_and_five_acks() - The fields that
 * homa_wire_encode() leaves zero (unused, the whole flags byte, window,
 * checksum, urgent, DATA's pad) are decoded from the bytes where they sit,
 * and an ACK with all 5 entries used shows each of them.
 */
static void dissector__reserved_fields_and_five_acks(void **state)
{
	uint8_t b[128];
	char path[128];
	struct lines ls;
	homa_pcap *pc;
	int k;

	snprintf(path, sizeof(path), "%s/reserved.pcap", tmpdir);
	assert_int_equal(homa_pcap_open(path, NULL, &pc), 0);
	put_common(b, HOMA_PKT_DATA);
	b[8] = 0x0a, b[9] = 0x0b, b[10] = 0x0c;               /* unused */
	b[13] = 0x43;                                          /* flags */
	b[14] = 0x12, b[15] = 0x34;                            /* window */
	b[16] = 0xbe, b[17] = 0xef;                            /* checksum */
	b[18] = 0x00, b[19] = 0x63;                            /* urgent 99 */
	b[31] = 100;                                           /* message_length */
	b[49] = 0x01, b[50] = 0x02, b[51] = 0x03;              /* pad */
	write_raw(pc, b, 56 + 20, HOMA_PCAP_RAW, 0, 4);
	put_common(b, HOMA_PKT_ACK);
	b[29] = 5;
	for (k = 0; k < 5; k++) {
		b[30 + 10 * k + 7] = (uint8_t)(2 * k + 10);      /* client_id 10, 12, .. */
		b[30 + 10 * k + 9] = (uint8_t)(k + 70);          /* server_port 70, 71, .. */
	}
	write_raw(pc, b, 80, HOMA_PCAP_UDP, 1, 7);
	assert_int_equal(homa_pcap_close(pc), 0);
	run_tshark(path, "-T fields -E occurrence=a -E aggregator=, -e homa.unused -e homa.flags "
			 "-e homa.window -e homa.checksum -e homa.urgent -e homa.pad "
			 "-e homa.ack.client_id -e homa.ack.server_port -e homa.malformed", &ls);
	assert_int_equal(ls.n, 2);
	assert_string_equal(ls.l[0], "0x0a0b0c\t0x43\t4660\t0xbeef\t99\t010203\t0\t0\t");
	assert_string_equal(ls.l[1], "0x000000\t0x00\t0\t0x0000\t0\t\t10,12,14,16,18\t"
				     "70,71,72,73,74\t");
	free_lines(&ls);
}

/**
 * dissector__module_conventions() - Packets as the Linux module sends
 * them decode: an original DATA with offset -1 takes its offset from seq
 * (homa.data_offset; the payload check uses it, so not malformed), flags
 * 6 with urgent 0xb97d shows the module marker, and an RPC_UNKNOWN with
 * flags 6 shows no extension bit (ours carry the window marker).
 */
static void dissector__module_conventions(void **state)
{
	uint8_t b[128];
	char path[128];
	struct lines ls;
	homa_pcap *pc;

	snprintf(path, sizeof(path), "%s/module.pcap", tmpdir);
	assert_int_equal(homa_pcap_open(path, NULL, &pc), 0);
	put_common(b, HOMA_PKT_DATA);
	b[13] = 6;                                             /* flags */
	b[18] = 0xb9, b[19] = 0x7d;                            /* urgent */
	b[6] = 0x0b, b[7] = 0x10;                              /* seq 2832 */
	b[30] = 0x27, b[31] = 0x10;                            /* message_length 10000 */
	b[52] = b[53] = b[54] = b[55] = 0xff;                  /* offset -1 */
	write_raw(pc, b, 56 + 40, HOMA_PCAP_RAW, 0, 4);
	put_common(b, HOMA_PKT_RPC_UNKNOWN);
	b[13] = 6;
	b[18] = 0xb9, b[19] = 0x7d;
	write_raw(pc, b, 28, HOMA_PCAP_RAW, 1, 7);
	assert_int_equal(homa_pcap_close(pc), 0);
	run_tshark(path, "-T fields -e homa.data_offset -e homa.payload_len -e homa.module_marker "
			 "-e homa.ext.mark -e homa.ext.finished -e homa.malformed", &ls);
	assert_int_equal(ls.n, 2);
	assert_string_equal(ls.l[0], "2832\t40\t1\t\t\t");
	assert_string_equal(ls.l[1], "\t\t1\t\t\t");
	free_lines(&ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dissector__all_types_all_encapsulations),
		cmocka_unit_test(dissector__malformed_is_flagged),
		cmocka_unit_test(dissector__udp_port_preference),
		cmocka_unit_test(dissector__snaplen_cut_data),
		cmocka_unit_test(dissector__reserved_fields_and_five_acks),
		cmocka_unit_test(dissector__module_conventions),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
