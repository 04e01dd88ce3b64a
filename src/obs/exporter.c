/* SPDX-License-Identifier: MIT */
/**
 * @file exporter.c
 * Process-wide registry of /metrics listeners: endpoints that ask for the
 * same address and port share one listener and appear in one scrape,
 * each with its endpoint label. One mutex guards the registry and is held
 * during a scrape, so leaving waits for a scrape in progress.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "homa/obs.h"

/** One listener and the endpoints it serves. */
struct exporter {
	struct exporter *next;
	char addr[64];
	uint16_t port;           /**< bound port */
	homa_http *http;
	struct homa_exporter_member *members;
	size_t nmembers;
};

/** One endpoint served by an exporter. */
struct homa_exporter_member {
	struct homa_exporter_member *next;
	struct exporter *ex;
	char *endpoint;
	homa_exporter_snapshot_fn fn;
	void *arg;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct exporter *exporters;

/** Per-scrape scratch, allocated for the number of members. */
struct scrape {
	struct homa_metrics_source *src;
	struct homa_stats *stats;
	struct homa_metric_value *extra;
	size_t nsrc, nextra;
};

/** snapshot_member() - Add member @m's snapshot to @sc. */
static void snapshot_member(struct scrape *sc, struct homa_exporter_member *m)
{
	struct homa_metric_value *ex = sc->extra + sc->nextra;
	size_t n = 0, i;

	memset(&sc->stats[sc->nsrc], 0, sizeof(sc->stats[0]));
	if (m->fn(m->arg, &sc->stats[sc->nsrc], ex, &n))
		return;
	if (n > HOMA_EXPORTER_MAX_EXTRA)
		n = HOMA_EXPORTER_MAX_EXTRA;
	for (i = 0; i < n; i++)
		ex[i].endpoint = m->endpoint;
	sc->src[sc->nsrc].endpoint = m->endpoint;
	sc->src[sc->nsrc].stats = &sc->stats[sc->nsrc];
	sc->nsrc++;
	sc->nextra += n;
}

/**
 * exporter_fill() - The listener's callback: snapshot every member and
 * render them together. Return: as homa_metrics_render(), or HOMA_ENOMEM.
 */
static int exporter_fill(void *arg, char *buf, size_t cap)
{
	struct exporter *ex = arg;
	struct homa_exporter_member *m;
	struct scrape sc = {0};
	size_t n;
	int r = HOMA_ENOMEM;

	pthread_mutex_lock(&registry_lock);
	n = ex->nmembers ? ex->nmembers : 1;
	sc.src = calloc(n, sizeof(*sc.src));
	sc.stats = calloc(n, sizeof(*sc.stats));
	sc.extra = calloc(n * HOMA_EXPORTER_MAX_EXTRA, sizeof(*sc.extra));
	if (sc.src && sc.stats && sc.extra) {
		for (m = ex->members; m; m = m->next)
			snapshot_member(&sc, m);
		r = homa_metrics_render(sc.src, sc.nsrc, sc.extra, sc.nextra, buf, cap, NULL);
	}
	pthread_mutex_unlock(&registry_lock);
	free(sc.src);
	free(sc.stats);
	free(sc.extra);
	return r;
}

/** find_shared() - The exporter on @addr:@port (port non-zero), or NULL. */
static struct exporter *find_shared(const char *addr, uint16_t port)
{
	struct exporter *ex;

	if (!port)
		return NULL;
	for (ex = exporters; ex; ex = ex->next)
		if (ex->port == port && !strcmp(ex->addr, addr))
			return ex;
	return NULL;
}

/** new_exporter() - Start a listener for @opts. Return: 0 or an error. */
static int new_exporter(const struct homa_http_opts *opts, const char *addr,
			struct exporter **out)
{
	struct exporter *ex = calloc(1, sizeof(*ex));
	int err;

	if (!ex)
		return HOMA_ENOMEM;
	strncpy(ex->addr, addr, sizeof(ex->addr) - 1);
	err = homa_http_start(opts, exporter_fill, ex, &ex->http);
	if (err) {
		free(ex);
		return err;
	}
	ex->port = homa_http_port(ex->http);
	*out = ex;
	return 0;
}

/** homa_exporter_join() - See obs.h. */
int homa_exporter_join(const struct homa_http_opts *opts, const char *endpoint,
		       homa_exporter_snapshot_fn fn, void *arg,
		       homa_exporter_member **out)
{
	const char *addr = opts && opts->bind_addr ? opts->bind_addr : "127.0.0.1";
	struct homa_exporter_member *m;
	struct exporter *ex;
	int err = 0;

	if (!fn || !endpoint || !out)
		return HOMA_EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->endpoint = strdup(endpoint))) {
		free(m);
		return HOMA_ENOMEM;
	}
	m->fn = fn;
	m->arg = arg;
	pthread_mutex_lock(&registry_lock);
	ex = find_shared(addr, opts ? opts->port : 0);
	if (!ex && !(err = new_exporter(opts, addr, &ex))) {
		ex->next = exporters;
		exporters = ex;
	}
	if (!err) {
		m->ex = ex;
		m->next = ex->members;
		ex->members = m;
		ex->nmembers++;
	}
	pthread_mutex_unlock(&registry_lock);
	if (err) {
		free(m->endpoint);
		free(m);
		return err;
	}
	*out = m;
	return 0;
}

/** homa_exporter_port() - See obs.h. */
uint16_t homa_exporter_port(const homa_exporter_member *m)
{
	return m ? homa_http_port(m->ex->http) : 0;
}

/** unlink_member() - Remove @m from its exporter; unlink the exporter if now empty. */
static struct exporter *unlink_member(struct homa_exporter_member *m)
{
	struct exporter *ex = m->ex, **pe;
	struct homa_exporter_member **pm;

	for (pm = &ex->members; *pm; pm = &(*pm)->next)
		if (*pm == m) {
			*pm = m->next;
			break;
		}
	if (--ex->nmembers)
		return NULL;
	for (pe = &exporters; *pe; pe = &(*pe)->next)
		if (*pe == ex) {
			*pe = ex->next;
			break;
		}
	return ex;
}

/** homa_exporter_leave() - See obs.h. The listener is stopped outside the lock. */
void homa_exporter_leave(homa_exporter_member *m)
{
	struct exporter *empty;

	if (!m)
		return;
	pthread_mutex_lock(&registry_lock);
	empty = unlink_member(m);
	pthread_mutex_unlock(&registry_lock);
	if (empty) {
		homa_http_stop(empty->http);
		free(empty);
	}
	free(m->endpoint);
	free(m);
}
