/* SPDX-License-Identifier: MIT */
/**
 * @file rpc.c
 * The honest side of homa-flood: an echo-style server and a client that
 * sends one request at a time and records each RPC's latency.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flood.h"
#include "homa/errors.h"

/** flood_now_us() - See flood.h. */
double flood_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/** flood_open() - See flood.h. */
int flood_open(homa_socket **s, int server, const struct flood_opts *fo)
{
	struct homa_open_opts o;
	struct homa_settings st;

	homa_settings_default(&st);
	if (fo->timeout_ms)
		st.timeout_ticks = (uint32_t)((uint64_t)fo->timeout_ms * 1000000 / st.tick_ns);
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.server = server != 0;
	o.settings = &st;
	o.rcvbuf_bytes = fo->rcvbuf;
	o.stranger_budget = fo->stranger_budget;
	o.stranger_cpu_us = fo->stranger_cpu_us;
	return homa_open(s, &o);
}

/** serve() - Server thread: answer every request with sv->size bytes until the socket closes. */
static void *serve(void *arg)
{
	struct flood_server *sv = arg;
	uint8_t *out = calloc(1, sv->size ? sv->size : 1);
	struct homa_message m;

	if (!out)
		return NULL;
	for (;;) {
		int r = homa_recv(sv->s, HOMA_RECV_REQUEST, 0, 200000000, &m);

		if (r == HOMA_EAGAIN || r == HOMA_ETIME)
			continue;
		if (r)
			break;
		homa_reply_buf(sv->s, m.id, out, sv->size);
		homa_message_release(&m);
	}
	free(out);
	return NULL;
}

/** flood_server_start() - See flood.h. */
int flood_server_start(struct flood_server *sv, const struct flood_opts *o)
{
	int i, r;

	memset(sv, 0, sizeof(*sv));
	sv->size = o->size;
	r = flood_open(&sv->s, 1, o);
	if (r)
		return r;
	for (i = 0; i < o->threads; i++) {
		if (pthread_create(&sv->threads[i], NULL, serve, sv))
			break;
		sv->nthreads++;
	}
	return 0;
}

/** flood_server_stop() - See flood.h. */
void flood_server_stop(struct flood_server *sv)
{
	int i;

	homa_close(sv->s);
	for (i = 0; i < sv->nthreads; i++)
		pthread_join(sv->threads[i], NULL);
}

/** add_latency() - Append @us to @arm's samples. Return: 0 or HOMA_ENOMEM. */
static int add_latency(struct flood_arm *arm, double us)
{
	if (arm->n == arm->cap) {
		size_t cap = arm->cap ? 2 * arm->cap : 4096;
		double *p = realloc(arm->lat_us, cap * sizeof(*p));

		if (!p)
			return HOMA_ENOMEM;
		arm->lat_us = p;
		arm->cap = cap;
	}
	arm->lat_us[arm->n++] = us;
	return 0;
}

/** flood_probe() - See flood.h. */
int flood_probe(homa_socket *c, uint16_t port, uint32_t size, double seconds, uint32_t wait_ms,
		struct flood_arm *arm)
{
	struct sockaddr_storage dst;
	socklen_t dlen;
	uint8_t *req = calloc(1, size ? size : 1);
	double end = flood_now_us() + seconds * 1e6;
	int rc = 0;

	if (!req)
		return HOMA_ENOMEM;
	homa_sockaddr_parse("127.0.0.1", port, &dst, &dlen);
	while (!rc && flood_now_us() < end) {
		struct homa_message m;
		double t0 = flood_now_us();
		uint64_t id;
		int r = homa_request_buf(c, (struct sockaddr *)&dst, req, size, 0, &id);

		if (r == HOMA_EPEERDEAD) {
			arm->refused++;
			nanosleep(&(struct timespec){0, 1000000}, NULL);
			continue;
		}
		if (!r)
			r = homa_recv(c, HOMA_RECV_RESPONSE, id, (int64_t)wait_ms * 1000000, &m);
		if (r == HOMA_ETIME) {
			homa_abort(c, id);
			arm->hung++;
		} else if (r) {
			arm->first_error = arm->failed++ ? arm->first_error : r;
			arm->timed_out += r == HOMA_ETIMEDOUT;
		} else {
			rc = add_latency(arm, flood_now_us() - t0);
			arm->ok += m.length == size;
			arm->failed += m.length != size;
			homa_message_release(&m);
		}
	}
	free(req);
	return rc;
}

/** flood_udp_rcvbuf_errors() - See flood.h. */
uint64_t flood_udp_rcvbuf_errors(void)
{
	char line[512], head[512] = "";
	unsigned long long v[5] = {0};
	FILE *f = fopen("/proc/net/snmp", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Udp: ", 5) && !strncmp(head, "Udp: ", 5) &&
		    sscanf(line + 5, "%llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			   &v[4]) == 5)
			break;
		memcpy(head, line, sizeof(line));
	}
	fclose(f);
	return v[4]; /* InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors */
}
