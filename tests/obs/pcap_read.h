/* SPDX-License-Identifier: MIT */
/**
 * @file pcap_read.h
 * Reads a classic pcap file back for the tests (independent of the writer).
 */
#ifndef HOMA_TESTS_PCAP_READ_H
#define HOMA_TESTS_PCAP_READ_H

#include <stddef.h>
#include <stdint.h>

/** One record. */
struct pcap_rec {
	uint64_t ts_ns;
	uint32_t caplen, origlen;
	uint8_t *data; /**< caplen bytes */
};

/** A whole file. */
struct pcap_file {
	uint32_t magic, snaplen, linktype;
	uint16_t major, minor;
	int n;
	struct pcap_rec *recs;
};

/**
 * pcap_read() - Load @path. Return: 0, or -1 if it cannot be read, has a
 * bad header or a record runs past the end.
 */
int pcap_read(const char *path, struct pcap_file *out);

/** pcap_free() - Free what pcap_read() allocated. */
void pcap_free(struct pcap_file *pf);

/** ip_checksum_ok() - True if the ones' complement sum of @len bytes is 0xffff. */
int ip_checksum_ok(const uint8_t *b, size_t len);

#endif
