/* SPDX-License-Identifier: MIT */
/* Helpers shared by the arms: addresses, payload buffer, transport names. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "homa/errors.h"

volatile int bench_stop;

/** The shared zero payload (bench_payload()), allocated once. */
static void *zeros;

/** zeros_alloc() - calloc of this size maps zero pages: no memory until written. */
static void zeros_alloc(void)
{
	zeros = calloc(1, BENCH_MAX_MSG);
}

const void *bench_payload(size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (len > BENCH_MAX_MSG)
		return NULL;
	pthread_once(&once, zeros_alloc);  /* a device's step and background threads both ask */
	return zeros;
}

const char *bench_transport_name(enum bench_transport t)
{
	return t == BENCH_TR_HOMA ? "homa" : t == BENCH_TR_TCP ? "tcp" : "udp";
}

const struct bench_client_ops *bench_ops_for(enum bench_transport t)
{
	return t == BENCH_TR_HOMA ? &bench_homa_client
	       : t == BENCH_TR_TCP ? &bench_tcp_client : &bench_udp_client;
}

/** parse_one() - "IP:PORT" or "[IPv6]:PORT" into @ss. Return: 0 or HOMA_EINVAL. */
static int parse_one(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	const char *h = s;
	size_t hl;

	if (!colon)
		return HOMA_EINVAL;
	hl = (size_t)(colon - s);
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
		h = s + 1;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host))
		return HOMA_EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return HOMA_EINVAL;
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	return HOMA_EINVAL;
}

int bench_parse_servers(const char *list, struct bench_tr_cfg *cfg)
{
	char buf[4096];

	cfg->nservers = 0;
	if (!list || !*list || strlen(list) >= sizeof(buf)) {
		fprintf(stderr, "homa-bench: --servers IP:PORT[,IP:PORT...] is required\n");
		return HOMA_EINVAL;
	}
	strcpy(buf, list);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (cfg->nservers == BENCH_MAX_SERVERS ||
		    parse_one(t, &cfg->servers[cfg->nservers], &cfg->server_lens[cfg->nservers])) {
			fprintf(stderr, "homa-bench: bad server '%s' (want IP:PORT, at most %d)\n",
				t, BENCH_MAX_SERVERS);
			return HOMA_EINVAL;
		}
		cfg->nservers++;
	}
	return cfg->nservers ? 0 : HOMA_EINVAL;
}
