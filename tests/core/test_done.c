/* SPDX-License-Identifier: MIT */
/**
 * @file test_done.c
 * The memory of finished server RPCs (src/core/done.c): exact and by time
 * (every RPC finished within the horizon is remembered), within the
 * max_done_rpcs cap, past which a duplicate fails instead of running; and
 * the client side of the promise (a client never retries past its bound).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "internal.h"

/** Test fixture: an engine and a peer whose RPCs are recorded. */
struct fix {
	homa_engine *e;
	struct homa_peer peer;
};

/** setup() - An engine with default settings and one client peer. */
static int setup(void **state)
{
	static struct fix f;
	homa_addr local = homa_addr_ipv4(0x0a000001);

	memset(&f, 0, sizeof(f));
	f.peer.addr = homa_addr_ipv4(0x0a000002);
	if (homa_engine_new(&f.e, NULL, &local, 4000, NULL, 0))
		return -1;
	*state = &f;
	return 0;
}

/** teardown() - Free the engine. */
static int teardown(void **state)
{
	homa_engine_free(((struct fix *)*state)->e);
	return 0;
}

/** finish() - Record client id @id from port @port as a finished server RPC. */
static void finish(struct fix *f, uint64_t id, uint16_t port)
{
	struct homa_rpc r;

	memset(&r, 0, sizeof(r));
	r.id = id ^ 1;  /* server handles are the client id with bit 0 flipped */
	r.peer = &f->peer;
	r.dport = port;
	homa_done_add(f->e, &r);
}

/** seen() - True if client id @id from port @port is remembered. */
static bool seen(struct fix *f, uint64_t id, uint16_t port)
{
	return homa_done_seen(f->e, id ^ 1, &f->peer.addr, port);
}

/** seen_at() - seen() with the engine's clock at @now (lookups read e->now). */
static bool seen_at(struct fix *f, uint64_t id, uint16_t port, uint64_t now)
{
	f->e->now = now;
	return seen(f, id, port);
}

/**
 * done__last_slots_all_remembered() - A full initial ring of RPCs is
 * remembered exactly, and an RPC never finished is not.
 */
static void done__last_slots_all_remembered(void **state)
{
	struct fix *f = *state;

	for (uint64_t i = 0; i < HOMA_DONE_MIN; i++)
		finish(f, 1000 + 2 * i, 40000);
	for (uint64_t i = 0; i < HOMA_DONE_MIN; i++)
		assert_true(seen(f, 1000 + 2 * i, 40000));
	assert_false(seen(f, 1000 + 2 * HOMA_DONE_MIN, 40000));
	assert_false(seen(f, 1000, 40001));
}

/**
 * done__remembered_for_the_horizon() - Three initial rings' worth of RPCs
 * finished at once (within the horizon) are all remembered: the memory is
 * by time, not by count (it used to forget all but the newest 4096).
 */
static void done__remembered_for_the_horizon(void **state)
{
	struct fix *f = *state;
	const uint64_t n = 3 * HOMA_DONE_MIN;

	for (uint64_t i = 0; i < n; i++)
		finish(f, 2 * i * 7919, (uint16_t)(30000 + i % 5));
	for (uint64_t i = 0; i < n; i++)
		assert_true(seen(f, 2 * i * 7919, (uint16_t)(30000 + i % 5)));
	assert_true(homa_done_capacity(f->e) >= n);
}

/**
 * done__forgotten_after_the_horizon() - Once older than the horizon, the
 * oldest RPCs make room for new ones and the memory stops growing.
 */
static void done__forgotten_after_the_horizon(void **state)
{
	struct fix *f = *state;
	uint64_t later = homa_done_horizon_ns(f->e) + 1;

	for (uint64_t i = 0; i < HOMA_DONE_MIN; i++)
		finish(f, 2 * i, 40000);
	f->e->now = later;
	for (uint64_t i = 0; i < HOMA_DONE_MIN; i++)
		finish(f, 1000000 + 2 * i, 40000);
	assert_int_equal(homa_done_capacity(f->e), HOMA_DONE_MIN);
	for (uint64_t i = 0; i < HOMA_DONE_MIN; i++) {
		assert_false(seen(f, 2 * i, 40000));
		assert_true(seen(f, 1000000 + 2 * i, 40000));
	}
}

