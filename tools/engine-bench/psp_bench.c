/* SPDX-License-Identifier: MIT */
/**
 * @file psp_bench.c
 * homa-psp-bench: nanoseconds to seal and open one packet. Two arms run
 * in alternating rounds in one process: "psp" is the library
 * (homa_psp_seal() then homa_psp_open(): one AES-GCM context per
 * association, keyed once, per packet only nonce, AAD, data and tag), and
 * "fresh" does the same AES-GCM work with a context created and keyed for
 * every packet (EVP_CIPHER_CTX_new + key schedule, on both sides), the
 * cost the per-association contexts avoid. Prints one line per size with
 * both arms' median over the rounds and their ratio.
 *
 *     homa-psp-bench [--size N]... [--packets N] [--rounds N]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "homa/psp.h"

/** now_ns() - CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/** A sender and a receiver with an association between them. */
struct pair {
	homa_psp *tx, *rx;
	homa_addr dst;
	uint8_t key[16];
};

/** pair_new() - Receiver issues an SPI, sender installs it for port 1. */
static int pair_new(struct pair *p)
{
	uint32_t spi;

	p->dst = homa_addr_ipv4(0x7f000001);
	if (homa_psp_new(&p->tx, HOMA_PSP_AES_GCM_128, NULL) ||
	    homa_psp_new(&p->rx, HOMA_PSP_AES_GCM_128, NULL) ||
	    homa_psp_rx_issue(p->rx, &spi, p->key) ||
	    homa_psp_tx_add(p->tx, &p->dst, 1, spi, p->key, HOMA_PSP_AES_GCM_128))
		return -1;
	return 0;
}

/** arm_psp() - ns per packet of @n seal+open of @size-byte packets through the library. */
static double arm_psp(struct pair *p, uint8_t *buf, size_t size, int n)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < n; i++) {
		memset(buf, 0, 28);
		buf[3] = 1;  /* destination port 1 */
		if (homa_psp_seal(p->tx, &p->dst, buf, size, size + HOMA_PSP_OVERHEAD) < 0 ||
		    homa_psp_open(p->rx, buf, size + HOMA_PSP_OVERHEAD) < 0) {
			fprintf(stderr, "homa-psp-bench: seal or open failed\n");
			exit(1);
		}
	}
	return (double)(now_ns() - t0) / n;
}

/** gcm() - One AES-128-GCM pass with a new context keyed with @key. Return: 0 on success. */
static int gcm(EVP_CIPHER *c, const uint8_t *key, const uint8_t *nonce, uint8_t *buf,
	       size_t size, uint8_t *tag, int enc)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int outl, ok;

	ok = x && EVP_CipherInit_ex2(x, c, key, nonce, enc, NULL) == 1 &&
	     EVP_CipherUpdate(x, NULL, &outl, buf, 44) == 1 &&
	     EVP_CipherUpdate(x, buf + 44, &outl, buf + 44, (int)size - 28) == 1 &&
	     (enc || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) == 1) &&
	     EVP_CipherFinal_ex(x, buf + size + 16, &outl) == 1 &&
	     (!enc || EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1);
	EVP_CIPHER_CTX_free(x);
	return ok ? 0 : -1;
}

/** arm_fresh() - ns per packet of @n seal+open with a keyed context made per packet. */
static double arm_fresh(EVP_CIPHER *c, const uint8_t *key, uint8_t *buf, size_t size, int n)
{
	uint8_t nonce[12] = {0}, tag[16];
	uint64_t t0 = now_ns();

	for (int i = 0; i < n; i++) {
		memcpy(nonce + 4, &i, sizeof(i));
		if (gcm(c, key, nonce, buf, size, tag, 1) || gcm(c, key, nonce, buf, size, tag, 0)) {
			fprintf(stderr, "homa-psp-bench: fresh-context GCM failed\n");
			exit(1);
		}
	}
	return (double)(now_ns() - t0) / n;
}

/** cmp_double() - qsort order. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/** run_size() - Alternate the arms for @rounds rounds at @size; print medians and ratio. */
static void run_size(struct pair *p, EVP_CIPHER *c, size_t size, int packets, int rounds)
{
	uint8_t *buf = calloc(1, size + 64);
	double *a = calloc((size_t)rounds, sizeof(double)), *b = calloc((size_t)rounds, sizeof(double));

	if (!buf || !a || !b)
		exit(1);
	for (int r = 0; r < rounds; r++) {
		a[r] = arm_psp(p, buf, size, packets);
		b[r] = arm_fresh(c, p->key, buf, size, packets);
	}
	qsort(a, (size_t)rounds, sizeof(double), cmp_double);
	qsort(b, (size_t)rounds, sizeof(double), cmp_double);
	printf("size %zu: psp %.0f ns/packet, fresh context %.0f ns/packet, psp/fresh %.2f "
	       "(seal+open, median of %d rounds of %d)\n",
	       size, a[rounds / 2], b[rounds / 2], a[rounds / 2] / b[rounds / 2], rounds, packets);
	free(buf);
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"size", required_argument, NULL, 's'},
					     {"packets", required_argument, NULL, 'n'},
					     {"rounds", required_argument, NULL, 'r'},
					     {NULL, 0, NULL, 0}};
	size_t sizes[16];
	int nsizes = 0, packets = 20000, rounds = 9, ch;
	struct pair p;
	EVP_CIPHER *c;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 's' && nsizes < 16 && atol(optarg) >= 28 && atol(optarg) <= 65000)
			sizes[nsizes++] = (size_t)atol(optarg);
		else if (ch == 'n' && atoi(optarg) > 0)
			packets = atoi(optarg);
		else if (ch == 'r' && atoi(optarg) > 0)
			rounds = atoi(optarg);
		else {
			fprintf(stderr, "usage: homa-psp-bench [--size 28..65000]... [--packets N] "
					"[--rounds N]\n");
			return 2;
		}
	}
	if (!nsizes) {
		sizes[nsizes++] = 100;
		sizes[nsizes++] = 1400;
	}
	c = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	if (!c || pair_new(&p)) {
		fprintf(stderr, "homa-psp-bench: setup failed\n");
		return 1;
	}
	for (int i = 0; i < nsizes; i++)
		run_size(&p, c, sizes[i], packets, rounds);
	homa_psp_free(p.tx);
	homa_psp_free(p.rx);
	EVP_CIPHER_free(c);
	return 0;
}
