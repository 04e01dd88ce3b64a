/* SPDX-License-Identifier: MIT */
/**
 * @file test_pcap.c
 * homa_pcap: file format, synthesized headers and checksums, rotation,
 * sampling, snaplen, errors, concurrent writers. Files are read back by
 * an independent reader (pcap_read.c).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/obs.h"
#include "pcap_read.h"
#include "tmpdir.h"


/** path_of() - @name inside the temporary directory. */
static const char *path_of(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	return p;
}

/** pkt() - A packet of @len bytes (Homa ports 1000 -> 2000) over @transport. */
static struct homa_pcap_pkt pkt(const uint8_t *data, size_t len, int transport, int v6)
{
	struct homa_pcap_pkt p = {.data = data, .len = len, .transport = (uint8_t)transport,
				  .priority = 6, .dir = HOMA_PCAP_RX, .ts_ns = 1234567890123456789ull};

	if (v6) {
		memset(&p.src, 0, sizeof(p.src));
		p.src.b[15] = 1;
		p.dst = p.src;
		p.dst.b[0] = 0xfe;
		p.dst.b[1] = 0x80;
	} else {
		p.src = homa_addr_ipv4(0x7f000001);
		p.dst = homa_addr_ipv4(0x0a010203);
	}
	return p;
}

/** payload() - 300 bytes starting with ports 1000 and 2000, odd length tail. */
static const uint8_t *payload(void)
{
	static uint8_t b[301];
	size_t i;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7);
	b[0] = 0x03, b[1] = 0xe8, b[2] = 0x07, b[3] = 0xd0;
	return b;
}

/** pcap__ipv4_udp_headers() - Global header, IPv4 + UDP fields and checksums. */
static void pcap__ipv4_udp_headers(void **state)
{
	struct homa_pcap_pkt p = pkt(payload(), 301, HOMA_PCAP_UDP, 0);
	struct pcap_file pf;
	homa_pcap *pc;
	const uint8_t *d;

	assert_int_equal(homa_pcap_open(path_of("v4.pcap"), NULL, &pc), 0);
	assert_int_equal(homa_pcap_write(pc, &p), 1);
	assert_int_equal(homa_pcap_close(pc), 0);
	assert_int_equal(pcap_read(path_of("v4.pcap"), &pf), 0);
	assert_int_equal(pf.magic, 0xa1b23c4du);
	assert_int_equal(pf.major, 2);
	assert_int_equal(pf.minor, 4);
	assert_int_equal(pf.linktype, 101);
	assert_int_equal(pf.snaplen, 65535);
	assert_int_equal(pf.n, 1);
	assert_true(pf.recs[0].ts_ns == 1234567890123456789ull);
	assert_int_equal(pf.recs[0].caplen, 20 + 8 + 301);
	d = pf.recs[0].data;
	assert_int_equal(d[0], 0x45);
	assert_int_equal(d[1], 6 << 5);                   /* DSCP carries the priority */
	assert_int_equal((d[2] << 8) | d[3], 329);
	assert_int_equal(d[9], 17);
	assert_true(ip_checksum_ok(d, 20));
	assert_memory_equal(d + 12, "\x7f\x00\x00\x01\x0a\x01\x02\x03", 8);
	assert_int_equal((d[20] << 8) | d[21], 1000);
	assert_int_equal((d[22] << 8) | d[23], 2000);
	assert_int_equal((d[24] << 8) | d[25], 309);
	{
		uint8_t buf[12 + 309];

		memcpy(buf, d + 12, 8);                   /* pseudo header */
		buf[8] = 0, buf[9] = 17, buf[10] = 309 >> 8, buf[11] = 309 & 0xff;
		memcpy(buf + 12, d + 20, 309);
		assert_true(ip_checksum_ok(buf, sizeof(buf)));
	}
	assert_memory_equal(d + 28, payload(), 301);
	pcap_free(&pf);
}