/**
 * done__on_or_off_fixed_at_creation() - homa_engine_set_settings() can
 * resize the finished-RPC memory but not turn it off (max_done_rpcs 0) or
 * on: HOMA_EINVAL, and the memory goes on as before.
 */
static void done__on_or_off_fixed_at_creation(void **state)
{
	struct fix *f = *state;
	struct homa_settings s = *homa_engine_settings(f->e);
	homa_addr local = homa_addr_ipv4(0x0a000003);
	homa_engine *off;

	s.max_done_rpcs = 0;
	assert_int_equal(homa_engine_set_settings(f->e, &s), HOMA_EINVAL);
	assert_true(homa_engine_settings(f->e)->max_done_rpcs > 0);
	finish(f, 4000, 40000);
	assert_true(seen(f, 4000, 40000));
	assert_int_equal(homa_engine_new(&off, &s, &local, 4000, NULL, 0), 0);
	s.max_done_rpcs = HOMA_DONE_MIN;
	assert_int_equal(homa_engine_set_settings(off, &s), HOMA_EINVAL);
	assert_int_equal(homa_engine_settings(off)->max_done_rpcs, 0);
	homa_engine_free(off);
}

/**
 * done__cap_turns_duplicates_into_errors() - With max_done_rpcs reached
 * inside the horizon, the oldest RPCs are forced out, but their client's
 * watermark still reports them (and any older id of that client) as
 * finished until the horizon passes; newer ids are not.
 */
static void done__cap_turns_duplicates_into_errors(void **state)
{
	struct fix *f = *state;
	struct homa_settings s = *homa_engine_settings(f->e);
	uint64_t horizon = homa_done_horizon_ns(f->e);

	s.max_done_rpcs = HOMA_DONE_MIN;
	assert_int_equal(homa_engine_set_settings(f->e, &s), 0);
	f->e->now = 1000;
	for (uint64_t i = 0; i < HOMA_DONE_MIN + 100; i++)
		finish(f, 5000 + 2 * i, 40000);
	assert_int_equal(homa_done_capacity(f->e), HOMA_DONE_MIN);
	assert_int_equal(f->e->done_forced_out, 100);
	for (uint64_t i = 0; i < HOMA_DONE_MIN + 100; i++)
		assert_true(seen(f, 5000 + 2 * i, 40000));
	assert_true(seen(f, 4000, 40000));  /* older, never finished: refused too */
	assert_false(seen(f, 5000 + 2 * (HOMA_DONE_MIN + 100), 40000));
	assert_false(seen_at(f, 4000, 40000, 1000 + horizon));
}

/**
 * finish_real() - Finish client id @id from @port as a real server RPC of
 * the engine (in its tables and RPC group), the way the engine frees one.
 */
static void finish_real(struct fix *f, uint64_t id, uint16_t port)
{
	struct homa_peer *peer = homa_peer_get(f->e, &f->peer.addr);
	struct homa_rpc *r;

	assert_non_null(peer);
	r = homa_rpc_new(f->e, id ^ 1, peer, port);
	assert_non_null(r);
	r->state = RPC_OUTGOING;
	homa_rpc_free(f->e, r);
}

/**
 * done__watermark_of_grouped_rpcs() - The watermark slot taken from a real
 * RPC's group key is the one lookups hash to: past the cap, a forced-out
 * RPC and an older id of its client are still refused, another port's not.
 */
