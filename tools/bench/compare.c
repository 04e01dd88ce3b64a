/* SPDX-License-Identifier: MIT */
/* compare and demo: run scenarios, print the table, the JSON and the plot. */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collective.h"
#include "homa/errors.h"
#include "plot.h"
#include "scenario.h"
#include "usage.h"
#include "util/json.h"

/** Scenarios of `all`, in order. */
static const char *const all_scen[] = { "rtt", "throughput", "rate", "mixed" };

/** ratio() - @a / @b, or NaN when either is missing. */
static double ratio(double a, double b)
{
	return (a > 0 && b > 0) ? a / b : NAN;
}

/** cell() - One figure of width @w; "-" when there is none (not positive). */
static void cell(FILE *f, int w, double v)
{
	if (v > 0 && !isinf(v))
		fprintf(f, " %*.2f", w, v);
	else
		fprintf(f, " %*s", w, "-");
}

/** row() - One table row: homa, tcp, ratio and optionally the UDP floor. */
static void row(FILE *f, const char *what, double h, double t, double u)
{
	fprintf(f, "  %-34s", what);
	cell(f, 10, h);
	cell(f, 10, t);
	cell(f, 9, ratio(h, t));
	if (!isnan(u)) {
		cell(f, 10, u);
		cell(f, 9, ratio(h, u));
	}
	fprintf(f, "\n");
}

/**
 * usage_rows() - The machine's busy time, system calls and context
 * switches per RPC, and the library's copies per payload byte (Homa
 * only: the other arms' user-space code copies nothing it counts).
 * @u: the UDP floor's arm, or NULL.
 */
static void usage_rows(FILE *f, const struct scen_arm *h, const struct scen_arm *t,
		       const struct scen_arm *u)
{
	double nan = NAN;

	row(f, "machine busy CPU per RPC (us)", h->host_us_per_rpc, t->host_us_per_rpc,
	    u ? u->host_us_per_rpc : nan);
	row(f, "system calls per RPC", h->syscalls_per_rpc, t->syscalls_per_rpc,
	    u ? u->syscalls_per_rpc : nan);
	row(f, "context switches per RPC", h->ctxsw_per_rpc, t->ctxsw_per_rpc,
	    u ? u->ctxsw_per_rpc : nan);
	fprintf(f, "  %-34s", "library copies per payload byte");
	cell(f, 10, h->copies_per_byte);
	fprintf(f, " %10s\n", "-");
	if ((h->ran && !h->rc && h->syscalls_per_rpc < 0) ||
	    (t->ran && !t->rc && t->syscalls_per_rpc < 0))
		fprintf(f, "  system calls not counted: %s\n",
			*bench_usage_why() ? bench_usage_why() : "no counter in a process of the arm");
}

