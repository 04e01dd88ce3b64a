/* SPDX-License-Identifier: MIT */
/**
 * @file rt_load.c
 * See rt_load.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_load.h"

/** Per-RPC bookkeeping of one run. */
struct slot {
	uint64_t start;
	uint8_t ended;
};

/** send_one() - Start RPC @serial. Return: 0 or the send error. */
static int send_one(homa_socket *c, const struct sockaddr_storage *dst, uint64_t serial, uint8_t *buf)
{
	uint64_t id;
	uint32_t len = rt_req_len(serial);

	rt_fill(buf, serial, RT_REQ_SEED(serial), len);
	return homa_send(c, (const struct sockaddr *)dst, buf, len, serial, &id);
}

/** on_outcome() - Record the outcome of one RPC. */
static void on_outcome(struct rt_result *res, struct slot *sl, uint64_t first, int r,
		       struct homa_message *m, uint8_t *tmp)
{
	uint64_t serial = m->cookie;
	struct slot *s;
	uint64_t lat;

	if (serial < first || serial - first >= res->sent) {
		res->corrupt++;
		if (r == 0)
			homa_message_release(m);
		return;
	}
	s = &sl[serial - first];
	if (s->ended++)
		res->twice++;
	if (r) {
		if (res->failed < RT_FAIL_SAMPLES)
			res->fail[res->failed] = (struct rt_failure){serial, r, rt_now() - s->start};
		res->failed++;
		res->last_error = (uint64_t)-r;
		res->errors[r < 0 && -r < RT_ERR_CODES ? -r : RT_ERR_CODES - 1]++;
		return;
	}
	if (!rt_check(m, serial, RT_RESP_SEED(serial), rt_resp_len(serial), tmp))
		res->corrupt++;
	else
		res->ok++;
	lat = rt_now() - s->start;
	if (res->lat_n < RT_LAT_SAMPLES)
		res->lat[res->lat_n] = lat;
	res->lat_sum_ns += lat;
	res->lat_n++;
	if (lat > res->lat_max_ns)
		res->lat_max_ns = lat;
	homa_message_release(m);
}

/** rt_load_run() - See rt_load.h. */
void rt_load_run(homa_socket *c, int port, uint64_t first, uint64_t n, int window,
		 uint64_t wait_ns, uint64_t stop_ns, struct rt_result *res)
{
	struct sockaddr_storage dst = rt_addr(port);
	struct slot *sl = calloc(n ? n : 1, sizeof(*sl));
	uint8_t *buf = malloc(RT_MAX_MSG), *tmp = malloc(RT_MAX_MSG);
	uint64_t outstanding = 0;
	struct homa_message m;

	if (!sl || !buf || !tmp)
		abort();
	memset(res, 0, sizeof(*res));
	for (;;) {
		while (res->sent < n && outstanding < (uint64_t)window &&
		       (!stop_ns || rt_now() < stop_ns)) {
			sl[res->sent].start = rt_now();
			if (send_one(c, &dst, first + res->sent, buf))
				break;
			res->sent++;
			outstanding++;
		}
		if (!outstanding)
			break;
		int r = homa_recv(c, HOMA_RECV_RESPONSE, 0, (int64_t)wait_ns, &m);

		if (r == HOMA_EAGAIN || r == HOMA_ETIME) {
			res->hung += outstanding;
			break;
		}
		if (r && r != HOMA_ETIMEDOUT && r != HOMA_ECANCELED && r != HOMA_EABANDONED &&
		    r != HOMA_ENOSERVER && r != HOMA_ESHUTDOWN) {
			res->hung += outstanding;
			break;
		}
		outstanding--;
		on_outcome(res, sl, first, r, &m, tmp);
	}
	free(sl);
	free(buf);
	free(tmp);
}

/** rt_result_print_failures() - See rt_load.h. */
void rt_result_print_failures(const char *what, const struct rt_result *res)
{
	uint64_t i;

	if (!res->failed)
		return;
	for (i = 1; i < RT_ERR_CODES; i++)
		if (res->errors[i])
			printf("# %s: %llu RPCs failed with %s (%d)\n", what,
			       (unsigned long long)res->errors[i],
			       i < RT_ERR_CODES - 1 ? homa_strerror(-(int)i) : "another code",
			       i < RT_ERR_CODES - 1 ? -(int)i : 0);
	for (i = 0; i < res->failed && i < RT_FAIL_SAMPLES; i++)
		printf("# %s: RPC %llu failed with %d (%s) after %.1f ms\n", what,
		       (unsigned long long)res->fail[i].serial, res->fail[i].error,
		       homa_strerror(res->fail[i].error), res->fail[i].after_ns / 1e6);
	fflush(stdout);
}

/** cmp_u64() - qsort order of uint64_t. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/** rt_lat_percentile() - See rt_load.h. */
uint64_t rt_lat_percentile(struct rt_result *res, double pct)
{
	uint64_t n = res->lat_n < RT_LAT_SAMPLES ? res->lat_n : RT_LAT_SAMPLES, i;

	if (!n)
		return 0;
	qsort(res->lat, n, sizeof(res->lat[0]), cmp_u64);
	i = (uint64_t)(pct / 100.0 * (double)(n - 1) + 0.5);
	return res->lat[i < n ? i : n - 1];
}
