/* SPDX-License-Identifier: MIT */
/**
 * @file test_enc_open.c
 * Opening received batches of an encrypted socket (src/runtime/
 * encrypt_pkt.c homa_rt_enc_open_rx(), and homa_psp_open_view() under
 * it): a packet the engine only reads is decrypted in place and handed on
 * where it travelled, after the PSP header, with no pass moving it back;
 * a buffer the engine may keep (lendable) starts with the Homa packet;
 * a forged packet is dropped from the batch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "enc.h"
#include "homa/psp.h"

enum { HOMA_LEN = 1000, PKT_LEN = HOMA_LEN + HOMA_PSP_OVERHEAD, DPORT = 40000 };

/** A receiving socket's encryption state and a sender that can seal to it. */
struct fixture {
	homa_psp *rx, *tx;
	struct rt_enc x;
	struct homa_rt *rt;
	struct homa_driver drv;  /**< the runtime's: only lend_by_start is read */
	homa_addr dst;
	uint8_t clear[HOMA_LEN];
};

/** setup() - The receiver's PSP state inside a runtime, and a sender associated with it. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint8_t master[64], key[32];  /* two master keys, phase 0 then 1 */
	uint32_t spi;

	assert_non_null(f);
	for (int i = 0; i < 64; i++)
		master[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(homa_psp_new(&f->rx, HOMA_PSP_AES_GCM_128, master), 0);
	master[0] ^= 0xff;
	assert_int_equal(homa_psp_new(&f->tx, HOMA_PSP_AES_GCM_128, master), 0);
	f->dst = homa_addr_ipv4(0x7f000001);
	assert_int_equal(homa_psp_rx_issue(f->rx, &spi, key), 0);
	assert_int_equal(homa_psp_tx_add(f->tx, &f->dst, DPORT, spi, key, HOMA_PSP_AES_GCM_128), 0);
	f->rt = calloc(1, sizeof(*f->rt));
	assert_non_null(f->rt);
	assert_int_equal(pthread_mutex_init(&f->x.mu, NULL), 0);
	f->x.psp = f->rx;
	f->rt->enc = &f->x;
	f->rt->drv = &f->drv;
	for (int i = 0; i < HOMA_LEN; i++)
		f->clear[i] = (uint8_t)(i * 13 + 5);
	f->clear[2] = DPORT >> 8, f->clear[3] = DPORT & 0xff;  /* the common header's dport */
	*state = f;
	return 0;
}

/** teardown() - Free what setup() made. */
static int teardown(void **state)
{
	struct fixture *f = *state;

	pthread_mutex_destroy(&f->x.mu);
	homa_psp_free(f->rx);
	homa_psp_free(f->tx);
	free(f->rt);
	free(f);
	return 0;
}

/** sealed() - @f's clear packet sealed into @buf (HOMA_LEN + overhead bytes). */
static size_t sealed(struct fixture *f, uint8_t *buf)
{
	int n;

	memcpy(buf, f->clear, HOMA_LEN);
	n = homa_psp_seal(f->tx, &f->dst, buf, HOMA_LEN, HOMA_LEN + HOMA_PSP_OVERHEAD);
	assert_int_equal(n, HOMA_LEN + HOMA_PSP_OVERHEAD);
	return (size_t)n;
}

/** batch() - @n sealed packets in @buf as a received batch @rx (not lendable). */
static void batch(struct fixture *f, uint8_t (*buf)[PKT_LEN], struct homa_io_rx *rx, int n)
{
	for (int i = 0; i < n; i++)
		rx[i] = (struct homa_io_rx){.data = buf[i], .len = sealed(f, buf[i])};
}

/**
 * enc_open__view_not_moved() - A batch of two packets the engine only
 * reads: each comes out at buf + HOMA_PSP_HDR_LEN with the clear bytes,
 * its PSP header still in front of it (nothing was moved back); the
 * receiver counted two opened. Moving the packet to the buffer's start
 * (homa_psp_open()) fails the pointer and header checks.
 */