/** print_scen() - The table of one scenario on @f. */
static void print_scen(FILE *f, const struct scen *s, double dur)
{
	const struct scen_arm *h = &s->a[ARM_HOMA], *t = &s->a[ARM_TCP], *u = &s->a[ARM_UDP];
	int udp = u->ran && u->rc == 0;

	fprintf(f, "\n%s: %s (%.0f s per arm)\n", s->name, s->what, dur);
	for (int i = 0; i < ARM_COUNT; i++)
		if (s->a[i].ran && s->a[i].rc)
			fprintf(f, "  %s arm FAILED: %s\n", bench_arm_name(i),
				homa_strerror(s->a[i].rc));
	fprintf(f, "  %-34s %10s %10s %9s%s\n", "", "homa", "tcp", "homa/tcp",
		udp ? "  udp floor  homa/udp" : "");
	double nan = NAN;
	if (!strcmp(s->name, "throughput")) {
		row(f, "1 stream: goodput (Gbps)", h->st.gbps, t->st.gbps, nan);
		row(f, "1 stream: P50 per 500 KB RPC (us)", h->st.lat_us.p50, t->st.lat_us.p50, nan);
		row(f, "4 streams: goodput (Gbps)", h->extra.gbps, t->extra.gbps, nan);
		row(f, "CPU per RPC, 1 stream (us)", h->cpu_us_per_rpc, t->cpu_us_per_rpc, nan);
		usage_rows(f, h, t, NULL);
		return;
	}
	const char *p = !strcmp(s->name, "mixed") ? "lookup " : "";
	char l[64];
	snprintf(l, sizeof(l), "%sP50 latency (us)", p);
	row(f, l, h->st.lat_us.p50, t->st.lat_us.p50, udp ? u->st.lat_us.p50 : nan);
	snprintf(l, sizeof(l), "%sP99 latency (us)", p);
	row(f, l, h->st.lat_us.p99, t->st.lat_us.p99, udp ? u->st.lat_us.p99 : nan);
	snprintf(l, sizeof(l), "%sP99.9 latency (us)", p);
	row(f, l, h->st.lat_us.p999, t->st.lat_us.p999, udp ? u->st.lat_us.p999 : nan);
	if (!strcmp(s->name, "mixed")) {
		row(f, "lookup P99 slowdown", h->st.short_p99_slow, t->st.short_p99_slow, nan);
		row(f, "bulk goodput (Gbps)", h->gbps, t->gbps, nan);
	}
	if (!strcmp(s->name, "workload")) {
		row(f, "one-packet msgs: P50 slowdown", h->st.short_p50_slow, t->st.short_p50_slow,
		    nan);
		row(f, "one-packet msgs: P99 slowdown", h->st.short_p99_slow, t->st.short_p99_slow,
		    nan);
		row(f, "goodput (Gbps)", h->gbps, t->gbps, nan);
		for (size_t i = 0; i < h->by_size.nbuckets && i < t->by_size.nbuckets; i++) {
			snprintf(l, sizeof(l), "P99 slowdown, size <= %u", h->by_size.b[i].hi);
			row(f, l, h->by_size.b[i].p99_slow, t->by_size.b[i].p99_slow, nan);
		}
	}
	snprintf(l, sizeof(l), "%sRPCs per second", p);
	row(f, l, h->rpcs_per_sec, t->rpcs_per_sec, udp ? u->rpcs_per_sec : nan);
	row(f, "CPU per RPC, client+server (us)", h->cpu_us_per_rpc, t->cpu_us_per_rpc,
	    udp ? u->cpu_us_per_rpc : nan);
	if (!strcmp(s->name, "rate"))
		row(f, "RPCs per CPU-second", ratio(1e6, h->cpu_us_per_rpc),
		    ratio(1e6, t->cpu_us_per_rpc), nan);
	usage_rows(f, h, t, udp ? u : NULL);
}

/** api_row() - One arm of the transports table: its figures and ratios to kernel TCP @t. */
static void api_row(FILE *f, const char *what, const struct scen_arm *a, const struct scen_arm *t)
{
	fprintf(f, "  %-22s", what);
	if (a->rc) {
		fprintf(f, " FAILED: %s\n", homa_strerror(a->rc));
		return;
	}
	cell(f, 8, a->st.lat_us.p50);
	cell(f, 8, a->st.lat_us.p99);
	cell(f, 9, a->cpu_us_per_rpc);
	cell(f, 9, a->host_us_per_rpc);
	cell(f, 7, a->syscalls_per_rpc);
	cell(f, 7, a->ctxsw_per_rpc);
	cell(f, 7, ratio(a->st.lat_us.p50, t->st.lat_us.p50));
	cell(f, 7, ratio(a->cpu_us_per_rpc, t->cpu_us_per_rpc));
	cell(f, 7, ratio(a->host_us_per_rpc, t->host_us_per_rpc));
	fprintf(f, "\n");
}

/**
 * print_transports() - With --homa-transport all: the Homa API over each
 * transport and kernel TCP, measured in turn in this run, with ratios to
 * kernel TCP (CPU per RPC by getrusage of client and server, and as the
 * machine's busy time).
 */
