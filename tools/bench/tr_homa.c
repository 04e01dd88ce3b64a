/* SPDX-License-Identifier: MIT */
/*
 * The Homa arm, over the public API (homa/homa.h). A request's first 8
 * bytes hold the wanted response length (big-endian u32) and a magic
 * word; the rest is zeros. The RPC's tag travels as the Homa cookie.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ctl.h"
#include "report.h"
#include "homa/encrypt.h"
#include "homa/homa.h"
#include "tls.h"

/** Second word of every request header. */
#define HOMA_BENCH_MAGIC 0x68626e63u

/** Client state. */
struct homa_client {
	homa_socket *s;
	const struct bench_tr_cfg *cfg;
	pthread_t serve;  /**< the thread answering requests (cfg->serve_port) */
	bool serving;     /**< it was started: join it after closing */
};

static void *homa_serve(void *arg);

/*
 * serve_spin: the server's threads spin on homa_recv() (--homa-spin 1); when
 * serve_spin_ns is not 0 (--homa-spin-us), for at most that long after their
 * last request, yielding the CPU between looks, and then sleep in it;
 * serve_copy: they reply with homa_reply_buf() (--homa-copy 1); serve_more:
 * with HOMA_SEND_MORE (unless --homa-more 0). All set before the threads
 * start.
 */
static bool serve_spin, serve_copy, serve_more = true;
static uint64_t serve_spin_ns;

/** Homa socket parameters shared by client and server. */
struct homa_arm_cfg {
	int driver;
	bool polled;
	struct bench_homa_knobs k; /**< engine settings (0 / -1: defaults) */
	const char *pcap;      /**< capture file, or NULL */
	uint16_t metrics_port; /**< /metrics listener on 127.0.0.1, or 0 */
	const char *ifname;    /**< XDP driver: interface */
	const char *certs;     /**< --encrypt: certificate folder (tls.h), or NULL */
	int transport;         /**< enum homa_transport */
	uint16_t psp_port;     /**< with certs: the host PSP port (0: each socket's own) */
};

/** Certificate file names of an encrypted socket. */
struct homa_arm_certs {
	char cert[512], key[512], ca[512];
};

/**
 * set_encrypt() - With @a->certs, make @o an encrypted socket's options:
 * PSP with AES-GCM-128 and keys from the TLS 1.3 key exchange, with the
 * server's or the client's certificate. @e and @f must outlive homa_open().
 */
static void set_encrypt(struct homa_open_opts *o, const struct homa_arm_cfg *a, bool server,
			struct homa_encrypt_opts *e, struct homa_arm_certs *f)
{
	const char *role = server ? "server" : "client";

	if (!a->certs)
		return;
	homa_encrypt_opts_default(e);
	e->cert_file = bench_cert_path(f->cert, sizeof(f->cert), a->certs, role, ".pem");
	e->key_file = bench_cert_path(f->key, sizeof(f->key), a->certs, role, ".key");
	e->ca_file = bench_cert_path(f->ca, sizeof(f->ca), a->certs, "ca", ".pem");
	e->udp_port = a->psp_port;
	o->encrypt = e;
}

/**
 * bench_homa_settings() - See bench.h. The RPC timeout follows the RESEND
 * interval: with the engine's defaults (5 and 100 ticks) a receiver asks
 * about 19 times before it gives up, and a longer interval keeps that
 * count instead of leaving two or three tries.
 */
void bench_homa_settings(const struct bench_homa_knobs *k, struct homa_settings *st)
{
	homa_settings_default(st);
	if (k->mtu)
		st->mtu = k->mtu;
	if (k->link_gbps > 0)
		st->link_mbps = (uint64_t)(k->link_gbps * 1000);
	if (k->unsched)
		st->unsched_bytes = k->unsched;
	if (k->incoming)
		st->max_incoming = k->incoming;
	if (k->nicq_us > 0)
		st->max_nic_queue_ns = (uint32_t)(k->nicq_us * 1000);
	if (k->slack_us >= 0)
		st->max_pacer_slack_ns = (uint32_t)(k->slack_us * 1000);
	if (k->tick_us > 0)
		st->tick_ns = (uint64_t)(k->tick_us * 1000);
	st->grant_step = k->grant_step;
	if (k->overcommit)
		st->max_overcommit = k->overcommit;
	if (k->short_window >= 0)
		st->grant_short_window = (uint32_t)k->short_window;
	if (k->silence_rtts >= 0)
		st->grant_silence_rtts = (uint32_t)k->silence_rtts;
	if (k->resend_ticks) {
		uint32_t tries = st->timeout_ticks / st->resend_interval;

		st->resend_ticks = st->resend_interval = k->resend_ticks;
		if (st->timeout_ticks < tries * k->resend_ticks)
			st->timeout_ticks = tries * k->resend_ticks;
	}
}

