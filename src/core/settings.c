/* SPDX-License-Identifier: MIT */
/**
 * @file settings.c
 * Default values and validation of struct homa_settings.
 */
#include <string.h>

#include "homa/errors.h"
#include "homa/settings.h"
#include "homa/wire.h"
#include "internal.h"

/** homa_settings_default() - See settings.h. */
void homa_settings_default(struct homa_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->link_mbps = 25000;
	s->mtu = 1500 - 28;
	s->unsched_bytes = 40000;
	s->max_incoming = 400000;
	s->max_overcommit = 8;
	s->grant_fifo_fraction = 50;
	s->fifo_grant_increment = 0; /* one window: unsched_bytes */
	s->pacer_fifo_fraction = 50;
	s->max_nic_queue_ns = 5000;
	s->num_priorities = 8;
	s->num_unsched_priorities = 4;
	s->unsched_cutoffs[7] = 200;
	s->unsched_cutoffs[6] = 2800;
	s->unsched_cutoffs[5] = 15000;
	s->unsched_cutoffs[4] = 0xffffffffu;
	s->dynamic_cutoffs = true;
	s->tick_ns = 1000000;
	s->resend_ticks = 5;
	s->resend_interval = 5;
	s->timeout_ticks = 100;
	s->request_ack_ticks = 2;
	s->max_message = 64u << 20;
	s->max_rx_buffered = 256u << 20;
	s->max_tx_buffered = 256u << 20;
	s->max_rpcs = 65536;
	s->start_msg = false;
	s->incast_threshold = 8;
	s->incast_unsched_bytes = 1400;
	s->max_control_queue = 4096;
	s->max_pacer_slack_ns = 1000000;
	s->grant_step = 0; /* a third of unsched_bytes, whole packets */
	s->grant_silence_rtts = 4;
	s->compat = HOMA_COMPAT_AUTO;
	s->max_restarts = 3;
	s->max_done_rpcs = 1u << 18;
	s->max_peer_partial_msgs = 64;
	s->max_partial_msgs = 1024;
	s->max_stranger_partial_msgs = HOMA_STRANGER_PARTIAL_MSGS;
}

/* A larger size must always mean more fields: no tail padding to hide one in. */
_Static_assert(sizeof(struct homa_settings) ==
		       offsetof(struct homa_settings, pad2) + sizeof(uint32_t),
	       "struct homa_settings has tail padding: pad it explicitly, or update "
	       "this check to the end of its last field when appending one");

/** homa_settings_import() - See settings.h. */
int homa_settings_import(struct homa_settings *dst, const struct homa_settings *src)
{
	struct homa_settings s;

	if (!dst || !src || src->size < HOMA_SETTINGS_SIZE_MIN || src->size > sizeof(s))
		return HOMA_EINVAL;
	homa_settings_default(&s);
	memcpy(&s, src, src->size);
	s.size = sizeof(s);
	*dst = s;
	return 0;
}

/** check_cutoffs() - Cutoffs of used unscheduled levels must grow toward low priority. */
static int check_cutoffs(const struct homa_settings *s)
{
	uint32_t lowest = s->num_priorities - s->num_unsched_priorities;
	uint32_t p;

	for (p = lowest + 1; p < s->num_priorities; p++)
		if (s->unsched_cutoffs[p] > s->unsched_cutoffs[p - 1])
			return -1;
	return s->unsched_cutoffs[lowest] == 0xffffffffu ? 0 : -1;
}

/** homa_settings_validate() - See settings.h. */
int homa_settings_validate(const struct homa_settings *given, const char **why)
{
	struct homa_settings full, *s = &full;
	const char *bad = NULL;

	if (!given)
		bad = "settings pointer is NULL";
	else if (homa_settings_import(&full, given))
		bad = "size (sizeof(struct homa_settings) from homa_settings_default())";
	else if (s->link_mbps == 0)
		bad = "link_mbps";
	else if (s->mtu < HOMA_DATA_HDR_LEN + 64 || s->mtu > 65000)
		bad = "mtu";
	else if (s->unsched_bytes == 0)
		bad = "unsched_bytes";
	else if (s->max_incoming < s->mtu)
		bad = "max_incoming";
	else if (s->max_overcommit == 0 || s->max_overcommit > 64)
		bad = "max_overcommit";
	else if (s->grant_fifo_fraction > 500 || s->pacer_fifo_fraction > 500)
		bad = "fifo_fraction (per mille, at most 500)";
	else if (s->num_priorities < 1 || s->num_priorities > HOMA_MAX_PRIORITIES)
		bad = "num_priorities";
	else if (s->num_unsched_priorities < 1 ||
		 s->num_unsched_priorities > s->num_priorities)
		bad = "num_unsched_priorities";
	else if (check_cutoffs(s))
		bad = "unsched_cutoffs (must shrink toward high priority; lowest unscheduled level 0xffffffff)";
	else if (s->tick_ns == 0)
		bad = "tick_ns";
	else if (s->resend_ticks == 0 || s->resend_interval == 0)
		bad = "resend_ticks/resend_interval";
	else if (s->timeout_ticks <= s->resend_ticks)
		bad = "timeout_ticks (must exceed resend_ticks)";
	else if (s->request_ack_ticks == 0)
		bad = "request_ack_ticks";
	else if (s->max_message == 0 || s->max_message > 0xffffffffu)
		bad = "max_message (1 .. 2^32-1)";
	else if (s->max_rx_buffered < 2ull * s->mtu || s->max_tx_buffered < s->mtu)
		bad = "max_rx_buffered/max_tx_buffered";
	else if (s->max_rpcs == 0)
		bad = "max_rpcs";
	else if (s->max_control_queue < 16)
		bad = "max_control_queue";
	else if (s->grant_silence_rtts > 1000000)
		bad = "grant_silence_rtts (at most 1000000)";
	else if (s->compat > HOMA_COMPAT_OFF)
		bad = "compat (enum homa_compat)";
	else if (s->max_restarts > 1000)
		bad = "max_restarts (at most 1000)";
	else if (s->max_done_rpcs && s->max_done_rpcs < HOMA_DONE_MIN)
		bad = "max_done_rpcs (0 or at least 4096)";
	else if (s->max_partial_msgs == 0 || s->max_peer_partial_msgs == 0 ||
		 s->max_peer_partial_msgs > s->max_partial_msgs)
		bad = "max_peer_partial_msgs/max_partial_msgs (1 .. max_partial_msgs)";
	else if (s->max_stranger_partial_msgs == 0 ||
		 s->max_stranger_partial_msgs > s->max_partial_msgs)
		bad = "max_stranger_partial_msgs (1 .. max_partial_msgs)";
	if (why)
		*why = bad;
	return bad ? HOMA_EINVAL : 0;
}
