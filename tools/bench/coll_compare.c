/* SPDX-License-Identifier: MIT */
/*
 * compare --scenario collective: Homa and TCP on loopback, each pattern
 * alone and beside background bulk traffic, the arms' order alternating
 * from case to case. Each arm has one server per device; the devices are
 * forked children sharing an anonymous step board.
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collective.h"
#include "coll_report.h"
#include "homa/errors.h"
#include "spawn.h"
#include "util/json.h"
#include "util/poisson.h"

/** Background: bulk messages of this size, one stream per pair. */
#define BG_BYTES (4u << 20)
#define BG_WORKLOAD "4M"
/** Background streams: device i's server gets one from outside the step. */
#define BG_STREAMS 2

/** Figures of one arm: per pattern, alone [0] and with background [1]. */
struct arm_fig {
	int rc;
	int have[COLL_PATTERNS][2];
	struct homa_step_stats st[COLL_PATTERNS][2];
	double cpu[COLL_PATTERNS][2]; /**< the devices' getrusage CPU per step */
	double host[COLL_PATTERNS][2]; /**< the machine's busy time per step */
	uint32_t retries[COLL_PATTERNS][2]; /**< messages sent again after an RPC error */
};

/** A run's settings, shared by both arms. */
struct cmp {
	const struct bench_opts *o;
	uint32_t ndev;
	uint16_t port;
	struct bench_child srv[2][COLL_MAX_DEVICES];
	struct arm_fig fig[2];
};

/** arm_port() - Data port of device @i's server in arm @arm. */
static uint16_t arm_port(const struct cmp *c, int arm, uint32_t i)
{
	return (uint16_t)(c->port + 2 * ((uint32_t)arm * c->ndev + i));
}

/** tr_of() - Transport of arm @arm (0 Homa, 1 TCP). */
static enum bench_transport tr_of(int arm)
{
	return arm == 0 ? BENCH_TR_HOMA : BENCH_TR_TCP;
}

/** bg_start() - Background bulk jobs into the servers of devices 0 and 1. */
static int bg_start(struct cmp *c, int arm, struct bench_child *jobs)
{
	const struct bench_opts *o = c->o;
	int n = 0, rc = 0;

	for (int i = 0; i < BG_STREAMS && rc == 0; i++) {
		struct bench_job j = {
			.t = tr_of(arm), .port = arm_port(c, arm, (uint32_t)i), .workload = BG_WORKLOAD,
			.response = 100, .conns = 1, .duration = 3600, .warmup = 0,
			.seed = o->seed + 17 + (uint64_t)i, .label = "background", .o = o,
			.rate = homa_poisson_rate_for_load(o->background_gbps / BG_STREAMS,
							   (double)BG_BYTES + 100),
		};
		rc = bench_spawn_job(&j, &jobs[n]);
		n += rc == 0;
	}
	return rc ? -n - 1 : n;
}

/** bg_stop() - Kill and reap @n background jobs (their figures are not wanted). */
static void bg_stop(struct bench_child *jobs, int n)
{
	for (int i = 0; i < n; i++) {
		kill(jobs[i].pid, SIGKILL);
		close(jobs[i].fd);
		waitpid(jobs[i].pid, NULL, 0);
	}
}

