/* SPDX-License-Identifier: MIT */
/**
 * @file log.c
 * Process-wide logger: a level, a sink (stderr or a callback) and a token
 * bucket per call site so that a flood (say, of malformed packets) costs
 * a few lines and a count instead of a full disk. One mutex guards the
 * call-site state; the level check before it is a relaxed atomic load.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "homa/obs.h"

#define LOG_MSG_MAX 480

static atomic_int log_level = HOMA_LOG_WARN;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static homa_log_fn log_sink;
static void *log_sink_arg;
static uint32_t log_burst = 10;
static uint32_t log_per_sec = 1;
static uint64_t (*log_clock)(void);
static struct homa_log_site *log_sites; /**< every site that ever emitted */

/** homa_log_level_name() - See obs.h. */
const char *homa_log_level_name(int level)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};

	if (level < HOMA_LOG_ERROR || level > HOMA_LOG_DEBUG)
		return "unknown";
	return names[level];
}

/** homa_log_set_level() - See obs.h. */
int homa_log_set_level(int level)
{
	if (level < HOMA_LOG_ERROR || level > HOMA_LOG_DEBUG)
		return HOMA_EINVAL;
	atomic_store_explicit(&log_level, level, memory_order_relaxed);
	return 0;
}

/** homa_log_get_level() - See obs.h. */
int homa_log_get_level(void)
{
	return atomic_load_explicit(&log_level, memory_order_relaxed);
}

/** homa_log_enabled() - See obs.h. */
bool homa_log_enabled(int level)
{
	return level <= atomic_load_explicit(&log_level, memory_order_relaxed);
}

/** homa_log_set_sink() - See obs.h. */
void homa_log_set_sink(homa_log_fn fn, void *arg)
{
	pthread_mutex_lock(&log_lock);
	log_sink = fn;
	log_sink_arg = arg;
	pthread_mutex_unlock(&log_lock);
}

/** homa_log_set_rate() - See obs.h. */
int homa_log_set_rate(uint32_t burst, uint32_t per_sec)
{
	if (burst && !per_sec)
		return HOMA_EINVAL;
	pthread_mutex_lock(&log_lock);
	log_burst = burst;
	log_per_sec = per_sec;
	pthread_mutex_unlock(&log_lock);
	return 0;
}

/** homa_log_set_clock() - See obs.h. */
void homa_log_set_clock(uint64_t (*now)(void))
{
	pthread_mutex_lock(&log_lock);
	log_clock = now;
	pthread_mutex_unlock(&log_lock);
}

/** now_ns() - The log clock (caller holds log_lock). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	if (log_clock)
		return log_clock();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/**
 * take_token() - Refill @s's bucket for the time passed and take one
 * token (caller holds log_lock). Registers the site on first use.
 * Return: true if the message may be emitted.
 */
static bool take_token(struct homa_log_site *s, uint64_t now)
{
	if (!s->registered) {
		s->registered = true;
		s->tokens = log_burst;
		s->last_ns = now;
		s->next = log_sites;
		log_sites = s;
	}
	if (!log_burst)
		return true;
	if (now > s->last_ns) {
		s->tokens += (double)(now - s->last_ns) * log_per_sec / 1e9;
		if (s->tokens > log_burst)
			s->tokens = log_burst;
	}
	s->last_ns = now;
	if (s->tokens < 1.0)
		return false;
	s->tokens -= 1.0;
	return true;
}

/** deliver() - Hand @msg to the sink or stderr (caller holds log_lock). */
static void deliver(int level, const char *file, int line, const char *msg)
{
	const char *base = file ? strrchr(file, '/') : NULL;
	char out[LOG_MSG_MAX + 128];

	if (log_sink) {
		log_sink(log_sink_arg, level, file, line, msg);
		return;
	}
	snprintf(out, sizeof(out), "homa %s: %s (%s:%d)\n", homa_log_level_name(level),
		 msg, base ? base + 1 : (file ? file : "?"), line);
	fputs(out, stderr);
}

/**
 * admit_locked() - homa_log_admit() with log_lock held. Return: as it.
 */
static bool admit_locked(struct homa_log_site *site, int level, const char *file, int line)
{
	site->file = file;
	site->line = line;
	site->level = level;
	if (take_token(site, now_ns()))
		return true;
	site->suppressed++;
	return false;
}

/** homa_log_admit() - See obs.h. */
bool homa_log_admit(struct homa_log_site *site, int level, const char *file, int line)
{
	bool ok;

	if (!site)
		return false;
	pthread_mutex_lock(&log_lock);
	ok = admit_locked(site, level, file, line);
	pthread_mutex_unlock(&log_lock);
	return ok;
}

/**
 * emit_locked() - Format @fmt with @ap, add the suppressed count, deliver
 * (caller holds log_lock and has admitted the message).
 */
static void emit_locked(struct homa_log_site *site, int level, const char *file, int line,
			const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX + 64];
	size_t n;

	vsnprintf(msg, LOG_MSG_MAX + 1, fmt, ap);
	n = strlen(msg);
	if (site->suppressed)
		snprintf(msg + n, sizeof(msg) - n, " (%llu similar messages suppressed)",
			 (unsigned long long)site->suppressed);
	site->suppressed = 0;
	deliver(level, file, line, msg);
}

/** homa_log_emit_admitted() - See obs.h. */
void homa_log_emit_admitted(struct homa_log_site *site, int level, const char *file,
			    int line, const char *fmt, ...)
{
	va_list ap;

	if (!site || !fmt)
		return;
	pthread_mutex_lock(&log_lock);
	va_start(ap, fmt);
	emit_locked(site, level, file, line, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&log_lock);
}

/** homa_log_emit() - See obs.h. */
void homa_log_emit(struct homa_log_site *site, int level, const char *file,
		   int line, const char *fmt, ...)
{
	va_list ap;

	if (!site || !fmt)
		return;
	pthread_mutex_lock(&log_lock);
	if (admit_locked(site, level, file, line)) {
		va_start(ap, fmt);
		emit_locked(site, level, file, line, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&log_lock);
}

/** homa_log_report_suppressed() - See obs.h. */
int homa_log_report_suppressed(void)
{
	struct homa_log_site *s;
	char msg[96];
	uint64_t now;
	int reports = 0;

	pthread_mutex_lock(&log_lock);
	now = now_ns();
	for (s = log_sites; s; s = s->next) {
		if (!s->suppressed || !take_token(s, now))
			continue;
		snprintf(msg, sizeof(msg), "%llu similar messages suppressed",
			 (unsigned long long)s->suppressed);
		s->suppressed = 0;
		deliver(s->level, s->file, s->line, msg);
		reports++;
	}
	pthread_mutex_unlock(&log_lock);
	return reports;
}