static void print_transports(FILE *f, const struct scen *s)
{
	const struct scen_arm *t = &s->a[ARM_TCP];

	if (!s->a[ARM_API_TCP].ran || t->rc)
		return;
	fprintf(f, "\n%s: this API over each transport against kernel TCP (ratios: arm/kernel)\n",
		s->name);
	fprintf(f, "  %-22s %8s %8s %9s %9s %7s %7s %7s %7s %7s\n", "arm", "P50 us", "P99 us",
		"CPU us", "busy us", "calls", "ctxsw", "P50 x", "CPU x", "busy x");
	api_row(f, "homa (over Homa)", &s->a[ARM_HOMA], t);
	api_row(f, "api-tcp (over TCP)", &s->a[ARM_API_TCP], t);
	api_row(f, "api-auto (AUTO)", &s->a[ARM_API_AUTO], t);
	api_row(f, "tcp (kernel TCP)", t, t);
}

/** json_arm() - The object of one arm. */
static void json_arm(struct homa_json *j, const struct scen *s, const struct scen_arm *a)
{
	homa_json_object(j);
	if (a->rc)
		homa_json_kv_str(j, "error", homa_strerror(a->rc));
	int none = a->rc || a->st.lat_us.count == 0;
	homa_json_kv_num(j, "p50_us", none ? NAN : a->st.lat_us.p50);
	homa_json_kv_num(j, "p99_us", none ? NAN : a->st.lat_us.p99);
	homa_json_kv_num(j, "p999_us", none ? NAN : a->st.lat_us.p999);
	homa_json_kv_num(j, "gbps", a->rc ? NAN : a->gbps);
	homa_json_kv_num(j, "rpcs_per_sec", a->rc ? NAN : a->rpcs_per_sec);
	homa_json_kv_num(j, "cpu_us_per_rpc", a->rc ? NAN : a->cpu_us_per_rpc);
	homa_json_kv_num(j, "host_cpu_us_per_rpc", a->rc || a->host_us_per_rpc < 0 ? NAN
			 : a->host_us_per_rpc);
	homa_json_kv_num(j, "syscalls_per_rpc", a->rc || a->syscalls_per_rpc < 0 ? NAN
			 : a->syscalls_per_rpc);
	homa_json_kv_num(j, "ctxsw_per_rpc", a->rc || a->ctxsw_per_rpc < 0 ? NAN
			 : a->ctxsw_per_rpc);
	homa_json_kv_num(j, "copies_per_byte", a->rc || a->copies_per_byte < 0 ? NAN
			 : a->copies_per_byte);
	if (!a->rc) {
		homa_json_key(j, "main");
		homa_json_object(j);
		bench_stats_json(j, &a->st);
		homa_json_end(j);
		if (s->extra_key) {
			homa_json_key(j, s->extra_key);
			homa_json_object(j);
			bench_stats_json(j, &a->extra);
			homa_json_end(j);
		}
		if (a->by_size.nbuckets) {
			homa_json_key(j, "by_size");
			homa_json_object(j);
			bench_stats_json(j, &a->by_size);
			homa_json_end(j);
		}
	}
	homa_json_end(j);
}

/** json_ratios() - Arm @a's headline figures over kernel TCP's @t, as an object. */
static void json_ratios(struct homa_json *j, const struct scen_arm *a, const struct scen_arm *t)
{
	homa_json_object(j);
	homa_json_kv_num(j, "p50", ratio(a->st.lat_us.p50, t->st.lat_us.p50));
	homa_json_kv_num(j, "p99", ratio(a->st.lat_us.p99, t->st.lat_us.p99));
	homa_json_kv_num(j, "cpu_us_per_rpc", ratio(a->cpu_us_per_rpc, t->cpu_us_per_rpc));
	homa_json_kv_num(j, "host_cpu_us_per_rpc", ratio(a->host_us_per_rpc, t->host_us_per_rpc));
	homa_json_end(j);
}

/**
 * json_scen() - The object of one scenario (@enc: the arms were
 * encrypted, which adds "encrypted": true).
 */