/** devices_run() - Fork every device of one case and wait for them. Return: 0 or error. */
static int devices_run(struct cmp *c, int arm, enum coll_pattern p, struct coll_sync *s)
{
	const struct bench_opts *o = c->o;
	struct bench_tr_cfg cfg;
	pid_t pid[COLL_MAX_DEVICES];
	char list[COLL_MAX_DEVICES * 17 + 1];
	size_t len = 0;
	uint32_t n = 0;
	int rc = 0;

	for (uint32_t i = 0; i < c->ndev; i++) {
		int w = snprintf(list + len, sizeof(list) - len, "%s127.0.0.1:%u", i ? "," : "",
				 arm_port(c, arm, i));
		len += w > 0 ? (size_t)w : 0;
	}
	if (len >= sizeof(list) || coll_tr_cfg(o, list, &cfg))
		return HOMA_EINVAL;
	fflush(NULL);
	for (; n < c->ndev; n++) {
		pid[n] = fork();
		if (pid[n] < 0) {
			coll_sync_fail(s);
			rc = HOMA_EIO;
			break;
		}
		if (pid[n] == 0) {
			struct coll_device d = {
				.pattern = p, .rank = n, .steps = o->steps + o->warmup_steps,
				.compute_us = o->compute_us, .msg_bytes = o->msg_bytes,
				.lookups = o->lookups, .step_timeout_s = o->step_timeout_s,
				.seed = o->seed,
			};
			_exit(coll_device_run(bench_ops_for(tr_of(arm)), &cfg, &d, s) ? 1 : 0);
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		int st = 0;
		waitpid(pid[i], &st, 0);
		if ((!WIFEXITED(st) || WEXITSTATUS(st)) && !rc)
			rc = atomic_load(&s->b->failed) ? HOMA_ECANCELED : HOMA_EIO;
	}
	return rc;
}

/** run_case() - Arm @arm, pattern @p, background @bg: one run into its figures. */
static int run_case(struct cmp *c, int arm, enum coll_pattern p, int bg)
{
	const struct bench_opts *o = c->o;
	struct bench_child jobs[BG_STREAMS];
	struct coll_sync s;
	int njobs = 0;
	int rc = coll_sync_open(&s, NULL, c->ndev, o->steps + o->warmup_steps);

	if (rc)
		return rc;
	if (bg) {
		njobs = bg_start(c, arm, jobs);
		if (njobs < 0) {
			bg_stop(jobs, -njobs - 1);
			coll_sync_close(&s);
			return HOMA_EIO;
		}
		usleep(300000); /* let the bulk messages get going */
	}
	if (!o->quiet)
		fprintf(stderr, "collective: %s %s%s\n", bench_transport_name(tr_of(arm)),
			coll_pattern_name(p), bg ? " beside background" : "");
	rc = devices_run(c, arm, p, &s);
	bg_stop(jobs, njobs);
	if (rc == 0)
		rc = coll_board_stats(&s, o->warmup_steps, &c->fig[arm].st[p][bg]);
	c->fig[arm].have[p][bg] = rc == 0;
	c->fig[arm].cpu[p][bg] = coll_board_cpu_us_per_step(&s);
	c->fig[arm].host[p][bg] = coll_board_host_us_per_step(&s);
	c->fig[arm].retries[p][bg] = atomic_load(&s.b->retries);
	coll_sync_close(&s);
	return rc;
}

/** servers_start() - One server per device for each arm. Return: 0 or error. */
static int servers_start(struct cmp *c)
{
	for (int arm = 0; arm < 2; arm++)
		for (uint32_t i = 0; i < c->ndev; i++) {
			int rc = bench_spawn_server(c->o, tr_of(arm), arm_port(c, arm, i),
						    &c->srv[arm][i]);
			if (rc)
				return rc;
		}
	return 0;
}

/** servers_stop() - Stop every server that was started. */
static void servers_stop(struct cmp *c)
{
	for (int arm = 0; arm < 2; arm++)
		for (uint32_t i = 0; i < c->ndev; i++)
			bench_stop_server(&c->srv[arm][i]);
}

/** ratio() - @a / @b, NaN unless both are positive. */
static double ratio(double a, double b)
{
	return a > 0 && b > 0 ? a / b : NAN;
}

/** print_table() - The comparison table on @f. */
static void print_table(FILE *f, const struct cmp *c)
{
	const struct bench_opts *o = c->o;

	fprintf(f, "\ncollective: %u devices on loopback, compute %.0f us per step, %u B messages, "
		"%u lookups, background %.2f Gbps of %u B messages; %u steps after %u warm-up\n",
		c->ndev, o->compute_us, o->msg_bytes, o->lookups, o->background_gbps, BG_BYTES,
		o->steps, o->warmup_steps);
	for (int arm = 0; arm < 2; arm++)
		if (c->fig[arm].rc)
			fprintf(f, "  %s arm FAILED: %s\n", bench_transport_name(tr_of(arm)),
				homa_strerror(c->fig[arm].rc));
	fprintf(f, "  %-22s %26s %26s %9s %9s\n", "", "homa step P50/P99/max us",
		"tcp step P50/P99/max us", "idle h/t", "P99 t/h");
	for (int p = 0; p < COLL_PATTERNS; p++)
		for (int bg = 0; bg < 2; bg++) {
			const struct homa_step_stats *h = &c->fig[0].st[p][bg], *t = &c->fig[1].st[p][bg];
			char l[40], hs[40], ts[40], idle[24];
			snprintf(l, sizeof(l), "%s%s", coll_pattern_name((enum coll_pattern)p),
				 bg ? " + background" : "");
			snprintf(hs, sizeof(hs), "%.0f/%.0f/%.0f", h->p50_us, h->p99_us, h->max_us);
			snprintf(ts, sizeof(ts), "%.0f/%.0f/%.0f", t->p50_us, t->p99_us, t->max_us);
			snprintf(idle, sizeof(idle), "%.2f/%.2f", h->idle_fraction, t->idle_fraction);
			fprintf(f, "  %-22s %26s %26s %9s %9.2f\n", l,
				c->fig[0].have[p][bg] ? hs : "-", c->fig[1].have[p][bg] ? ts : "-", idle,
				ratio(t->p99_us, h->p99_us));
		}
	fprintf(f, "  CPU per step (us), devices' getrusage and the machine's busy time (wall x CPUs"
		   " minus idle):\n");
	for (int p = 0; p < COLL_PATTERNS; p++)
		for (int bg = 0; bg < 2; bg++)
			if (c->fig[0].have[p][bg] && c->fig[1].have[p][bg])
				fprintf(f, "  %-10s %-14s homa %8.0f %9.0f   tcp %8.0f %9.0f   "
					"retried RPCs %u / %u\n",
					coll_pattern_name((enum coll_pattern)p), bg ? "+ background" : "",
					c->fig[0].cpu[p][bg], c->fig[0].host[p][bg], c->fig[1].cpu[p][bg],
					c->fig[1].host[p][bg], c->fig[0].retries[p][bg],
					c->fig[1].retries[p][bg]);
	fprintf(f, "  idle h/t: the share of device time spent waiting on the network, homa and "
		   "tcp;\n  P99 t/h: TCP's P99 step time over Homa's (above 1: Homa's steps are "
		   "shorter).\n");
}

/** json_arm() - One arm's object: a member per pattern. */
static void json_arm(struct homa_json *j, const struct arm_fig *a)
{
	homa_json_object(j);
	if (a->rc)
		homa_json_kv_str(j, "error", homa_strerror(a->rc));
	for (int p = 0; p < COLL_PATTERNS; p++) {
		if (!a->have[p][0])
			continue;
		homa_json_key(j, coll_pattern_name((enum coll_pattern)p));
		homa_json_object(j);
		homa_step_stats_json(j, &a->st[p][0]);
		homa_json_kv_num(j, "device_cpu_us_per_step", a->cpu[p][0]);
		homa_json_kv_num(j, "host_cpu_us_per_step", a->host[p][0]);
		homa_json_kv_num(j, "rpc_retries", a->retries[p][0]);
		if (a->have[p][1]) {
			homa_json_key(j, "background");
			homa_json_object(j);
			homa_step_stats_json(j, &a->st[p][1]);
			homa_json_kv_num(j, "device_cpu_us_per_step", a->cpu[p][1]);
			homa_json_kv_num(j, "host_cpu_us_per_step", a->host[p][1]);
			homa_json_kv_num(j, "rpc_retries", a->retries[p][1]);
			homa_json_end(j);
		}
		homa_json_end(j);
	}
	homa_json_end(j);
}

/** json_doc() - The whole document on stdout. Return: 0 or HOMA_EIO. */
static int json_doc(const struct cmp *c)
{
	const struct bench_opts *o = c->o;
	struct homa_json j;

	homa_json_init(&j, stdout, false);
	homa_json_object(&j);
	homa_json_kv_str(&j, "scenario", "collective");
	homa_json_kv_num(&j, "devices", c->ndev);
	homa_json_kv_num(&j, "compute_us", o->compute_us);
	homa_json_kv_num(&j, "msg_bytes", o->msg_bytes);
	homa_json_kv_num(&j, "lookups", o->lookups);
	homa_json_kv_num(&j, "background_gbps", o->background_gbps);
	homa_json_key(&j, "homa");
	json_arm(&j, &c->fig[0]);
	homa_json_key(&j, "tcp");
	json_arm(&j, &c->fig[1]);
	homa_json_key(&j, "ratios_tcp_over_homa");
	homa_json_object(&j);
	for (int p = 0; p < COLL_PATTERNS; p++) {
		const struct homa_step_stats *h = c->fig[0].st[p], *t = c->fig[1].st[p];
		homa_json_key(&j, coll_pattern_name((enum coll_pattern)p));
		homa_json_object(&j);
		homa_json_kv_num(&j, "idle_fraction", ratio(t[0].idle_fraction, h[0].idle_fraction));
		homa_json_kv_num(&j, "step_p99", ratio(t[0].p99_us, h[0].p99_us));
		homa_json_kv_num(&j, "background_idle_fraction",
				 ratio(t[1].idle_fraction, h[1].idle_fraction));
		homa_json_kv_num(&j, "background_step_p99", ratio(t[1].p99_us, h[1].p99_us));
		homa_json_end(&j);
	}
	homa_json_end(&j);
	homa_json_end(&j);
	return homa_json_finish(&j);
}

int bench_collective_compare(const struct bench_opts *o, uint16_t port, FILE *out)
{
	struct cmp *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return HOMA_ENOMEM;
	c->o = o;
	c->ndev = (uint32_t)o->devices;
	c->port = port;
	rc = servers_start(c);
	for (int p = 0; rc == 0 && p < COLL_PATTERNS && !bench_stop; p++)
		for (int bg = 0; bg < (o->background_gbps > 0 ? 2 : 1) && !bench_stop; bg++)
			for (int k = 0; k < 2; k++) {
				int arm = (p * 2 + bg) % 2 ? 1 - k : k;
				if (c->fig[arm].rc == 0)
					c->fig[arm].rc = run_case(c, arm, (enum coll_pattern)p, bg);
			}
	servers_stop(c);
	if (rc == 0)
		rc = c->fig[0].rc ? c->fig[0].rc : c->fig[1].rc;
	if (bench_stop && rc == 0)
		rc = HOMA_ECANCELED;
	print_table(out, c);
	if (o->json_stdout) {
		int jr = json_doc(c);
		if (jr && !rc)
			rc = jr;
	}
	free(c);
	return rc;
}
