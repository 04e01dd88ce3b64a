/* SPDX-License-Identifier: MIT */
/**
 * @file test_attacks.c
 * Attacks on two engines sealed with PSP on the test wire (tests/core
 * harness): every single bit of a sealed packet flipped in turn, every
 * truncation, forged packets, unknown and expired SPIs, replays inside
 * and outside the window, cleartext Homa packets. Each is rejected and
 * counted by reason, and honest RPCs before and after complete bit-exact.
 * Also: RPCs in flight across master-key rotations complete.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "homa/psp.h"

/** Capture of sealed packets crossing from the client. */
struct tap {
	uint8_t pkt[4][1600];
	size_t len[4];
	int n;
};

/** An encrypted pair: harness engines, their PSP state, the tap. */
struct epair {
	struct th_pair p;
	homa_psp *psp[2];
	struct homa_packet_hooks h[2];
	struct tap tap;
};

/**
 * tap_filter() - Copy the first client DATA packets of full size. The
 * first is dropped (the client retransmits its bytes under a new IV), so
 * its IV stays fresh for the attacks; the others are delivered.
 */
static bool tap_filter(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n)
{
	struct tap *t = ctx;

	if (from == 0 && len == 1472 && t->n < 4) {
		memcpy(t->pkt[t->n], pkt, len);
		t->len[t->n++] = len;
		return t->n == 1;
	}
	return false;
}

/**
 * associate() - Endpoint @from learns (SPI, key) of endpoint @to: @to
 * issues them, @from installs them for @to's address and port.
 */
static void associate(struct epair *e, int from, int to)
{
	uint8_t key[32];
	uint32_t spi;
	int v = homa_psp_version(e->psp[to]);

	assert_int_equal(homa_psp_rx_issue(e->psp[to], &spi, key), 0);
	assert_int_equal(homa_psp_tx_add(e->psp[from], &e->p.addr[to], e->p.port[to], spi, key, v),
			 0);
}

/** epair_init() - Two engines sealing with PSP @version, associated both ways, echo on. */
static void epair_init(struct epair *e, int version)
{
	memset(e, 0, sizeof(*e));
	th_pair_init(&e->p, NULL);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(homa_psp_new(&e->psp[i], version, NULL), 0);
		e->h[i] = homa_psp_hooks(e->psp[i]);
		homa_engine_set_hooks(e->p.e[i], &e->h[i]);
	}
	associate(e, 0, 1);
	associate(e, 1, 0);
	e->p.echo = true;
	e->p.logging = false;
	e->p.filter = tap_filter;
	e->p.filter_ctx = &e->tap;
}

/** epair_free() - Free both engines and PSP states. */
static void epair_free(struct epair *e)
{
	th_pair_free(&e->p);
	homa_psp_free(e->psp[0]);
	homa_psp_free(e->psp[1]);
}

