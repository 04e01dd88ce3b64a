/* SPDX-License-Identifier: MIT */
/**
 * @file pcap.c
 * pcap writer for Homa packets: classic pcap with nanosecond timestamps
 * and linktype RAW (101); size-bounded rotation (path, path.1, ...);
 * 1-in-N sampling and snaplen. All calls on one writer are serialized by
 * its mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcap_hdr.h"

#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_LINKTYPE_RAW 101
#define PCAP_FILE_HDR 24
#define PCAP_REC_HDR 16

/** A capture. */
struct homa_pcap {
	pthread_mutex_t lock;
	FILE *f;
	char *path;          /**< current file */
	char *name;          /**< scratch for rotated names */
	size_t name_cap;
	struct homa_pcap_opts opts;
	struct homa_pcap_stats stats;
	uint64_t file_bytes; /**< bytes in the current file */
	uint64_t offered;    /**< packets offered, for sampling */
	uint64_t last_flush_ns;
	uint16_t ip_id;
	int failed;          /**< sticky: a write or rotation failed */
};

/** write_file_header() - The 24-byte global header. Return: 0 or -1. */
static int write_file_header(struct homa_pcap *pc)
{
	uint32_t h[6] = {PCAP_MAGIC_NS, 0, 0, 0, pc->opts.snaplen, PCAP_LINKTYPE_RAW};
	uint16_t ver[2] = {2, 4}; /* major, minor: two u16 in host order */

	memcpy(&h[1], ver, sizeof(ver));
	if (fwrite(h, sizeof(h), 1, pc->f) != 1)
		return -1;
	pc->file_bytes = PCAP_FILE_HDR;
	pc->stats.bytes_written += PCAP_FILE_HDR;
	return 0;
}

/** open_current() - (Re)create the current file and write its header. Return: 0 or -1. */
static int open_current(struct homa_pcap *pc)
{
	pc->f = fopen(pc->path, "wb");
	if (!pc->f)
		return -1;
	setvbuf(pc->f, NULL, _IOFBF, 64 * 1024);
	return write_file_header(pc);
}

/** rotated_name() - path.@i into pc->name. */
static const char *rotated_name(struct homa_pcap *pc, uint32_t i)
{
	snprintf(pc->name, pc->name_cap, "%s.%u", pc->path, i);
	return pc->name;
}

/**
 * rotate() - Close the current file, shift path.i to path.(i+1) dropping
 * the oldest, move path to path.1 and start a new path. Return: 0 or -1.
 */
static int rotate(struct homa_pcap *pc)
{
	char *older;
	uint32_t i, k = pc->opts.keep_files;
	int err = fclose(pc->f);

	pc->f = NULL;
	if (err)
		return -1;
	if (k > 1) {
		older = malloc(pc->name_cap);
		if (!older)
			return -1;
		remove(rotated_name(pc, k - 1));
		for (i = k - 1; i > 1; i--) {
			strcpy(older, rotated_name(pc, i));
			rename(rotated_name(pc, i - 1), older);
		}
		free(older);
		if (rename(pc->path, rotated_name(pc, 1)))
			return -1;
	}
	pc->stats.rotations++;
	return open_current(pc);
}

/** apply_defaults() - Fill zeroed options. Return: 0 or HOMA_EINVAL. */
static int apply_defaults(struct homa_pcap_opts *o)
{
	if (!o->keep_files)
		o->keep_files = 4;
	if (!o->sample_every)
		o->sample_every = 1;
	if (!o->snaplen)
		o->snaplen = 65535;
	if (o->snaplen < 128 || o->snaplen > 262144 || o->keep_files > 1000)
		return HOMA_EINVAL;
	return 0;
}

/** homa_pcap_open() - See obs.h. */
int homa_pcap_open(const char *path, const struct homa_pcap_opts *opts, homa_pcap **out)
{
	struct homa_pcap *pc;

	if (!path || !*path || !out)
		return HOMA_EINVAL;
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return HOMA_ENOMEM;
	if (opts)
		pc->opts = *opts;
	if (apply_defaults(&pc->opts)) {
		free(pc);
		return HOMA_EINVAL;
	}
	pc->name_cap = strlen(path) + 16;
	pc->path = strdup(path);
	pc->name = malloc(pc->name_cap);
	if (!pc->path || !pc->name || open_current(pc)) {
		int err = pc->path && pc->name ? HOMA_EIO : HOMA_ENOMEM;

		if (pc->f)
			fclose(pc->f);
		free(pc->path);
		free(pc->name);
		free(pc);
		return err;
	}
	pthread_mutex_init(&pc->lock, NULL);
	*out = pc;
	return 0;
}

/** wall_ns() - CLOCK_REALTIME in ns. */
static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/**
 * write_record() - Rotate if needed, then write one record (caller holds
 * the lock). Return: 0 or -1 on an I/O failure.
 */
