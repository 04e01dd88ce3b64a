/* SPDX-License-Identifier: MIT */
/* CPU meter over getrusage(). */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "util/cpu.h"

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