/** echo() - One echo RPC of @len bytes; asserts it completes bit-exact. */
static void echo(struct epair *e, size_t len, uint32_t seed)
{
	static uint8_t buf[4000000];
	struct homa_iov iov = {buf, len};
	struct homa_event ev;
	uint64_t id;

	th_pattern(buf, len, seed);
	assert_int_equal(homa_engine_send_request(e->p.e[0], &e->p.addr[1], e->p.port[1], &iov, 1,
						  seed, e->p.now, &id), 0);
	th_pair_run(&e->p, 10000000000ull);
	assert_int_equal(homa_engine_next_event(e->p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_int_equal(ev.id, id);
	assert_true(th_check_pattern(ev.msg, seed));
	homa_engine_msg_release(e->p.e[0], ev.msg);
}

/** rejected() - Server-side rejections for @reason so far. */
static uint64_t rejected(const struct epair *e, int reason)
{
	struct homa_psp_stats st;

	homa_psp_get_stats(e->psp[1], &st);
	return st.rejected[reason];
}

/** total_rejected() - All server-side rejections so far. */
static uint64_t total_rejected(const struct epair *e)
{
	uint64_t n = 0;

	for (int r = 0; r < HOMA_PSP_REJ_REASONS; r++)
		n += rejected(e, r);
	return n;
}

/** inject() - Hand @len bytes (a copy of @pkt) to the server. Return: engine's result. */
static int inject(struct epair *e, const uint8_t *pkt, size_t len)
{
	static uint8_t buf[2000];

	memcpy(buf, pkt, len);
	return homa_engine_input(e->p.e[1], &e->p.addr[0], buf, len, e->p.now);
}

/** server_drops() - The server engine's drops of @reason. */
static uint64_t server_drops(const struct epair *e, int reason)
{
	struct homa_stats st;

	homa_engine_stats(e->p.e[1], &st);
	return st.drops[reason];
}

/**
 * psp_attack__every_bit_flipped() - Each of the 1472 x 8 one-bit
 * variants of a sealed DATA packet is rejected and counted once, in both
 * versions; nothing reaches the protocol (no other drop reason moves);
 * the replay of the original is a replay; RPCs still complete.
 */
static void psp_attack__every_bit_flipped(void **state)
{
	for (int v = 0; v <= 1; v++) {
		struct epair *e = calloc(1, sizeof(*e));
		uint8_t pkt[1600];

		epair_init(e, v);
		echo(e, 5000, 1);
		assert_true(e->tap.n >= 1);
		size_t len = e->tap.len[0];
		uint64_t before = total_rejected(e), verify = server_drops(e, HOMA_DROP_VERIFY);

		for (size_t bit = 0; bit < len * 8; bit++) {
			memcpy(pkt, e->tap.pkt[0], len);
			pkt[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			assert_true(inject(e, pkt, len) >= HOMA_INPUT_DROPPED);
			assert_int_equal(total_rejected(e), before + bit + 1);
		}
		assert_int_equal(server_drops(e, HOMA_DROP_VERIFY), verify + len * 8);
		assert_true(rejected(e, HOMA_PSP_REJ_AUTH) > len * 8 - 200);
		assert_true(rejected(e, HOMA_PSP_REJ_NOT_PSP) >= 16);  /* bytes 0 and 1 */
		assert_true(rejected(e, HOMA_PSP_REJ_UNKNOWN_SPI) >= 31);
		for (int r = 0; r < HOMA_DROP_REASONS; r++)  /* none reached the protocol */
			if (r != HOMA_DROP_VERIFY)
				assert_int_equal(server_drops(e, r), 0);
		/* the flips left the window alone: the original is accepted once */
		uint64_t replays = rejected(e, HOMA_PSP_REJ_REPLAY);

		assert_int_not_equal(inject(e, e->tap.pkt[0], len),
				     HOMA_INPUT_DROPPED + HOMA_DROP_VERIFY);
		assert_int_equal(inject(e, e->tap.pkt[0], len),
				 HOMA_INPUT_DROPPED + HOMA_DROP_VERIFY);
		assert_int_equal(rejected(e, HOMA_PSP_REJ_REPLAY), replays + 1);
		echo(e, 200000, 2);
		epair_free(e);
		free(e);
	}
}

/**
 * psp_attack__truncated() - Every prefix of a sealed packet is rejected:
 * "not PSP" below two bytes, "truncated" below header + clear part + ICV,
 * "auth" above.
 */
static void psp_attack__truncated(void **state)
{
	struct epair *e = calloc(1, sizeof(*e));

	epair_init(e, HOMA_PSP_AES_GCM_128);
	echo(e, 5000, 3);
	for (size_t n = 0; n < e->tap.len[0]; n++)
		assert_true(inject(e, e->tap.pkt[0], n) >= HOMA_INPUT_DROPPED);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_NOT_PSP), 2);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_TRUNCATED), 60 - 2);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_AUTH), e->tap.len[0] - 60);
	echo(e, 5000, 4);
	epair_free(e);
	free(e);
}

/**
 * psp_attack__forged_and_wrong_keys() - A packet sealed by an attacker's
 * own association (the victim's SPI, a key the attacker chose) fails
 * authentication; one with an SPI never issued is "unknown SPI"; random
 * bytes behind a valid-looking header fail authentication.
 */
