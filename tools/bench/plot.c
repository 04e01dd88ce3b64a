/* SPDX-License-Identifier: MIT */
/* gnuplot output. */
#include "plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "homa/errors.h"

int bench_plot(const char *path, const char *title, const char *ylabel,
	       const struct bench_series *series, size_t n)
{
	FILE *g = popen("gnuplot 2>&1", "w");

	if (!g) {
		fprintf(stderr, "homa-bench: cannot run gnuplot (apt-get install gnuplot-nox)\n");
		return HOMA_EIO;
	}
	fprintf(g, "set terminal pngcairo size 900,560 noenhanced\n"
		   "set output '%s'\nset title '%s'\nset logscale x\nset logscale y\n"
		   "set xlabel 'message size (bytes)'\nset ylabel '%s'\nset grid\n"
		   "set key below\nset format x '%%.0s%%c'\n",
		path, title, ylabel);
	fprintf(g, "plot ");
	for (size_t s = 0; s < n; s++)
		fprintf(g, "%s'-' using 1:2 with linespoints lw 2 title '%s'", s ? ", " : "",
			series[s].label);
	fprintf(g, "\n");
	for (size_t s = 0; s < n; s++) {
		for (size_t i = 0; i < series[s].n; i++)
			if (series[s].y[i] > 0)
				fprintf(g, "%u %g\n", series[s].x[i], series[s].y[i]);
		fprintf(g, "e\n");
	}
	int st = pclose(g);
	if (st != 0 || access(path, R_OK) != 0) {
		fprintf(stderr, "homa-bench: gnuplot failed to write %s\n", path);
		return HOMA_EIO;
	}
	return 0;
}
