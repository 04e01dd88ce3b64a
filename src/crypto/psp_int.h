/* SPDX-License-Identifier: MIT */
/**
 * @file psp_int.h
 * Internals of the PSP module: the header codec, key derivation, cipher
 * contexts, replay windows and the two association tables.
 */
#ifndef HOMA_CRYPTO_PSP_INT_H
#define HOMA_CRYPTO_PSP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "homa/psp.h"

/** Most SPIs one endpoint has issued at a time (receive side state is bounded). */
#define PSP_MAX_RX 65536

/** Bytes of Homa header left in clear (the common header). */
#define PSP_CLEAR_LEN (HOMA_PSP_CRYPT_OFF * 4)

/** The fields of a PSP header. */
struct psp_hdr {
	uint8_t next_hdr;
	uint8_t ext_len;     /**< 8-byte units after the first 8 */
	uint8_t crypt_off;   /**< 4-byte units */
	uint8_t version;
	uint32_t spi;
	uint64_t iv;
};

/* hdr.c */
/** psp_hdr_write() - Write @h as 16 bytes at @out (S, D, V flags zero). */
void psp_hdr_write(const struct psp_hdr *h, uint8_t *out);
/**
 * psp_hdr_read() - Parse the 16 bytes at @in into @h.
 * Return: 0; -1 - HOMA_PSP_REJ_NOT_PSP (next header or length is not
 * ours) or -1 - HOMA_PSP_REJ_BAD_HEADER (offset, reserved bits, flags).
 */
int psp_hdr_read(const uint8_t *in, struct psp_hdr *h);

/* aead.c */
/**
 * A key installed in an AES-GCM context, for one direction. The nonce
 * (SPI || IV) is handed to OpenSSL's GCM provider as a fixed part and an
 * invocation field (aead.c), not through EVP_CipherInit_ex() per packet.
 */
struct psp_aead {
	EVP_CIPHER_CTX *ctx;
	bool encrypt;
	bool fixed_set;      /**< the provider holds @fixed (and, sealing, the next nonce) */
	uint8_t fixed[4];    /**< the nonce's first 4 bytes (the SPI) the provider holds */
	uint64_t nonce_inits; /**< nonces set through EVP_CipherInit_ex() (re-syncs) */
};
/**
 * psp_aead_init() - Create @a's context with @key for @version (@encrypt:
 * sealing, else opening). Return: 0, HOMA_ENOMEM or HOMA_EIO.
 */
int psp_aead_init(struct psp_aead *a, EVP_CIPHER *cipher, const uint8_t *key, bool encrypt);
/** psp_aead_free() - Free @a's context (zeroes the key). */
void psp_aead_free(struct psp_aead *a);
/**
 * psp_aead_seal() - Encrypt @n bytes at @data in place with @nonce (12
 * bytes), authenticating @aad_len bytes at @aad first; write the tag.
 * Return: 0 or HOMA_EIO.
 */
int psp_aead_seal(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		  size_t aad_len, uint8_t *data, size_t n, uint8_t *tag);
/**
 * psp_aead_seal_ext() - psp_aead_seal() of @n bytes at @data (in place)
 * followed by the @nsrc pieces at @src, read there and written,
 * encrypted, at @data + @n onwards (out of place: one pass, no copy
 * first). No piece may overlap the bytes written. Return: 0 or HOMA_EIO.
 */
int psp_aead_seal_ext(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		      size_t aad_len, uint8_t *data, size_t n, const struct homa_iov *src, int nsrc,
		      uint8_t *tag);
/**
 * psp_aead_open() - Decrypt in place and check @tag. Return: 0, or -1 if
 * the packet does not authenticate (the bytes are then garbage).
 */
int psp_aead_open(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		  size_t aad_len, uint8_t *data, size_t n, const uint8_t *tag);

