/* SPDX-License-Identifier: MIT */
/* Server and client child processes for compare and demo. */
#include "spawn.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calibrate.h"
#include "ctl.h"
#include "homa/errors.h"

/** What a job writes before its samples. */
struct job_hdr {
	int rc;
	uint64_t rpcs, bytes, errors, skipped, unfinished, server_rpcs, nsamples;
	double secs;
	int64_t client_cpu_us, server_cpu_us, host_busy_us;
	struct bench_usage client_use, server_use;
};

/**
 * name_child() - Name the calling child process ROLE-TRANSPORT (its main
 * thread's comm, as top, ps and perf show it: "srv-homa", "bulk-tcp",
 * "cli-homa"), so that a trace of a compare run tells its processes
 * apart (tools/bench/schedwait.sh). Longer names are cut at 15 bytes.
 */
static void name_child(const char *role, enum bench_transport t)
{
	char name[16];

	snprintf(name, sizeof(name), "%s-%s", role, bench_transport_name(t));
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

int bench_spawn_server(const struct bench_opts *o, enum bench_transport t, uint16_t port,
		       struct bench_child *c)
{
	int p[2];

	if (pipe(p))
		return HOMA_EIO;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0)
		return HOMA_EIO;
	if (c->pid == 0) {
		struct bench_opts so = *o;
		name_child("srv", t);
		close(p[0]);
		bench_ready_fd = p[1];
		so.transport = t;
		so.port = port;
		so.ctl_port = port + 1;
		so.bind = "127.0.0.1";
		so.threads = 1;
		_exit(bench_serve(&so) ? 1 : 0);
	}
	close(p[1]);
	struct pollfd pf = { p[0], POLLIN, 0 };
	char b;
	int ok = poll(&pf, 1, 10000) == 1 && read(p[0], &b, 1) == 1;
	close(p[0]);
	c->fd = -1;
	if (!ok) {
		fprintf(stderr, "homa-bench: %s server did not start\n", bench_transport_name(t));
		bench_stop_server(c);
		return HOMA_EIO;
	}
	return 0;
}

void bench_stop_server(struct bench_child *c)
{
	int st;

	if (c->pid <= 0)
		return;
	kill(c->pid, SIGTERM);
	for (int i = 0; i < 500; i++) {
		if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
			c->pid = 0;
			return;
		}
		usleep(10000);
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &st, 0);
	c->pid = 0;
}

