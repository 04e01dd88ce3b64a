/* SPDX-License-Identifier: MIT */
/**
 * @file engine_bench.c
 * Microbenchmark of the protocol engine alone (no I/O): a client engine
 * sends echo RPCs to a server engine through memory. It reports how many
 * DATA packets went through homa_engine_input() and how many packets
 * homa_engine_output() produced, so that a run under
 * `valgrind --tool=callgrind --toggle-collect=homa_engine_input` (or
 * homa_engine_output) gives repeatable instructions per packet; see
 * scripts/engine-callgrind.sh.
 *
 * Usage: homa-engine-bench [--rpcs N] [--size BYTES] (defaults 2000 RPCs of
 * 100000 B; getopt_long, -h/--help). Exit status 0, 1 if an engine could
 * not be made, 2 on bad options.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa/engine.h"

/** Counters the run reports. */
struct counts {
	unsigned long long data_in;
	unsigned long long pkts_in;
	unsigned long long pkts_out;
};

/** move() - Pass every packet @from wants to send now to @to. Return: packets moved. */
static int move(homa_engine *from, const homa_addr *src, homa_engine *to, uint64_t now,
		struct counts *c)
{
	static uint8_t buf[2048];
	struct homa_tx tx;
	int len, n = 0;

	while ((len = homa_engine_output(from, now, buf, sizeof(buf), &tx)) > 0) {
		c->pkts_out++;
		c->pkts_in++;
		if (tx.type == 0x10)
			c->data_in++;
		homa_engine_input(to, src, buf, (size_t)len, now);
		n++;
	}
	return n;
}

/** serve() - Echo every request the server has received. */
static void serve(homa_engine *s, uint8_t *scratch, uint64_t now)
{
	struct homa_event ev;

	while (homa_engine_next_event(s, &ev)) {
		size_t len = homa_msg_length(ev.msg);
		struct homa_iov iov = {scratch, len};

		homa_msg_copy(ev.msg, 0, scratch, len);
		homa_engine_send_reply(s, ev.id, &iov, 1, now);
		homa_engine_msg_release(s, ev.msg);
	}
}

/** reap() - Release responses at the client. Return: how many completed. */
static int reap(homa_engine *c)
{
	struct homa_event ev;
	int n = 0;

	while (homa_engine_next_event(c, &ev)) {
		homa_engine_msg_release(c, ev.msg);
		n++;
	}
	return n;
}

static const char usage[] =
	"usage: homa-engine-bench [--rpcs N] [--size BYTES]\n"
	"  --rpcs N      echo RPCs, at most 8 in flight (2000; 1..10000000)\n"
	"  --size BYTES  request and response size (100000; 1..67108864)\n"
	"  -h, --help    this text\n";

/**
 * parse() - Read --rpcs and --size with getopt_long().
 * Return: 0 to run, 1 after --help, 2 on a bad option (usage on stderr).
 */
static int parse(int argc, char **argv, int *rpcs, size_t *size)
{
	static const struct option opts[] = {
		{"rpcs", required_argument, NULL, 'r'},
		{"size", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long v = 0;
	char *end = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 1;
		}
		if (c != '?')
			v = strtol(optarg, &end, 10);
		if (c == '?' || *end || v < 1 || (c == 'r' && v > 10000000) || v > (1L << 26)) {
			fputs(usage, stderr);
			return 2;
		}
		if (c == 'r')
			*rpcs = (int)v;
		else
			*size = (size_t)v;
	}
	if (optind < argc) {
		fputs(usage, stderr);
		return 2;
	}
	return 0;
}

/** main() - Run the echo loop with at most 8 RPCs in flight; print counts. */
int main(int argc, char **argv)
{
	int rpcs = 2000;
	size_t size = 100000;
	int bad = parse(argc, argv, &rpcs, &size);
	homa_addr a = homa_addr_ipv4(0x0a000001), b = homa_addr_ipv4(0x0a000002);
	homa_engine *c, *s;
	uint8_t *msg = calloc(1, size), *scratch = malloc(size);
	struct homa_iov iov = {msg, size};
	struct counts cnt = {0, 0, 0};
	uint64_t now = 0, id;
	int sent = 0, done = 0;

	if (bad) {
		free(msg);
		free(scratch);
		return bad == 1 ? 0 : 2;
	}
	if (!msg || !scratch ||
	    homa_engine_new(&c, NULL, &a, 1000, NULL, 0) || homa_engine_new(&s, NULL, &b, 2000, NULL, 0))
		return 1;
	homa_engine_set_server(s, true);
	while (done < rpcs) {
		while (sent < rpcs && sent - done < 8 &&
		       homa_engine_send_request(c, &b, 2000, &iov, 1, 0, now, &id) == 0)
			sent++;
		move(c, &a, s, now, &cnt);
		serve(s, scratch, now);
		move(s, &b, c, now, &cnt);
		done += reap(c);
		now += 1000;
		homa_engine_on_timer(c, now);
		homa_engine_on_timer(s, now);
	}
	printf("rpcs %d size %zu data_packets_in %llu packets_in %llu packets_out %llu\n",
	       rpcs, size, cnt.data_in, cnt.pkts_in, cnt.pkts_out);
	homa_engine_free(c);
	homa_engine_free(s);
	free(msg);
	free(scratch);
	return 0;
}
