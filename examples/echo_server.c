/* SPDX-License-Identifier: MIT */
/**
 * @file echo_server.c
 * Example: a Homa echo server. Every request is answered with its own
 * bytes, sent straight from the received buffers: homa_recv() hands the
 * request over as views into the socket's buffers, and homa_reply_zc()
 * sends the response from those views, so the server copies no payload
 * byte (the request is released once the library is done sending).
 *
 *   echo_server [--port P] [--raw] [--count N] [--bind ADDR]
 *               [--pcap FILE] [--metrics-port N]
 *               [--encrypt [--certs DIR]]
 *
 * --raw uses IP protocol 146 (needs root); --count exits after N requests;
 * --pcap and --metrics-port: see obs_args.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa/homa.h"
#include "encrypt_args.h"
#include "obs_args.h"

static const char usage[] =
	"usage: echo_server [--port P] [--raw] [--count N] [--bind ADDR] " EXAMPLE_OBS_USAGE "\n"
	"                   " EXAMPLE_ENCRYPT_USAGE "\n"
	EXAMPLE_OBS_HELP;

/** Most segments a response is sent from; a longer request is copied. */
#define MAX_SEGMENTS 64

/**
 * release_request() - homa_release_fn of a response: the library reads
 * the request's buffers no more, so give them back to the socket and free
 * the struct that held them.
 */
static void release_request(void *arg)
{
	struct homa_message *m = arg;

	homa_message_release(m);
	free(m);
}

/**
 * echo() - Answer request @m (malloc'd; echo() takes it) with its own
 * bytes: by reference (homa_reply_zc() over the request's segments), or
 * copied when it has more than MAX_SEGMENTS segments.
 * Return: homa_reply_zc()'s or homa_reply_buf()'s result.
 */
static int echo(homa_socket *s, struct homa_message *m)
{
	struct homa_iov iov[MAX_SEGMENTS];
	size_t off = 0;
	int n = 0, err;

	while (off < m->length && n < MAX_SEGMENTS) {
		const void *p;
		size_t len = homa_message_segment(m, off, &p);

		iov[n++] = (struct homa_iov){p, len};
		off += len;
	}
	if (off == m->length) {
		/* on success release_request() runs once the library is done */
		err = homa_reply_zc(s, m->id, iov, n, release_request, m);
		if (err)
			release_request(m);
		return err;
	}
	void *buf = malloc(m->length);

	err = HOMA_ENOMEM;
	if (buf && homa_message_copy(m, 0, buf, m->length) == m->length)
		err = homa_reply_buf(s, m->id, buf, m->length);
	free(buf);
	release_request(m);
	return err;
}

static const struct option options[] = {
	{ "raw", no_argument, NULL, 'r' },
	{ "port", required_argument, NULL, 'p' },
	{ "count", required_argument, NULL, 'n' },
	{ "bind", required_argument, NULL, 'b' },
	EXAMPLE_OBS_OPTIONS,
	EXAMPLE_ENCRYPT_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct homa_open_opts o;
	long count = -1;
	homa_socket *s;
	struct example_encrypt enc = {0};
	int err, c;

	homa_open_opts_default(&o);
	o.port = 4000;
	o.server = true;                       /* accept incoming requests */
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': o.driver = HOMA_DRIVER_RAW; break;
		case 'p': o.port = (uint16_t)example_long("port", optarg, 0, 65535, usage); break;
		case 'n': count = example_long("count", optarg, 0, LONG_MAX, usage); break;
		case 'b': o.bind_addr = optarg; break;
		default:
			if (!example_encrypt_opt(c, optarg, &enc))  /* --encrypt, --certs */
				example_obs_opt(c, optarg, &o, usage);  /* the rest, or exit 2 */
		}
	}
	example_no_operands(argc, argv, usage);
	if (example_encrypt_setup(&enc, "server", &o))
		return 1;
	err = homa_open(&s, &o);
	if (err) {
		fprintf(stderr, "echo_server: homa_open: %s\n", homa_strerror(err));
		return 1;
	}
	printf("echo_server: listening on port %d (%s driver)\n", homa_local_port(s),
	       o.driver == HOMA_DRIVER_RAW ? "raw IP" : o.driver == HOMA_DRIVER_XDP ? "XDP" : "UDP");
	fflush(stdout);
	for (long served = 0; count < 0 || served < count; served++) {
		struct homa_message *m = malloc(sizeof(*m));

		if (!m)
			break;
		err = homa_recv(s, HOMA_RECV_REQUEST, 0, -1, m);   /* wait for a request */
		if (err) {
			fprintf(stderr, "echo_server: homa_recv: %s\n", homa_strerror(err));
			free(m);
			break;
		}
		err = echo(s, m);
		if (err)
			fprintf(stderr, "echo_server: homa_reply: %s\n", homa_strerror(err));
	}
	homa_close(s);
	return 0;
}
