/* SPDX-License-Identifier: MIT */
/**
 * @file psp.c
 * The PSP object: fetched algorithms, master keys and their rotation,
 * issuing receive SPIs, installing send associations, counters.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "psp_int.h"

/** Largest SPI number of a phase (the top bit is the phase). */
#define SPI_NUM_MAX 0x7fffffffu

/** psp_cipher() - See psp_int.h. */
EVP_CIPHER *psp_cipher(const homa_psp *p, int version)
{
	size_t len = homa_psp_key_len(version); /* GMAC is GCM with nothing to encrypt */

	return len == 16 ? p->gcm128 : len == 32 ? p->gcm256 : NULL;
}

/** homa_psp_new() - See psp.h. */
int homa_psp_new(homa_psp **out, int version, const uint8_t *master)
{
	homa_psp *p;

	if (!out || !homa_psp_key_len(version))
		return HOMA_EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return HOMA_ENOMEM;
	p->version = version;
	p->gcm128 = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	p->gcm256 = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	p->cmac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	p->next_spi[0] = p->next_spi[1] = p->first_spi[0] = p->first_spi[1] = 1;
	if (master)
		memcpy(p->master, master, sizeof(p->master));
	if (!p->gcm128 || !p->gcm256 || !p->cmac ||
	    (!master && RAND_bytes(&p->master[0][0], sizeof(p->master)) != 1)) {
		homa_psp_free(p);
		return HOMA_EIO;
	}
	*out = p;
	return 0;
}

/** free_rx() - Free one receive entry. */
static void free_rx(struct psp_rx *r)
{
	psp_aead_free(&r->aead);
	free(r);
}

/** any_rx() - Predicate that accepts every entry. */
static bool any_rx(const struct psp_rx *r, void *ctx)
{
	return true;
}

/** homa_psp_free() - See psp.h. Master keys are wiped. */
void homa_psp_free(homa_psp *p)
{
	if (!p)
		return;
	psp_rxtab_remove_if(&p->rx, any_rx, NULL, free_rx);
	psp_txtab_free(&p->tx);
	EVP_CIPHER_free(p->gcm128);
	EVP_CIPHER_free(p->gcm256);
	EVP_MAC_free(p->cmac);
	OPENSSL_cleanse(p->master, sizeof(p->master));
	free(p);
}

/** homa_psp_version() - See psp.h. */
int homa_psp_version(const homa_psp *p)
{
	return p ? p->version : HOMA_EINVAL;
}

/**
 * add_rx() - Create the receive entry of @spi (absent so far) and write
 * its key to @key if not NULL. Return: 0, HOMA_EAGAIN, HOMA_ENOMEM, HOMA_EIO.
 */
static int add_rx(homa_psp *p, uint32_t spi, uint8_t *key)
{
	uint8_t k[HOMA_PSP_MAX_KEY_LEN];
	struct psp_rx *r;
	int err;

	if (psp_rxtab_count(&p->rx) >= PSP_MAX_RX)
		return HOMA_EAGAIN;
	r = calloc(1, sizeof(*r));
	if (!r)
		return HOMA_ENOMEM;
	r->spi = spi;
	err = psp_derive(p, spi, k);
	if (!err)
		err = psp_aead_init(&r->aead, psp_cipher(p, p->version), k, false);
	if (!err)
		err = psp_rxtab_add(&p->rx, r);
	if (!err && key)
		memcpy(key, k, homa_psp_key_len(p->version));
	OPENSSL_cleanse(k, sizeof(k));
	if (err) {
		psp_aead_free(&r->aead);
		free(r);
		return err;
	}
	p->st.rx_assocs = psp_rxtab_count(&p->rx);
	return 0;
}

/** homa_psp_rx_issue() - See psp.h. */
int homa_psp_rx_issue(homa_psp *p, uint32_t *spi, uint8_t *key)
{
	int ph;
	uint32_t s;
	int err;

	if (!p || !spi || !key)
		return HOMA_EINVAL;
	ph = p->phase;
	if (p->next_spi[ph] > SPI_NUM_MAX)
		return HOMA_EAGAIN;
	s = (uint32_t)ph << 31 | p->next_spi[ph];
	err = add_rx(p, s, key);
	if (err)
		return err;
	p->next_spi[ph]++;
	*spi = s;
	return 0;
}