static void done__watermark_of_grouped_rpcs(void **state)
{
	struct fix *f = *state;
	struct homa_settings s = *homa_engine_settings(f->e);

	s.max_done_rpcs = HOMA_DONE_MIN;
	assert_int_equal(homa_engine_set_settings(f->e, &s), 0);
	homa_engine_set_server(f->e, true);
	f->e->now = 1000;
	for (uint64_t i = 0; i < HOMA_DONE_MIN + 10; i++)
		finish_real(f, 8000 + 2 * i, 41000);
	assert_int_equal(f->e->done_forced_out, 10);
	assert_true(seen(f, 8000, 41000));
	assert_true(seen(f, 7000, 41000));
	assert_false(seen(f, 7000, 41001));
}

/**
 * done__hashes_only_what_it_must() - A lookup makes one keyed hash, also
 * while a watermark is live; a real RPC's finish makes none
 * when it carries its fingerprint (the request's lookup made it) and one
 * when it does not; it takes its watermark slot from its RPC group.
 */
static void done__hashes_only_what_it_must(void **state)
{
	struct fix *f = *state;
	struct homa_settings s = *homa_engine_settings(f->e);
	struct homa_peer *peer;
	struct homa_rpc *r;
	uint64_t h;

	homa_engine_set_server(f->e, true);
	f->e->now = 1000;
	h = homa_hash_calls;
	assert_false(seen(f, 9000, 40000));
	assert_int_equal(homa_hash_calls - h, 1);

	finish_real(f, 9000, 40000); /* no fingerprint: one hash for it */
	peer = homa_peer_get(f->e, &f->peer.addr);
	r = homa_rpc_new(f->e, 9002 ^ 1, peer, 40000);
	assert_non_null(r);
	r->state = RPC_OUTGOING;
	r->done_f = homa_done_fingerprint(f->e, 9002 ^ 1, &f->peer.addr, 40000);
	h = homa_hash_calls;
	homa_rpc_free(f->e, r);
	assert_int_equal(homa_hash_calls - h, 0);
	assert_true(seen(f, 9000, 40000));
	assert_true(seen(f, 9002, 40000));

	/* a live watermark costs lookups no second hash */
	s.max_done_rpcs = HOMA_DONE_MIN;
	assert_int_equal(homa_engine_set_settings(f->e, &s), 0);
	for (uint64_t i = 0; i < HOMA_DONE_MIN; i++)
		finish(f, 20000 + 2 * i, 40001);
	assert_true(f->e->done_forced_out > 0);
	h = homa_hash_calls;
	assert_false(seen(f, 90000, 40000));
	assert_int_equal(homa_hash_calls - h, 1);
	assert_true(seen(f, 20000, 40001));
	assert_int_equal(homa_hash_calls - h, 2);
	/* past the horizon it is dead */
	f->e->now += homa_done_horizon_ns(f->e);
	h = homa_hash_calls;
	assert_false(seen(f, 90000, 40000));
	assert_int_equal(homa_hash_calls - h, 1);
}

/** indexed() - Fingerprints in the index now (its non-empty slots). */
static uint32_t indexed(const struct fix *f)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < 2 * f->e->done_cap; i++)
		n += f->e->done_index[i] != 0;
	return n;
}

/**
 * done__growing_ids_touch_no_index() - A client whose ids grow, each
 * request looked up when it arrives and remembered when it finishes, over
 * three initial rings and past the horizon (old entries forgotten): no
 * index slot is read or written, and every answer is right.
 */
static void done__growing_ids_touch_no_index(void **state)
{
	struct fix *f = *state;
	const uint64_t n = 3 * HOMA_DONE_MIN, step = homa_done_horizon_ns(f->e) / HOMA_DONE_MIN;
	uint64_t p0 = f->e->done_probes;

	f->e->now = 1000;
	for (uint64_t i = 0; i < n; i++) {
		f->e->now += step;
		assert_false(seen(f, 100 + 2 * i, 40000));
		assert_false(seen(f, 100 + 2 * i, 40001));
		finish(f, 100 + 2 * i, 40000);
	}
	assert_int_equal(f->e->done_probes - p0, 0);
	assert_true(homa_done_count(f->e) < n); /* the oldest were forgotten */
	assert_true(seen(f, 100 + 2 * (n - 1), 40000));
	assert_false(seen(f, 100, 40000));
}