static void json_scen(struct homa_json *j, const struct scen *s, double dur, bool enc)
{
	const struct scen_arm *h = &s->a[ARM_HOMA], *t = &s->a[ARM_TCP], *u = &s->a[ARM_UDP];

	homa_json_object(j);
	homa_json_kv_str(j, "scenario", s->name);
	if (enc) {
		homa_json_key(j, "encrypted");
		homa_json_bool(j, true);
	}
	homa_json_kv_str(j, "description", s->what);
	homa_json_kv_num(j, "duration_s", dur);
	homa_json_key(j, "homa");
	json_arm(j, s, h);
	homa_json_key(j, "tcp");
	json_arm(j, s, t);
	if (u->ran) {
		homa_json_key(j, "udp_floor");
		homa_json_object(j);
		homa_json_kv_num(j, "p50_us", u->rc ? NAN : u->st.lat_us.p50);
		homa_json_kv_num(j, "p99_us", u->rc ? NAN : u->st.lat_us.p99);
		homa_json_kv_num(j, "p999_us", u->rc ? NAN : u->st.lat_us.p999);
		homa_json_end(j);
	}
	for (int arm = ARM_API_TCP; arm <= ARM_API_AUTO; arm++) {
		if (!s->a[arm].ran)
			continue;
		homa_json_key(j, arm == ARM_API_TCP ? "api_tcp" : "api_auto");
		json_arm(j, s, &s->a[arm]);
		homa_json_key(j, arm == ARM_API_TCP ? "ratios_api_tcp_over_tcp"
				 : "ratios_api_auto_over_tcp");
		json_ratios(j, &s->a[arm], t);
	}
	homa_json_key(j, "ratios_homa_over_tcp");
	homa_json_object(j);
	homa_json_kv_num(j, "p50", ratio(h->st.lat_us.p50, t->st.lat_us.p50));
	homa_json_kv_num(j, "p99", ratio(h->st.lat_us.p99, t->st.lat_us.p99));
	homa_json_kv_num(j, "gbps", ratio(h->gbps, t->gbps));
	homa_json_kv_num(j, "rpcs_per_sec", ratio(h->rpcs_per_sec, t->rpcs_per_sec));
	homa_json_kv_num(j, "cpu_us_per_rpc", ratio(h->cpu_us_per_rpc, t->cpu_us_per_rpc));
	homa_json_kv_num(j, "host_cpu_us_per_rpc", ratio(h->host_us_per_rpc, t->host_us_per_rpc));
	homa_json_kv_num(j, "syscalls_per_rpc", ratio(h->syscalls_per_rpc, t->syscalls_per_rpc));
	homa_json_kv_num(j, "ctxsw_per_rpc", ratio(h->ctxsw_per_rpc, t->ctxsw_per_rpc));
	if (s->extra_key && !strcmp(s->extra_key, "four_streams"))
		homa_json_kv_num(j, "gbps_four_streams", ratio(h->extra.gbps, t->extra.gbps));
	homa_json_end(j);
	homa_json_end(j);
}

/** plot_sizes() - P99 slowdown per size bucket (mixed, workload), both arms. */
static int plot_sizes(const char *path, const struct scen *s)
{
	uint32_t x[2][HOMA_BUCKETS_MAX];
	double y[2][HOMA_BUCKETS_MAX];
	struct bench_series ser[2];
	size_t n = 0;

	for (int arm = ARM_HOMA; arm <= ARM_TCP; arm++) {
		const struct bench_stats *b = &s->a[arm].by_size;
		if (s->a[arm].rc || !b->nbuckets)
			continue;
		for (size_t i = 0; i < b->nbuckets; i++) {
			x[n][i] = b->b[i].hi;
			y[n][i] = b->b[i].p99_slow;
		}
		ser[n] = (struct bench_series){ arm == ARM_HOMA ? "homa" : "tcp", b->nbuckets, x[n],
						y[n] };
		n++;
	}
	if (n == 0)
		return HOMA_EINVAL;
	char title[200];
	snprintf(title, sizeof(title), "%s: %s", s->name, s->what);
	return bench_plot(path, title, "P99 slowdown (time / best unloaded time)", ser, n);
}

