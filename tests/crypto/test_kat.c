/* SPDX-License-Identifier: MIT */
/**
 * @file test_kat.c
 * Known answers: key derivation and packet sealing cross-checked against
 * an independent implementation (tests/crypto/psp_ref.py on Debian's
 * python3-cryptography), for both key phases, both AES key sizes, AES-GCM
 * and AES-GMAC (integrity only), and packets sealed by either side opened
 * by the other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/psp.h"

/** hex() - Write @n bytes of @p as lowercase hex into @out (2n+1 bytes). */
static char *hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = 0;
	return out;
}

/** Commands for the reference and its answers, run in one batch. */
struct batch {
	char *cmds;           /**< newline-separated commands */
	size_t len, cap;
	char *ans[128];       /**< answer of command i (malloc'd) */
	int n;
};

/** cmd() - Queue the command @args. Return: its index. */
static int cmd(struct batch *b, const char *args)
{
	size_t n = strlen(args);

	assert_true(b->n < 128);
	if (b->len + n + 2 > b->cap) {
		b->cap = (b->len + n + 2) * 2;
		b->cmds = realloc(b->cmds, b->cap);
		assert_non_null(b->cmds);
	}
	memcpy(b->cmds + b->len, args, n);
	b->len += n;
	b->cmds[b->len++] = '\n';
	b->cmds[b->len] = 0;
	return b->n++;
}

/** run() - Run every queued command through psp_ref.py once; collect the answers. */
static void run(struct batch *b)
{
	static char line[40000];
	char path[] = "/tmp/homa_psp_kat_XXXXXX", sh[512];
	int fd = mkstemp(path);
	FILE *f;
	int i = 0;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->cmds, b->len), (ssize_t)b->len);
	close(fd);
	snprintf(sh, sizeof(sh), "%s batch < %s", PSP_REF, path);
	f = popen(sh, "r");
	assert_non_null(f);
	while (i < b->n && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		b->ans[i++] = strdup(line);
	}
	assert_int_equal(pclose(f), 0);
	unlink(path);
	assert_int_equal(i, b->n);
}

/** batch_free() - Free the commands and answers. */
static void batch_free(struct batch *b)
{
	for (int i = 0; i < b->n; i++)
		free(b->ans[i]);
	free(b->cmds);
}

/** fill() - Deterministic test bytes. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/**
 * homa_psp_derive__matches_reference() - Keys of SPIs of both phases for
 * all four versions equal the reference's.
 */
static void homa_psp_derive__matches_reference(void **state)
{
	static const uint32_t spis[] = {0x00000001, 0x12345678, 0x80000001, 0xfedcba98};
	const size_t n = sizeof(spis) / sizeof(spis[0]);
	uint8_t master[32], key[32];
	char mh[65], kh[4][4][65], args[256];
	struct batch b = {0};

	for (int v = 0; v <= 3; v++)
		for (size_t i = 0; i < n; i++) {
			fill(master, sizeof(master), (uint32_t)(7 * i + v));
			assert_int_equal(homa_psp_derive(master, v, spis[i], key), 0);
			hex(key, homa_psp_key_len(v), kh[v][i]);
			snprintf(args, sizeof(args), "derive %s %d 0x%08x", hex(master, 32, mh), v,
				 spis[i]);
			cmd(&b, args);
		}
	run(&b);
	for (int v = 0; v <= 3; v++)
		for (size_t i = 0; i < n; i++)
			assert_string_equal(kh[v][i], b.ans[v * n + i]);
	batch_free(&b);
}

/** homa_psp_derive__bad_arguments() - Unknown versions and NULLs are HOMA_EINVAL. */
static void homa_psp_derive__bad_arguments(void **state)
{
	uint8_t master[32] = {0}, key[32];

	assert_int_equal(homa_psp_derive(master, 4, 1, key), HOMA_EINVAL);
	assert_int_equal(homa_psp_derive(master, -1, 1, key), HOMA_EINVAL);
	assert_int_equal(homa_psp_derive(NULL, 0, 1, key), HOMA_EINVAL);
	assert_int_equal(homa_psp_derive(master, 0, 1, NULL), HOMA_EINVAL);
}

/** One sealing case: inputs, our results, and the indices of its reference answers. */
struct seal_case {
	int v, phase;
	size_t len;
	uint8_t orig[1500], ours[1600];
	/** homa_psp_seal_ext() of orig, split at 28 and 70 bytes; homa_psp_seal_extv() at 28 in 3 pieces */
	uint8_t ext[3][1600];
	char key_hex[65];
	homa_psp *rx;
	int ref_seal, ref_open, ref_seal2, ref_open_bad;
};

