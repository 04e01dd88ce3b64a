/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_pair.c
 * libFuzzer target: a real client engine and a real server engine
 * exchange RPCs over a network whose drops, duplicates, reordering and
 * delays the input chooses (fuzz_pair_net.c); the input also moves time,
 * starts and aborts RPCs, delays the server's replies and makes a third
 * host lie (fuzz_pair_liar.c). Then a perfect network runs until
 * everything settles.
 *
 * Invariants: every request the server application sees and every
 * response the client sees is bit-exact; each request is executed at most
 * once; each RPC ends exactly once (response, HOMA_ETIMEDOUT, or
 * HOMA_EABANDONED once the server has timed out an RPC), none after an abort; after settling both engines hold no RPC, and freeing
 * them returns every allocated byte.
 */
#include <stddef.h>
#include <string.h>

#include "fuzz_pair.h"
#include "fuzz_pattern.h"

/** Settle for at most this much simulated time. */
#define FP_SETTLE_NS (30ull * 1000000000ull)

/** pick() - Element of a menu chosen by the next input byte. */
#define pick(in, menu) ((menu)[fz_u8(in) % (sizeof(menu) / sizeof((menu)[0]))])

/** setup() - Two engines with input-chosen settings. Return: 0 or -1. */
static int setup(struct fp_world *w, const uint8_t *data, size_t size)
{
	static const uint32_t mtus[] = {300, 1472, 9000};
	static const uint32_t unsched[] = {1400, 10000, 40000};
	static const uint32_t timeouts[] = {10, 30};
	uint8_t flags;
	int i;

	memset(w, 0, offsetof(struct fp_world, buf));
	fp_net_init(w);
	fz_in_init(&w->in, data, size);
	flags = fz_u8(&w->in);
	homa_settings_default(&w->s);
	w->s.mtu = pick(&w->in, mtus);
	w->s.unsched_bytes = pick(&w->in, unsched);
	w->s.max_incoming = 60000;
	w->s.timeout_ticks = pick(&w->in, timeouts);
	w->s.start_msg = flags & 1;
	w->s.incast_threshold = flags & 2 ? 2 : 0;
	w->s.dynamic_cutoffs = flags & 4;
	w->now = 5000000000ull;
	w->liar = homa_addr_ipv4(0x0a000003);
	for (i = 0; i < 2; i++) {
		fz_alloc_init(&w->fa[i], &w->hooks[i]);
		w->addr[i] = homa_addr_ipv4(0x0a000001 + (uint32_t)i);
		w->port[i] = (uint16_t)(100 + i);
		if (homa_engine_new(&w->e[i], &w->s, &w->addr[i], w->port[i], &w->hooks[i], w->now))
			return -1;
	}
	homa_engine_set_server(w->e[1], true);
	return 0;
}

/**
 * scaled() - Length @len for MTU @mtu: lengths above 4000 bytes are cut in
 * proportion at small MTUs, so a long message is about as many packets at
 * MTU 300 as at 1472 (the engine's logic counts packets and grant windows,
 * and MTU 300 would otherwise make every long message 5x the work).
 */
static uint32_t scaled(uint32_t len, uint32_t mtu)
{
	return len > 4000 && mtu < 1472 ? 4000 + (uint32_t)((uint64_t)(len - 4000) * mtu / 1472) : len;
}

/** resp_len_of() - The length of the response to request @serial. */
static uint32_t resp_len_of(const struct fp_world *w, uint64_t serial, uint32_t req_len)
{
	static const uint32_t lens[] = {8, 100, 1400, 5000, 30000, 120000};

	return serial % 7 == 6 ? req_len : scaled(lens[serial % 6], w->s.mtu);
}

/** write_msg() - Message @len bytes: the serial in 8 bytes, then the @seed pattern. */
static void write_msg(uint8_t *b, uint64_t serial, uint64_t seed, uint32_t len)
{
	fz_pattern_fill(b, seed, 0, len);
	memcpy(b, &serial, sizeof(serial));
}

/**
 * msg_ok() - True if @m is write_msg(serial, seed, len): the serial is
 * copied out, the rest is checked in place, segment by segment.
 */
static bool msg_ok(const homa_msg *m, uint64_t serial, uint64_t seed, uint32_t len)
{
	uint64_t got;

	if (len < sizeof(got) || homa_msg_length(m) != len ||
	    homa_msg_copy(m, 0, &got, sizeof(got)) != sizeof(got))
		return false;
	return got == serial && fz_msg_matches_from(m, seed, sizeof(got), len);
}