/** print_demo() - The newcomer's table. */
static void print_demo(FILE *f, const struct scen *rtt, const struct scen *mix, const char *plot)
{
	const struct scen_arm *h = &rtt->a[ARM_HOMA], *t = &rtt->a[ARM_TCP], *u = &rtt->a[ARM_UDP];
	const struct scen_arm *mh = &mix->a[ARM_HOMA], *mt = &mix->a[ARM_TCP];
	double nan = NAN;

	fprintf(f, "\nhoma-bench demo: Homa (this library, over UDP) against the kernel's TCP,\n"
		   "both on this machine's loopback, measured one after the other in this run.\n\n");
	for (int i = 0; i < ARM_COUNT; i++) {
		if (rtt->a[i].ran && rtt->a[i].rc)
			fprintf(f, "  rtt: the %s arm FAILED: %s\n", bench_arm_name(i),
				homa_strerror(rtt->a[i].rc));
		if (mix->a[i].ran && mix->a[i].rc)
			fprintf(f, "  mixed: the %s arm FAILED: %s\n", bench_arm_name(i),
				homa_strerror(mix->a[i].rc));
	}
	fprintf(f, "  %-34s %10s %10s %9s\n", "what was measured", "homa", "tcp", "homa/tcp");
	row(f, "one 100 B RPC alone, median (us)", h->st.lat_us.p50, t->st.lat_us.p50, nan);
	row(f, "one 100 B RPC alone, 99th pct (us)", h->st.lat_us.p99, t->st.lat_us.p99, nan);
	row(f, "lookup during bulk, median (us)", mh->st.lat_us.p50, mt->st.lat_us.p50, nan);
	row(f, "lookup during bulk, 99th pct (us)", mh->st.lat_us.p99, mt->st.lat_us.p99, nan);
	row(f, "bulk goodput meanwhile (Gbps)", mh->gbps, mt->gbps, nan);
	row(f, "CPU per RPC, all processes (us)", mh->cpu_us_per_rpc, mt->cpu_us_per_rpc, nan);
	if (u->ran && u->rc == 0)
		fprintf(f, "\n  Floor: plain UDP ping-pong of 100 B takes %.1f us median here "
			   "(homa is %.2fx that).\n", u->st.lat_us.p50,
			ratio(h->st.lat_us.p50, u->st.lat_us.p50));
	fprintf(f, "  'lookup during bulk': 100 B-1 KB RPCs while 2 streams send 1-8 MB to the\n"
		   "  same server. Times and CPU: lower is better; goodput: higher is better.\n"
		   "  A homa/tcp ratio below 1 means homa's figure is lower.\n");
	if (plot)
		fprintf(f, "  Plot of P99 slowdown per message size (mixed run): %s\n", plot);
	fprintf(f, "  More: homa-bench compare --scenario all (docs/BENCH.md).\n");
}

/**
 * default_port() - A base port from the pid, so parallel runs rarely
 * collide, and below the kernel's ephemeral range (32768 and up by
 * default), whose ports other processes' connections hold at random.
 * Scenario i of a run uses base + 6 i .. base + 6 i + 5.
 */
static uint16_t default_port(const struct bench_opts *o)
{
	return o->port_set ? o->port : (uint16_t)(10000 + (getpid() % 2700) * 8);
}

/**
 * Homa settings for loopback, used by compare and demo where the user set
 * none. Loopback carries 64 KiB packets (its MTU is 65536, which kernel
 * TCP uses by itself), has no link to pace for, and its round trip holds
 * far more than the engine's defaults, which describe a 25 Gbps Ethernet
 * NIC with 1500-byte frames. Unscheduled bytes are the round trip's
 * bytes: a GRANT's round trip here is two process wake-ups (about 50 us
 * each on a VM) at the 50-odd Gbps loopback carries UDP, about 600 KB.
 * With less (200 KB) every 500 KB request of `throughput` waited for a
 * GRANT: twice the system calls and context switches per RPC, half the
 * goodput (docs/BENCH.md).
 */
#define LO_MTU 65000
#define LO_LINK_GBPS 400.0
#define LO_UNSCHED 600000
#define LO_INCOMING 400000

/**
 * loopback_profile() - Copy @o to @lo, filling each Homa setting the user
 * left at 0 with its loopback value; print the result on @f.
 */