/** homa_psp_rx_accept() - See psp.h. An SPI number of a rotated-out key: HOMA_EKEYEXPIRED. */
int homa_psp_rx_accept(homa_psp *p, uint32_t spi, uint8_t *key)
{
	int ph = (int)(spi >> 31);
	uint32_t num = spi & SPI_NUM_MAX;
	int err;

	if (!p || num == 0)
		return HOMA_EINVAL;
	if (num < p->first_spi[ph])
		return HOMA_EKEYEXPIRED;
	if (psp_rxtab_find(&p->rx, spi))
		return key ? psp_derive(p, spi, key) : 0;
	err = add_rx(p, spi, key);
	if (!err && num >= p->next_spi[ph])
		p->next_spi[ph] = num + 1;
	return err;
}

/** in_phase() - Predicate: the entry's SPI belongs to phase *(int *)@ctx. */
static bool in_phase(const struct psp_rx *r, void *ctx)
{
	return (int)(r->spi >> 31) == *(int *)ctx;
}

/** homa_psp_rx_rotate() - See psp.h. */
int homa_psp_rx_rotate(homa_psp *p, const uint8_t *key)
{
	uint8_t k[HOMA_PSP_MASTER_KEY_LEN];
	int ph;

	if (!p)
		return HOMA_EINVAL;
	ph = 1 - p->phase;
	if (key)
		memcpy(k, key, sizeof(k));
	else if (RAND_bytes(k, sizeof(k)) != 1)
		return HOMA_EIO;
	psp_rxtab_remove_if(&p->rx, in_phase, &ph, free_rx);
	memcpy(p->master[ph], k, sizeof(k));
	OPENSSL_cleanse(k, sizeof(k));
	p->first_spi[ph] = p->next_spi[ph];
	p->phase = ph;
	p->st.rotations++;
	p->st.rx_assocs = psp_rxtab_count(&p->rx);
	return 0;
}

/** homa_psp_rx_phase() - See psp.h. */
int homa_psp_rx_phase(const homa_psp *p)
{
	return p ? p->phase : HOMA_EINVAL;
}

/** homa_psp_tx_add() - See psp.h. */
int homa_psp_tx_add(homa_psp *p, const homa_addr *dst, uint16_t dport, uint32_t spi,
		    const uint8_t *key, int version)
{
	struct psp_tx *x, *old;
	int err;

	if (!p || !dst || !key || !psp_cipher(p, version))
		return HOMA_EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return HOMA_ENOMEM;
	x->dst = *dst;
	x->dport = dport;
	x->spi = spi;
	x->version = (uint8_t)version;
	err = psp_aead_init(&x->aead, psp_cipher(p, version), key, true);
	if (err) {
		free(x);
		return err;
	}
	old = psp_txtab_unlink(&p->tx, dst, dport);
	if (old) {
		psp_aead_free(&old->aead);
		free(old);
	}
	err = psp_txtab_insert(&p->tx, x);
	if (err) {
		psp_aead_free(&x->aead);
		free(x);
	}
	p->st.tx_assocs = p->tx.count;
	return err;
}

/** homa_psp_tx_remove() - See psp.h. */
int homa_psp_tx_remove(homa_psp *p, const homa_addr *dst, uint16_t dport)
{
	struct psp_tx *x;

	if (!p || !dst)
		return HOMA_EINVAL;
	x = psp_txtab_unlink(&p->tx, dst, dport);
	if (!x)
		return HOMA_ENOASSOC;
	psp_aead_free(&x->aead);
	free(x);
	p->st.tx_assocs = p->tx.count;
	return 0;
}

/** homa_psp_tx_has() - See psp.h. */
bool homa_psp_tx_has(const homa_psp *p, const homa_addr *dst, uint16_t dport)
{
	return p && dst && psp_txtab_find(&p->tx, dst, dport) != NULL;
}

/** homa_psp_get_stats() - See psp.h. */
void homa_psp_get_stats(const homa_psp *p, struct homa_psp_stats *out)
{
	if (out && p)
		*out = p->st;
	else if (out)
		memset(out, 0, sizeof(*out));
}

/** homa_psp_reject_name() - See psp.h. */
const char *homa_psp_reject_name(int reason)
{
	static const char *const names[HOMA_PSP_REJ_REASONS] = {
		"not_psp", "truncated", "bad_header", "unknown_spi", "expired_spi", "auth",
		"replay", "too_old"};

	return reason >= 0 && reason < HOMA_PSP_REJ_REASONS ? names[reason] : "unknown";
}