/** pcap__ipv6_raw_headers() - IPv6 with next header 146 and the traffic class. */
static void pcap__ipv6_raw_headers(void **state)
{
	struct homa_pcap_pkt p = pkt(payload(), 100, HOMA_PCAP_RAW, 1);
	struct pcap_file pf;
	homa_pcap *pc;
	const uint8_t *d;

	p.priority = 7;
	assert_int_equal(homa_pcap_open(path_of("v6.pcap"), NULL, &pc), 0);
	assert_int_equal(homa_pcap_write(pc, &p), 1);
	assert_int_equal(homa_pcap_close(pc), 0);
	assert_int_equal(pcap_read(path_of("v6.pcap"), &pf), 0);
	assert_int_equal(pf.n, 1);
	d = pf.recs[0].data;
	assert_int_equal(pf.recs[0].caplen, 140);
	assert_int_equal(d[0] >> 4, 6);
	assert_int_equal(((d[0] & 0xf) << 4) | (d[1] >> 4), 7 << 5);
	assert_int_equal((d[4] << 8) | d[5], 100);
	assert_int_equal(d[6], 146);
	assert_int_equal(d[39], 1);
	assert_int_equal(d[24], 0xfe);
	assert_memory_equal(d + 40, payload(), 100);
	pcap_free(&pf);
}

/**
 * pcap__encrypted_flag() - A packet that travelled encrypted has DSCP's
 * low bit (TOS / traffic class 0x04) set beside its priority, in IPv4
 * and IPv6; the IPv4 header checksum covers it.
 */
static void pcap__encrypted_flag(void **state)
{
	struct homa_pcap_pkt p4 = pkt(payload(), 100, HOMA_PCAP_UDP, 0);
	struct homa_pcap_pkt p6 = pkt(payload(), 100, HOMA_PCAP_UDP, 1);
	struct pcap_file pf;
	homa_pcap *pc;
	const uint8_t *d;

	p4.encrypted = p6.encrypted = 1;
	assert_int_equal(homa_pcap_open(path_of("enc.pcap"), NULL, &pc), 0);
	assert_int_equal(homa_pcap_write(pc, &p4), 1);
	assert_int_equal(homa_pcap_write(pc, &p6), 1);
	assert_int_equal(homa_pcap_close(pc), 0);
	assert_int_equal(pcap_read(path_of("enc.pcap"), &pf), 0);
	assert_int_equal(pf.n, 2);
	d = pf.recs[0].data;
	assert_int_equal(d[1], 6 << 5 | HOMA_PCAP_TOS_ENCRYPTED);
	assert_true(ip_checksum_ok(d, 20));
	assert_memory_equal(d + 28, payload(), 100);
	d = pf.recs[1].data;
	assert_int_equal(((d[0] & 0xf) << 4) | (d[1] >> 4), 6 << 5 | HOMA_PCAP_TOS_ENCRYPTED);
	pcap_free(&pf);
}

/** pcap__bad_arguments() - Invalid packets and options are refused. */
static void pcap__bad_arguments(void **state)
{
	struct homa_pcap_opts small = {.snaplen = 100};
	struct homa_pcap_pkt p = pkt(payload(), 100, HOMA_PCAP_UDP, 0);
	static uint8_t huge[70000];
	homa_pcap *pc;

	assert_int_equal(homa_pcap_open(path_of("x.pcap"), &small, &pc), HOMA_EINVAL);
	assert_int_equal(homa_pcap_open("", NULL, &pc), HOMA_EINVAL);
	assert_int_equal(homa_pcap_open(path_of("no/such/dir.pcap"), NULL, &pc), HOMA_EIO);
	assert_int_equal(homa_pcap_open(path_of("x.pcap"), NULL, &pc), 0);
	p.priority = 8;
	assert_int_equal(homa_pcap_write(pc, &p), HOMA_EINVAL);
	p = pkt(payload(), 3, HOMA_PCAP_UDP, 0);
	assert_int_equal(homa_pcap_write(pc, &p), HOMA_EINVAL);  /* no ports */
	p = pkt(payload(), 100, 2, 0);
	assert_int_equal(homa_pcap_write(pc, &p), HOMA_EINVAL);
	p = pkt(payload(), 100, HOMA_PCAP_RAW, 0);
	p.dst = pkt(payload(), 1, 0, 1).dst;
	assert_int_equal(homa_pcap_write(pc, &p), HOMA_EINVAL);  /* mixed families */
	p = pkt(huge, sizeof(huge), HOMA_PCAP_RAW, 0);
	assert_int_equal(homa_pcap_write(pc, &p), HOMA_EINVAL);  /* too long */
	p = pkt(payload(), 100, HOMA_PCAP_RAW, 0);
	p.dir = 5;
	assert_int_equal(homa_pcap_write(pc, &p), HOMA_EINVAL);
	assert_int_equal(homa_pcap_close(pc), 0);
	assert_int_equal(homa_pcap_close(NULL), 0);
}

