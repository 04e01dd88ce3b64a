/* SPDX-License-Identifier: MIT */
/**
 * @file kv_client.c
 * Example: load kv_server with two kinds of clients at once, all sharing
 * one Homa socket: "lookup" threads doing small GETs and timing them, and
 * "pusher" threads uploading multi-megabyte values and reading each one
 * back to check it. Prints the lookup latency next to the push volume.
 *
 *   kv_client [--server ADDR] [--port P] [--raw] [--lookups N]
 *             [--pushers M] [--value-mb K] [--seconds S]
 *             [--pcap FILE] [--metrics-port N]
 *
 * --pcap and --metrics-port: see obs_args.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "homa/homa.h"
#include "obs_args.h"

static homa_socket *sock;
static struct sockaddr_storage server;
static size_t value_len = 4 << 20;
static double seconds = 3;
static _Atomic int failures;
static _Atomic uint64_t pushed_bytes, pushes;

/** now() - Monotonic seconds. */
static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/**
 * call() - One RPC: op, key and optional value in; the response's status
 * byte out, its value copied into @out (up to @cap). Return: status or 0.
 */
static char call(char op, const char *key, const void *val, size_t len,
		 void *out, size_t cap, size_t *out_len)
{
	uint8_t hdr[3] = {(uint8_t)op, 0, (uint8_t)strlen(key)};
	struct homa_iov iov[3] = {{hdr, 3}, {key, strlen(key)}, {val, len}};
	struct homa_message m;
	char status = 0;
	uint64_t id;
	int err = homa_send_request(sock, (struct sockaddr *)&server, iov, len ? 3 : 2, 0, &id);

	if (!err)
		err = homa_recv(sock, HOMA_RECV_RESPONSE, id, 10000000000LL, &m);
	if (err) {
		if (failures++ == 0)
			fprintf(stderr, "kv_client: first failure: %s\n", homa_strerror(err));
		return 0;
	}
	homa_message_copy(&m, 0, &status, 1);
	if (out_len)
		*out_len = homa_message_copy(&m, 1, out, cap);
	homa_message_release(&m);
	return status;
}

/** cmp_double() - qsort order. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/** Per lookup thread: its latencies in microseconds. */
struct lookup {
	int id;
	double *lat;
	int n, cap;
};

/** lookup_thread() - Time GETs of small keys until the time is up. */
static void *lookup_thread(void *arg)
{
	struct lookup *l = arg;
	char key[32], val[64], got[64];
	size_t got_len;

	for (int k = 0; k < 10; k++) {     /* each thread owns 10 small keys */
		snprintf(key, sizeof(key), "small-%d-%d", l->id, k);
		snprintf(val, sizeof(val), "value of %s", key);
		call('P', key, val, strlen(val), NULL, 0, NULL);
	}
	for (double end = now() + seconds; now() < end && l->n < l->cap;) {
		int k = l->n % 10;
		double t0;

		snprintf(key, sizeof(key), "small-%d-%d", l->id, k);
		snprintf(val, sizeof(val), "value of %s", key);
		t0 = now();
		if (call('G', key, NULL, 0, got, sizeof(got), &got_len) != 'K' ||
		    got_len != strlen(val) || memcmp(got, val, got_len))
			failures++;
		l->lat[l->n++] = (now() - t0) * 1e6;
	}
	return NULL;
}

/** pusher_thread() - PUT a big value, GET it back, compare; repeat. */
static void *pusher_thread(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint8_t *val = malloc(value_len), *back = malloc(value_len);
	char key[32];
	size_t got;

	for (double end = now() + seconds; now() < end;) {
		snprintf(key, sizeof(key), "big-%d", id);
		for (size_t k = 0; k < value_len; k++)
			val[k] = (uint8_t)(k * 7 + id + pushes);
		if (call('P', key, val, value_len, NULL, 0, NULL) != 'K' ||
		    call('G', key, NULL, 0, back, value_len, &got) != 'K' ||
		    got != value_len || memcmp(val, back, value_len))
			failures++;
		pushes++;
		pushed_bytes += value_len;
	}
	free(val);
	free(back);
	return NULL;
}

