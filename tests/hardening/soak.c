/* SPDX-License-Identifier: MIT */
/**
 * @file soak.c
 * Soak run on the real stack: a client and a server socket on loopback
 * exchange RPCs of every size (8 B to 300 KB, 16 outstanding) for a set
 * time with 1% loss, 0.5% duplication and 1% reordering injected in the
 * driver (fault_wrap.c). Once a second it prints one sample: elapsed
 * seconds, RSS, RPCs completed and failed, and the server's buffered bytes
 * and live RPCs. At the end it checks: no response corrupted or delivered
 * twice, no request run twice, no RPC hung or failed, both sockets free
 * every RPC, RSS flat (the highest sample of the last quarter at most
 * 25% + 4 MiB above the highest of the second quarter, after warm-up), and
 * the run lasted the time asked for (not cut short by RT_MAX_SERIALS or
 * MAX_SAMPLES; it prints how long it ran). Built with
 * ASan, LeakSanitizer checks for leaks at exit (scripts/soak.sh).
 *
 * Usage: hardening_soak SECONDS [CSV_FILE]
 * Exit status: 0 if every check passed, 1 otherwise.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault_wrap.h"
#include "rt_load.h"

#define MAX_SAMPLES 100000

/** A once-a-second sample. */
struct sample {
	double t;
	uint64_t rss_kb, ok, failed, srv_rx, srv_rpcs;
};

/** totals of all rounds. */
struct totals {
	uint64_t ok, failed, corrupt, twice, hung;
};

/** add() - Fold one round into the totals. */
static void add(struct totals *t, const struct rt_result *r)
{
	t->ok += r->ok;
	t->failed += r->failed;
	t->corrupt += r->corrupt;
	t->twice += r->twice;
	t->hung += r->hung;
}

/** rss_flat() - The RSS check described in the file comment. Return: true if flat. */
static bool rss_flat(const struct sample *s, int n)
{
	uint64_t early = 0, late = 0;
	int i;

	if (n < 8)
		return true;
	for (i = n / 4; i < n / 2; i++)
		early = s[i].rss_kb > early ? s[i].rss_kb : early;
	for (i = 3 * n / 4; i < n; i++)
		late = s[i].rss_kb > late ? s[i].rss_kb : late;
	printf("# rss: second-quarter max %llu KiB, last-quarter max %llu KiB\n",
	       (unsigned long long)early, (unsigned long long)late);
	return late * 4 <= early * 5 + 4 * 4096;
}

/** wait_idle() - Wait up to 10 s for socket @s to hold no RPC. Return: RPCs left. */
static uint64_t wait_idle(homa_socket *s)
{
	struct homa_stats st;
	int i;

	for (i = 0; i < 1000; i++) {
		homa_socket_stats(s, &st);
		if (!st.active_rpcs)
			break;
		usleep(10000);
	}
	return st.active_rpcs;
}

/** main() - See the file comment. */
int main(int argc, char **argv)
{
	static struct sample smp[MAX_SAMPLES];
	struct homa_settings st;
	struct rt_server sv;
	struct rt_result r;
	struct totals tot;
	struct homa_stats ss;
	homa_socket *c;
	FILE *csv = stdout;
	uint64_t secs, t0, end, first = 0, multi = 0, i, left_c, left_s, ran;
	int n = 0, bad;

	if (argc < 2 || (secs = strtoull(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: %s SECONDS [CSV_FILE]\n", argv[0]);
		return 2;
	}
	if (argc > 2 && !(csv = fopen(argv[2], "w")))
		return 2;
	memset(&tot, 0, sizeof(tot));
	rt_settings(&st, 3000);
	if (rt_server_start(&sv, 2, 0, &st) || rt_open(&c, false, 0, &st))
		return 1;
	hd_faults_set(10000, 5000, 10000, 7);
	fprintf(csv, "t_s,rss_kb,rpcs_ok,rpcs_failed,server_rx_bytes,server_rpcs\n");
	t0 = rt_now();
	end = t0 + secs * 1000000000ull;
	while (rt_now() < end && n < MAX_SAMPLES && first < RT_MAX_SERIALS - 100000) {
		rt_load_run(c, sv.port, first, 100000, 16, 30000000000ull, rt_now() + 1000000000ull, &r);
		first += r.sent;
		add(&tot, &r);
		rt_result_print_failures("soak", &r);
		homa_socket_stats(sv.s, &ss);
		smp[n] = (struct sample){(rt_now() - t0) / 1e9, rt_rss_kb(), tot.ok, tot.failed,
					 ss.rx_buffered_bytes, ss.active_rpcs};
		fprintf(csv, "%.1f,%llu,%llu,%llu,%llu,%llu\n", smp[n].t,
			(unsigned long long)smp[n].rss_kb, (unsigned long long)tot.ok,
			(unsigned long long)tot.failed, (unsigned long long)ss.rx_buffered_bytes,
			(unsigned long long)ss.active_rpcs);
		fflush(csv);
		n++;
	}
	ran = (rt_now() - t0) / 1000000000ull;
	hd_faults_set(0, 0, 0, 0);
	left_c = wait_idle(c);
	left_s = wait_idle(sv.s);
	for (i = 0; i < first; i++)
		if (atomic_load(&sv.executed[i]) > 1)
			multi++;
	bad = tot.corrupt || tot.twice || tot.hung || tot.failed || multi || left_c || left_s ||
	      atomic_load(&sv.bad) || !rss_flat(smp, n) || ran + 2 < secs;
	printf("# soak %llu of %llu s: %llu RPCs ok, %llu failed, %llu corrupt, %llu twice, %llu hung, "
	       "%llu run twice, RPCs left client %llu server %llu: %s\n", (unsigned long long)ran,
	       (unsigned long long)secs, (unsigned long long)tot.ok, (unsigned long long)tot.failed,
	       (unsigned long long)tot.corrupt, (unsigned long long)tot.twice,
	       (unsigned long long)tot.hung, (unsigned long long)multi,
	       (unsigned long long)left_c, (unsigned long long)left_s, bad ? "FAILED" : "ok");
	homa_close(c);
	rt_server_stop(&sv);
	if (csv != stdout)
		fclose(csv);
	return bad ? 1 : 0;
}
