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

/** th_take_msg() - See harness.h. */
bool th_take_msg(homa_engine *e, int type, uint32_t seed, uint64_t id, size_t len)
{
	struct homa_event ev;
	const char *bad = NULL;

	if (homa_engine_next_event(e, &ev) != 1) {
		fprintf(stderr, "th_take_msg: no event\n");
		return false;
	}
	if ((int)ev.type != type)
		bad = "type";
	else if (id && ev.id != id)
		bad = "id";
	else if (!ev.msg)
		bad = "message";
	else if (len != TH_ANY_LEN && homa_msg_length(ev.msg) != len)
		bad = "length";
	else if (!th_check_pattern(ev.msg, seed))
		bad = "payload";
	if (bad)
		fprintf(stderr, "th_take_msg: %s differs (type %d, id %llu, error %d)\n", bad,
			(int)ev.type, (unsigned long long)ev.id, ev.error);
	if (ev.msg)
		homa_engine_msg_release(e, ev.msg);
	return !bad;
}

/** th_echo_rpc() - See harness.h. */
bool th_echo_rpc(struct th_pair *p, uint32_t seed)
{
	uint8_t buf[100];
	struct homa_iov iov = {buf, sizeof(buf)};
	struct homa_event ev;
	uint64_t id = 0;
	bool ok;

	th_pattern(buf, sizeof(buf), seed);
	if (homa_engine_send_request(p->e[0], &p->addr[1], p->port[1], &iov, 1, seed, p->now, &id))
		return false;
	th_pair_run(p, 50000000);
	if (homa_engine_next_event(p->e[0], &ev) != 1)
		return false;
	ok = ev.type == HOMA_EV_RESPONSE && ev.id == id && th_check_pattern(ev.msg, seed);
	if (ev.msg)
		homa_engine_msg_release(p->e[0], ev.msg);
	return ok;
}

/** th_take() - See harness.h. */
int th_take(homa_engine *e, uint64_t now, struct th_pkt *p)
{
	p->len = homa_engine_output(e, now, p->buf, sizeof(p->buf), &p->tx);
	p->ok = p->len > 0 && homa_wire_decode(p->buf, (size_t)p->len, &p->k) == 0;
	return p->len;
}

/** th_drain_count() - See harness.h. */
int th_drain_count(homa_engine *e, uint64_t now, int type)
{
	static struct th_pkt p;
	int n = 0;

	while (th_take(e, now, &p) > 0)
		n += p.ok && p.k.type == type;
	return n;
}

/** th_data_in() - See harness.h. */
int th_data_in(homa_engine *e, const homa_addr *src, const struct th_data *d, uint64_t now)
{
	uint8_t buf[2048];
	struct homa_pkt k;
	int len;

	memset(&k, 0, sizeof(k));
	k.type = HOMA_PKT_DATA;
	k.sport = d->sport;
	k.dport = d->dport;
	k.sender_id = d->sender_id;
	k.u.data.message_length = d->length;
	k.u.data.incoming = d->incoming;
	k.u.data.offset = d->offset;
	k.u.data.payload = d->payload;
	k.u.data.payload_len = d->payload_len;
	len = homa_wire_encode(&k, buf, sizeof(buf));
	if (len <= 0) {
		fprintf(stderr, "th_data_in: DATA of %u bytes does not encode\n", d->payload_len);
		abort();
	}
	return homa_engine_input(e, src, buf, (size_t)len, now);
}

/** th_describe() - See harness.h. */
char *th_describe(const uint8_t *buf, size_t len, uint8_t prio, bool with_id,
		  char *out, size_t cap)
{
	struct homa_pkt k;
	int n;

	if (homa_wire_decode(buf, len, &k)) {
		snprintf(out, cap, "UNDECODABLE p%u", prio);
		return out;
	}
	n = snprintf(out, cap, "%s", homa_wire_type_name(k.type));
	if (with_id)
		n += snprintf(out + n, cap - n, "#%llu", (unsigned long long)k.sender_id);
	if (k.type == HOMA_PKT_DATA)
		n += snprintf(out + n, cap - n, " %u@%u%s%s", k.u.data.payload_len,
			      k.u.data.offset, k.u.data.retransmit ? " rx" : "",
			      (k.ext & HOMA_EXT_INCAST) ? " incast" : "");
	else if (k.type == HOMA_PKT_GRANT)
		n += snprintf(out + n, cap - n, " %u g%u", k.u.grant.offset, k.u.grant.priority);
	else if (k.type == HOMA_PKT_RESEND)
		n += snprintf(out + n, cap - n, " %u@%u g%u", k.u.resend.length,
			      k.u.resend.offset, k.u.resend.priority);
	snprintf(out + n, cap - n, " p%u", prio);
	return out;
}

