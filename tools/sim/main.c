/* SPDX-License-Identifier: MIT */
/**
 * @file main.c
 * homa-sim: run the Homa engine on a simulated leaf-spine datacenter and
 * report message slowdowns against an ideal SRPT reference. See
 * docs/SIMULATION.md. Exit status: 0 ok, 1 run failed, 2 bad options.
 */
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim.h"

/**
 * use_huge_pages() - Engines copy every message into fresh 64 KB chunks;
 * with 4 KB pages the first touch of that memory cost a quarter of the
 * CPU on W4 (page faults). glibc backs its heap with transparent huge
 * pages only if told so before it starts, by a tunable: set it and run
 * this program again (once; the environment variable marks the second
 * start). Results are identical either way; only speed changes.
 */
static void use_huge_pages(char **argv)
{
	if (getenv("GLIBC_TUNABLES") || getenv("HOMA_SIM_NO_REEXEC"))
		return;
	if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1) ||
	    setenv("HOMA_SIM_NO_REEXEC", "1", 1))
		return;
	execv("/proc/self/exe", argv);
}

/** main() - Parse options, run, report. */
int main(int argc, char **argv)
{
	struct sim_opts o;
	struct sim_run r;
	int rc;

	use_huge_pages(argv);
	rc = sim_opts_parse(&o, argc, argv, stderr);

	/*
	 * Engines buffer whole messages in 64 KB chunks; keep freed memory in
	 * the process instead of returning it to the kernel and faulting it
	 * back in (that cost 20% of the run time on W4).
	 */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_TOP_PAD, 64 << 20);
	if (rc) {
		sim_usage(rc > 0 ? stdout : stderr);
		return rc > 0 ? 0 : 2;
	}
	rc = sim_run(&r, &o);
	if (!rc)
		rc = r.steps ? sim_steps_report(&r, stdout) : sim_report(&r, stdout);
	if (!rc && o.samples)
		rc = sim_write_samples(&r, o.samples);
	if (rc)
		fprintf(stderr, "homa-sim: %s\n", homa_strerror(rc));
	sim_run_free(&r);
	return rc ? 1 : 0;
}