/** op_send() - The client application starts an RPC. */
static void op_send(struct fp_world *w)
{
	static const uint32_t lens[] = {8, 9, 500, 1400, 1401, 4000, 20000, 65536, 150000};
	struct fp_req *r;
	struct homa_iov iov;
	uint64_t serial = (uint64_t)w->nreq;
	int err;

	if (w->nreq == FP_MAX_REQ)
		return;
	r = &w->req[w->nreq];
	r->len = scaled(pick(&w->in, lens), w->s.mtu);
	r->resp_len = resp_len_of(w, serial, r->len);
	write_msg(w->msg, serial, fp_req_seed(serial), r->len);
	iov.base = w->msg;
	iov.len = r->len;
	err = homa_engine_send_request(w->e[0], &w->addr[1], w->port[1], &iov, 1, serial,
				       w->now, &r->id);
	if (err == HOMA_EPEERDEAD || err == HOMA_EAGAIN)
		return;
	if (err)
		fz_fail("send_request failed with %d", err);
	w->nreq++;
}

/** reply() - The server application answers request @serial (handle @h). */
static void reply(struct fp_world *w, uint64_t h, uint64_t serial)
{
	struct homa_iov iov;
	uint32_t len = w->req[serial].resp_len;
	int err;

	write_msg(w->msg, serial, fp_resp_seed(serial), len);
	iov.base = w->msg;
	iov.len = len;
	err = homa_engine_send_reply(w->e[1], h, &iov, 1, w->now);
	if (err && err != HOMA_ENOTFOUND)
		fz_fail("send_reply failed with %d", err);
}

/** server_events() - Check each delivered request; execute it; reply now or later. */
static void server_events(struct fp_world *w, bool may_hold)
{
	struct homa_event ev;
	uint64_t serial = 0;

	while (homa_engine_next_event(w->e[1], &ev)) {
		if (ev.type == HOMA_EV_REQUEST && ev.msg && fp_liar_request(w, &ev))
			continue;
		if (ev.type != HOMA_EV_REQUEST || !ev.msg || homa_msg_length(ev.msg) < 8)
			fz_fail("server event %d", ev.type);
		homa_msg_copy(ev.msg, 0, &serial, 8);
		if (serial >= (uint64_t)w->nreq ||
		    !msg_ok(ev.msg, serial, fp_req_seed(serial), w->req[serial].len))
			fz_fail("request %llu not delivered bit-exact", (unsigned long long)serial);
		if (++w->req[serial].executed > 1)
			fz_fail("request %llu executed twice", (unsigned long long)serial);
		homa_engine_msg_release(w->e[1], ev.msg);
		if (may_hold && w->nheld < FP_MAX_HELD && (fz_u8(&w->in) & 3) == 0) {
			w->held[w->nheld] = ev.id;
			w->held_serial[w->nheld++] = serial;
		} else {
			reply(w, ev.id, serial);
		}
	}
}

/**
 * server_gave_up() - True if the server timed out an RPC: a client whose
 * packets stopped reaching it while it still heard the server then learns
 * that the server finished the RPC without it (RPC_UNKNOWN, flagged
 * finished) and fails it with HOMA_EABANDONED instead of running it again.
 * (The liar's RPCs, never acked, time out too: after a lie this accepts
 * HOMA_EABANDONED whenever the server timed out any RPC.)
 */
static bool server_gave_up(struct fp_world *w)
{
	struct homa_stats st;

	homa_engine_stats(w->e[1], &st);
	return st.rpcs_timed_out > 0;
}

/**
 * restarts_spent() - True if the client restarted some RPC as often as
 * settings.max_restarts allows: the server kept answering RPC_UNKNOWN
 * because every copy of a request was lost, and the next one fails the RPC
 * with HOMA_EABANDONED instead of restarting without end.
 */
static bool restarts_spent(struct fp_world *w)
{
	struct homa_stats st;

	homa_engine_stats(w->e[0], &st);
	return st.rpc_restarts >= w->s.max_restarts;
}

