/* SPDX-License-Identifier: MIT */
/**
 * @file report.c
 * homa-flood's table: both arms side by side, their ratios, and a result
 * line that says whether every RPC completed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "flood.h"
#include "homa/errors.h"
#include "homa/wire.h"
#include "util/latency.h"

/** per() - @x / @n, or 0 when @n is 0. */
static double per(double x, uint64_t n)
{
	return n ? x / (double)n : 0.0;
}

/** ratio() - @a / @b, or 0 when @b is not positive. */
static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0.0;
}

/** default_timeout_ms() - The library's default RPC timeout in ms. */
static unsigned default_timeout_ms(void)
{
	struct homa_settings st;

	homa_settings_default(&st);
	return (unsigned)((uint64_t)st.timeout_ticks * st.tick_ns / 1000000);
}

/** print_arm() - One table row; fills @sum with the arm's latency summary. */
static void print_arm(const char *name, struct flood_arm *a, struct homa_summary *sum)
{
	double wall_s = a->wall_us / 1e6;

	homa_summary_of(a->lat_us, a->n, sum);
	printf("%-9s %7llu %6llu %6llu %7llu %5llu %8.1f %8.1f %8.1f %9.2f %9.2f %10.0f %6.2f %6.2f "
	       "%10.0f %8llu\n",
	       name, (unsigned long long)a->ok, (unsigned long long)a->failed,
	       (unsigned long long)a->timed_out, (unsigned long long)a->refused,
	       (unsigned long long)a->hung, sum->p50, sum->p99, sum->p999,
	       per(a->proc_cpu_us - a->flood_cpu_us, a->ok), per(a->busy_us - a->flood_cpu_us, a->ok),
	       wall_s > 0 ? (double)a->flood_sent / wall_s : 0.0, ratio(a->flood_cpu_us, a->wall_us),
	       ratio(a->busy_us, a->wall_us), wall_s > 0 ? (double)a->server_rx / wall_s : 0.0,
	       (unsigned long long)a->kernel_drops);
}

/** print_drops() - The server's drops during @a by reason, on one line. */
static void print_drops(const char *name, const struct flood_arm *a)
{
	printf("server drops (%s):", name);
	for (int r = 0; r < HOMA_DROP_REASONS; r++)
		if (a->drops[r])
			printf(" %s %llu", homa_drop_reason_name(r), (unsigned long long)a->drops[r]);
	printf("\n");
}

/** print_sent() - The packets both engines sent during @a by type, on one line. */
static void print_sent(const char *name, const struct flood_arm *a)
{
	printf("sent by server and client (%s):", name);
	for (int t = 0; t < HOMA_PKT_TYPES; t++)
		if (a->sent[t])
			printf(" %s %llu", homa_wire_type_name((uint8_t)(HOMA_PKT_FIRST + t)),
			       (unsigned long long)a->sent[t]);
	printf("\n");
}

/**
 * print_forged_cost() - The victim's CPU per forged packet its sockets
 * took in: the flooded arm's CPU (without the flooding thread) minus what
 * its honest RPCs cost at the unloaded arm's rate, over the packets taken
 * in beyond the honest RPCs' share (at the unloaded arm's packets per
 * RPC); getrusage and busy time.
 */
static void print_forged_cost(const struct flood_arm *q, const struct flood_arm *l)
{
	double rx_per_rpc = per((double)(q->server_rx + q->client_rx), q->ok);
	double forged = (double)(l->server_rx + l->client_rx) - rx_per_rpc * (double)l->ok;
	double cpu = l->proc_cpu_us - l->flood_cpu_us - per(q->proc_cpu_us, q->ok) * (double)l->ok;
	double busy = l->busy_us - l->flood_cpu_us - per(q->busy_us, q->ok) * (double)l->ok;
	double wall_s = l->wall_us / 1e6;

	if (forged < 1)
		forged = 0;
	printf("forged packets taken in: %.0f per s of %.0f per s sent; victim cost per forged "
	       "packet taken in: %.2f us (getrusage), %.2f us (busy time)\n",
	       wall_s > 0 ? forged / wall_s : 0.0,
	       wall_s > 0 ? (double)l->flood_sent / wall_s : 0.0,
	       forged > 0 ? cpu / forged : 0.0, forged > 0 ? busy / forged : 0.0);
}