/** The process's Homa socket whose copies usage.c reports (one per process). */
static homa_socket *_Atomic counted;

/** copied_bytes() - Payload bytes the library copied for the counted socket, or -1. */
static int64_t copied_bytes(void)
{
	struct homa_io_stats io;
	homa_socket *s = atomic_load(&counted);

	if (!s || homa_io_stats(s, &io))
		return -1;
	return (int64_t)(io.tx_copied_bytes + io.rx_copied_bytes);
}

/** count_copies() - Report @s's copies in this process's usage (NULL: stop). */
static void count_copies(homa_socket *s)
{
	atomic_store(&counted, s);
	bench_usage_copied_source(s ? copied_bytes : NULL);
}

/** open_socket() - homa_open() with the bench's driver, mode and settings. */
static int open_socket(homa_socket **s, const struct homa_arm_cfg *a, bool server,
		       const char *bind, uint16_t port)
{
	struct homa_open_opts o;
	struct homa_settings st;
	struct homa_encrypt_opts e;
	struct homa_arm_certs f;

	homa_open_opts_default(&o);
	set_encrypt(&o, a, server, &e, &f);
	bench_homa_settings(&a->k, &st);
	o.driver = a->driver;
	o.transport = a->transport;
	o.ifname = a->ifname;
	o.offload = !a->k.no_offload;
	o.rcvbuf_bytes = a->k.rcvbuf;
	if (a->k.recv_spin_us >= 0)
		o.spin_us = (uint32_t)a->k.recv_spin_us;
	o.rx_lend_slots = a->k.rx_lend_slots;
	o.mode = a->polled ? HOMA_MODE_POLLED : HOMA_MODE_THREADED;
	o.server = server;
	o.bind_addr = bind;
	o.port = port;
	o.settings = &st;
	o.pcap_path = a->pcap;
	o.metrics_port = a->metrics_port;
	int rc = homa_open(s, &o);
	if (!rc)
		count_copies(*s);
	if (rc) {
		char obs[64] = "";

		if (a->metrics_port)
			snprintf(obs, sizeof(obs), ", metrics port %u", a->metrics_port);
		fprintf(stderr, "homa-bench: homa_open(%s port %u%s%s%s): %s\n", bind, port,
			a->pcap ? ", pcap " : "", a->pcap ? a->pcap : "", obs, homa_strerror(rc));
	}
	return rc;
}

/**
 * homa_client_open() - One client socket for all servers; with
 * cfg->serve_port a server socket on that port, whose requests a thread
 * of this process answers while the client sends (HOMA_ENOMEM: no thread).
 */
static int homa_client_open(void **ctx, const struct bench_tr_cfg *cfg)
{
	struct homa_client *c = calloc(1, sizeof(*c));

	if (!c)
		return HOMA_ENOMEM;
	c->cfg = cfg;
	bool v6 = cfg->nservers && cfg->servers[0].ss_family == AF_INET6;
	struct homa_arm_cfg a = { cfg->driver, cfg->polled, cfg->homa, cfg->pcap,
				  cfg->metrics_port, cfg->ifname, cfg->certs,
				  cfg->homa_transport, cfg->psp_port };
	int rc = open_socket(&c->s, &a, cfg->serve_port != 0, v6 ? "::" : "0.0.0.0",
			     cfg->serve_port);
	if (rc) {
		free(c);
		return rc;
	}
	if (cfg->serve_port) {
		serve_spin = cfg->homa.spin;
		serve_spin_ns = cfg->homa.spin_ns;
		serve_copy = cfg->homa.copy;
		serve_more = !cfg->homa.no_more;
		if (pthread_create(&c->serve, NULL, homa_serve, c->s)) {
			homa_close(c->s);
			free(c);
			return HOMA_ENOMEM;
		}
		c->serving = true;
	}
	*ctx = c;
	return 0;
}

/**
 * zc_header() - A heap copy of a request's 8-byte header (@resp, magic)
 * for a zero-copy send; freed by zc_free() once the library is done.
 */
static uint32_t *zc_header(uint32_t resp)
{
	uint32_t *hdr = malloc(2 * sizeof(*hdr));

	if (hdr) {
		hdr[0] = htobe32(resp);
		hdr[1] = htobe32(HOMA_BENCH_MAGIC);
	}
	return hdr;
}

/** zc_free() - homa_release_fn of a request: free its header. */
static void zc_free(void *hdr)
{
	free(hdr);
}

/** zc_none() - homa_release_fn of a response: the shared payload stays. */
static void zc_none(void *arg)
{
	(void)arg;
}

/**
 * homa_client_start() - homa_send_request_zc() with the 8-byte header:
 * the payload is bench_payload(), read-only and shared, so the request
 * goes by reference like the TCP arm's write(); with --homa-copy 1
 * homa_send_request(), which copies it.
 */