/**
 * done__search_indexes_each_entry_once() - A lookup at or below a
 * client's newest finished id searches: it first indexes the entries
 * finished since the last search, so searching after every finish costs
 * a few slots each, not the whole ring; entries forgotten indexed or not
 * leave the index holding exactly the indexed ones.
 */
static void done__search_indexes_each_entry_once(void **state)
{
	struct fix *f = *state;
	uint64_t horizon = homa_done_horizon_ns(f->e), p0;
	const uint64_t n = HOMA_DONE_MIN;

	f->e->now = 1000;
	for (uint64_t i = 0; i < n; i++)
		finish(f, 2 * i, 40000);
	p0 = f->e->done_probes;
	assert_true(seen(f, 0, 40000));
	assert_false(seen(f, 1, 40000)); /* never finished, below the newest */
	assert_true(f->e->done_probes - p0 >= n);
	assert_int_equal(indexed(f), n);
	/* one search after each finish: each entry indexed once */
	p0 = f->e->done_probes;
	for (uint64_t i = 0; i < n / 2; i++) {
		finish(f, 100000 + 2 * i, 40000);
		assert_true(seen(f, 2 * i, 40000));
	}
	assert_true(f->e->done_probes - p0 < 8 * n);
	assert_int_equal(indexed(f), n + n / 2);
	/* past the horizon the ring makes room from its oldest, indexed or not */
	f->e->now = 1000 + horizon;
	for (uint64_t i = 0; i < n; i++)
		finish(f, 200000 + 2 * i, 40000);
	assert_int_equal(homa_done_capacity(f->e), 2 * n);
	assert_int_equal(indexed(f), homa_done_count(f->e) - f->e->done_unindexed);
	for (uint64_t i = 0; i < n; i++)
		assert_true(seen(f, 200000 + 2 * i, 40000));
	assert_int_equal(indexed(f), homa_done_count(f->e));
}

/**
 * done__restarted_client_searches() - A client whose ids start again
 * lower (a restart on the same port) is searched, not waved through: its
 * old finished ids are still refused, new ones are not; once all of its
 * slot's entries are forgotten, its ids are new again without a search.
 */
static void done__restarted_client_searches(void **state)
{
	struct fix *f = *state;
	uint16_t other = 40001;
	uint64_t p0;

	/* another client in another watermark slot */
	while ((uint32_t)homa_done_client(f->e, &f->peer.addr, other) % HOMA_DONE_MARKS ==
	       (uint32_t)homa_done_client(f->e, &f->peer.addr, 40000) % HOMA_DONE_MARKS)
		other++;
	f->e->now = 1000;
	for (uint64_t i = 0; i < 100; i++)
		finish(f, 5000 + 2 * i, 40000);
	assert_true(seen(f, 5000, 40000));
	assert_false(seen(f, 2, 40000));
	finish(f, 2, 40000);
	assert_true(seen(f, 2, 40000));
	assert_false(seen(f, 4, 40000));
	/* all forgotten: a full ring of another client's RPCs past the horizon */
	f->e->now += homa_done_horizon_ns(f->e);
	for (uint64_t i = 0; i < HOMA_DONE_MIN; i++)
		finish(f, 2 * i, other);
	assert_int_equal(homa_done_capacity(f->e), HOMA_DONE_MIN);
	p0 = f->e->done_probes;
	assert_false(seen(f, 4, 40000));
	assert_false(seen(f, 5000, 40000));
	assert_int_equal(f->e->done_probes - p0, 0);
}

/**
 * done__group_keeps_the_client_hash() - An RPC group keeps its client's
 * full hash (the one fingerprints and watermark slots are made from), and
 * a new RPC joins a group of its peer's first few without hashing again,
 * and starts a group with the hash its caller made without hashing either.
 */