/** flood_report() - See flood.h. */
int flood_report(const struct flood_opts *o, struct flood_arm *quiet, struct flood_arm *loud)
{
	struct homa_summary q, l;
	double load[3] = {-1, -1, -1};
	int bad;

	if (getloadavg(load, 3) != 3)
		load[0] = load[1] = load[2] = -1;
	printf("homa-flood: %u B RPCs, one at a time, UDP driver on loopback; %d round(s) of "
	       "%.2f s per arm, order alternating; RPC timeout %s%u ms; %d CPUs; load average %.2f %.2f %.2f\n",
	       o->size, o->rounds, o->seconds, o->timeout_ms ? "" : "default ",
	       o->timeout_ms ? o->timeout_ms : default_timeout_ms(), quiet->ncpus, load[0], load[1], load[2]);
	if (o->rcvbuf)
		printf("kernel receive buffer: %u bytes asked (rcvbuf_bytes)\n", o->rcvbuf);
	if (o->stranger_budget)
		printf("strangers' budget: %d packets per ms (stranger_budget; -1: no limit)\n",
		       o->stranger_budget);
	if (o->stranger_cpu_us)
		printf("strangers' CPU budget: %d us per ms (stranger_cpu_us; -1: no limit)\n",
		       o->stranger_cpu_us);
	if (o->rate > 0)
		printf("flood: one thread, paced to %.0f packets/s", o->rate);
	else
		printf("flood: one thread, no pacing");
	printf(", %d source ports on %d addresses (127.0.0.2-%d), forged %s\n", o->ports, o->hosts,
	       1 + o->hosts, o->data_only ? "DATA only, all to the server"
	       : "DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY, CUTOFFS, NEED_ACK, ACK");
	printf("%-9s %7s %6s %6s %7s %5s %8s %8s %8s %9s %9s %10s %6s %6s %10s %8s\n", "arm",
	       "rpcs", "failed", "t_out", "refused", "hung", "p50_us", "p99_us", "p999_us", "cpu_us", "busy_us", "flood_pps",
	       "fl_cpu", "busy", "srv_rx_pps", "k_drops");
	print_arm("unloaded", quiet, &q);
	print_arm("flood", loud, &l);
	print_drops("unloaded", quiet);
	print_drops("flood", loud);
	print_sent("unloaded", quiet);
	print_sent("flood", loud);
	printf("failed: RPCs sent that ended in an error (t_out of them HOMA_ETIMEDOUT); refused: "
	       "sends refused at once (HOMA_EPEERDEAD) while the port counts as dead after a "
	       "timeout, no RPC\n");
	printf("cpu_us: getrusage (process) minus the flooding thread, per RPC; busy_us: "
	       "wall x CPUs minus /proc/stat idle, minus the flooding thread, per RPC; "
	       "fl_cpu, busy: cores\n");
	printf("ratio flood/unloaded: P50 %.2f, P99 %.2f (target <= 3), cpu per RPC %.2f "
	       "(getrusage), %.2f (busy time)\n", ratio(l.p50, q.p50), ratio(l.p99, q.p99),
	       ratio(per(loud->proc_cpu_us - loud->flood_cpu_us, loud->ok),
		     per(quiet->proc_cpu_us - quiet->flood_cpu_us, quiet->ok)),
	       ratio(per(loud->busy_us - loud->flood_cpu_us, loud->ok),
		     per(quiet->busy_us - quiet->flood_cpu_us, quiet->ok)));
	print_forged_cost(quiet, loud);
	bad = !quiet->ok || !loud->ok || quiet->failed || quiet->hung || loud->failed ||
	      loud->hung || quiet->refused || loud->refused;
	if (bad)
		printf("result: FAILED: %llu RPCs failed (%llu timed out), %llu sends refused and "
		       "%llu hung (first errors: unloaded %s, flood %s)\n",
		       (unsigned long long)(quiet->failed + loud->failed),
		       (unsigned long long)(quiet->timed_out + loud->timed_out),
		       (unsigned long long)(quiet->refused + loud->refused),
		       (unsigned long long)(quiet->hung + loud->hung),
		       quiet->first_error ? homa_strerror(quiet->first_error) : "none",
		       loud->first_error ? homa_strerror(loud->first_error) : "none");
	else
		printf("result: ok, all %llu RPCs completed\n",
		       (unsigned long long)(quiet->ok + loud->ok));
	return bad;
}