/** client_events() - Check responses and errors: bit-exact, once, not after abort. */
static void client_events(struct fp_world *w)
{
	struct homa_event ev;
	struct fp_req *r;

	while (homa_engine_next_event(w->e[0], &ev)) {
		if (ev.cookie >= (uint64_t)w->nreq)
			fz_fail("client event for unknown cookie %llu", (unsigned long long)ev.cookie);
		r = &w->req[ev.cookie];
		if (r->done || r->aborted || r->id != ev.id)
			fz_fail("RPC %llu ended twice or after abort", (unsigned long long)ev.cookie);
		r->done = true;
		if (ev.type == HOMA_EV_ERROR) {
			if (ev.error != HOMA_ETIMEDOUT &&
			    !(ev.error == HOMA_EABANDONED && (server_gave_up(w) || restarts_spent(w))))
				fz_fail("RPC failed with %d", ev.error);
			continue;
		}
		if (ev.type != HOMA_EV_RESPONSE ||
		    !msg_ok(ev.msg, ev.cookie, fp_resp_seed(ev.cookie), r->resp_len))
			fz_fail("response %llu not bit-exact", (unsigned long long)ev.cookie);
		if (r->executed != 1)
			fz_fail("response %llu without one execution", (unsigned long long)ev.cookie);
		homa_engine_msg_release(w->e[0], ev.msg);
	}
}

/** release_held() - The server application sends its delayed replies. */
static void release_held(struct fp_world *w)
{
	while (w->nheld) {
		w->nheld--;
		reply(w, w->held[w->nheld], w->held_serial[w->nheld]);
	}
}

/** op_abort() - The client application gives up on an RPC. */
static void op_abort(struct fp_world *w)
{
	struct fp_req *r;
	int err;

	if (!w->nreq)
		return;
	r = &w->req[fz_u8(&w->in) % w->nreq];
	err = homa_engine_abort(w->e[0], r->id, w->now);
	if (err == 0 && (r->done || r->aborted))
		fz_fail("abort of a finished RPC succeeded");
	if (err == 0)
		r->aborted = true;
}

/** run_op() - Decode and run one operation of the chaos phase. */
static void run_op(struct fp_world *w)
{
	static const uint64_t steps[] = {1000, 20000, 200000, 1000000, 3000000};
	uint8_t op = fz_u8(&w->in);

	switch (op % 8) {
	case 0: op_send(w); break;
	case 1: case 2: fp_pump(w, (op >> 3) & 1, 1 + (op >> 4)); break;
	case 3: case 4: fp_deliver(w, 1 + (op >> 3)); break;
	case 5:
		w->now += pick(&w->in, steps);
		fp_timers(w);
		break;
	case 6: op_abort(w); break;
	default:
		if (op & 0x80)
			fp_liar(w);
		else
			release_held(w);
		break;
	}
	server_events(w, true);
	client_events(w);
}

/** quiet() - True once every RPC ended and neither engine holds an RPC. */
static bool quiet(struct fp_world *w)
{
	struct homa_stats st;
	int i;

	for (i = 0; i < w->nreq; i++)
		if (!w->req[i].done && !w->req[i].aborted)
			return false;
	for (i = 0; i < 2; i++) {
		homa_engine_stats(w->e[i], &st);
		if (st.active_rpcs)
			return false;
	}
	return w->nnet == 0;
}

/** settle() - Perfect network until quiet; then every RPC must be finished. */
static void settle(struct fp_world *w)
{
	uint64_t end = w->now + FP_SETTLE_NS;
	struct homa_stats st;
	int i;

	release_held(w);
	while (w->now < end && !quiet(w) && fp_settle_step(w)) {
		server_events(w, false);
		client_events(w);
	}
	for (i = 0; i < w->nreq; i++)
		if (!w->req[i].done && !w->req[i].aborted)
			fz_fail("RPC %d (%u bytes) never ended", i, w->req[i].len);
	for (i = 0; i < 2; i++) {
		homa_engine_stats(w->e[i], &st);
		if (st.active_rpcs || st.rx_buffered_bytes || st.tx_buffered_bytes)
			fz_fail("%s still holds %llu RPCs (rx %llu, tx %llu bytes) after settling",
				i ? "server" : "client", (unsigned long long)st.active_rpcs,
				(unsigned long long)st.rx_buffered_bytes,
				(unsigned long long)st.tx_buffered_bytes);
	}
}

/** LLVMFuzzerTestOneInput() - libFuzzer entry point. Return: 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fp_world w;
	int ops = 0, i;

	if (setup(&w, data, size))
		fz_fail("engine creation failed");
	while (fz_in_more(&w.in) && ops++ < 2000)
		run_op(&w);
	settle(&w);
	fp_net_free(&w);
	for (i = 0; i < 2; i++) {
		homa_engine_free(w.e[i]);
		fz_alloc_check_clean(&w.fa[i], i ? "server" : "client");
	}
	return 0;
}
