/* SPDX-License-Identifier: MIT */
/**
 * @file seal.c
 * Sealing and opening packets, and the engine hooks that do it.
 *
 * Sealed layout: PSP header (16) | Homa common header (28, clear) |
 * rest of the Homa packet (encrypted) | ICV (16). Nonce = SPI || IV,
 * which are bytes 4..15 of the header; AAD = header and clear part.
 * GMAC versions (2, 3) encrypt nothing: the AAD is the header and the
 * whole Homa packet, and the ICV is AES-GCM's tag over it.
 */
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "psp_int.h"

/** Bytes authenticated but not encrypted under GCM: the PSP header and the common header. */
#define AAD_LEN (HOMA_PSP_HDR_LEN + PSP_CLEAR_LEN)

/**
 * clear_len() - Bytes of a @len-byte Homa packet left in clear under
 * @version: the common header (GCM), or all of them (GMAC).
 */
static size_t clear_len(int version, size_t len)
{
	return version >= HOMA_PSP_AES_GMAC_128 ? len : PSP_CLEAR_LEN;
}

/**
 * ext_bytes() - The bytes of the @n pieces at @ext into *@total.
 * Return: false if a piece is NULL with bytes or the sum passes @max.
 */
static bool ext_bytes(const struct homa_iov *ext, int n, size_t max, size_t *total)
{
	*total = 0;
	for (int i = 0; i < n; i++) {
		if ((!ext[i].base && ext[i].len) || ext[i].len > max - *total)
			return false;
		*total += ext[i].len;
	}
	return true;
}

/**
 * seal() - Seal the Homa packet whose first @len bytes are at @pkt and
 * whose other bytes are the @next pieces at @ext: as homa_psp_seal() and
 * homa_psp_seal_extv() describe.
 */
static int seal(homa_psp *p, const homa_addr *dst, uint8_t *pkt, size_t len,
		const struct homa_iov *ext, int next, size_t cap)
{
	size_t total, ext_len, clear;
	struct psp_tx *x;
	struct psp_hdr h;
	int err;

	if (!p || !dst || !pkt || next < 0 || (next && !ext) || len < PSP_CLEAR_LEN ||
	    len > INT_MAX - HOMA_PSP_OVERHEAD ||
	    !ext_bytes(ext, next, INT_MAX - HOMA_PSP_OVERHEAD - len, &ext_len))
		return HOMA_EINVAL;
	total = len + ext_len;
	if (cap < HOMA_PSP_OVERHEAD || total > cap - HOMA_PSP_OVERHEAD) {
		p->st.seal_errors++;
		return HOMA_ENOSPC;
	}
	x = psp_txtab_find(&p->tx, dst, (uint16_t)(pkt[2] << 8 | pkt[3]));
	if (!x) {
		p->st.seal_no_assoc++;
		return HOMA_ENOASSOC;
	}
	if (x->iv == UINT64_MAX) {  /* never in practice: 2^64 packets */
		p->st.seal_errors++;
		return HOMA_EKEYEXPIRED;
	}
	h = (struct psp_hdr){.next_hdr = HOMA_PSP_NEXT_HDR, .ext_len = 1,
			     .crypt_off = HOMA_PSP_CRYPT_OFF, .version = x->version,
			     .spi = x->spi, .iv = ++x->iv};
	memmove(pkt + HOMA_PSP_HDR_LEN, pkt, len);
	psp_hdr_write(&h, pkt);
	clear = HOMA_PSP_HDR_LEN + clear_len(x->version, total);
	if (clear > HOMA_PSP_HDR_LEN + len) {  /* GMAC: the rest travels in clear too */
		for (int i = 0; i < next; i++) {
			if (ext[i].len)
				memcpy(pkt + HOMA_PSP_HDR_LEN + len, ext[i].base, ext[i].len);
			len += ext[i].len;
		}
		next = 0;
	}
	err = psp_aead_seal_ext(&x->aead, pkt + 4, pkt, clear, pkt + clear,
				HOMA_PSP_HDR_LEN + len - clear, ext, next,
				pkt + HOMA_PSP_HDR_LEN + total);
	if (err) {
		p->st.seal_errors++;
		return HOMA_EIO;
	}
	p->st.sealed++;
	return (int)(total + HOMA_PSP_OVERHEAD);
}

/** homa_psp_seal() - See psp.h. */
int homa_psp_seal(homa_psp *p, const homa_addr *dst, uint8_t *pkt, size_t len, size_t cap)
{
	return seal(p, dst, pkt, len, NULL, 0, cap);
}

/** homa_psp_seal_ext() - See psp.h. */
int homa_psp_seal_ext(homa_psp *p, const homa_addr *dst, uint8_t *pkt, size_t len,
		      const uint8_t *ext, size_t ext_len, size_t cap)
{
	struct homa_iov piece = {ext, ext_len};

	return seal(p, dst, pkt, len, &piece, 1, cap);
}

