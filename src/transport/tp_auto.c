/* SPDX-License-Identifier: MIT */
/**
 * @file tp_auto.c
 * AUTO: per peer, Homa first. A peer that sent no Homa packet for
 * tp->fallback_ns after one of our requests, while one of our Homa RPCs
 * to it still waits and has sent it TP_SILENT_PROBES probes (RESENDs)
 * without an answer, but that accepts a TCP connection at the same port
 * number, is moved to TCP. A live Homa server answers each RESEND (BUSY
 * while it works on the request), and an RPC we aborted or that ended
 * waits for nothing: neither counts as silence. Once its back-off
 * has passed the next request tries Homa again (the back-off doubles,
 * up to TP_MAX_BACKOFF, each time Homa fails again and is reset when
 * Homa answers). Requests already sent stay on their transport, so no
 * RPC is ever sent twice. Every switch is counted and logged on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tp.h"

/** Unanswered probes of a waiting RPC that make a silent peer a suspect. */
#define TP_SILENT_PROBES 3

/** Longest back-off before Homa is tried again. */
#define TP_MAX_BACKOFF (60ull * 1000000000)

/** log_switch() - Say on stderr that @p moved to @to, and why. */
static void log_switch(const struct tp_peer *p, const char *to, const char *why)
{
	char a[64];

	fprintf(stderr, "homa: peer %s port %u now reached over %s (%s)\n",
		homa_addr_format(&p->addr, a, sizeof(a)), p->port, to, why);
}

/** tp_auto_route() - See tp.h. */
bool tp_auto_route(struct homa_tp *tp, struct tp_peer *p, uint64_t now)
{
	if (p->on_tcp && now >= p->retry_at) {
		p->on_tcp = false;
		p->wait_since = 0;
		tp->st.auto_to_homa++;
		tp->st.auto_tcp_peers--;
		log_switch(p, "Homa", "back-off over, trying Homa again");
	}
	return p->on_tcp;
}

/** A peer that stopped answering Homa, to be tried on TCP. */
struct suspect {
	struct tp_peer *p;
	uint64_t silent_ns;
};

/**
 * find_suspects() - Under rt->lock and tp->lock: the peers waiting for
 * Homa longer than tp->fallback_ns with nothing heard and at least
 * TP_SILENT_PROBES unanswered probes of a waiting RPC (at most @cap, into
 * @out). Peers heard from, and peers past the window with no RPC waiting
 * for them, are cleared (a new request re-arms them). Return: how many.
 */
static int find_suspects(struct homa_tp *tp, uint64_t now, struct suspect *out, int cap)
{
	int n = 0;

	for (struct tp_peer *p = tp->peers; p; p = p->next) {
		uint64_t heard;

		if (p->on_tcp || !p->wait_since)
			continue;
		if (homa_engine_peer_heard(tp->rt->engine, &p->addr, &heard) &&
		    heard >= p->wait_since) {
			p->wait_since = 0;          /* Homa answers */
			p->backoff_ns = tp->retry_ns;
		} else if (now - p->wait_since >= tp->fallback_ns && n < cap) {
			uint32_t probes;

			if (!homa_engine_peer_waiting(tp->rt->engine, &p->addr, p->port, &probes)) {
				p->wait_since = 0;  /* nothing waits for it */
			} else if (probes >= TP_SILENT_PROBES) {
				out[n].p = p;
				out[n++].silent_ns = now - p->wait_since;
			}
		}
	}
	return n;
}

/** switch_to_tcp() - tp->lock held: route @p's requests over TCP until its back-off passes. */
static void switch_to_tcp(struct homa_tp *tp, struct tp_peer *p, uint64_t now)
{
	if (p->on_tcp)
		return;
	p->on_tcp = true;
	p->wait_since = 0;
	p->retry_at = now + p->backoff_ns;
	p->backoff_ns = p->backoff_ns * 2 > TP_MAX_BACKOFF ? TP_MAX_BACKOFF : p->backoff_ns * 2;
	tp->st.auto_to_tcp++;
	tp->st.auto_tcp_peers++;
}

/** move_to_tcp() - @s->p accepts TCP (connection @fd): pool it and route its requests there. */
static void move_to_tcp(struct homa_tp *tp, const struct suspect *s, int fd, uint64_t now)
{
	struct tp_peer *p = s->p;
	struct tp_conn *c;
	char why[80];

	pthread_mutex_lock(&tp->lock);
	tp->st.tcp_connects++;
	c = p->npool < TP_POOL ? tp_conn_new(tp, fd, false) : NULL;
	if (c) {
		c->peer = p;
		c->addr = p->addr;
		c->port = p->port;
		p->pool[p->npool++] = c;
	} else if (p->npool == TP_POOL) {
		close(fd);
	}
	switch_to_tcp(tp, p, now);
	pthread_mutex_unlock(&tp->lock);
	snprintf(why, sizeof(why), "no Homa packet for %llu ms",
		 (unsigned long long)(s->silent_ns / 1000000));
	log_switch(p, "TCP", why);
}

/** tp_auto_tick() - See tp.h. */
void tp_auto_tick(struct homa_tp *tp)
{
	struct suspect sus[8];
	uint64_t now = homa_rt_now();
	int n;

	homa_rt_lock(tp->rt);
	pthread_mutex_lock(&tp->lock);
	n = find_suspects(tp, now, sus, 8);
	for (int i = 0; i < n; i++)
		sus[i].p->wait_since = 0; /* checked once per silence; a new request re-arms it */
	pthread_mutex_unlock(&tp->lock);
	homa_rt_unlock(tp->rt);
	for (int i = 0; i < n; i++) {
		int fd = tp_connect(tp, &sus[i].p->addr, sus[i].p->port);

		if (fd >= 0)
			move_to_tcp(tp, &sus[i], fd, homa_rt_now());
	}
}

/** homa_tp_homa_dead() - See tp.h. */
bool homa_tp_homa_dead(struct homa_rt *rt, const homa_addr *addr, uint16_t port)
{
	struct homa_tp *tp = rt->tp;
	struct tp_peer *p;

	if (!tp || tp->transport != HOMA_TRANSPORT_AUTO)
		return false;
	pthread_mutex_lock(&tp->lock);
	p = tp_peer_get(tp, addr, port);
	if (p && !p->on_tcp) {
		switch_to_tcp(tp, p, homa_rt_now());
		log_switch(p, "TCP", "its Homa port timed out");
	}
	pthread_mutex_unlock(&tp->lock);
	return p != NULL;
}