/* replay.c */
/** Sliding replay window over the IVs of one receive SPI. */
struct psp_replay {
	uint64_t top;        /**< highest IV accepted (0: none yet) */
	uint64_t bits[HOMA_PSP_REPLAY_WINDOW / 64 + 1]; /**< one spare word: no aliasing */
};
/**
 * psp_replay_check() - May @iv be accepted? Return: 0, or -1 -
 * HOMA_PSP_REJ_REPLAY / HOMA_PSP_REJ_TOO_OLD. Does not change @w.
 */
int psp_replay_check(const struct psp_replay *w, uint64_t iv);
/** psp_replay_mark() - Record @iv (after it authenticated and passed the check). */
void psp_replay_mark(struct psp_replay *w, uint64_t iv);

/* rxtab.c */
/** One issued receive SPI. */
struct psp_rx {
	uint32_t spi;
	bool used;
	struct psp_aead aead;
	struct psp_replay win;
};
/** Open-addressing table of issued SPIs (power-of-two capacity). */
struct psp_rxtab {
	struct psp_rx **slots;  /**< NULL empty; tomb marks deleted */
	size_t cap, used, tomb;
};
/** psp_rxtab_find() - The entry of @spi, or NULL. */
struct psp_rx *psp_rxtab_find(const struct psp_rxtab *t, uint32_t spi);
/** psp_rxtab_add() - Insert @r (its spi must be absent). Return: 0 or HOMA_ENOMEM. */
int psp_rxtab_add(struct psp_rxtab *t, struct psp_rx *r);
/** psp_rxtab_remove_if() - Remove (and pass to @fn) every entry @pred accepts. */
void psp_rxtab_remove_if(struct psp_rxtab *t, bool (*pred)(const struct psp_rx *, void *),
			 void *ctx, void (*fn)(struct psp_rx *));
/** psp_rxtab_count() - Entries in @t. */
size_t psp_rxtab_count(const struct psp_rxtab *t);

/* txtab.c */
/** One send association. */
struct psp_tx {
	struct psp_tx *next;
	homa_addr dst;
	uint16_t dport;
	uint8_t version;
	uint32_t spi;
	uint64_t iv;          /**< last IV used; the next packet uses iv + 1 */
	struct psp_aead aead;
};
/** Chained hash of send associations by (address, port). */
struct psp_txtab {
	struct psp_tx **buckets;
	size_t nbuckets, count;
};
/** psp_txtab_find() - The association of @dst:@dport, or NULL. */
struct psp_tx *psp_txtab_find(const struct psp_txtab *t, const homa_addr *dst, uint16_t dport);
/** psp_txtab_insert() - Insert @x (growing the table). Return: 0 or HOMA_ENOMEM. */
int psp_txtab_insert(struct psp_txtab *t, struct psp_tx *x);
/** psp_txtab_unlink() - Remove and return @dst:@dport's association, or NULL. */
struct psp_tx *psp_txtab_unlink(struct psp_txtab *t, const homa_addr *dst, uint16_t dport);
/** psp_txtab_free() - Free every association and the table. */
void psp_txtab_free(struct psp_txtab *t);

/** One endpoint's PSP state (include/homa/psp.h). */
struct homa_psp {
	int version;
	EVP_CIPHER *gcm128, *gcm256;  /**< fetched once */
	EVP_MAC *cmac;
	uint8_t master[2][HOMA_PSP_MASTER_KEY_LEN];
	int phase;                    /**< master key new SPIs use */
	uint32_t next_spi[2];         /**< next SPI number (31 bits) per phase */
	uint32_t first_spi[2];        /**< first SPI number of the phase's current key */
	struct psp_rxtab rx;
	struct psp_txtab tx;
	struct homa_psp_stats st;
};

/* kdf.c */
/** psp_derive() - @spi's key (@p's version) from the master key its top bit selects. */
int psp_derive(const homa_psp *p, uint32_t spi, uint8_t *key);

/** psp_cipher() - The fetched cipher of @version, or NULL. */
EVP_CIPHER *psp_cipher(const homa_psp *p, int version);

#endif /* HOMA_CRYPTO_PSP_INT_H */
