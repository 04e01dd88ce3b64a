/* SPDX-License-Identifier: MIT */
/* CPU meter over getrusage(), and busy time from /proc/stat. */
#define _GNU_SOURCE /* RUSAGE_THREAD, CPU_ISSET */
#include "util/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "homa/errors.h"

int64_t homa_rusage_us(const struct rusage *ru)
{
	return (int64_t)ru->ru_utime.tv_sec * 1000000 + ru->ru_utime.tv_usec +
	       (int64_t)ru->ru_stime.tv_sec * 1000000 + ru->ru_stime.tv_usec;
}

int64_t homa_cpu_now_us(enum homa_cpu_who who)
{
	struct rusage ru;
	int w = who == HOMA_CPU_THREAD ? RUSAGE_THREAD
		: who == HOMA_CPU_CHILDREN ? RUSAGE_CHILDREN : RUSAGE_SELF;

	if (getrusage(w, &ru) != 0)
		return HOMA_EIO;
	return homa_rusage_us(&ru);
}

int homa_cpu_start(struct homa_cpu_meter *m, enum homa_cpu_who who)
{
	int64_t now = homa_cpu_now_us(who);

	m->who = who;
	m->start_us = now < 0 ? 0 : now;
	return now < 0 ? (int)now : 0;
}

int64_t homa_cpu_elapsed_us(const struct homa_cpu_meter *m)
{
	int64_t now = homa_cpu_now_us(m->who);

	if (now < 0)
		return now;
	return now >= m->start_us ? now - m->start_us : 0;
}

int homa_host_cpu_parse(const char *text, const cpu_set_t *cpus, uint64_t wall_ns,
			struct homa_host_cpu *out)
{
	const char *line = text;

	memset(out, 0, sizeof(*out));
	out->wall_ns = wall_ns;
	for (; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long long v[5];
		int cpu;
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3],
			   &v[4]) != 6)
			return HOMA_EINVAL;
		if (cpus && (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, cpus)))
			continue;
		out->idle_ticks += v[3] + v[4];
		out->ncpus++;
	}
	return out->ncpus ? 0 : HOMA_EINVAL;
}

int homa_host_cpu_snap(struct homa_host_cpu *out)
{
	static const size_t cap = 1 << 16;
	struct timespec ts;
	cpu_set_t set;
	char *buf = malloc(cap);
	FILE *f = fopen("/proc/stat", "r");
	size_t n = 0;

	if (!buf || !f) {
		free(buf);
		if (f)
			fclose(f);
		return HOMA_EIO;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = 0;
	int rc = homa_host_cpu_parse(buf, sched_getaffinity(0, sizeof(set), &set) ? NULL : &set,
				     (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, out);
	free(buf);
	return rc;
}

double homa_host_busy_us(const struct homa_host_cpu *a, const struct homa_host_cpu *b)
{
	double wall = b->wall_ns > a->wall_ns ? (double)(b->wall_ns - a->wall_ns) / 1000 : 0;
	double idle = b->idle_ticks > a->idle_ticks ? (double)(b->idle_ticks - a->idle_ticks) : 0;
	double busy = wall * b->ncpus - idle * 1e6 / (double)sysconf(_SC_CLK_TCK);

	return busy > 0 ? busy : 0;
}
