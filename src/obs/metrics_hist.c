/* SPDX-License-Identifier: MIT */
/**
 * @file metrics_hist.c
 * The two log2 histograms of struct homa_stats as Prometheus histograms.
 *
 * Engine bucket i counts integer values in [2^i, 2^(i+1)) (bucket 0 also
 * holds 0). Prometheus buckets are cumulative and inclusive, so bucket i
 * becomes le = 2^(i+1) - 1, exact for integers. The last engine bucket
 * also collects clamped outliers, so it is only counted in le="+Inf".
 * The engine keeps no sum; _sum is approximated by taking each value at
 * its bucket's midpoint (1.5 * 2^i), so it is within a factor of 1.5 of
 * the true sum (documented in docs/OBSERVABILITY.md).
 */
#include <inttypes.h>
#include <stdio.h>

#include "metrics_int.h"

/** One histogram: where it lives and how its unit is printed. */
struct hist_def {
	const char *name;
	const char *help;
	size_t offset;     /**< of uint64_t[HOMA_HIST_BUCKETS] */
	bool ns_to_seconds; /**< values are ns, printed as seconds */
};

static const struct hist_def hists[] = {
	{"homa_rx_message_size_bytes",
	 "Lengths of completed incoming messages, bytes (log2 buckets; _sum approximate).",
	 offsetof(struct homa_stats, rx_msg_size_hist), false},
	{"homa_client_rpc_latency_seconds",
	 "Client RPC round-trip times, seconds (log2 buckets of ns; _sum approximate).",
	 offsetof(struct homa_stats, rpc_latency_hist), true},
};

/** format_bound() - Write integer bound @v (ns printed as seconds if @secs). */
static void format_bound(char *out, size_t cap, uint64_t v, bool secs)
{
	if (secs)
		snprintf(out, cap, "%" PRIu64 ".%09" PRIu64, v / 1000000000u,
			 v % 1000000000u);
	else
		snprintf(out, cap, "%" PRIu64, v);
}

/** write_bucket() - One _bucket sample with labels endpoint and le. */
static void write_bucket(struct homa_textbuf *tb, const char *name,
			 const char *endpoint, const char *le, uint64_t count)
{
	homa_textbuf_printf(tb, "%s_bucket", name);
	homa_metrics_labels(tb, endpoint, "le", le);
	homa_textbuf_printf(tb, " %" PRIu64 "\n", count);
}

/** write_one() - All series of histogram @h for one source. */
static void write_one(struct homa_textbuf *tb, const struct hist_def *h,
		      const struct homa_metrics_source *s)
{
	const uint64_t *b = (const uint64_t *)((const char *)s->stats + h->offset);
	uint64_t cum = 0;
	double sum = 0;
	char le[32];
	int i;

	for (i = 0; i < HOMA_HIST_BUCKETS; i++) {
		cum += b[i];
		sum += (double)b[i] * 1.5 * (double)((uint64_t)1 << i);
		if (i == HOMA_HIST_BUCKETS - 1)
			break;
		format_bound(le, sizeof(le), ((uint64_t)2 << i) - 1, h->ns_to_seconds);
		write_bucket(tb, h->name, s->endpoint, le, cum);
	}
	write_bucket(tb, h->name, s->endpoint, "+Inf", cum);
	if (h->ns_to_seconds)
		sum /= 1e9;
	homa_textbuf_printf(tb, "%s_sum", h->name);
	homa_metrics_labels(tb, s->endpoint, NULL, NULL);
	homa_textbuf_printf(tb, " %.17g\n", sum);
	homa_textbuf_printf(tb, "%s_count", h->name);
	homa_metrics_labels(tb, s->endpoint, NULL, NULL);
	homa_textbuf_printf(tb, " %" PRIu64 "\n", cum);
}

/** homa_metrics_histograms() - See metrics_int.h. */
void homa_metrics_histograms(struct homa_textbuf *tb,
			     const struct homa_metrics_source *src, size_t nsrc)
{
	size_t i, j;

	for (i = 0; i < sizeof(hists) / sizeof(hists[0]); i++) {
		homa_metrics_header(tb, hists[i].name, hists[i].help, "histogram");
		for (j = 0; j < nsrc; j++)
			write_one(tb, &hists[i], &src[j]);
	}
}