/** write_all() - Write @n bytes or fail. Return: 0 or -1. */
static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/** read_all() - Read @n bytes before @deadline_ns or fail. Return: 0 or -1. */
static int read_all(int fd, void *buf, size_t n, uint64_t deadline_ns)
{
	char *p = buf;

	while (n > 0) {
		uint64_t now = bench_now_ns();
		struct pollfd pf = { fd, POLLIN, 0 };
		if (now >= deadline_ns || poll(&pf, 1, (int)((deadline_ns - now) / 1000000) + 1) == 0)
			return -1;
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/** job_cfg() - Loopback transport settings for @j. */
static void job_cfg(const struct bench_job *j, struct bench_tr_cfg *cfg, uint32_t max_size)
{
	char spec[64];

	memset(cfg, 0, sizeof(*cfg));
	snprintf(spec, sizeof(spec), "127.0.0.1:%u", j->port);
	bench_parse_servers(spec, cfg);
	cfg->conns = j->conns > 0 ? j->conns : 1;
	cfg->cc = j->o->cc;
	cfg->driver = j->o->driver;
	cfg->ifname = j->o->ifname;
	cfg->polled = j->o->polled;
	cfg->homa_transport = j->o->homa_transport;
	cfg->homa = j->o->homa;
	cfg->certs = j->o->encrypt ? j->o->certs : NULL;
	cfg->psp_port = j->o->encrypt ? j->o->psp_port : 0;
	cfg->max_size = max_size;
}

/** job_run() - Child body: run @j and fill @res. Return: 0 or error. */
static int job_run(const struct bench_job *j, struct bench_result *res)
{
	struct homa_workload w;
	struct bench_tr_cfg cfg;
	char err[256];
	int ctl = j->port + 1;

	memset(res, 0, sizeof(*res));
	homa_lat_init(&res->lat);
	int rc = homa_workload_parse(j->workload, NULL, &w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "homa-bench: %s\n", err);
		return rc;
	}
	job_cfg(j, &cfg, w.hi > j->response ? w.hi : j->response);
	if (j->calibrate) {
		struct homa_baseline bl;
		homa_baseline_init(&bl);
		rc = bench_calibrate(bench_ops_for(j->t), &cfg, j->sizes, j->nsizes, j->calib_count,
				     j->response, &bl);
		for (size_t i = 0; rc == 0 && i < bl.n; i++)
			rc = homa_lat_add(&res->lat, bl.size[i], (uint64_t)bl.best_ns[i]);
		homa_baseline_free(&bl);
	} else {
		struct bench_load L = {
			.req = &w, .response = j->response, .outstanding = j->outstanding,
			.rate = j->rate, .max_outstanding = 4096, .duration = j->duration, .warmup = j->warmup,
			.seed = j->seed, .progress = j->progress, .label = j->label,
			.ctl_ports = &ctl,
		};
		rc = bench_client_run(bench_ops_for(j->t), &cfg, &L, res);
	}
	homa_workload_free(&w);
	return rc;
}

int bench_spawn_job(const struct bench_job *j, struct bench_child *c)
{
	int p[2];

	if (pipe(p))
		return HOMA_EIO;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0)
		return HOMA_EIO;
	if (c->pid == 0) {
		struct bench_result res;
		name_child(j->calibrate ? "cal" : j->label && !strcmp(j->label, "bulk") ? "bulk" : "cli",
			   j->t);
		close(p[0]);
		int rc = job_run(j, &res);
		struct job_hdr h = {
			.rc = rc, .rpcs = res.rpcs, .bytes = res.bytes, .errors = res.errors,
			.skipped = res.skipped, .unfinished = res.unfinished,
			.server_rpcs = res.server_rpcs, .nsamples = res.lat.n, .secs = res.secs,
			.client_cpu_us = res.client_cpu_us, .server_cpu_us = res.server_cpu_us,
			.host_busy_us = res.host_busy_us, .client_use = res.client_use,
			.server_use = res.server_use,
		};
		int bad = write_all(p[1], &h, sizeof(h)) ||
			  write_all(p[1], res.lat.v, res.lat.n * sizeof(*res.lat.v));
		_exit(bad ? 3 : 0);
	}
	close(p[1]);
	c->fd = p[0];
	c->label = j->label;
	c->limit_s = j->warmup + j->duration + 15 + (j->calibrate ? 6.0 * (double)j->nsizes : 0);
	return 0;
}

int bench_collect_job(struct bench_child *c, struct bench_result *res)
{
	struct job_hdr h;
	int st, rc = HOMA_EIO;

	memset(res, 0, sizeof(*res));
	homa_lat_init(&res->lat);
	uint64_t deadline = bench_now_ns() + (uint64_t)(c->limit_s * 1e9);
	if (read_all(c->fd, &h, sizeof(h), deadline) == 0) {
		rc = h.rc;
		res->rpcs = h.rpcs;
		res->bytes = h.bytes;
		res->errors = h.errors;
		res->skipped = h.skipped;
		res->unfinished = h.unfinished;
		res->server_rpcs = h.server_rpcs;
		res->secs = h.secs;
		res->client_cpu_us = h.client_cpu_us;
		res->server_cpu_us = h.server_cpu_us;
		res->host_busy_us = h.host_busy_us;
		res->client_use = h.client_use;
		res->server_use = h.server_use;
		res->lat.v = malloc((h.nsamples ? h.nsamples : 1) * sizeof(*res->lat.v));
		if (!res->lat.v || read_all(c->fd, res->lat.v, h.nsamples * sizeof(*res->lat.v), deadline))
			rc = HOMA_EIO;
		else
			res->lat.n = res->lat.cap = h.nsamples;
	}
	close(c->fd);
	if (rc == HOMA_EIO) {
		fprintf(stderr, "homa-bench: a %s client did not report within %.0f s; killed\n",
			c->label, c->limit_s);
		kill(c->pid, SIGKILL);
	}
	waitpid(c->pid, &st, 0);
	c->pid = 0;
	return rc;
}