static void enc_open__view_not_moved(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[2][PKT_LEN], hdr[2][HOMA_PSP_HDR_LEN];
	struct homa_io_rx rx[2] = {{0}};
	struct homa_psp_stats st;
	int rejected = -1;

	batch(f, buf, rx, 2);
	for (int i = 0; i < 2; i++)
		memcpy(hdr[i], buf[i], HOMA_PSP_HDR_LEN);
	assert_int_equal(homa_rt_enc_open_rx(f->rt, rx, 2, &rejected), 2);
	assert_int_equal(rejected, 0);
	for (int i = 0; i < 2; i++) {
		assert_ptr_equal(rx[i].data, buf[i] + HOMA_PSP_HDR_LEN);
		assert_int_equal(rx[i].len, HOMA_LEN);
		assert_memory_equal(rx[i].data, f->clear, HOMA_LEN);
		assert_memory_equal(buf[i], hdr[i], HOMA_PSP_HDR_LEN);
	}
	homa_psp_get_stats(f->rx, &st);
	assert_int_equal(st.opened, 2);
}

/**
 * enc_open__lendable_at_start() - A buffer the engine may keep and the
 * driver knows by its start (a lent XDP frame) gets the Homa packet at
 * its start.
 */
static void enc_open__lendable_at_start(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[HOMA_LEN + HOMA_PSP_OVERHEAD];
	struct homa_io_rx rx = {.data = buf, .lendable = true};
	int rejected = -1;

	f->drv.lend_by_start = true;
	rx.len = sealed(f, buf);
	assert_int_equal(homa_rt_enc_open_rx(f->rt, &rx, 1, &rejected), 1);
	assert_int_equal(rejected, 0);
	assert_ptr_equal(rx.data, buf);
	assert_int_equal(rx.len, HOMA_LEN);
	assert_memory_equal(buf, f->clear, HOMA_LEN);
}

/**
 * enc_open__lendable_in_place() - A buffer the engine may keep that the
 * driver knows by any address inside it (the UDP driver's lend pool) is
 * opened in place, as one it may not keep: no pass moves the bytes.
 */
static void enc_open__lendable_in_place(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[HOMA_LEN + HOMA_PSP_OVERHEAD];
	struct homa_io_rx rx = {.data = buf, .lendable = true};
	int rejected = -1;

	rx.len = sealed(f, buf);
	assert_int_equal(homa_rt_enc_open_rx(f->rt, &rx, 1, &rejected), 1);
	assert_int_equal(rejected, 0);
	assert_ptr_equal(rx.data, buf + HOMA_PSP_HDR_LEN);
	assert_int_equal(rx.len, HOMA_LEN);
	assert_memory_equal(rx.data, f->clear, HOMA_LEN);
}

/**
 * enc_open__forged_dropped() - Between two honest packets, one with a
 * flipped ciphertext bit is dropped from the batch and counted as auth;
 * the honest ones keep their order and bytes, and homa_psp_open_view()
 * leaves its out-pointer alone on a rejection.
 */
static void enc_open__forged_dropped(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[3][PKT_LEN], *homa = NULL;
	struct homa_io_rx rx[3] = {{0}};
	struct homa_psp_stats st;
	int rejected = -1;

	batch(f, buf, rx, 3);
	buf[1][HOMA_PSP_HDR_LEN + 100] ^= 0x04;
	assert_int_equal(homa_rt_enc_open_rx(f->rt, rx, 3, &rejected), 2);
	assert_int_equal(rejected, 1);
	assert_ptr_equal(rx[0].data, buf[0] + HOMA_PSP_HDR_LEN);
	assert_ptr_equal(rx[1].data, buf[2] + HOMA_PSP_HDR_LEN);
	assert_memory_equal(rx[1].data, f->clear, HOMA_LEN);
	homa_psp_get_stats(f->rx, &st);
	assert_int_equal(st.rejected[HOMA_PSP_REJ_AUTH], 1);
	assert_int_equal(homa_psp_open_view(f->rx, buf[1], sizeof(buf[1]), &homa), HOMA_EPROTO);
	assert_null(homa);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(enc_open__view_not_moved, setup, teardown),
		cmocka_unit_test_setup_teardown(enc_open__lendable_at_start, setup, teardown),
		cmocka_unit_test_setup_teardown(enc_open__lendable_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(enc_open__forged_dropped, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
