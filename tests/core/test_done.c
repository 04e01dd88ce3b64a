/* SPDX-License-Identifier: MIT */
/**
 * @file test_done.c
 * The memory of finished server RPCs (src/core/done.c): exact for the last
 * HOMA_DONE_SLOTS RPCs, oldest forgotten first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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

/**
 * done__last_slots_all_remembered() - A full ring of RPCs is remembered
 * exactly (a direct-mapped table of the same size loses about a third of
 * them to collisions), and an RPC never finished is not.
 */
static void done__last_slots_all_remembered(void **state)
{
	struct fix *f = *state;

	for (uint64_t i = 0; i < HOMA_DONE_SLOTS; i++)
		finish(f, 1000 + 2 * i, 40000);
	for (uint64_t i = 0; i < HOMA_DONE_SLOTS; i++)
		assert_true(seen(f, 1000 + 2 * i, 40000));
	assert_false(seen(f, 1000 + 2 * HOMA_DONE_SLOTS, 40000));
	assert_false(seen(f, 1000, 40001));
}

/**
 * done__oldest_forgotten_first() - After three rings' worth of RPCs, from
 * several ports, exactly the newest HOMA_DONE_SLOTS are remembered.
 */
static void done__oldest_forgotten_first(void **state)
{
	struct fix *f = *state;
	const uint64_t n = 3 * HOMA_DONE_SLOTS;

	for (uint64_t i = 0; i < n; i++)
		finish(f, 2 * i * 7919, (uint16_t)(30000 + i % 5));
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(seen(f, 2 * i * 7919, (uint16_t)(30000 + i % 5)),
				 i >= n - HOMA_DONE_SLOTS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(done__last_slots_all_remembered, setup, teardown),
		cmocka_unit_test_setup_teardown(done__oldest_forgotten_first, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
