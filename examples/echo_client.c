/* SPDX-License-Identifier: MIT */
/**
 * @file echo_client.c
 * Example: send requests to echo_server, check every echo byte for byte
 * and print the round-trip times. Requests go by reference
 * (homa_send_request_zc(): the library frees each request buffer when it
 * is done with it) and echoes are checked through views of the received
 * message (homa_message_segment()), so the client copies no payload byte.
 *
 *   echo_client [--server ADDR] [--port P] [--size BYTES] [--count N] [--raw]
 *               [--pcap FILE] [--metrics-port N]
 *               [--encrypt [--certs DIR]]
 *
 * --pcap and --metrics-port: see obs_args.h.
 */
#include <stdbool.h>
#include <stdint.h>
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

/** pattern() - Byte @k of request @i. */
static uint8_t pattern(int i, size_t k)
{
	return (uint8_t)(i + k * 13);
}

/**
 * echo_ok() - True if @m is response @i: @size bytes of pattern(@i),
 * read in place segment by segment (no copy), and cookie @i.
 */
static bool echo_ok(const struct homa_message *m, int i, size_t size)
{
	if (m->length != size || m->cookie != (uint64_t)i)
		return false;
	for (size_t off = 0; off < size;) {
		const void *p;
		size_t len = homa_message_segment(m, off, &p);

		if (len == 0)
			return false;
		for (size_t k = 0; k < len; k++)
			if (((const uint8_t *)p)[k] != pattern(i, off + k))
				return false;
		off += len;
	}
	return true;
}

/**
 * send_echo() - Send request @i (@size bytes of pattern(@i)) by reference
 * from a buffer of its own, which the library frees (release function
 * free()) once it reads it no more. Return: homa_send_request_zc()'s
 * result, or HOMA_ENOMEM.
 */
static int send_echo(homa_socket *s, const struct sockaddr *dst, int i, size_t size,
		     uint64_t *id)
{
	uint8_t *req = malloc(size);
	struct homa_iov iov = {req, size};
	int err;

	if (!req)
		return HOMA_ENOMEM;
	for (size_t k = 0; k < size; k++)
		req[k] = pattern(i, k);
	err = homa_send_request_zc(s, dst, &iov, 1, (uint64_t)i, free, req, id);
	if (err)
		free(req);  /* on failure the buffer stays the caller's */
	return err;
}

/**
 * run_echoes() - Send @count echo requests of @size bytes to @dst on @s,
 * one at a time, check each response and print the RTT percentiles.
 * The caller keeps @s. Return: 0 if every echo came back intact, 1 if
 * one was wrong or an RPC failed (said on stderr).
 */
static int run_echoes(homa_socket *s, const struct sockaddr *dst, int count, size_t size)
{
	uint64_t *rtt = calloc((size_t)count, sizeof(*rtt));
	int bad = 0, err = 0;

	if (!rtt) {
		fprintf(stderr, "echo_client: no memory for %d RTTs\n", count);
		return 1;
	}
	for (int i = 0; i < count && !err; i++) {
		struct homa_message m;
		uint64_t id;

		err = send_echo(s, dst, i, size, &id);
		if (!err)   /* wait (up to 5 s) for this RPC's response */
			err = homa_recv(s, HOMA_RECV_RESPONSE, id, 5000000000LL, &m);
		if (err) {
			fprintf(stderr, "echo_client: RPC %d: %s\n", i, homa_strerror(err));
			break;
		}
		if (!echo_ok(&m, i, size))
			bad++;
		rtt[i] = m.rtt_ns;
		homa_message_release(&m);
	}
	if (!err) {
		qsort(rtt, (size_t)count, sizeof(*rtt), cmp_u64);
		printf("echo_client: %d RPCs of %zu bytes, %d bad echoes, RTT P50 %.1f us, P99 %.1f us\n",
		       count, size, bad, rtt[count / 2] / 1e3, rtt[count * 99 / 100] / 1e3);
	}
	free(rtt);
	return err || bad ? 1 : 0;
}

static const char usage[] =
	"usage: echo_client [--server ADDR] [--port P] [--size BYTES] [--count N] [--raw]\n"
	"                   " EXAMPLE_OBS_USAGE " " EXAMPLE_ENCRYPT_USAGE "\n" EXAMPLE_OBS_HELP;

static const struct option options[] = {
	{ "raw", no_argument, NULL, 'r' },
	{ "server", required_argument, NULL, 's' },
	{ "port", required_argument, NULL, 'p' },
	{ "size", required_argument, NULL, 'z' },
	{ "count", required_argument, NULL, 'n' },
	EXAMPLE_OBS_OPTIONS,
	EXAMPLE_ENCRYPT_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *server = "127.0.0.1";
	int port = 4000, count = 1000, err, c;
	size_t size = 100;
	struct homa_open_opts o;
	struct sockaddr_storage dst;
	socklen_t dlen;
	homa_socket *s;
	struct example_encrypt enc = {0};

	homa_open_opts_default(&o);            /* client: ephemeral port */
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': o.driver = HOMA_DRIVER_RAW; break;
		case 's': server = optarg; break;
		case 'p': port = (int)example_long("port", optarg, 1, 65535, usage); break;
		case 'z': size = (size_t)example_long("size", optarg, 1, 64L << 20, usage); break;
		case 'n': count = (int)example_long("count", optarg, 1, 100000000, usage); break;
		default:
			if (!example_encrypt_opt(c, optarg, &enc))  /* --encrypt, --certs */
				example_obs_opt(c, optarg, &o, usage);  /* the rest, or exit 2 */
		}
	}
	example_no_operands(argc, argv, usage);
	if (homa_sockaddr_parse(server, (uint16_t)port, &dst, &dlen)) {
		fprintf(stderr, "echo_client: --server wants a numeric address, got '%s'\n", server);
		example_usage_error(usage);
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
	err = run_echoes(s, (struct sockaddr *)&dst, count, size);
	homa_close(s);
	return err;
}
