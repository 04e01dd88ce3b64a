/* SPDX-License-Identifier: MIT */
/**
 * @file fallback.c
 * homa-fallback: measures the AUTO transport's fallback and return.
 *
 *   homa-fallback server ADDR PORT
 *	an echo server opened with HOMA_TRANSPORT_AUTO (Homa and TCP at PORT)
 *	until SIGTERM or SIGINT.
 *   homa-fallback client --servers A:P[,A:P...] --seconds S
 *	[--block-at T --block-cmd CMD] [--unblock-at T --unblock-cmd CMD]
 *	[--retry-ms MS] [--fallback-ms MS]
 *	one thread per server sends 100-byte RPCs back to back over one
 *	AUTO socket; at T seconds it runs CMD (through sh -c: e.g. an nft
 *	rule that drops the Homa port toward one server); it reports per
 *	server the RPCs by transport, the failed ones, and how long after
 *	the block the first response came over TCP and after the unblock
 *	the first over Homa again. Exit status 0, 1 if a command failed,
 *	2 for bad arguments.
 *   homa-fallback --help
 *	the usage, exit status 0.
 * Options are parsed with getopt_long: --name VALUE or --name=VALUE,
 * unambiguous prefixes; an unknown option, a bad number, a missing value
 * or a stray argument prints a message and the usage and exits 2.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "homa/homa.h"

/** One server the client talks to, and what it saw. */
struct target {
	struct sockaddr_storage ss;
	char name[64];
	pthread_t th;
	uint64_t rpcs[2], errors;
	double first_tcp_ms, first_homa_ms; /**< after block / unblock; -1: not seen */
};

static homa_socket *sock;
static _Atomic int stop;
static _Atomic double t_block = -1, t_unblock = -1;

/** now_ms() - CLOCK_MONOTONIC in ms. */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/** on_signal() - Stop the server loop. */
static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/** serve() - Echo every request until stopped. Return: exit status. */
static int serve(const char *addr, const char *port)
{
	struct homa_open_opts o;
	struct homa_message m;
	char buf[1024];

	homa_open_opts_default(&o);
	o.bind_addr = addr;
	o.port = (uint16_t)atoi(port);
	o.server = true;
	o.transport = HOMA_TRANSPORT_AUTO;
	if (homa_open(&sock, &o)) {
		fprintf(stderr, "homa-fallback: cannot open %s:%s\n", addr, port);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (!stop) {
		if (homa_recv(sock, HOMA_RECV_REQUEST, 0, 100000000, &m))
			continue;
		size_t n = homa_message_copy(&m, 0, buf, sizeof(buf));

		homa_reply_buf(sock, m.id, buf, n);
		homa_message_release(&m);
	}
	homa_close(sock);
	return 0;
}

/** note() - Record one finished RPC of @t at @now. */
static void note(struct target *t, int err, int transport, double now)
{
	if (err) {
		t->errors++;
		return;
	}
	t->rpcs[transport == HOMA_TRANSPORT_TCP]++;
	if (transport == HOMA_TRANSPORT_TCP && t_block >= 0 && t->first_tcp_ms < 0)
		t->first_tcp_ms = now - t_block;
	if (transport == HOMA_TRANSPORT_HOMA && t_unblock >= 0 && t->first_homa_ms < 0)
		t->first_homa_ms = now - t_unblock;
}

/** client_main() - RPCs to one server back to back until stopped. */
static void *client_main(void *arg)
{
	struct target *t = arg;
	char req[100] = "fallback";

	while (!stop) {
		struct homa_message m;
		uint64_t id;
		int err = homa_send(sock, (struct sockaddr *)&t->ss, req, sizeof(req), 0, &id);

		if (!err)
			err = homa_recv(sock, HOMA_RECV_RESPONSE, id, 5000000000LL, &m);
		note(t, err, err ? 0 : homa_message_transport(&m), now_ms());
		if (!err)
			homa_message_release(&m);
		if (err)
			usleep(1000);
	}
	return NULL;
}

/** parse_servers() - Fill @t from "A:P,A:P". Return: count, or -1. */
static int parse_servers(char *list, struct target *t, int cap)
{
	int n = 0;

	for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
		char *colon = strrchr(s, ':');
		socklen_t len;

		if (!colon || n == cap)
			return -1;
		*colon = 0;
		if (homa_sockaddr_parse(s, (uint16_t)atoi(colon + 1), &t[n].ss, &len))
			return -1;
		snprintf(t[n].name, sizeof(t[n].name), "%s:%s", s, colon + 1);
		t[n].first_tcp_ms = t[n].first_homa_ms = -1;
		n++;
	}
	return n;
}

/** run_at() - Sleep until @at ms after @t0, then run @cmd; store the time in *@when. */
static int run_at(double t0, double at, const char *cmd, _Atomic double *when)
{
	double wait = t0 + at - now_ms();

	if (!cmd)
		return 0;
	if (wait > 0)
		usleep((useconds_t)(wait * 1000));
	*when = now_ms();
	return system(cmd) == 0 ? 0 : 1;
}

