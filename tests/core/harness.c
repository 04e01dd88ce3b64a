/* SPDX-License-Identifier: MIT */
/**
 * @file harness.c
 * See harness.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "homa/wire.h"

/** th_pair_init() - See harness.h. */
void th_pair_init(struct th_pair *p, const struct homa_settings *s)
{
	int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < 2; i++) {
		p->addr[i] = homa_addr_ipv4(0x0a000001 + i);
		p->port[i] = (uint16_t)(4000 + i);
		if (homa_engine_new(&p->e[i], s, &p->addr[i], p->port[i], NULL, 0))
			abort();
	}
	homa_engine_set_server(p->e[1], true);
	p->logging = true;
}

/** th_pair_free() - See harness.h. */
void th_pair_free(struct th_pair *p)
{
	homa_engine_free(p->e[0]);
	homa_engine_free(p->e[1]);
}

/** log_pkt() - Append a readable description of a packet to the log. */
static void log_pkt(struct th_pair *p, int from, const uint8_t *buf, size_t len,
		    uint8_t prio, bool dropped)
{
	struct homa_pkt k;
	char one[160];
	int n;

	if (!p->logging || homa_wire_decode(buf, len, &k))
		return;
	n = snprintf(one, sizeof(one), "%s%c>%c %s", p->loglen ? "; " : "",
		     from ? 's' : 'c', from ? 'c' : 's', homa_wire_type_name(k.type));
	if (k.type == HOMA_PKT_DATA)
		n += snprintf(one + n, sizeof(one) - n, " %u@%u%s", k.u.data.payload_len,
			      k.u.data.offset, k.u.data.retransmit ? " rx" : "");
	else if (k.type == HOMA_PKT_GRANT)
		n += snprintf(one + n, sizeof(one) - n, " %u", k.u.grant.offset);
	else if (k.type == HOMA_PKT_RESEND)
		n += snprintf(one + n, sizeof(one) - n, " %u@%u", k.u.resend.length, k.u.resend.offset);
	n += snprintf(one + n, sizeof(one) - n, " p%u%s", prio, dropped ? " DROPPED" : "");
	if (p->loglen + (size_t)n < sizeof(p->log)) {
		memcpy(p->log + p->loglen, one, (size_t)n + 1);
		p->loglen += (size_t)n;
	}
}

/** answer() - Echo server: reply to every request event with its own bytes. */
static void answer(struct th_pair *p)
{
	struct homa_event ev;
	homa_engine *s = p->e[1];

	while (p->echo && homa_engine_next_event(s, &ev)) {
		size_t len = homa_msg_length(ev.msg);
		uint8_t *copy = malloc(len);
		struct homa_iov iov = {copy, len};

		homa_msg_copy(ev.msg, 0, copy, len);
		homa_engine_send_reply(s, ev.id, &iov, 1, p->now);
		homa_engine_msg_release(s, ev.msg);
		free(copy);
	}
}

/** pump() - Move every packet either engine wants to send now. Return: packets moved. */
static uint64_t pump(struct th_pair *p)
{
	static uint8_t buf[70000];
	uint64_t moved = 0;
	bool any = true;
	int i;

	while (any) {
		any = false;
		for (i = 0; i < 2; i++) {
			struct homa_tx tx;
			int len = homa_engine_output(p->e[i], p->now, buf, sizeof(buf), &tx);
			bool dropped;

			if (len <= 0)
				continue;
			any = true;
			moved++;
			dropped = p->filter && p->filter(p->filter_ctx, i, buf, (size_t)len, p->npkts);
			p->npkts++;
			log_pkt(p, i, buf, (size_t)len, tx.priority, dropped);
			if (!dropped)
				homa_engine_input(p->e[1 - i], &p->addr[i], buf, (size_t)len, p->now);
		}
		answer(p);
	}
	return moved;
}

/** th_pair_run() - See harness.h. */
uint64_t th_pair_run(struct th_pair *p, uint64_t max_ns)
{
	uint64_t end = p->now + max_ns, moved = 0;

	for (;;) {
		uint64_t d0, d1, next;

		moved += pump(p);
		d0 = homa_engine_next_deadline(p->e[0]);
		d1 = homa_engine_next_deadline(p->e[1]);
		next = d0 < d1 ? d0 : d1;
		if (next == UINT64_MAX || next > end)
			break;
		if (next > p->now)
			p->now = next;
		homa_engine_on_timer(p->e[0], p->now);
		homa_engine_on_timer(p->e[1], p->now);
	}
	return moved;
}

/** th_pattern() - See harness.h. */
void th_pattern(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

/** th_check_pattern() - See harness.h. */
bool th_check_pattern(const homa_msg *m, uint32_t seed)
{
	size_t len = homa_msg_length(m);
	uint8_t *want = malloc(len), *got = malloc(len);
	bool ok;

	th_pattern(want, len, seed);
	ok = homa_msg_copy(m, 0, got, len) == len && memcmp(want, got, len) == 0;
	free(want);
	free(got);
	return ok;
}
