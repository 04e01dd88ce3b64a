/* SPDX-License-Identifier: MIT */
/**
 * @file hash_bench.c
 * Cost of an RPC lookup when a peer chooses its RPC ids to collide
 * (docs/THREATS.md, hash flooding). A server engine receives N one-byte
 * requests from one peer, then the same N request packets again (each a
 * duplicate, so the engine only looks the RPC up and drops it); the time
 * per duplicate is the lookup cost. Two id sets are compared in one run:
 * ids chosen to share one bucket of a fixed multiplicative hash
 * ((id * 0x9e3779b97f4a7c15) ^ address ^ port, the engine's unkeyed hash
 * before it became keyed), and ids spaced evenly (what an honest client
 * sends). With a keyed hash both cost the same; with the fixed hash the
 * colliding set walks a chain of N RPCs per lookup.
 *
 * Usage: homa-hash-bench [--rpcs N]   (default 65536; at most 1048576;
 * getopt_long, -h/--help). Exit status 0, 1 if the run failed, 2 on bad
 * options.
 * Prints one line per id set and their ratio.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "homa/engine.h"
#include "homa/wire.h"

/** now_ns() - CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** inverse() - Multiplicative inverse of odd @a modulo 2^64. */
static uint64_t inverse(uint64_t a)
{
	uint64_t x = a;

	for (int i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

/**
 * client_id() - The @j-th client id of a set: @colliding picks ids whose
 * server-side ids (id ^ 1) times the fixed multiplier agree in the low 48
 * bits; otherwise consecutive even ids.
 */
static uint64_t client_id(uint64_t j, int colliding)
{
	if (!colliding)
		return 1000000 + 2 * j;
	return (inverse(0x9e3779b97f4a7c15ull) * (0x123456789abcdull + (j << 48))) ^ 1;
}

/** request() - Encode a one-byte request with client id @cid into @buf. Return: its length. */
static size_t request(uint8_t *buf, size_t cap, uint64_t cid)
{
	static const uint8_t byte = 1;
	struct homa_pkt k;

	memset(&k, 0, sizeof(k));
	k.type = HOMA_PKT_DATA;
	k.sport = 5000;
	k.dport = 4000;
	k.sender_id = cid;
	k.u.data.message_length = 1;
	k.u.data.incoming = 1;
	k.u.data.payload = &byte;
	k.u.data.payload_len = 1;
	return (size_t)homa_wire_encode(&k, buf, cap);
}

/**
 * run() - Fill a fresh server with @n RPCs of one id set, then time @n
 * duplicate lookups. Return: ns per lookup (0 if the engine refused RPCs).
 */
static double run(uint32_t n, int colliding)
{
	homa_addr local = homa_addr_ipv4(0x0a000001), peer = homa_addr_ipv4(0x0a000002);
	struct homa_settings s;
	struct homa_event ev;
	homa_engine *e;
	uint8_t buf[256];
	uint64_t t0, t1;
	uint32_t made = 0;

	homa_settings_default(&s);
	if (s.max_rpcs < n)
		s.max_rpcs = n;
	if (homa_engine_new(&e, &s, &local, 4000, NULL, 1))
		return 0;
#ifdef HOMA_HASH_KEY_LEN
	{
		uint8_t key[HOMA_HASH_KEY_LEN];

		for (size_t i = 0; i < sizeof(key); i++)
			key[i] = (uint8_t)rand();
		homa_engine_set_hash_key(e, key);
	}
#endif
	homa_engine_set_server(e, true);
	for (uint32_t j = 0; j < n; j++) {
		size_t len = request(buf, sizeof(buf), client_id(j, colliding));

		homa_engine_input(e, &peer, buf, len, 2);
		while (homa_engine_next_event(e, &ev)) {
			made += ev.type == HOMA_EV_REQUEST;
			homa_engine_msg_release(e, ev.msg);
		}
	}
	t0 = now_ns();
	for (uint32_t j = 0; j < n; j++) {
		size_t len = request(buf, sizeof(buf), client_id(j, colliding));

		homa_engine_input(e, &peer, buf, len, 3);
	}
	t1 = now_ns();
	homa_engine_free(e);
	if (made != n) {
		fprintf(stderr, "only %u of %u RPCs were created\n", made, n);
		return 0;
	}
	return (double)(t1 - t0) / n;
}

static const char usage[] =
	"usage: homa-hash-bench [--rpcs N]\n"
	"  --rpcs N    RPCs in the server's table (65536; 1..1048576)\n"
	"  -h, --help  this text\n";

/** main() - Parse --rpcs (getopt_long), time both id sets, print the ratio. */
int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"rpcs", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long v = 65536;
	uint32_t n;
	double honest, colliding;
	char *end = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c == 'r')
			v = strtol(optarg, &end, 10);
		if (c != 'r' || *end || v < 1 || v > (1L << 20)) {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fputs(usage, stderr);
		return 2;
	}
	n = (uint32_t)v;
	srand((unsigned)now_ns());
	honest = run(n, 0);
	colliding = run(n, 1);
	if (honest == 0 || colliding == 0)
		return 1;
	printf("rpcs %u  evenly spaced ids: %.1f ns/lookup\n", n, honest);
	printf("rpcs %u  colliding ids:     %.1f ns/lookup\n", n, colliding);
	printf("colliding / evenly spaced: %.2f\n", colliding / honest);
	return 0;
}