static void done__group_keeps_the_client_hash(void **state)
{
	struct fix *f = *state;
	struct homa_peer *peer = homa_peer_get(f->e, &f->peer.addr);
	struct homa_rpc *a, *b;
	uint64_t h, full;
	uint32_t key;

	assert_non_null(peer);
	homa_peer_get(f->e, &f->peer.addr); /* one reference per RPC */
	a = homa_rpc_new(f->e, 7001, peer, 40000);
	assert_non_null(a);
	assert_true(a->pport->h == homa_done_client(f->e, &f->peer.addr, 40000));
	assert_int_equal(a->pport->key, (uint32_t)a->pport->h);
	assert_ptr_equal(homa_pport_near(peer, 40000), a->pport);
	assert_null(homa_pport_near(peer, 40001));
	key = homa_rpc_key(f->e, 7003, &f->peer.addr);
	h = homa_hash_calls;
	b = homa_rpc_new_key(f->e, key, 7003, peer, 40000, NULL);
	assert_non_null(b);
	assert_int_equal(homa_hash_calls - h, 0);
	assert_ptr_equal(b->pport, a->pport);
	homa_rpc_free(f->e, a);
	homa_rpc_free(f->e, b);
	/* a caller that made the client hash (a server's new request) gives
	 * it for the group a new RPC starts: no second hash */
	peer = homa_peer_get(f->e, &f->peer.addr);
	assert_non_null(peer);
	key = homa_rpc_key(f->e, 7005, &f->peer.addr);
	full = homa_done_client(f->e, &f->peer.addr, 40002);
	h = homa_hash_calls;
	b = homa_rpc_new_key(f->e, key, 7005, peer, 40002, &full);
	assert_non_null(b);
	assert_int_equal(homa_hash_calls - h, 0);
	assert_true(b->pport->h == full);
	assert_ptr_equal(homa_pport_find(f->e, peer, 40002), b->pport);
	homa_rpc_free(f->e, b);
}

/** Two engines and a clock for the end-to-end cases below. */
struct duo {
	struct th_pair p;
	homa_engine *other;      /**< a second client on the same host (another port) */
	uint64_t now;
	bool drop_to_client;     /**< the network loses every packet to the client */
	int requests;            /**< requests the server application received */
};

/** flow() - Move every packet between the engines at d->now (both ways, until quiet). */
static void flow(struct duo *d)
{
	struct th_pkt k;
	bool moved = true;

	while (moved) {
		moved = false;
		for (int from = 0; from < 2; from++) {
			while (th_take(d->p.e[from], d->now, &k) > 0) {
				moved = true;
				if (from == 1 && d->drop_to_client)
					continue;
				homa_engine_input(d->p.e[1 - from], &d->p.addr[from], k.buf,
						  (size_t)k.len, d->now);
			}
		}
	}
}

/** serve_all() - The server application answers every request with one byte. */
static void serve_all(struct duo *d)
{
	struct homa_event ev;
	uint8_t b = 1;
	struct homa_iov iov = {&b, 1};

	while (homa_engine_next_event(d->p.e[1], &ev)) {
		if (ev.type == HOMA_EV_REQUEST) {
			d->requests++;
			homa_engine_send_reply(d->p.e[1], ev.id, &iov, 1, d->now);
		}
		homa_engine_msg_release(d->p.e[1], ev.msg);
	}
}

/** call() - The client starts a one-byte RPC. Return: its id. */
static uint64_t call(struct duo *d)
{
	uint8_t b = 7;
	struct homa_iov iov = {&b, 1};
	uint64_t id;

	assert_int_equal(homa_engine_send_request(d->p.e[0], &d->p.addr[1], d->p.port[1],
						  &iov, 1, 0, d->now, &id), 0);
	return id;
}

/** active_rpcs() - RPCs engine @e holds. */
static uint32_t active_rpcs(homa_engine *e)
{
	struct homa_stats st;

	homa_engine_stats(e, &st);
	return (uint32_t)st.active_rpcs;
}

/**
 * lost_reply_then_pause() - The client sends a request; the server runs it
 * but every packet back is lost; the client is paused (its engine not
 * called) while the server times the RPC out and forgets it into its
 * finished memory, then finishes @others more RPCs of the same client.
 * The client resumes @pause_ns after the start.
 * Return: the id of the first RPC.
 */