/**
 * seal_prepare() - A receiver (version @c->v, master keys from @seed)
 * issues an SPI in phase @c->phase; a sender seals a @c->len-byte packet;
 * queue the reference's seal of the same packet (IV 1), its opening of
 * ours (and of ours with a clear-header bit flipped), and its seal with
 * IV 2 for us to open.
 */
static void seal_prepare(struct seal_case *c, struct batch *b, uint32_t seed)
{
	static char args[12000], h[6000];
	uint8_t master[64], key[32];
	homa_addr dst = homa_addr_ipv4(0x0a000002);
	homa_psp *tx;
	uint32_t spi;

	fill(master, sizeof(master), seed);
	assert_int_equal(homa_psp_new(&c->rx, c->v, master), 0);
	assert_int_equal(homa_psp_new(&tx, c->v, NULL), 0);
	if (c->phase)
		assert_int_equal(homa_psp_rx_rotate(c->rx, master + 32), 0);
	assert_int_equal(homa_psp_rx_issue(c->rx, &spi, key), 0);
	assert_int_equal((int)(spi >> 31), c->phase);
	fill(c->orig, c->len, seed + 1);
	c->orig[2] = 0x0f, c->orig[3] = 0xa0;  /* destination port 4000 */
	assert_int_equal(homa_psp_tx_add(tx, &dst, 4000, spi, key, c->v), 0);
	memcpy(c->ours, c->orig, c->len);
	assert_int_equal(homa_psp_seal(tx, &dst, c->ours, c->len, sizeof(c->ours)),
			 (int)c->len + HOMA_PSP_OVERHEAD);
	homa_psp_free(tx);
	for (int k = 0; k < 3; k++) {  /* the same with the payload elsewhere (IV 1 again) */
		size_t split = k == 1 && c->len > 70 ? 70 : 28;
		uint8_t *elsewhere = malloc(c->len);

		assert_non_null(elsewhere);
		memcpy(elsewhere, c->orig, c->len);
		assert_int_equal(homa_psp_new(&tx, c->v, NULL), 0);
		assert_int_equal(homa_psp_tx_add(tx, &dst, 4000, spi, key, c->v), 0);
		memcpy(c->ext[k], c->orig, split);
		if (k < 2) {
			assert_int_equal(homa_psp_seal_ext(tx, &dst, c->ext[k], split, elsewhere + split,
							   c->len - split, c->len + HOMA_PSP_OVERHEAD),
					 (int)c->len + HOMA_PSP_OVERHEAD);
		} else {  /* pieces of 5, 17 and the rest bytes (fewer if short), one empty */
			size_t rest = c->len - split, a = rest < 5 ? rest : 5;
			size_t b2 = rest - a < 17 ? rest - a : 17;
			struct homa_iov v[4] = {{elsewhere + split, a}, {NULL, 0},
						{elsewhere + split + a, b2},
						{elsewhere + split + a + b2, rest - a - b2}};

			assert_int_equal(homa_psp_seal_extv(tx, &dst, c->ext[k], split, v, 4,
							    c->len + HOMA_PSP_OVERHEAD),
					 (int)c->len + HOMA_PSP_OVERHEAD);
		}
		assert_memory_equal(elsewhere, c->orig, c->len);  /* only read */
		free(elsewhere);
		homa_psp_free(tx);
	}
	hex(key, homa_psp_key_len(c->v), c->key_hex);
	for (int iv = 1; iv <= 2; iv++) {
		snprintf(args, sizeof(args), "seal %s %d 0x%08x %d %s", c->key_hex, c->v, spi, iv,
			 hex(c->orig, c->len, h));
		*(iv == 1 ? &c->ref_seal : &c->ref_seal2) = cmd(b, args);
	}
	snprintf(args, sizeof(args), "open %s %s", c->key_hex,
		 hex(c->ours, c->len + HOMA_PSP_OVERHEAD, h));
	c->ref_open = cmd(b, args);
	c->ours[20] ^= 0x10;  /* a bit of the clear header: authenticated too */
	snprintf(args, sizeof(args), "open %s %s", c->key_hex,
		 hex(c->ours, c->len + HOMA_PSP_OVERHEAD, h));
	c->ref_open_bad = cmd(b, args);
	c->ours[20] ^= 0x10;
}