/** file_size() - Bytes in @path, or -1 if absent. */
static long file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) ? -1 : (long)sb.st_size;
}

/** pcap__rotation_keeps_k_files() - Size bound, names, K files, all packets in order. */
static void pcap__rotation_keeps_k_files(void **state)
{
	struct homa_pcap_opts o = {.max_bytes = 1000, .keep_files = 3};
	struct homa_pcap_stats st;
	struct pcap_file pf;
	char name[160];
	homa_pcap *pc;
	int i, k, total = 0;

	/* each record: 16 + 20 + 200 = 236 bytes; 24 + 4 * 236 = 968 <= 1000 */
	assert_int_equal(homa_pcap_open(path_of("rot.pcap"), &o, &pc), 0);
	for (i = 0; i < 20; i++) {
		struct homa_pcap_pkt p = pkt(payload(), 200, HOMA_PCAP_RAW, 0);

		p.ts_ns = (uint64_t)i + 1;
		assert_int_equal(homa_pcap_write(pc, &p), 1);
	}
	homa_pcap_get_stats(pc, &st);
	assert_int_equal(homa_pcap_close(pc), 0);
	assert_int_equal(st.rotations, 4);                 /* 20 packets / 4 per file */
	assert_int_equal(st.written[HOMA_PCAP_RX], 20);
	assert_int_equal(file_size(path_of("rot.pcap.3")), -1);
	for (k = 2; k >= 0; k--) {
		snprintf(name, sizeof(name), "%s%s", path_of("rot.pcap"),
			 k ? (k == 1 ? ".1" : ".2") : "");
		assert_true(file_size(name) <= 1000);
		assert_int_equal(pcap_read(name, &pf), 0);
		assert_int_equal(pf.n, 4);
		for (i = 0; i < pf.n; i++)       /* oldest kept file holds packets 9..12 */
			assert_true(pf.recs[i].ts_ns == (uint64_t)(8 + total + i + 1));
		total += pf.n;
		pcap_free(&pf);
	}
}

/** pcap__keep_one_restarts_file() - keep_files 1 truncates in place. */
static void pcap__keep_one_restarts_file(void **state)
{
	struct homa_pcap_opts o = {.max_bytes = 600, .keep_files = 1};
	struct pcap_file pf;
	homa_pcap *pc;
	int i;

	assert_int_equal(homa_pcap_open(path_of("one.pcap"), &o, &pc), 0);
	for (i = 0; i < 5; i++) {
		struct homa_pcap_pkt p = pkt(payload(), 200, HOMA_PCAP_RAW, 0);

		p.ts_ns = (uint64_t)i + 1;
		assert_int_equal(homa_pcap_write(pc, &p), 1);
	}
	assert_int_equal(homa_pcap_close(pc), 0);
	assert_int_equal(file_size(path_of("one.pcap.1")), -1);
	assert_int_equal(pcap_read(path_of("one.pcap"), &pf), 0);
	assert_int_equal(pf.n, 1);           /* two fit per file: 1-2, 3-4, then 5 */
	assert_true(pf.recs[0].ts_ns == 5);
	pcap_free(&pf);
}

