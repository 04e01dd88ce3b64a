/* SPDX-License-Identifier: MIT */
/**
 * @file main.c
 * homa-sim: run the Homa engine on a simulated leaf-spine datacenter and
 * report message slowdowns against an ideal SRPT reference. See
 * docs/SIMULATION.md. Exit status: 0 ok, 1 run failed, 2 bad options.
 */
#include <malloc.h>
#include <stdlib.h>

#include "sim.h"

/** main() - Parse options, run, report. */
int main(int argc, char **argv)
{
	struct sim_opts o;
	struct sim_run r;
	int rc = sim_opts_parse(&o, argc, argv, stderr);

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
		rc = sim_report(&r, stdout);
	if (!rc && o.samples)
		rc = sim_write_samples(&r, o.samples);
	if (rc)
		fprintf(stderr, "homa-sim: %s\n", homa_strerror(rc));
	sim_run_free(&r);
	return rc ? 1 : 0;
}
