/* SPDX-License-Identifier: MIT */
/**
 * @file kv_server.c
 * Example: a small in-memory key-value service over Homa. Several worker
 * threads share one socket; small lookups are not stuck behind
 * multi-megabyte uploads because Homa delivers and schedules each
 * message on its own (shortest remaining first).
 *
 *   kv_server [--port P] [--raw] [--threads N] [--pcap FILE] [--metrics-port N]
 *
 * Request:  'G' keylen(2, big-endian) key            -> 'K' value | 'N'
 *           'P' keylen(2, big-endian) key value      -> 'K'
 * Stops cleanly on SIGINT or SIGTERM. --pcap and --metrics-port: see obs_args.h.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa/homa.h"
#include "obs_args.h"

#define BUCKETS 4096

/** One stored pair. */
struct entry {
	struct entry *next;
	char *key;
	uint8_t *value;
	size_t len;
};

static struct entry *table[BUCKETS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/** bucket() - FNV-1a hash of a key. */
static unsigned bucket(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key; key++)
		h = (h ^ (uint8_t)*key) * 16777619u;
	return h % BUCKETS;
}

/** find() - The entry for @key, or NULL. Caller holds table_lock. */
static struct entry *find(const char *key)
{
	for (struct entry *e = table[bucket(key)]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

/** put() - Store @value (takes ownership) under @key. */
static void put(const char *key, uint8_t *value, size_t len)
{
	pthread_mutex_lock(&table_lock);
	struct entry *e = find(key);

	if (!e) {
		e = calloc(1, sizeof(*e));
		e->key = strdup(key);
		e->next = table[bucket(key)];
		table[bucket(key)] = e;
	}
	free(e->value);
	e->value = value;
	e->len = len;
	pthread_mutex_unlock(&table_lock);
}

/** handle() - Answer one request message @m. */
static void handle(homa_socket *s, struct homa_message *m)
{
	uint8_t hdr[3];
	char key[256];
	size_t klen;

	if (homa_message_copy(m, 0, hdr, 3) != 3 || (klen = (size_t)(hdr[1] << 8 | hdr[2])) > 255 ||
	    homa_message_copy(m, 3, key, klen) != klen) {
		homa_reply_buf(s, m->id, "E", 1);
		return;
	}
	key[klen] = 0;
	if (hdr[0] == 'P') {            /* copy the value out of the message */
		size_t len = m->length - 3 - klen;
		uint8_t *value = malloc(len ? len : 1);

		homa_message_copy(m, 3 + klen, value, len);
		put(key, value, len);
		homa_reply_buf(s, m->id, "K", 1);
		return;
	}
	pthread_mutex_lock(&table_lock); /* GET: reply copies the value */
	struct entry *e = find(key);
	struct homa_iov iov[2] = {{"K", 1}, {e ? e->value : NULL, e ? e->len : 0}};

	if (e)
		homa_reply(s, m->id, iov, e->len ? 2 : 1);
	else
		homa_reply_buf(s, m->id, "N", 1);
	pthread_mutex_unlock(&table_lock);
}

/** worker() - Serve requests until the socket is closed. */
static void *worker(void *arg)
{
	homa_socket *s = arg;
	struct homa_message m;

	while (homa_recv(s, HOMA_RECV_REQUEST, 0, -1, &m) == 0) {
		handle(s, &m);
		homa_message_release(&m);
	}
	return NULL;
}

static const char usage[] =
	"usage: kv_server [--port P] [--raw] [--threads N] " EXAMPLE_OBS_USAGE "\n" EXAMPLE_OBS_HELP;

static const struct option options[] = {
	{ "raw", no_argument, NULL, 'r' },
	{ "port", required_argument, NULL, 'p' },
	{ "threads", required_argument, NULL, 't' },
	EXAMPLE_OBS_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct homa_open_opts o;
	struct homa_settings st;
	int nthreads = 2, sig, err, c;
	pthread_t th[16];
	sigset_t stop;
	homa_socket *s;

	homa_settings_default(&st);     /* engine settings: defaults, one changed */
	st.timeout_ticks = 1000;        /* give up after 1 s of silence (default 100 ms) */
	homa_open_opts_default(&o);
	o.settings = &st;
	o.port = 4001;
	o.server = true;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': o.driver = HOMA_DRIVER_RAW; break;
		case 'p': o.port = (uint16_t)example_long("port", optarg, 0, 65535, usage); break;
		case 't': nthreads = (int)example_long("threads", optarg, 1, 16, usage); break;
		default: example_obs_opt(c, optarg, &o, usage);  /* the rest, or exit 2 */
		}
	}
	example_no_operands(argc, argv, usage);
	sigemptyset(&stop);             /* handle SIGINT/SIGTERM in main only */
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	err = homa_open(&s, &o);
	if (err) {
		fprintf(stderr, "kv_server: homa_open: %s\n", homa_strerror(err));
		return 1;
	}
	printf("kv_server: listening on port %d with %d worker threads\n", homa_local_port(s), nthreads);
	fflush(stdout);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, s);
	sigwait(&stop, &sig);
	homa_close(s);                  /* workers' homa_recv() return HOMA_ESHUTDOWN */
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("kv_server: stopped\n");
	return 0;
}