/** seal_check() - Compare @c with the reference's answers; open its packet. */
static void seal_check(struct seal_case *c, struct batch *b)
{
	static char h[6000];
	static uint8_t theirs[1600];
	size_t n = c->len + HOMA_PSP_OVERHEAD;

	assert_string_equal(hex(c->ours, n, h), b->ans[c->ref_seal]);
	assert_string_equal(hex(c->ext[0], n, h), b->ans[c->ref_seal]);
	assert_string_equal(hex(c->ext[1], n, h), b->ans[c->ref_seal]);
	assert_string_equal(hex(c->ext[2], n, h), b->ans[c->ref_seal]);
	assert_string_equal(hex(c->orig, c->len, h), b->ans[c->ref_open]);
	assert_int_equal(strlen(b->ans[c->ref_seal2]), 2 * n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sscanf(b->ans[c->ref_seal2] + 2 * i, "%2hhx", &theirs[i]), 1);
	assert_int_equal(homa_psp_open(c->rx, theirs, n), (int)c->len);
	assert_memory_equal(theirs, c->orig, c->len);
	assert_string_equal(b->ans[c->ref_open_bad], "reject");
	homa_psp_free(c->rx);
}

/**
 * homa_psp_seal__matches_reference() - All four versions, both phases, a
 * header-only packet and a full one: our sealed bytes equal the
 * reference's, also when homa_psp_seal_ext() reads all but the first 28
 * or 70 bytes from elsewhere, and when homa_psp_seal_extv() reads them
 * in pieces of 5, 0, 17 and the rest bytes; each side opens the other's
 * packets.
 */
static void homa_psp_seal__matches_reference(void **state)
{
	static struct seal_case c[16];
	struct batch b = {0};
	int k = 0;

	for (int v = 0; v <= 3; v++)
		for (int phase = 0; phase <= 1; phase++)
			for (int big = 0; big <= 1; big++, k++) {
				c[k] = (struct seal_case){.v = v, .phase = phase,
							  .len = big ? 1440 : 28};
				seal_prepare(&c[k], &b, (uint32_t)(11 + k));
			}
	run(&b);
	for (k = 0; k < 16; k++)
		seal_check(&c[k], &b);
	batch_free(&b);
}

/**
 * homa_psp_seal__layout() - The header fields on the wire: next header
 * 146, extension length 1, crypt offset 7, version, SPI and IV big-endian
 * (IVs count from 1), the common header in clear.
 */
static void homa_psp_seal__layout(void **state)
{
	uint8_t pkt[200] = {0}, key32[32] = {2};
	homa_addr dst = homa_addr_ipv4(0x0a000002);
	homa_psp *tx;

	assert_int_equal(homa_psp_new(&tx, HOMA_PSP_AES_GCM_128, NULL), 0);
	assert_int_equal(homa_psp_tx_add(tx, &dst, 0x0102, 0x80000005, key32, 7), HOMA_EINVAL);

	assert_int_equal(homa_psp_tx_add(tx, &dst, 0x0102, 0x80000005, key32, 1), 0);
	for (int i = 0; i < 28; i++)
		pkt[i] = (uint8_t)(i + 1);
	pkt[2] = 1, pkt[3] = 2;
	assert_int_equal(homa_psp_seal(tx, &dst, pkt, 100, sizeof(pkt)), 132);
	assert_int_equal(pkt[0], 146);
	assert_int_equal(pkt[1], 1);
	assert_int_equal(pkt[2], 7);
	assert_int_equal(pkt[3], (1 << 2) | 1);
	assert_memory_equal(pkt + 4, "\x80\x00\x00\x05\0\0\0\0\0\0\0\x01", 12);
	assert_int_equal(pkt[16], 1);
	assert_int_equal(pkt[18], 1);
	assert_int_equal(pkt[16 + 27], 28);
	assert_int_equal(homa_psp_seal(tx, &dst, pkt + 50, 100, 131), HOMA_ENOSPC);
	homa_addr other = homa_addr_ipv4(0x0a000003);

	pkt[2] = 1, pkt[3] = 2;
	assert_int_equal(homa_psp_seal(tx, &other, pkt, 100, sizeof(pkt)), HOMA_ENOASSOC);
	assert_int_equal(homa_psp_seal(tx, &dst, pkt, 27, sizeof(pkt)), HOMA_EINVAL);
	assert_int_equal(homa_psp_seal_ext(tx, &dst, pkt, 28, NULL, 10, sizeof(pkt)), HOMA_EINVAL);
	assert_int_equal(homa_psp_seal_ext(tx, &dst, pkt, 28, key32, 32, 28 + 32 + 31),
			 HOMA_ENOSPC);
	homa_psp_free(tx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_psp_derive__matches_reference),
		cmocka_unit_test(homa_psp_derive__bad_arguments),
		cmocka_unit_test(homa_psp_seal__matches_reference),
		cmocka_unit_test(homa_psp_seal__layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