/** pcap__sampling_and_snaplen() - 1 in 3 packets written, each cut to the snaplen. */
static void pcap__sampling_and_snaplen(void **state)
{
	struct homa_pcap_opts o = {.sample_every = 3, .snaplen = 128};
	struct homa_pcap_stats st;
	struct pcap_file pf;
	homa_pcap *pc;
	int i, w = 0;

	assert_int_equal(homa_pcap_open(path_of("s.pcap"), &o, &pc), 0);
	for (i = 0; i < 10; i++) {
		struct homa_pcap_pkt p = pkt(payload(), 300, HOMA_PCAP_UDP, 0);

		p.ts_ns = (uint64_t)i + 1;
		p.dir = i & 1 ? HOMA_PCAP_TX : HOMA_PCAP_RX;
		w += homa_pcap_write(pc, &p);
	}
	homa_pcap_get_stats(pc, &st);
	assert_int_equal(homa_pcap_close(pc), 0);
	assert_int_equal(w, 4);                              /* packets 1, 4, 7, 10 */
	assert_int_equal(st.seen[HOMA_PCAP_RX] + st.seen[HOMA_PCAP_TX], 10);
	assert_int_equal(st.written[HOMA_PCAP_RX], 2);
	assert_int_equal(st.written[HOMA_PCAP_TX], 2);
	assert_int_equal(st.truncated, 4);
	assert_int_equal(pcap_read(path_of("s.pcap"), &pf), 0);
	assert_int_equal(pf.snaplen, 128);
	assert_int_equal(pf.n, 4);
	for (i = 0; i < 4; i++) {
		assert_true(pf.recs[i].ts_ns == (uint64_t)(3 * i + 1));
		assert_int_equal(pf.recs[i].caplen, 128);
		assert_int_equal(pf.recs[i].origlen, 328);
		assert_memory_equal(pf.recs[i].data + 28, payload(), 100);
		/* cut records carry no IPv4 UDP checksum (0: not computed) */
		assert_int_equal(pf.recs[i].data[26] | pf.recs[i].data[27], 0);
		assert_int_equal((pf.recs[i].data[24] << 8) | pf.recs[i].data[25], 308);
	}
	pcap_free(&pf);
}

/** Filled before the writer threads start (payload() writes its buffer). */
static const uint8_t *shared_payload;

/** writer_thread() - Write 500 packets. */
static void *writer_thread(void *arg)
{
	homa_pcap *pc = arg;
	int i;

	for (i = 0; i < 500; i++) {
		struct homa_pcap_pkt p = pkt(shared_payload, 64 + (size_t)(i % 100),
					     HOMA_PCAP_UDP, i & 1);

		if (homa_pcap_write(pc, &p) != 1)
			return (void *)1;
	}
	return NULL;
}

/** pcap__concurrent_writers() - 4 threads, every record intact. */
static void pcap__concurrent_writers(void **state)
{
	struct homa_pcap_opts o = {.max_bytes = 50000, .keep_files = 100};
	struct pcap_file pf;
	pthread_t t[4];
	homa_pcap *pc;
	void *ret;
	int i, total = 0;

	assert_int_equal(homa_pcap_open(path_of("mt.pcap"), &o, &pc), 0);
	shared_payload = payload();
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, writer_thread, pc);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		assert_null(ret);
	}
	assert_int_equal(homa_pcap_close(pc), 0);
	for (i = 0; i < 100; i++) {
		char name[160];

		snprintf(name, sizeof(name), i ? "%s.%d" : "%s", path_of("mt.pcap"), i);
		if (file_size(name) < 0)
			break;
		assert_int_equal(pcap_read(name, &pf), 0);
		total += pf.n;
		pcap_free(&pf);
	}
	assert_int_equal(total, 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pcap__ipv4_udp_headers),
		cmocka_unit_test(pcap__ipv6_raw_headers),
		cmocka_unit_test(pcap__encrypted_flag),
		cmocka_unit_test(pcap__bad_arguments),
		cmocka_unit_test(pcap__rotation_keeps_k_files),
		cmocka_unit_test(pcap__keep_one_restarts_file),
		cmocka_unit_test(pcap__sampling_and_snaplen),
		cmocka_unit_test(pcap__concurrent_writers),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