static void loopback_profile(const struct bench_opts *o, struct bench_opts *lo, FILE *f)
{
	*lo = *o;
	if (!lo->homa.mtu)
		lo->homa.mtu = LO_MTU;
	if (lo->homa.link_gbps <= 0)
		lo->homa.link_gbps = LO_LINK_GBPS;
	if (!lo->homa.unsched)
		lo->homa.unsched = LO_UNSCHED;
	if (!lo->homa.incoming)
		lo->homa.incoming = LO_INCOMING;
	fprintf(f, "Homa settings for loopback: packets of %u B, pacer %.0f Gbps, %u unscheduled B, "
		"%u B max incoming (--homa-mtu, --homa-link-gbps, --homa-unsched-bytes, "
		"--homa-max-incoming change them)\n", lo->homa.mtu, lo->homa.link_gbps,
		lo->homa.unsched, lo->homa.incoming);
}

int bench_compare_main(const struct bench_opts *user)
{
	struct bench_opts lo;
	const struct bench_opts *o = &lo;
	FILE *out = user->json_stdout ? stderr : stdout;

	loopback_profile(user, &lo, out);
	int demo = !strcmp(o->mode, "demo");
	const char *list[4];
	size_t n = 0;
	struct scen s[4];
	const char *plot = o->plot ? o->plot : demo ? "homa-bench-demo.png" : NULL;
	int rc = 0;

	if (demo) {
		list[n++] = "rtt";
		list[n++] = "mixed";
	} else if (!strcmp(o->scenario, "all")) {
		for (n = 0; n < 4; n++)
			list[n] = all_scen[n];
	} else {
		list[n++] = o->scenario;
	}
	uint16_t port = default_port(o);
	if (o->encrypt && (demo || !strcmp(o->scenario, "collective"))) {
		fprintf(stderr, "homa-bench: --encrypt is for compare's rtt, throughput, rate, mixed, "
			"workload and all scenarios\n");
		return HOMA_EINVAL;
	}
	if (!demo && !strcmp(o->scenario, "collective"))
		return bench_collective_compare(o, port, out);
	if (o->encrypt)
		fprintf(out, "Encrypted arms: homa = Homa with PSP (AES-GCM-128), tcp = TCP with "
			"TLS 1.3 (TLS_AES_128_GCM_SHA256); certificates from %s\n", o->certs);
	for (size_t i = 0; i < n && !bench_stop; i++) {
		if (!o->quiet)
			fprintf(stderr, "running %s ...\n", list[i]);
		int r = bench_scenario_run(o, list[i], (uint16_t)(port + 2 * ARM_COUNT * i), &s[i]);
		if (r && !rc)
			rc = r;
		if (!demo) {
			print_scen(out, &s[i], o->duration);
			print_transports(out, &s[i]);
		}
	}
	if (bench_stop)
		return HOMA_ECANCELED;
	if (demo)
		print_demo(out, &s[0], &s[1], plot);
	for (size_t i = 0; plot && i < n; i++)
		if ((s[i].a[ARM_HOMA].by_size.nbuckets || s[i].a[ARM_TCP].by_size.nbuckets) &&
		    plot_sizes(plot, &s[i]) && !rc)
			rc = HOMA_EIO;
	if (o->json_stdout) {
		struct homa_json j;
		homa_json_init(&j, stdout, false);
		if (n == 1) {
			json_scen(&j, &s[0], o->duration, o->encrypt);
		} else {
			homa_json_object(&j);
			homa_json_kv_str(&j, "scenario", demo ? "demo" : "all");
			if (o->encrypt) {
				homa_json_key(&j, "encrypted");
				homa_json_bool(&j, true);
			}
			homa_json_key(&j, "results");
			homa_json_array(&j);
			for (size_t i = 0; i < n; i++)
				json_scen(&j, &s[i], o->duration, o->encrypt);
			homa_json_end(&j);
			homa_json_end(&j);
		}
		int jr = homa_json_finish(&j);
		if (jr && !rc)
			rc = jr;
	}
	return rc;
}