static int homa_client_start(void *ctx, size_t server, uint32_t req, uint32_t resp, uint64_t tag)
{
	struct homa_client *c = ctx;
	uint32_t *hdr = zc_header(resp);
	struct homa_iov iov[2] = {
		{ hdr, 2 * sizeof(*hdr) },
		{ bench_payload(req), req - 2 * sizeof(*hdr) },
	};
	uint64_t id;
	int rc;

	if (!hdr)
		return HOMA_ENOMEM;
	if (req < BENCH_MIN_MSG) {
		free(hdr);
		return HOMA_EMSGSIZE;
	}
	if (c->cfg->homa.copy) {  /* --homa-copy 1: the library copies the request */
		rc = homa_send_request(c->s, (const struct sockaddr *)&c->cfg->servers[server], iov,
				       req > 2 * sizeof(*hdr) ? 2 : 1, tag, &id);
		free(hdr);
		return rc;
	}
	struct homa_send_opts so;

	homa_send_opts_default(&so);
	so.cookie = tag;
	so.release = zc_free;
	so.arg = hdr;
	so.flags = c->cfg->homa.no_more ? 0 : HOMA_SEND_MORE;  /* sent by the next homa_recv() */
	rc = homa_request_opts(c->s, (const struct sockaddr *)&c->cfg->servers[server], iov,
			       req > 2 * sizeof(*hdr) ? 2 : 1, &so, &id);
	if (rc)
		free(hdr);
	return rc;
}

/**
 * homa_client_wait() - homa_recv() responses until @deadline_ns. With
 * --homa-spin 1 it polls (zero timeouts) instead of sleeping; with
 * --homa-spin-us it polls at most that long, calling sched_yield() between
 * empty looks so that a peer sharing the CPU runs, and then sleeps.
 */
static int homa_client_wait(void *ctx, uint64_t deadline_ns, struct bench_done *out, int max)
{
	struct homa_client *c = ctx;
	int got = 0;
	uint64_t spin_until = UINT64_MAX;

	if (c->cfg->homa.spin && c->cfg->homa.spin_ns)
		spin_until = bench_now_ns() + c->cfg->homa.spin_ns;
	while (got < max) {
		struct homa_message m;
		int64_t timeout = 0;
		uint64_t now = bench_now_ns();
		bool spin = c->cfg->homa.spin && now < spin_until;
		if (got == 0 && !spin)
			timeout = deadline_ns > now ? (int64_t)(deadline_ns - now) : 0;
		int rc = homa_recv(c->s, HOMA_RECV_RESPONSE, 0, timeout, &m);
		if ((rc == HOMA_EAGAIN || rc == HOMA_ETIME) && got == 0 && spin &&
		    now < deadline_ns && !bench_stop) {
			if (c->cfg->homa.spin_ns)
				sched_yield();  /* --homa-spin-us: let a runnable peer have the CPU */
			continue;  /* --homa-spin: poll again without sleeping */
		}
		if (rc == HOMA_EAGAIN || rc == HOMA_ETIME)
			break;
		if (rc == 0) {
			out[got++] = (struct bench_done){ .tag = m.cookie, .err = 0 };
			homa_message_release(&m);
		} else if (m.id != 0) {
			out[got++] = (struct bench_done){ .tag = m.cookie, .err = rc };
		} else {
			return got ? got : rc;
		}
	}
	return got;
}

/** proto_of() - The engine's counters of socket @s into @out (not valid on error). */
static void proto_of(homa_socket *s, struct bench_proto *out)
{
	struct homa_stats st;
	int t;

	memset(out, 0, sizeof(*out));
	if (homa_socket_stats(s, &st))
		return;
	out->valid = true;
	out->data_sent = st.pkts_sent[HOMA_PKT_DATA - HOMA_PKT_FIRST];
	out->data_recv = st.pkts_recv[HOMA_PKT_DATA - HOMA_PKT_FIRST];
	out->grants_sent = st.pkts_sent[HOMA_PKT_GRANT - HOMA_PKT_FIRST];
	out->grants_recv = st.pkts_recv[HOMA_PKT_GRANT - HOMA_PKT_FIRST];
	out->resends_sent = st.resends_sent;
	out->resends_recv = st.resends_received;
	out->busy_sent = st.busy_sent;
	out->retransmitted_bytes = st.retransmitted_bytes;
	out->rpcs_timed_out = st.rpcs_timed_out;
	for (t = 0; t < HOMA_DROP_REASONS; t++)
		out->dropped += st.drops[t];
}

/**
 * print_drops() - On stderr as @who: socket @s's nonzero drop counters by
 * reason, and with encryption its PSP counters and rejections by reason.
 */