static void psp_attack__forged_and_wrong_keys(void **state)
{
	struct epair *e = calloc(1, sizeof(*e));
	uint8_t pkt[1600], key[16];
	homa_psp *evil;

	epair_init(e, HOMA_PSP_AES_GCM_128);
	echo(e, 5000, 5);
	assert_int_equal(homa_psp_new(&evil, HOMA_PSP_AES_GCM_128, NULL), 0);
	uint32_t spi = (uint32_t)e->tap.pkt[0][4] << 24 | (uint32_t)e->tap.pkt[0][5] << 16 |
		       (uint32_t)e->tap.pkt[0][6] << 8 | e->tap.pkt[0][7];

	memset(key, 0x5a, sizeof(key));
	assert_int_equal(homa_psp_tx_add(evil, &e->p.addr[1], e->p.port[1], spi, key, 0), 0);
	assert_int_equal(homa_psp_tx_add(evil, &e->p.addr[0], e->p.port[1], spi + 7, key, 0), 0);
	memcpy(pkt, e->tap.pkt[0] + 16, 1440);  /* a clear Homa packet to wrap */
	for (int i = 0; i < 1000; i++) {  /* IVs past those the client used */
		assert_int_equal(homa_psp_seal(evil, &e->p.addr[1], pkt, 1440, sizeof(pkt)), 1472);
		memmove(pkt, pkt + 16, 1440);
	}
	for (int i = 0; i < 100; i++) {
		assert_int_equal(homa_psp_seal(evil, &e->p.addr[1], pkt, 1440, sizeof(pkt)), 1472);
		assert_true(inject(e, pkt, 1472) >= HOMA_INPUT_DROPPED);
		memmove(pkt, pkt + 16, 1440);
	}
	assert_int_equal(rejected(e, HOMA_PSP_REJ_AUTH), 100);
	assert_int_equal(homa_psp_seal(evil, &e->p.addr[0], pkt, 1440, sizeof(pkt)), 1472);
	assert_true(inject(e, pkt, 1472) >= HOMA_INPUT_DROPPED);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_UNKNOWN_SPI), 1);
	memcpy(pkt, e->tap.pkt[0], 16);
	pkt[15] ^= 0x40;  /* a fresh IV */
	for (size_t i = 16; i < 1472; i++)
		pkt[i] = (uint8_t)(i * 7 + 3);
	assert_true(inject(e, pkt, 1472) >= HOMA_INPUT_DROPPED);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_AUTH), 101);
	homa_psp_free(evil);
	echo(e, 5000, 6);
	epair_free(e);
	free(e);
}

/**
 * psp_attack__replays() - Replays of a packet inside the window are
 * rejected as replays, and after more than a window of newer packets as
 * too old; the honest stream meanwhile completes.
 */
static void psp_attack__replays(void **state)
{
	struct epair *e = calloc(1, sizeof(*e));

	epair_init(e, HOMA_PSP_AES_GCM_256);
	echo(e, 5000, 7);
	assert_true(e->tap.n >= 3);
	assert_int_not_equal(inject(e, e->tap.pkt[0], e->tap.len[0]),  /* never delivered */
			     HOMA_INPUT_DROPPED + HOMA_DROP_VERIFY);
	for (int i = 0; i < e->tap.n; i++)
		for (int k = 0; k < 3; k++)
			assert_true(inject(e, e->tap.pkt[i], e->tap.len[i]) >= HOMA_INPUT_DROPPED);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_REPLAY), 3 * e->tap.n);
	/* more than a window of client packets: 3.5 MB request */
	echo(e, 3500000, 8);
	for (int i = 0; i < e->tap.n; i++)
		assert_true(inject(e, e->tap.pkt[i], e->tap.len[i]) >= HOMA_INPUT_DROPPED);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_TOO_OLD), e->tap.n);
	assert_int_equal(total_rejected(e), 4 * e->tap.n);
	echo(e, 5000, 13);
	epair_free(e);
	free(e);
}

/**
 * psp_attack__cleartext_dropped() - Packets of an engine without PSP
 * reach the sealed server only as "not PSP" rejections: its requests
 * never become RPCs.
 */
static void psp_attack__cleartext_dropped(void **state)
{
	struct epair *e = calloc(1, sizeof(*e));
	struct th_pkt *c = calloc(1, sizeof(*c));
	struct homa_iov iov = {"hello", 5};
	struct homa_event ev;
	homa_engine *plain;
	uint64_t id;

	epair_init(e, HOMA_PSP_AES_GCM_128);
	assert_int_equal(homa_engine_new(&plain, NULL, &e->p.addr[0], 4100, NULL, 0), 0);
	assert_int_equal(homa_engine_send_request(plain, &e->p.addr[1], e->p.port[1], &iov, 1, 0,
						  0, &id), 0);
	assert_int_equal(th_take(plain, 0, c), HOMA_DATA_HDR_LEN + 5);
	assert_true(inject(e, c->buf, (size_t)c->len) >= HOMA_INPUT_DROPPED);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_NOT_PSP), 1);
	assert_int_equal(homa_engine_next_event(e->p.e[1], &ev), 0);
	homa_engine_free(plain);
	free(c);
	echo(e, 1000, 9);
	epair_free(e);
	free(e);
}