static uint64_t lost_reply_then_pause(struct duo *d, int others, uint64_t pause_ns)
{
	uint64_t id = call(d);

	flow(d);
	serve_all(d);
	d->drop_to_client = true;
	flow(d);
	for (int t = 0; t < 200; t++) {  /* the server alone: NEED_ACKs lost, times out */
		d->now += 1000000;
		homa_engine_on_timer(d->p.e[1], d->now);
		while (th_take(d->p.e[1], d->now, &(struct th_pkt){0}) > 0)
			;
	}
	assert_int_equal(active_rpcs(d->p.e[1]), 0);
	d->drop_to_client = false;
	/* other RPCs finish meanwhile, through a second client port */
	for (int i = 0; i < others; i++) {
		homa_engine *c = d->p.e[0];
		struct homa_event ev;

		d->p.e[0] = d->other;
		d->now += 10000;  /* the pacer holds back what exceeds the link */
		call(d);
		flow(d);
		serve_all(d);
		flow(d);
		while (homa_engine_next_event(d->p.e[0], &ev)) {
			homa_engine_msg_release(d->p.e[0], ev.msg);
		}
		d->p.e[0] = c;
	}
	d->now = pause_ns;
	return id;
}
/** duo_init() - Client, server and a second client port, at time 0. */
static void duo_init(struct duo *d)
{
	memset(d, 0, sizeof(*d));
	th_pair_init(&d->p, NULL);
	assert_int_equal(homa_engine_new(&d->other, NULL, &d->p.addr[0], 5999, NULL, 0), 0);
}

/** duo_free() - Free all three engines. */
static void duo_free(struct duo *d)
{
	homa_engine_free(d->other);
	th_pair_free(&d->p);
}

/**
 * resume() - Run the paused client (and the server) for @ms milliseconds.
 * Return: the number of RESENDs the client sent.
 */
static int resume(struct duo *d, int ms)
{
	int resends = 0;

	for (int t = 0; t < ms; t++) {
		struct th_pkt k;

		d->now += 1000000;
		homa_engine_on_timer(d->p.e[0], d->now);
		while (th_take(d->p.e[0], d->now, &k) > 0) {
			resends += k.ok && k.k.type == HOMA_PKT_RESEND;
			homa_engine_input(d->p.e[1], &d->p.addr[0], k.buf, (size_t)k.len, d->now);
		}
		homa_engine_on_timer(d->p.e[1], d->now);
		flow(d);
		serve_all(d);
		flow(d);
	}
	return resends;
}

/** client_error() - The error the client's RPC @id failed with (0 if it did not). */
static int client_error(struct duo *d, uint64_t id)
{
	struct homa_event ev;
	int err = 0;

	while (homa_engine_next_event(d->p.e[0], &ev)) {
		if (ev.id == id && ev.type == HOMA_EV_ERROR)
			err = ev.error;
		homa_engine_msg_release(d->p.e[0], ev.msg);
	}
	return err;
}

/**
 * done__retry_after_others_finished_is_refused() - A client paused past
 * the server's timeout asks again for a response that was lost, after
 * 5000 other RPCs finished at the server (the old memory held 4096): the
 * server answers that the RPC finished, the client fails it with
 * HOMA_EABANDONED, and the request never runs a second time.
 */
static void done__retry_after_others_finished_is_refused(void **state)
{
	struct duo d;
	uint64_t id;

	duo_init(&d);
	id = lost_reply_then_pause(&d, 5000, 250000000);
	assert_int_equal(d.requests, 5001);
	assert_true(resume(&d, 50) > 0);
	assert_int_equal(d.requests, 5001);
	assert_int_equal(client_error(&d, id), HOMA_EABANDONED);
	duo_free(&d);
}

/**
 * done__client_never_retries_past_its_bound() - A client paused longer
 * than HOMA_CLIENT_RETRY_TIMEOUTS timeouts does not ask again when it
 * resumes: the RPC fails with HOMA_ETIMEDOUT and no RESEND leaves (the
 * server may have forgotten it by then).
 */
