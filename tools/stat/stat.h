/* SPDX-License-Identifier: MIT */
/**
 * @file stat.h
 * homa-stat internals: fetch /metrics over HTTP, parse the exposition
 * text into samples, keep the previous samples in a state file, and
 * print what changed (library homa_stat_lib, used by the tool and tests).
 */
#ifndef HOMA_TOOLS_STAT_H
#define HOMA_TOOLS_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Kind of a sample, from its family's TYPE line. */
enum stat_kind {
	STAT_COUNTER = 0,
	STAT_GAUGE = 1,
	STAT_BUCKET = 2,  /**< a histogram's _bucket series */
	STAT_HISTSUM = 3, /**< a histogram's _sum or _count (behave like counters) */
	STAT_UNTYPED = 4,
};

/** One series: "name{labels}" and its value. */
struct stat_sample {
	char *key;
	double value;
	int kind;
};

/** All samples of one scrape (or of the state file), in text order. */
struct stat_set {
	struct stat_sample *s;
	size_t n, cap;
	uint64_t time_ns; /**< wall clock of the scrape */
};

/**
 * stat_fetch() - GET http://@host:@port@path and return the body.
 * @host: numeric address or name; @path: e.g. "/metrics".
 * @timeout_ms: for connect and each read.
 * @err: receives a message on failure (@errcap bytes).
 * Return: the body (malloc'd, NUL-terminated; caller frees), or NULL.
 */
char *stat_fetch(const char *host, const char *port, const char *path, int timeout_ms,
		 char *err, size_t errcap);

/**
 * stat_parse() - Parse exposition text into @out (appended). Comment
 * lines other than TYPE are skipped; so are lines that do not parse.
 * Return: number of samples added.
 */
size_t stat_parse(const char *text, struct stat_set *out);

/** stat_find() - The sample with key @key in @set, or NULL. */
const struct stat_sample *stat_find(const struct stat_set *set, const char *key);

/** stat_free() - Free the samples of @set (the struct itself is the caller's). */
void stat_free(struct stat_set *set);

/**
 * stat_save() - Write @set to @path (atomically: a temporary file, then rename).
 * Return: 0 or -1.
 */
int stat_save(const char *path, const struct stat_set *set);

/** stat_load() - Read a file written by stat_save(). Return: 0, or -1 (absent or bad). */
int stat_load(const char *path, struct stat_set *out);

/** What stat_report() prints. */
struct stat_report_opts {
	bool all;            /**< every series, not only changed ones */
	bool buckets;        /**< include histogram buckets */
	const char *filter;  /**< only keys containing this text (NULL: all) */
};

/**
 * stat_report() - Print the series of @cur that changed since @old (or,
 * if @old is NULL, every non-zero series): counters with their increase
 * and rate per second over @elapsed_s, gauges with value and change.
 * Return: number of lines printed.
 */
int stat_report(FILE *f, const struct stat_set *old, const struct stat_set *cur,
		double elapsed_s, const struct stat_report_opts *o);

#endif /* HOMA_TOOLS_STAT_H */
