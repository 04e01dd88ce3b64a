/* SPDX-License-Identifier: MIT */
/**
 * @file echo_client.c
 * Example: send requests to echo_server, check every echo byte for byte
 * and print the round-trip times.
 *
 *   echo_client [--server ADDR] [--port P] [--size BYTES] [--count N] [--raw]
 *               [--pcap FILE] [--metrics-port N]
 *               [--encrypt [--certs DIR]]
 *
 * --pcap and --metrics-port: see obs_args.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa/homa.h"
#include "encrypt_args.h"
#include "obs_args.h"

/** cmp_u64() - qsort order for round-trip times. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const char usage[] =
	"usage: echo_client [--server ADDR] [--port P] [--size BYTES] [--count N] [--raw]\n"
	"                   " EXAMPLE_OBS_USAGE " " EXAMPLE_ENCRYPT_USAGE "\n" EXAMPLE_OBS_HELP;

int main(int argc, char **argv)
{
	const char *server = "127.0.0.1";
	int port = 4000, count = 1000, bad = 0, err;
	size_t size = 100;
	struct homa_open_opts o;
	struct sockaddr_storage dst;
	socklen_t dlen;
	homa_socket *s;
	struct example_encrypt enc = {0};

	homa_open_opts_default(&o);            /* client: ephemeral port */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--raw"))
			o.driver = HOMA_DRIVER_RAW;
		else if (!strcmp(argv[i], "--server") && i + 1 < argc)
			server = argv[++i];
		else if (!strcmp(argv[i], "--port") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = atoi(argv[++i]);
		else if (!example_encrypt_arg(argc, argv, &i, &enc))  /* --encrypt, --certs */
			example_obs_arg(argc, argv, &i, &o, usage);  /* --pcap, --metrics-port, --help */
	}
	if (size < 1 || count < 1 || homa_sockaddr_parse(server, (uint16_t)port, &dst, &dlen)) {
		fprintf(stderr, "echo_client: bad arguments\n");
		return 2;
	}
	if (strchr(server, ':'))
		o.bind_addr = "::";
	if (example_encrypt_setup(&enc, "client", &o))
		return 1;
	err = homa_open(&s, &o);
	if (err) {
		fprintf(stderr, "echo_client: homa_open: %s\n", homa_strerror(err));
		return 1;
	}
	uint8_t *req = malloc(size), *resp = malloc(size);
	uint64_t *rtt = calloc((size_t)count, sizeof(*rtt));

	for (int i = 0; i < count; i++) {
		struct homa_message m;
		uint64_t id;

		for (size_t k = 0; k < size; k++)
			req[k] = (uint8_t)(i + k * 13);
		err = homa_send(s, (struct sockaddr *)&dst, req, size, (uint64_t)i, &id);
		if (!err)   /* wait (up to 5 s) for this RPC's response */
			err = homa_recv(s, HOMA_RECV_RESPONSE, id, 5000000000LL, &m);
		if (err) {
			fprintf(stderr, "echo_client: RPC %d: %s\n", i, homa_strerror(err));
			return 1;
		}
		if (m.length != size || homa_message_copy(&m, 0, resp, size) != size ||
		    memcmp(req, resp, size) != 0 || m.cookie != (uint64_t)i)
			bad++;
		rtt[i] = m.rtt_ns;
		homa_message_release(&m);
	}
	qsort(rtt, (size_t)count, sizeof(*rtt), cmp_u64);
	printf("echo_client: %d RPCs of %zu bytes, %d bad echoes, RTT P50 %.1f us, P99 %.1f us\n",
	       count, size, bad, rtt[count / 2] / 1e3, rtt[count * 99 / 100] / 1e3);
	homa_close(s);
	free(req);
	free(resp);
	free(rtt);
	return bad ? 1 : 0;
}
