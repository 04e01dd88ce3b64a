/* SPDX-License-Identifier: MIT */
/**
 * @file clock.c
 * The runtime's clock: CLOCK_MONOTONIC in nanoseconds, as the engine's
 * "now" and for every timed wait (condition variables use it too). A
 * reading costs tens of nanoseconds on a virtual machine (kvm-clock),
 * so the per-RPC paths pass one reading on instead of taking another
 * (homa_rt_poll_step(), send_locked(), homa_rt_wait_item()'s first pass)
 * and skip it where nothing needs it (a flush with no output); each
 * thread counts its readings for the tests (homa_rt_clock_reads).
 */
#include <stdint.h>
#include <time.h>

#include "rt.h"

__thread uint64_t homa_rt_clock_reads;

/** homa_rt_now() - See rt.h. Counts the reading in homa_rt_clock_reads. */
uint64_t homa_rt_now(void)
{
	struct timespec ts;

	homa_rt_clock_reads++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** homa_rt_deadline() - See rt.h. Negative timeouts mean "never" (no clock read). */
uint64_t homa_rt_deadline(int64_t timeout_ns)
{
	return timeout_ns < 0 ? UINT64_MAX : homa_rt_deadline_at(homa_rt_now(), timeout_ns);
}

/** homa_rt_deadline_at() - See rt.h. */
uint64_t homa_rt_deadline_at(uint64_t now, int64_t timeout_ns)
{
	if (timeout_ns < 0 || (uint64_t)timeout_ns > UINT64_MAX - now)
		return UINT64_MAX;
	return now + (uint64_t)timeout_ns;
}

/** homa_rt_timespec() - See rt.h. UINT64_MAX maps to a far future. */
struct timespec homa_rt_timespec(uint64_t ns)
{
	struct timespec ts;

	if (ns > (uint64_t)INT32_MAX * 1000000000ull)
		ns = (uint64_t)INT32_MAX * 1000000000ull;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	return ts;
}