static const char usage[] =
	"usage: kv_client [--server ADDR] [--port P] [--raw] [--lookups N] [--pushers M]\n"
	"                 [--value-mb K] [--seconds S] " EXAMPLE_OBS_USAGE "\n" EXAMPLE_OBS_HELP;

static const struct option options[] = {
	{ "raw", no_argument, NULL, 'r' },
	{ "server", required_argument, NULL, 's' },
	{ "port", required_argument, NULL, 'p' },
	{ "lookups", required_argument, NULL, 'l' },
	{ "pushers", required_argument, NULL, 'u' },
	{ "value-mb", required_argument, NULL, 'v' },
	{ "seconds", required_argument, NULL, 't' },
	EXAMPLE_OBS_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1";
	int port = 4001, nlookup = 4, npush = 2, total = 0, c;
	struct homa_open_opts o;
	struct homa_settings st;
	socklen_t len;

	homa_settings_default(&st);     /* engine settings: defaults, one changed */
	st.timeout_ticks = 1000;        /* give up after 1 s of silence (default 100 ms) */
	homa_open_opts_default(&o);
	o.settings = &st;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': o.driver = HOMA_DRIVER_RAW; break;
		case 's': host = optarg; break;
		case 'p': port = (int)example_long("port", optarg, 1, 65535, usage); break;
		case 'l': nlookup = (int)example_long("lookups", optarg, 1, 64, usage); break;
		case 'u': npush = (int)example_long("pushers", optarg, 0, 64, usage); break;
		case 'v':
			value_len = (size_t)example_long("value-mb", optarg, 1, 63, usage) << 20;
			break;
		case 't': seconds = example_double("seconds", optarg, 86400, usage); break;
		default: example_obs_opt(c, optarg, &o, usage);  /* the rest, or exit 2 */
		}
	}
	example_no_operands(argc, argv, usage);
	if (homa_sockaddr_parse(host, (uint16_t)port, &server, &len)) {
		fprintf(stderr, "kv_client: --server wants a numeric address, got '%s'\n", host);
		example_usage_error(usage);
	}
	if (homa_open(&sock, &o)) {
		fprintf(stderr, "kv_client: homa_open failed\n");
		return 1;
	}
	pthread_t lt[64], pt[64];
	struct lookup l[64];

	for (int i = 0; i < nlookup; i++) {
		l[i] = (struct lookup){.id = i, .cap = 1000000};
		l[i].lat = malloc(sizeof(double) * (size_t)l[i].cap);
		pthread_create(&lt[i], NULL, lookup_thread, &l[i]);
	}
	for (int i = 0; i < npush; i++)
		pthread_create(&pt[i], NULL, pusher_thread, (void *)(intptr_t)i);
	for (int i = 0; i < npush; i++)
		pthread_join(pt[i], NULL);
	double *all = malloc(sizeof(double) * (size_t)nlookup * 1000000);

	for (int i = 0; i < nlookup; i++) {
		pthread_join(lt[i], NULL);
		memcpy(all + total, l[i].lat, sizeof(double) * (size_t)l[i].n);
		total += l[i].n;
		free(l[i].lat);
	}
	qsort(all, (size_t)total, sizeof(double), cmp_double);
	printf("kv_client: %d lookups by %d threads, latency P50 %.1f us P99 %.1f us, while %d pushers "
	       "stored and read back %lu values of %zu MB (%.0f MB); %d failures\n",
	       total, nlookup, total ? all[total / 2] : 0, total ? all[total * 99 / 100] : 0, npush,
	       (unsigned long)pushes, value_len >> 20, pushed_bytes / 1e6, (int)failures);
	free(all);
	homa_close(sock);
	return failures ? 1 : 0;
}