/**
 * psp_rotation__in_flight_rpcs_complete() - A long RPC is in flight when
 * the server rotates its master key: it completes (the SPI's key is kept
 * for one rotation). The client re-learns an SPI of the new key before
 * the second rotation and RPCs keep completing; the old SPI is then
 * expired, and its packets are rejected as such.
 */
static void psp_rotation__in_flight_rpcs_complete(void **state)
{
	static uint8_t buf[2000000];
	struct epair *e = calloc(1, sizeof(*e));
	struct homa_iov iov = {buf, sizeof(buf)};
	struct homa_event ev;
	uint64_t id;

	epair_init(e, HOMA_PSP_AES_GCM_128);
	echo(e, 5000, 10);
	th_pattern(buf, sizeof(buf), 11);
	assert_int_equal(homa_engine_send_request(e->p.e[0], &e->p.addr[1], e->p.port[1], &iov, 1,
						  11, e->p.now, &id), 0);
	th_pair_run(&e->p, 100000);  /* part of it is across */
	assert_int_equal(homa_engine_next_event(e->p.e[0], &ev), 0);
	assert_int_equal(homa_psp_rx_rotate(e->psp[1], NULL), 0);
	assert_int_equal(homa_psp_rx_rotate(e->psp[0], NULL), 0);
	th_pair_run(&e->p, 10000000000ull);
	assert_int_equal(homa_engine_next_event(e->p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_RESPONSE);
	assert_true(th_check_pattern(ev.msg, 11));
	homa_engine_msg_release(e->p.e[0], ev.msg);
	assert_int_equal(total_rejected(e), 0);
	/* re-ask (both ways) under the new keys, then rotate again */
	associate(e, 0, 1);
	associate(e, 1, 0);
	assert_int_equal(homa_psp_rx_rotate(e->psp[1], NULL), 0);
	assert_int_equal(homa_psp_rx_rotate(e->psp[0], NULL), 0);
	echo(e, 300000, 12);
	assert_int_equal(total_rejected(e), 0);
	assert_true(inject(e, e->tap.pkt[0], e->tap.len[0]) >= HOMA_INPUT_DROPPED);
	assert_int_equal(rejected(e, HOMA_PSP_REJ_EXPIRED_SPI), 1);
	epair_free(e);
	free(e);
}

/**
 * psp_rotation__expired_spi_rejected() - A sender that never re-asks
 * sends with an SPI that expired after two rotations: every packet is
 * rejected as "expired SPI" and the RPC fails (timeout), never delivered.
 */
static void psp_rotation__expired_spi_rejected(void **state)
{
	struct epair *e = calloc(1, sizeof(*e));
	struct homa_iov iov = {"x", 1};
	struct homa_event ev;
	uint64_t id;

	epair_init(e, HOMA_PSP_AES_GCM_128);
	assert_int_equal(homa_psp_rx_rotate(e->psp[1], NULL), 0);
	assert_int_equal(homa_psp_rx_rotate(e->psp[1], NULL), 0);
	assert_int_equal(homa_engine_send_request(e->p.e[0], &e->p.addr[1], e->p.port[1], &iov, 1,
						  0, e->p.now, &id), 0);
	th_pair_run(&e->p, 60000000000ull);
	assert_int_equal(homa_engine_next_event(e->p.e[0], &ev), 1);
	assert_int_equal(ev.type, HOMA_EV_ERROR);
	assert_true(rejected(e, HOMA_PSP_REJ_EXPIRED_SPI) >= 1);
	assert_int_equal(total_rejected(e), rejected(e, HOMA_PSP_REJ_EXPIRED_SPI));
	assert_int_equal(homa_engine_next_event(e->p.e[1], &ev), 0);
	epair_free(e);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(psp_attack__every_bit_flipped),
		cmocka_unit_test(psp_attack__truncated),
		cmocka_unit_test(psp_attack__forged_and_wrong_keys),
		cmocka_unit_test(psp_attack__replays),
		cmocka_unit_test(psp_attack__cleartext_dropped),
		cmocka_unit_test(psp_rotation__in_flight_rpcs_complete),
		cmocka_unit_test(psp_rotation__expired_spi_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
