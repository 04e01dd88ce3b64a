/* SPDX-License-Identifier: MIT */
/**
 * @file stats.c
 * Names of drop reasons (stable: they appear in metrics).
 */
#include "homa/stats.h"

/** homa_drop_reason_name() - See stats.h. */
const char *homa_drop_reason_name(int reason)
{
	static const char *const names[HOMA_DROP_REASONS] = {
		"truncated", "bad_type", "bad_field", "bad_offset", "too_long",
		"length_changed", "unknown_rpc", "wrong_port", "not_server",
		"memory", "verify", "completed", "peer_limit", "partial_limit"};

	if (reason < 0 || reason >= HOMA_DROP_REASONS)
		return "unknown";
	return names[reason];
}