/** th_net_init() - See harness.h. */
void th_net_init(struct th_net *net, const char *names, const struct homa_settings *s)
{
	int i;

	memset(net, 0, sizeof(*net));
	net->n = (int)strlen(names);
	if (net->n > TH_MAX_NODES)
		abort();
	for (i = 0; i < net->n; i++) {
		net->name[i] = names[i];
		net->addr[i] = homa_addr_ipv4(0x0a000001 + (uint32_t)i);
		net->port[i] = (uint16_t)(4000 + i);
		if (homa_engine_new(&net->e[i], s, &net->addr[i], net->port[i], NULL, 0))
			abort();
	}
	net->logging = true;
}

/** th_net_free() - See harness.h. */
void th_net_free(struct th_net *net)
{
	int i;

	for (i = 0; i < net->n; i++)
		homa_engine_free(net->e[i]);
}

/** th_net_node() - See harness.h. */
int th_net_node(const struct th_net *net, char c)
{
	int i;

	for (i = 0; i < net->n; i++)
		if (net->name[i] == c)
			return i;
	abort();
}

/** net_dest() - Node whose address and port a packet goes to, or -1. */
static int net_dest(const struct th_net *net, const struct homa_tx *tx)
{
	int i;

	for (i = 0; i < net->n; i++)
		if (homa_addr_equal(&net->addr[i], &tx->dst) && net->port[i] == tx->dport)
			return i;
	return -1;
}

/** net_log() - Append one packet to the net's log. */
static void net_log(struct th_net *net, int from, int to, const uint8_t *buf, size_t len,
		    uint8_t prio, bool dropped)
{
	char one[200], desc[160];
	int n;

	if (!net->logging)
		return;
	th_describe(buf, len, prio, net->log_ids, desc, sizeof(desc));
	n = snprintf(one, sizeof(one), "%s%c>%c %s%s", net->loglen ? "; " : "", net->name[from],
		     to >= 0 ? net->name[to] : '?', desc, dropped ? " DROPPED" : "");
	if (net->loglen + (size_t)n < sizeof(net->log)) {
		memcpy(net->log + net->loglen, one, (size_t)n + 1);
		net->loglen += (size_t)n;
	}
}

/** net_echo() - Echo servers answer every request event with its own bytes. */
static void net_echo(struct th_net *net)
{
	struct homa_event ev;
	int i;

	for (i = 0; i < net->n; i++) {
		while (net->echo[i] && homa_engine_next_event(net->e[i], &ev)) {
			size_t len = homa_msg_length(ev.msg);
			uint8_t *copy = malloc(len);
			struct homa_iov iov = {copy, len};

			homa_msg_copy(ev.msg, 0, copy, len);
			if (ev.type == HOMA_EV_REQUEST)
				homa_engine_send_reply(net->e[i], ev.id, &iov, 1, net->now);
			homa_engine_msg_release(net->e[i], ev.msg);
			free(copy);
		}
	}
}

/** th_net_move() - See harness.h. */
int th_net_move(struct th_net *net, int from, int max)
{
	static uint8_t buf[70000];
	int moved = 0;

	while (moved < max) {
		struct homa_tx tx;
		int len = homa_engine_output(net->e[from], net->now, buf, sizeof(buf), &tx);
		bool dropped;
		int to;

		if (len <= 0)
			break;
		moved++;
		to = net_dest(net, &tx);
		dropped = to < 0 || (net->filter &&
				     net->filter(net->filter_ctx, from, buf, (size_t)len, net->npkts));
		net->npkts++;
		net_log(net, from, to, buf, (size_t)len, tx.priority, dropped);
		if (dropped)
			continue;
		homa_engine_input(net->e[to], &net->addr[from], buf, (size_t)len, net->now);
		if (net->observer)
			net->observer(net->observer_ctx, from, to, buf, (size_t)len);
	}
	return moved;
}

/** th_net_run() - See harness.h. */
uint64_t th_net_run(struct th_net *net, uint64_t max_ns)
{
	uint64_t end = net->now + max_ns, moved = 0;
	int i;

	for (;;) {
		uint64_t next = UINT64_MAX, more = 1;

		while (more) {
			more = 0;
			for (i = 0; i < net->n; i++)
				more += (uint64_t)th_net_move(net, i, 1);
			net_echo(net);
			moved += more;
		}
		for (i = 0; i < net->n; i++) {
			uint64_t d = homa_engine_next_deadline(net->e[i]);

			if (d < next)
				next = d;
		}
		if (next == UINT64_MAX || next > end)
			break;
		if (next > net->now)
			net->now = next;
		for (i = 0; i < net->n; i++)
			homa_engine_on_timer(net->e[i], net->now);
	}
	return moved;
}

/** th_net_clear_log() - See harness.h. */
void th_net_clear_log(struct th_net *net)
{
	net->log[0] = 0;
	net->loglen = 0;
}

/** th_count() - See harness.h. */
int th_count(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	int c = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		c++;
		hay += n;
	}
	return c;
}