static void done__client_never_retries_past_its_bound(void **state)
{
	struct duo d;
	uint64_t id;

	duo_init(&d);
	id = lost_reply_then_pause(&d, 0, 2000000000);
	assert_int_equal(resume(&d, 20), 0);
	assert_int_equal(d.requests, 1);
	assert_int_equal(client_error(&d, id), HOMA_ETIMEDOUT);
	duo_free(&d);
}

/**
 * done__paused_client_takes_waiting_reply() - A client paused longer than
 * HOMA_CLIENT_RETRY_TIMEOUTS timeouts while its response waited in its
 * socket: the tick it runs on resuming comes before it reads that
 * response, which must still complete the RPC (request run once), not
 * HOMA_ETIMEDOUT. The second tick past the bound fails it as before.
 */
static void done__paused_client_takes_waiting_reply(void **state)
{
	static struct th_pkt held[4];
	struct homa_event ev;
	struct th_pkt k;
	int n = 0, got = 0, err = 0;
	struct duo d;
	uint64_t id;

	(void)state;
	duo_init(&d);
	id = call(&d);
	while (th_take(d.p.e[0], d.now, &k) > 0)
		homa_engine_input(d.p.e[1], &d.p.addr[0], k.buf, (size_t)k.len, d.now);
	serve_all(&d);
	while (n < 4 && th_take(d.p.e[1], d.now, &held[n]) > 0)
		n++;  /* the response, waiting in the client's socket */
	assert_true(n > 0);
	d.now += 2000000000ull;  /* the client's thread was not scheduled for 2 s */
	homa_engine_on_timer(d.p.e[0], d.now);
	for (int i = 0; i < n; i++)
		homa_engine_input(d.p.e[0], &d.p.addr[1], held[i].buf, (size_t)held[i].len, d.now);
	while (homa_engine_next_event(d.p.e[0], &ev)) {
		got += ev.id == id && ev.type == HOMA_EV_RESPONSE;
		err = ev.type == HOMA_EV_ERROR ? ev.error : err;
		homa_engine_msg_release(d.p.e[0], ev.msg);
	}
	assert_int_equal(err, 0);
	assert_int_equal(got, 1);
	assert_int_equal(d.requests, 1);
	/* a second RPC, silent past the bound for two ticks, still times out */
	id = call(&d);
	while (th_take(d.p.e[0], d.now, &k) > 0)
		;
	d.now += 2000000000ull;
	homa_engine_on_timer(d.p.e[0], d.now);
	assert_int_equal(client_error(&d, id), 0);
	d.now += 1000000;
	homa_engine_on_timer(d.p.e[0], d.now);
	assert_int_equal(client_error(&d, id), HOMA_ETIMEDOUT);
	duo_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(done__last_slots_all_remembered, setup, teardown),
		cmocka_unit_test_setup_teardown(done__on_or_off_fixed_at_creation, setup, teardown),
		cmocka_unit_test_setup_teardown(done__remembered_for_the_horizon, setup, teardown),
		cmocka_unit_test_setup_teardown(done__forgotten_after_the_horizon, setup, teardown),
		cmocka_unit_test_setup_teardown(done__cap_turns_duplicates_into_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(done__watermark_of_grouped_rpcs, setup, teardown),
		cmocka_unit_test_setup_teardown(done__hashes_only_what_it_must, setup, teardown),
		cmocka_unit_test_setup_teardown(done__growing_ids_touch_no_index, setup, teardown),
		cmocka_unit_test_setup_teardown(done__search_indexes_each_entry_once, setup, teardown),
		cmocka_unit_test_setup_teardown(done__restarted_client_searches, setup, teardown),
		cmocka_unit_test_setup_teardown(done__group_keeps_the_client_hash, setup, teardown),
		cmocka_unit_test(done__retry_after_others_finished_is_refused),
		cmocka_unit_test(done__client_never_retries_past_its_bound),
		cmocka_unit_test(done__paused_client_takes_waiting_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