/** homa_psp_seal_extv() - See psp.h. */
int homa_psp_seal_extv(homa_psp *p, const homa_addr *dst, uint8_t *pkt, size_t len,
		       const struct homa_iov *ext, int n, size_t cap)
{
	return seal(p, dst, pkt, len, ext, n, cap);
}

/** reject() - Count a rejected packet by @reason. Return: HOMA_EPROTO. */
static int reject(homa_psp *p, int reason)
{
	p->st.rejected[reason]++;
	return HOMA_EPROTO;
}

/**
 * lookup() - The receive entry of @spi. Return: it, or NULL with *@why
 * set to HOMA_PSP_REJ_EXPIRED_SPI (issued under a rotated-out key) or
 * HOMA_PSP_REJ_UNKNOWN_SPI.
 */
static struct psp_rx *lookup(homa_psp *p, uint32_t spi, int *why)
{
	struct psp_rx *r = psp_rxtab_find(&p->rx, spi);
	uint32_t num = spi & 0x7fffffffu;

	if (!r)
		*why = num && num < p->first_spi[spi >> 31] ? HOMA_PSP_REJ_EXPIRED_SPI
							    : HOMA_PSP_REJ_UNKNOWN_SPI;
	return r;
}

/**
 * open_view() - Check and decrypt the sealed packet of @len bytes at @pkt
 * in place, leaving the Homa packet at @pkt + HOMA_PSP_HDR_LEN.
 * Return: as homa_psp_open().
 */
static int open_view(homa_psp *p, uint8_t *pkt, size_t len)
{
	struct psp_hdr h;
	struct psp_rx *r;
	size_t clear;
	int why;

	if (len < 2 || pkt[0] != HOMA_PSP_NEXT_HDR || pkt[1] != 1)
		return reject(p, HOMA_PSP_REJ_NOT_PSP);
	if (len < AAD_LEN + HOMA_PSP_ICV_LEN)
		return reject(p, HOMA_PSP_REJ_TRUNCATED);
	why = psp_hdr_read(pkt, &h);
	if (why)
		return reject(p, -1 - why);
	if (h.version != p->version)
		return reject(p, HOMA_PSP_REJ_BAD_HEADER);
	r = lookup(p, h.spi, &why);
	if (!r)
		return reject(p, why);
	why = psp_replay_check(&r->win, h.iv);
	if (why)
		return reject(p, -1 - why);
	clear = HOMA_PSP_HDR_LEN + clear_len(h.version, len - HOMA_PSP_OVERHEAD);
	if (psp_aead_open(&r->aead, pkt + 4, pkt, clear, pkt + clear,
			  len - clear - HOMA_PSP_ICV_LEN, pkt + len - HOMA_PSP_ICV_LEN))
		return reject(p, HOMA_PSP_REJ_AUTH);
	psp_replay_mark(&r->win, h.iv);
	p->st.opened++;
	return (int)(len - HOMA_PSP_OVERHEAD);
}

/** homa_psp_open() - See psp.h. */
int homa_psp_open(homa_psp *p, uint8_t *pkt, size_t len)
{
	int r;

	if (!p || !pkt || len > INT_MAX)
		return HOMA_EINVAL;
	r = open_view(p, pkt, len);
	if (r >= 0)
		memmove(pkt, pkt + HOMA_PSP_HDR_LEN, (size_t)r);
	return r;
}

/** homa_psp_open_view() - See psp.h. */
int homa_psp_open_view(homa_psp *p, uint8_t *pkt, size_t len, uint8_t **homa)
{
	int r;

	if (!p || !pkt || !homa || len > INT_MAX)
		return HOMA_EINVAL;
	r = open_view(p, pkt, len);
	if (r >= 0)
		*homa = pkt + HOMA_PSP_HDR_LEN;
	return r;
}

/** hook_seal() - The engine's seal_to hook: homa_psp_seal(). */
static int hook_seal(void *ctx, const homa_addr *dst, uint8_t *pkt, size_t hdr_len,
		     size_t len, size_t cap)
{
	return homa_psp_seal(ctx, dst, pkt, len, cap);
}

/** hook_open() - The engine's open hook: homa_psp_open(). */
static int hook_open(void *ctx, const homa_addr *src, uint8_t *pkt, size_t len)
{
	return homa_psp_open(ctx, pkt, len);
}

/** homa_psp_hooks() - See psp.h. */
struct homa_packet_hooks homa_psp_hooks(homa_psp *p)
{
	return (struct homa_packet_hooks){.open = hook_open, .seal_to = hook_seal,
					  .overhead = HOMA_PSP_OVERHEAD, .ctx = p};
}
