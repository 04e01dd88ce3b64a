/* SPDX-License-Identifier: MIT */
/**
 * @file stat_parse.c
 * Exposition text to samples, lookups, and the state file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat.h"

/** add_sample() - Append a copy of @key (@klen bytes). Return: 0 or -1. */
static int add_sample(struct stat_set *set, const char *key, size_t klen, double v, int kind)
{
	struct stat_sample *s;

	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 256;

		s = realloc(set->s, cap * sizeof(*s));
		if (!s)
			return -1;
		set->s = s;
		set->cap = cap;
	}
	s = &set->s[set->n];
	s->key = strndup(key, klen);
	if (!s->key)
		return -1;
	s->value = v;
	s->kind = kind;
	set->n++;
	return 0;
}

/** kind_of() - Kind of series @name given the last TYPE line (@fam, @type). */
static int kind_of(const char *name, size_t n, const char *fam, const char *type)
{
	size_t fl = strlen(fam);

	if (!fl || n < fl || strncmp(name, fam, fl))
		return STAT_UNTYPED;
	if (!strcmp(type, "counter"))
		return STAT_COUNTER;
	if (!strcmp(type, "gauge"))
		return STAT_GAUGE;
	if (!strcmp(type, "histogram") || !strcmp(type, "summary"))
		return n - fl == 7 && !strncmp(name + fl, "_bucket", 7) ? STAT_BUCKET : STAT_HISTSUM;
	return STAT_UNTYPED;
}

/** key_len() - Length of "name{labels}" at @l (labels may hold quoted spaces). */
static size_t key_len(const char *l)
{
	size_t i = strcspn(l, "{ \t");
	int quoted = 0;

	if (l[i] != '{')
		return i;
	for (; l[i]; i++) {
		if (quoted && l[i] == '\\' && l[i + 1])
			i++;
		else if (l[i] == '"')
			quoted = !quoted;
		else if (!quoted && l[i] == '}')
			return i + 1;
	}
	return 0;
}

/** stat_parse() - See stat.h. */
size_t stat_parse(const char *text, struct stat_set *out)
{
	char fam[256] = "", type[32] = "";
	const char *l = text;
	size_t added = 0;

	while (l && *l) {
		const char *nl = strchr(l, '\n');
		size_t k;
		char *end;
		double v;

		if (!strncmp(l, "# TYPE ", 7)) {
			if (sscanf(l + 7, "%255s %31s", fam, type) != 2)
				fam[0] = '\0';
		} else if (*l != '#' && *l != '\n' && (k = key_len(l)) > 0) {
			v = strtod(l + k, &end);
			if (end != l + k && add_sample(out, l, k, v,
						       kind_of(l, strcspn(l, "{ \t"), fam, type)) == 0)
				added++;
		}
		l = nl ? nl + 1 : NULL;
	}
	return added;
}

/** stat_find() - See stat.h. A linear search. */
const struct stat_sample *stat_find(const struct stat_set *set, const char *key)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (!strcmp(set->s[i].key, key))
			return &set->s[i];
	return NULL;
}

/** stat_free() - See stat.h. */
void stat_free(struct stat_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		free(set->s[i].key);
	free(set->s);
	memset(set, 0, sizeof(*set));
}

/** stat_save() - See stat.h. Format: "homa-stat 1 <time_ns>", then "<kind> <value> <key>". */
int stat_save(const char *path, const struct stat_set *set)
{
	size_t len = strlen(path) + 8;
	char *tmp = malloc(len);
	FILE *f;
	size_t i;
	int bad;

	if (!tmp)
		return -1;
	snprintf(tmp, len, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		free(tmp);
		return -1;
	}
	fprintf(f, "homa-stat 1 %llu\n", (unsigned long long)set->time_ns);
	for (i = 0; i < set->n; i++)
		fprintf(f, "%d %.17g %s\n", set->s[i].kind, set->s[i].value, set->s[i].key);
	bad = ferror(f);
	bad |= fclose(f);
	if (!bad)
		bad = rename(tmp, path);
	if (bad)
		remove(tmp);
	free(tmp);
	return bad ? -1 : 0;
}

/** stat_load() - See stat.h. */
int stat_load(const char *path, struct stat_set *out)
{
	FILE *f = fopen(path, "r");
	unsigned long long t;
	char line[4096];

	memset(out, 0, sizeof(*out));
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "homa-stat 1 %llu", &t) != 1) {
		fclose(f);
		return -1;
	}
	out->time_ns = t;
	while (fgets(line, sizeof(line), f)) {
		int kind, off = 0;
		double v;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%d %lf %n", &kind, &v, &off) == 2 && off > 0 && line[off])
			add_sample(out, line + off, strlen(line + off), v, kind);
	}
	fclose(f);
	return 0;
}