static void print_drops(homa_socket *s, const char *who)
{
	struct homa_stats st;
	struct homa_psp_stats ps;

	if (homa_socket_stats(s, &st))
		return;
	fprintf(stderr, "%s: restarts=%llu drops:", who, (unsigned long long)st.rpc_restarts);
	for (int t = 0; t < HOMA_DROP_REASONS; t++)
		if (st.drops[t])
			fprintf(stderr, " %s=%llu", homa_drop_reason_name(t),
				(unsigned long long)st.drops[t]);
	if (!homa_encrypt_stats(s, &ps)) {
		fprintf(stderr, " psp: sealed=%llu opened=%llu seal_errors=%llu",
			(unsigned long long)ps.sealed, (unsigned long long)ps.opened,
			(unsigned long long)(ps.seal_errors + ps.seal_no_assoc));
		for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++)
			if (ps.rejected[r])
				fprintf(stderr, " %s=%llu", homa_psp_reject_name(r),
					(unsigned long long)ps.rejected[r]);
	}
	fprintf(stderr, "\n");
}

/** homa_client_proto() - The engine's counters of the client socket. */
static void homa_client_proto(void *ctx, struct bench_proto *out)
{
	proto_of(((struct homa_client *)ctx)->s, out);
}

/**
 * homa_client_close() - Print the socket's drops (print_drops()), close it
 * (its serving thread then ends: joined) and free @ctx.
 */
static void homa_client_close(void *ctx)
{
	struct homa_client *c = ctx;

	print_drops(c->s, "homa-bench client");
	count_copies(NULL);
	homa_close(c->s);
	if (c->serving)
		pthread_join(c->serve, NULL);
	free(c);
}

const struct bench_client_ops bench_homa_client = {
	.name = "homa",
	.open = homa_client_open,
	.start = homa_client_start,
	.wait = homa_client_wait,
	.proto = homa_client_proto,
	.close = homa_client_close,
};


/** homa_serve() - Thread body: answer requests until bench_stop. */
static void *homa_serve(void *arg)
{
	homa_socket *s = arg;
	uint64_t idle_since = bench_now_ns();

	while (!bench_stop) {
		struct homa_message m;
		uint32_t hdr[2] = { 0, 0 };
		bool spin = serve_spin &&
			    (!serve_spin_ns || bench_now_ns() - idle_since < serve_spin_ns);
		int rc = homa_recv(s, HOMA_RECV_REQUEST, 0, spin ? 0 : 100000000, &m);
		if (rc == HOMA_EAGAIN || rc == HOMA_ETIME) {
			if (spin && serve_spin_ns)
				sched_yield();  /* --homa-spin-us: let a runnable peer have the CPU */
			continue;
		}
		if (serve_spin_ns)
			idle_since = bench_now_ns();
		if (rc == HOMA_ESHUTDOWN)
			break;
		if (rc)
			continue;
		homa_message_copy(&m, 0, hdr, sizeof(hdr));
		uint32_t resp = be32toh(hdr[0]);
		if (be32toh(hdr[1]) != HOMA_BENCH_MAGIC || resp < 1 || resp > BENCH_MAX_MSG)
			resp = BENCH_MIN_MSG;
		struct homa_iov iov = { bench_payload(resp), resp };
		struct homa_send_opts so;

		homa_send_opts_default(&so);
		so.flags = serve_more ? HOMA_SEND_MORE : 0;  /* sent by the next homa_recv() */
		so.release = serve_copy ? NULL : zc_none;
		rc = homa_reply_opts(s, m.id, &iov, 1, &so);
		homa_message_release(&m);
		if (rc == 0)
			bench_ctl_count_rpc();
	}
	return NULL;
}

int bench_homa_server(const struct bench_opts *o)
{
	homa_socket *s;
	int n = o->threads > 0 ? o->threads : 1;
	pthread_t th[64];
	int started = 0;

	struct homa_arm_cfg a = { o->driver, o->polled, o->homa, o->pcap, o->metrics_port,
				  o->ifname, o->encrypt ? o->certs : NULL,
				  o->homa_transport, o->encrypt ? o->psp_port : 0 };
	int rc = open_socket(&s, &a, true, o->bind, o->port);
	if (rc)
		return rc;
	bench_ctl_ready((uint16_t)o->port);
	serve_spin = o->homa.spin;
	serve_spin_ns = o->homa.spin_ns;
	serve_copy = o->homa.copy;
	serve_more = !o->homa.no_more;
	for (int i = 1; i < n && i < 64; i++)
		if (pthread_create(&th[started], NULL, homa_serve, s) == 0)
			started++;
	homa_serve(s);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	struct bench_proto p;

	proto_of(s, &p);
	bench_proto_print(stderr, "homa-bench server", &p);
	print_drops(s, "homa-bench server");
	count_copies(NULL);
	homa_close(s);
	return 0;
}
