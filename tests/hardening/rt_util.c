/* SPDX-License-Identifier: MIT */
/**
 * @file rt_util.c
 * See rt_util.h.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_pattern.h"
#include "rt_util.h"

/** rt_settings() - See rt_util.h. */
void rt_settings(struct homa_settings *s, uint32_t timeout_ticks)
{
	homa_settings_default(s);
	s->timeout_ticks = timeout_ticks;
}

/** rt_open() - See rt_util.h. */
int rt_open(homa_socket **s, bool server, uint16_t port, const struct homa_settings *st)
{
	struct homa_open_opts o;

	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.port = port;
	o.server = server;
	o.settings = st;
	o.offload = false;
	return homa_open(s, &o);
}

/** rt_req_len() - See rt_util.h. */
uint32_t rt_req_len(uint64_t serial)
{
	static const uint32_t lens[] = {8, 9, 64, 1000, 1400, 1500, 3000, 10000,
					40000, 100000, 300000};

	return lens[serial % (sizeof(lens) / sizeof(lens[0]))];
}

/** rt_resp_len() - See rt_util.h. */
uint32_t rt_resp_len(uint64_t serial)
{
	return rt_req_len(serial * 7 + 3);
}

/** rt_fill() - See rt_util.h. */
void rt_fill(uint8_t *buf, uint64_t serial, uint64_t seed, uint32_t len)
{
	fz_pattern_fill(buf, seed, 0, len);
	if (len >= 8)
		memcpy(buf, &serial, 8);
}

/** rt_check() - See rt_util.h. */
bool rt_check(const struct homa_message *m, uint64_t serial, uint64_t seed, uint32_t len, uint8_t *tmp)
{
	if (m->length != len || homa_message_copy(m, 0, tmp, len) != len)
		return false;
	if (len >= 8)
		return memcmp(tmp, &serial, 8) == 0 && fz_pattern_match(tmp + 8, seed, 8, len - 8);
	return fz_pattern_match(tmp, seed, 0, len);
}

/** serial_of() - The serial a request carries in its first 8 bytes (UINT64_MAX if shorter). */
static uint64_t serial_of(const uint8_t *b, size_t len)
{
	uint64_t serial = UINT64_MAX;

	if (len >= 8)
		memcpy(&serial, b, 8);
	return serial;
}

/** serve() - Server thread: check each request, count it, answer it. */
static void *serve(void *arg)
{
	struct rt_server *sv = arg;
	uint8_t *in = malloc(RT_MAX_MSG), *out = malloc(RT_MAX_MSG);
	struct homa_message m;

	if (!in || !out)
		abort();
	for (;;) {
		int r = homa_recv(sv->s, HOMA_RECV_REQUEST, 0, 200000000, &m);
		uint64_t serial;

		if (r == HOMA_EAGAIN || r == HOMA_ETIME)
			continue;
		if (r)
			break;
		homa_message_copy(&m, 0, in, m.length < RT_MAX_MSG ? m.length : RT_MAX_MSG);
		serial = serial_of(in, m.length);
		if (serial >= RT_MAX_SERIALS ||
			   !rt_check(&m, serial, RT_REQ_SEED(serial), rt_req_len(serial), in)) {
			atomic_fetch_add(&sv->bad, 1);
		} else {
			atomic_fetch_add(&sv->executed[serial], 1);
			rt_fill(out, serial, RT_RESP_SEED(serial), rt_resp_len(serial));
			homa_reply_buf(sv->s, m.id, out, rt_resp_len(serial));
		}
		atomic_fetch_add(&sv->served, 1);
		homa_message_release(&m);
	}
	free(in);
	free(out);
	return NULL;
}

/** rt_server_start() - See rt_util.h. */
int rt_server_start(struct rt_server *sv, int nthreads, uint16_t port, const struct homa_settings *st)
{
	int i, r;

	memset(sv, 0, sizeof(*sv));
	sv->executed = calloc(RT_MAX_SERIALS, sizeof(*sv->executed));
	if (!sv->executed)
		return HOMA_ENOMEM;
	r = rt_open(&sv->s, true, port, st);
	if (r) {
		free(sv->executed);
		return r;
	}
	sv->port = homa_local_port(sv->s);
	sv->nthreads = nthreads;
	for (i = 0; i < nthreads; i++)
		pthread_create(&sv->threads[i], NULL, serve, sv);
	return 0;
}

/** rt_server_stop() - See rt_util.h. */
void rt_server_stop(struct rt_server *sv)
{
	int i;

	homa_close(sv->s);
	for (i = 0; i < sv->nthreads; i++)
		pthread_join(sv->threads[i], NULL);
	free(sv->executed);
	sv->executed = NULL;
}

/** rt_addr() - See rt_util.h. */
struct sockaddr_storage rt_addr(int port)
{
	struct sockaddr_storage a;
	socklen_t len;

	homa_sockaddr_parse("127.0.0.1", (uint16_t)port, &a, &len);
	return a;
}

/** rt_now() - See rt_util.h. */
uint64_t rt_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/** rt_rss_kb() - See rt_util.h. */
uint64_t rt_rss_kb(void)
{
	unsigned long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return (uint64_t)rss * (uint64_t)(sysconf(_SC_PAGESIZE) / 1024);
}
