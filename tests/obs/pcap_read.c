/* SPDX-License-Identifier: MIT */
/**
 * @file pcap_read.c
 * Minimal pcap reader for the tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_read.h"

/** read_header() - The 24-byte global header. Return: 0 or -1. */
static int read_header(FILE *f, struct pcap_file *pf)
{
	uint8_t h[24];

	if (fread(h, 1, 24, f) != 24)
		return -1;
	memcpy(&pf->magic, h, 4);
	memcpy(&pf->major, h + 4, 2);
	memcpy(&pf->minor, h + 6, 2);
	memcpy(&pf->snaplen, h + 16, 4);
	memcpy(&pf->linktype, h + 20, 4);
	return pf->magic == 0xa1b23c4du || pf->magic == 0xa1b2c3d4u ? 0 : -1;
}

/** read_record() - One record into @r. Return: 1, 0 at a clean end, -1 on error. */
static int read_record(FILE *f, const struct pcap_file *pf, struct pcap_rec *r)
{
	uint32_t h[4];
	size_t n = fread(h, 1, sizeof(h), f);

	if (n == 0)
		return 0;
	if (n != sizeof(h) || h[2] > h[3] || h[2] > pf->snaplen)
		return -1;
	r->ts_ns = (uint64_t)h[0] * 1000000000u +
		   (pf->magic == 0xa1b23c4du ? h[1] : (uint64_t)h[1] * 1000u);
	r->caplen = h[2];
	r->origlen = h[3];
	r->data = malloc(r->caplen ? r->caplen : 1);
	if (fread(r->data, 1, r->caplen, f) != r->caplen) {
		free(r->data);
		return -1;
	}
	return 1;
}

/** pcap_read() - See pcap_read.h. */
int pcap_read(const char *path, struct pcap_file *pf)
{
	FILE *f = fopen(path, "rb");
	int r;

	memset(pf, 0, sizeof(*pf));
	if (!f)
		return -1;
	if (read_header(f, pf)) {
		fclose(f);
		return -1;
	}
	for (;;) {
		struct pcap_rec rec;

		r = read_record(f, pf, &rec);
		if (r <= 0)
			break;
		pf->recs = realloc(pf->recs, sizeof(rec) * (size_t)(pf->n + 1));
		pf->recs[pf->n++] = rec;
	}
	fclose(f);
	if (r < 0) {
		pcap_free(pf);
		return -1;
	}
	return 0;
}

/** pcap_free() - See pcap_read.h. */
void pcap_free(struct pcap_file *pf)
{
	int i;

	for (i = 0; i < pf->n; i++)
		free(pf->recs[i].data);
	free(pf->recs);
	pf->recs = NULL;
	pf->n = 0;
}

/** ip_checksum_ok() - See pcap_read.h. */
int ip_checksum_ok(const uint8_t *b, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += ((uint32_t)b[i] << 8) | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}