/** The usage text (--help prints it on stdout, a bad argument on stderr). */
static const char usage[] =
	"usage: homa-fallback server ADDR PORT\n"
	"       homa-fallback client --servers A:P[,A:P...] [--seconds S]\n"
	"                     [--block-at T --block-cmd CMD] [--unblock-at T --unblock-cmd CMD]\n"
	"                     [--retry-ms MS] [--fallback-ms MS]\n"
	"       homa-fallback --help\n";

/** The client's settings, from its command line (client_args()). */
struct client_args {
	char *servers, *block, *unblock;
	double secs, block_at, unblock_at;
	struct homa_open_opts o;
};

/** bad() - Report @what about @arg with the usage. Return: 2 (the exit status). */
static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "homa-fallback: %s '%s'\n%s", what, arg, usage);
	return 2;
}

/**
 * number() - Parse @arg, a number of at least 0, into *@out.
 * Return: 0, or 2 (reported) if it is not one.
 */
static int number(const char *arg, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	return end == arg || *end || !(*out >= 0) ? bad("not a number of at least 0:", arg) : 0;
}

/**
 * client_args() - Parse the client's options (argv[1] is "client") into
 * @a with getopt_long. Return: 0, 1 for --help (printed), or 2 (reported)
 * for an unknown option, a bad number, a missing value or a stray
 * argument.
 */
static int client_args(int argc, char **argv, struct client_args *a)
{
	static const struct option opts[] = {
		{"servers", required_argument, NULL, 's'}, {"seconds", required_argument, NULL, 't'},
		{"block-at", required_argument, NULL, 'b'}, {"block-cmd", required_argument, NULL, 'B'},
		{"unblock-at", required_argument, NULL, 'u'}, {"unblock-cmd", required_argument, NULL, 'U'},
		{"retry-ms", required_argument, NULL, 'r'}, {"fallback-ms", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	double v = 0;
	int c;

	memset(a, 0, sizeof(*a));
	a->secs = 10;
	homa_open_opts_default(&a->o);
	a->o.transport = HOMA_TRANSPORT_AUTO;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'h')
			return fputs(usage, stdout), 1;
		if (c == '?' || c == ':')
			return bad(c == ':' ? "missing value for" : "unknown option", argv[optind - 1]);
		if (strchr("tburf", c) && number(optarg, &v))
			return 2;
		switch (c) {
		case 's': a->servers = optarg; break;
		case 't': a->secs = v; break;
		case 'b': a->block_at = v; break;
		case 'B': a->block = optarg; break;
		case 'u': a->unblock_at = v; break;
		case 'U': a->unblock = optarg; break;
		case 'r': a->o.auto_retry_ms = (uint32_t)v; break;
		default: a->o.auto_fallback_ms = (uint32_t)v; break;
		}
	}
	if (optind < argc)
		return bad("unexpected argument", argv[optind]);
	return a->servers ? 0 : bad("missing", "--servers");
}

/** client() - See the file comment. Return: exit status. */
static int client(int argc, char **argv)
{
	struct client_args a;
	struct target t[16];
	int n, rc = 0;

	rc = client_args(argc, argv, &a);
	if (rc)
		return rc == 1 ? 0 : rc;
	memset(t, 0, sizeof(t));
	if ((n = parse_servers(a.servers, t, 16)) <= 0)
		return bad("bad server list", a.servers);
	if (homa_open(&sock, &a.o))
		return 2;
	char *block = a.block, *unblock = a.unblock;
	double secs = a.secs, block_at = a.block_at, unblock_at = a.unblock_at;
	double t0 = now_ms();

	for (int i = 0; i < n; i++)
		pthread_create(&t[i].th, NULL, client_main, &t[i]);
	rc |= run_at(t0, block_at * 1e3, block, &t_block);
	rc |= run_at(t0, unblock_at * 1e3, unblock, &t_unblock);
	_Atomic double end = 0;

	run_at(t0, secs * 1e3, "true", &end);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i].th, NULL);
	struct homa_transport_stats st;

	homa_transport_stats(sock, &st);
	for (int i = 0; i < n; i++)
		printf("server %s: homa %llu tcp %llu failed %llu; first TCP response %.1f ms after "
		       "the block; first Homa response %.1f ms after the unblock\n", t[i].name,
		       (unsigned long long)t[i].rpcs[0], (unsigned long long)t[i].rpcs[1],
		       (unsigned long long)t[i].errors, t[i].first_tcp_ms, t[i].first_homa_ms);
	printf("switches: to TCP %llu, back to Homa %llu\n", (unsigned long long)st.auto_to_tcp,
	       (unsigned long long)st.auto_to_homa);
	homa_close(sock);
	return rc;
}

/** main() - See the file comment. Return: exit status. */
int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return fputs(usage, stdout), 0;
	if (argc == 4 && !strcmp(argv[1], "server"))
		return serve(argv[2], argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "client"))
		return client(argc, argv);
	return bad("expected 'server ADDR PORT' or 'client ...', got", argc > 1 ? argv[1] : "");
}