static int write_record(struct homa_pcap *pc, const struct homa_pcap_pkt *p,
			const uint8_t *prefix, size_t plen, uint64_t ts)
{
	size_t orig = plen + p->len;
	size_t cap = orig < pc->opts.snaplen ? orig : pc->opts.snaplen;
	size_t hdr_part = cap < plen ? cap : plen;
	uint32_t rec[4] = {(uint32_t)(ts / 1000000000u), (uint32_t)(ts % 1000000000u),
			   (uint32_t)cap, (uint32_t)orig};

	if (pc->opts.max_bytes && pc->file_bytes > PCAP_FILE_HDR &&
	    pc->file_bytes + PCAP_REC_HDR + cap > pc->opts.max_bytes && rotate(pc))
		return -1;
	if (fwrite(rec, sizeof(rec), 1, pc->f) != 1 ||
	    fwrite(prefix, hdr_part, 1, pc->f) != 1 ||
	    (cap > plen && fwrite(p->data, cap - plen, 1, pc->f) != 1))
		return -1;
	pc->file_bytes += PCAP_REC_HDR + cap;
	pc->stats.bytes_written += PCAP_REC_HDR + cap;
	pc->stats.written[p->dir]++;
	if (cap < orig)
		pc->stats.truncated++;
	if (ts - pc->last_flush_ns >= 1000000000u) {
		pc->last_flush_ns = ts;
		if (fflush(pc->f))
			return -1;
	}
	return 0;
}

/**
 * record() - Build the headers and write packet @p, which sampling kept
 * (caller holds the lock). Return: 1, HOMA_EINVAL or HOMA_EIO.
 */
static int record(struct homa_pcap *pc, const struct homa_pcap_pkt *p, uint64_t ts)
{
	uint8_t prefix[HOMA_PCAP_MAX_PREFIX];
	size_t pre = (homa_addr_is_ipv4(&p->src) ? 20 : 40) + (p->transport == HOMA_PCAP_UDP ? 8 : 0);
	bool cut = pre + p->len > pc->opts.snaplen;
	int plen = homa_pcap_build_prefix(p, pc->ip_id, cut, prefix);

	if (plen < 0)
		return plen;
	pc->ip_id++;
	if (write_record(pc, p, prefix, (size_t)plen, ts)) {
		pc->failed = 1;
		pc->stats.errors++;
		return HOMA_EIO;
	}
	return 1;
}

/** homa_pcap_write() - See obs.h. Packets skipped by sampling cost a counter. */
int homa_pcap_write(homa_pcap *pc, const struct homa_pcap_pkt *p)
{
	uint64_t ts;
	int ret = 0;

	if (!pc || !p || (!p->data && p->len) || p->priority >= HOMA_MAX_PRIORITIES ||
	    (p->dir != HOMA_PCAP_TX && p->dir != HOMA_PCAP_RX) ||
	    (p->transport != HOMA_PCAP_UDP && p->transport != HOMA_PCAP_RAW) ||
	    (p->transport == HOMA_PCAP_UDP && p->len < 4) ||
	    homa_addr_is_ipv4(&p->src) != homa_addr_is_ipv4(&p->dst))
		return HOMA_EINVAL;
	ts = p->ts_ns ? p->ts_ns : wall_ns();
	pthread_mutex_lock(&pc->lock);
	if (pc->failed) {
		ret = HOMA_EIO;
	} else {
		pc->stats.seen[p->dir]++;
		if (pc->offered++ % pc->opts.sample_every == 0)
			ret = record(pc, p, ts);
	}
	pthread_mutex_unlock(&pc->lock);
	return ret;
}

/** homa_pcap_flush() - See obs.h. */
int homa_pcap_flush(homa_pcap *pc)
{
	int ret = 0;

	if (!pc)
		return HOMA_EINVAL;
	pthread_mutex_lock(&pc->lock);
	if (pc->failed || !pc->f || fflush(pc->f))
		ret = HOMA_EIO;
	pthread_mutex_unlock(&pc->lock);
	return ret;
}

/** homa_pcap_get_stats() - See obs.h. */
void homa_pcap_get_stats(homa_pcap *pc, struct homa_pcap_stats *out)
{
	if (!out)
		return;
	if (!pc) {
		memset(out, 0, sizeof(*out));
		return;
	}
	pthread_mutex_lock(&pc->lock);
	*out = pc->stats;
	pthread_mutex_unlock(&pc->lock);
}

/** homa_pcap_close() - See obs.h. */
int homa_pcap_close(homa_pcap *pc)
{
	int ret = 0;

	if (!pc)
		return 0;
	if (pc->f && fclose(pc->f))
		ret = HOMA_EIO;
	if (pc->failed)
		ret = HOMA_EIO;
	pthread_mutex_destroy(&pc->lock);
	free(pc->path);
	free(pc->name);
	free(pc);
	return ret;
}
