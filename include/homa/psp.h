/* SPDX-License-Identifier: MIT */
/**
 * @file psp.h
 * Authenticated encryption of every Homa packet in the PSP format
 * (library target `homa_crypto`; docs/ENCRYPTION.md).
 *
 * On the wire a sealed packet is: a 16-byte PSP header (next header 146,
 * crypt offset 7 words, version, SPI, 64-bit IV), the Homa packet whose
 * 28-byte common header stays in clear (authenticated, not encrypted),
 * the rest of the Homa packet encrypted with AES-GCM, and a 16-byte ICV.
 *
 * A homa_psp object is one endpoint's security state:
 * - receive side: two 256-bit master keys (the SPI's top bit selects one),
 *   rotated with homa_psp_rx_rotate(); the key of an SPI is derived from
 *   its master key (AES-256-CMAC, NIST SP 800-108 counter mode). Each SPI
 *   the endpoint hands out (homa_psp_rx_issue()) gets a replay window of
 *   HOMA_PSP_REPLAY_WINDOW packets over the IV; an SPI expires when its
 *   master key is rotated out (after two rotations).
 * - send side: associations destination (address and Homa port) -> SPI
 *   and key, installed with homa_psp_tx_add(), each with its own 64-bit
 *   IV counter and cipher context.
 *
 * homa_psp_hooks() gives the engine's packet hooks (engine.h): every
 * packet out is sealed, every packet in is opened, and anything that does
 * not authenticate (cleartext included) is dropped and counted by reason.
 *
 * Threading: a homa_psp is not thread-safe; the caller serializes all
 * calls on it, including the hooks (the runtime holds the socket lock).
 */
#ifndef HOMA_PSP_H
#define HOMA_PSP_H

#include "homa/export.h"

#include <stddef.h>
#include <stdint.h>

#include "homa/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HOMA_PSP_HDR_LEN 16        /**< PSP header bytes */
#define HOMA_PSP_ICV_LEN 16        /**< integrity check value (GCM tag) bytes */
#define HOMA_PSP_OVERHEAD 32       /**< bytes a sealed packet adds */
#define HOMA_PSP_NEXT_HDR 146      /**< next header: Homa (IANA IP protocol 146) */
#define HOMA_PSP_CRYPT_OFF 7       /**< crypt offset in 4-byte words: the 28-byte common header */
#define HOMA_PSP_UDP_PORT 1000     /**< the UDP port PSP assigns */
#define HOMA_PSP_MASTER_KEY_LEN 32 /**< bytes of a master key */
#define HOMA_PSP_MAX_KEY_LEN 32    /**< bytes of the largest derived key */
#define HOMA_PSP_REPLAY_WINDOW 2048 /**< packets (IVs) covered by a replay window */

/** PSP versions (the version field of the header). */
enum homa_psp_version {
	HOMA_PSP_AES_GCM_128 = 0,  /**< 16-byte keys */
	HOMA_PSP_AES_GCM_256 = 1,  /**< 32-byte keys */
	HOMA_PSP_AES_GMAC_128 = 2, /**< integrity only: nothing encrypted, the whole
				    *   packet authenticated; 16-byte keys */
	HOMA_PSP_AES_GMAC_256 = 3, /**< as GMAC-128 with 32-byte keys */
};

/** Why an incoming packet was rejected (homa_psp_stats.rejected[]). */
enum homa_psp_reject {
	HOMA_PSP_REJ_NOT_PSP = 0,   /**< no PSP header: cleartext Homa or other traffic */
	HOMA_PSP_REJ_TRUNCATED,     /**< too short for header, clear part and ICV */
	HOMA_PSP_REJ_BAD_HEADER,    /**< wrong next header, length, offset, flags or version */
	HOMA_PSP_REJ_UNKNOWN_SPI,   /**< an SPI this endpoint never issued */
	HOMA_PSP_REJ_EXPIRED_SPI,   /**< an SPI whose master key was rotated out */
	HOMA_PSP_REJ_AUTH,          /**< the ICV does not verify (forged or altered) */
	HOMA_PSP_REJ_REPLAY,        /**< an IV already received (inside the window) */
	HOMA_PSP_REJ_TOO_OLD,       /**< an IV left of the replay window */
	HOMA_PSP_REJ_REASONS
};

/** Counters of one homa_psp. */
struct homa_psp_stats {
	uint64_t sealed;            /**< packets sealed */
	uint64_t opened;            /**< packets that authenticated and were delivered */
	uint64_t seal_no_assoc;     /**< outgoing packets dropped: no association */
	uint64_t seal_errors;       /**< outgoing packets dropped: no room or cipher failure */
	uint64_t rejected[HOMA_PSP_REJ_REASONS]; /**< incoming packets dropped, by reason */
	uint64_t rx_assocs;         /**< receive SPIs currently issued */
	uint64_t tx_assocs;         /**< send associations currently installed */
	uint64_t rotations;         /**< master-key rotations */
	uint64_t kx_done;           /**< key exchanges this endpoint asked for that succeeded */
	uint64_t kx_failed;         /**< ... that failed */
	uint64_t kx_served;         /**< key exchanges this endpoint answered */
	uint64_t kx_refused;        /**< connections to its service that failed (certificate, ...) */
};

typedef struct homa_psp homa_psp;

/**
 * homa_psp_new() - Create the security state of one endpoint.
 * @out: receives it (caller owns; homa_psp_free()).
 * @version: enum homa_psp_version this endpoint receives with.
 * @master: two master keys (2 x 32 bytes, phase 0 then phase 1), or NULL
 *	to draw both from the OS random source.
 * Return: 0; HOMA_EINVAL (bad version, NULL @out); HOMA_ENOMEM;
 * HOMA_EIO (OpenSSL lacks AES-GCM/CMAC or the random source failed).
 */
HOMA_API int homa_psp_new(homa_psp **out, int version, const uint8_t *master);

/**
 * homa_psp_free() - Free @p and every association (NULL is ignored). @p
 * is freed: a second call with it is the caller's error.
 */
HOMA_API void homa_psp_free(homa_psp *p);

/** homa_psp_version() - The version @p receives with; HOMA_EINVAL for a NULL @p. */
HOMA_API int homa_psp_version(const homa_psp *p);

/**
 * homa_psp_key_len() - Bytes of a key of PSP @version (16 for versions 0
 * and 2, 32 for 1 and 3; 0 if unknown).
 */
HOMA_API size_t homa_psp_key_len(int version);

/**
 * homa_psp_derive() - The key of @spi under master key @master (32 bytes)
 * for @version: AES-256-CMAC in counter mode (NIST SP 800-108), one block
 * per 16 key bytes: counter (u32, from 1), label "Pv0" (128-bit keys:
 * versions 0 and 2) or "Pv1" (256-bit keys: 1 and 3), 0, SPI, key length
 * in bits (u32), all big-endian.
 * @key: receives homa_psp_key_len(@version) bytes.
 * Return: 0; HOMA_EINVAL (NULL @master or @key, unknown @version);
 * HOMA_EIO (OpenSSL failed).
 */
HOMA_API int homa_psp_derive(const uint8_t *master, int version, uint32_t spi, uint8_t *key);

/**
 * homa_psp_rx_issue() - Hand out a fresh SPI of the current master key
 * and its key, for one sender, and start its replay window.
 * @spi, @key: receive the SPI and homa_psp_key_len() bytes of key.
 * Return: 0; HOMA_EINVAL (an argument NULL); HOMA_EAGAIN (65536 SPIs
 * live, or every SPI number of the current master key issued);
 * HOMA_ENOMEM; HOMA_EIO.
 */
HOMA_API int homa_psp_rx_issue(homa_psp *p, uint32_t *spi, uint8_t *key);

/**
 * homa_psp_rx_accept() - Accept packets for @spi (chosen by the caller's
 * own key distribution; its top bit selects the master key) and start
 * its replay window; @key (optional) receives its key.
 * Return: 0 (also if already accepted); HOMA_EINVAL (NULL @p, SPI number
 * 0); HOMA_EKEYEXPIRED (an SPI number of a master key rotated out);
 * HOMA_EAGAIN; HOMA_ENOMEM; HOMA_EIO.
 */
HOMA_API int homa_psp_rx_accept(homa_psp *p, uint32_t spi, uint8_t *key);

/**
 * homa_psp_rx_rotate() - Rotate the master keys: @key (32 bytes, or NULL
 * for a random one) replaces the older master key and becomes current;
 * SPIs issued under the replaced key expire (their packets are rejected
 * as HOMA_PSP_REJ_EXPIRED_SPI). SPIs of the other key stay valid, so
 * packets in flight across one rotation are still accepted.
 * Return: 0; HOMA_EINVAL (NULL @p); HOMA_EIO (random source).
 */
HOMA_API int homa_psp_rx_rotate(homa_psp *p, const uint8_t *key);

/** homa_psp_rx_phase() - Which master key (0 or 1) new SPIs use; HOMA_EINVAL for a NULL @p. */
HOMA_API int homa_psp_rx_phase(const homa_psp *p);

/**
 * homa_psp_tx_add() - Install (or replace) the association for packets
 * to @dst port @dport: the receiver's @spi and @key for PSP @version. The
 * IV counter starts at 1 (a replaced association starts a new counter
 * with its new key).
 * Return: 0; HOMA_EINVAL (NULL, bad version); HOMA_ENOMEM; HOMA_EIO.
 */
HOMA_API int homa_psp_tx_add(homa_psp *p, const homa_addr *dst, uint16_t dport, uint32_t spi,
		    const uint8_t *key, int version);

/**
 * homa_psp_tx_remove() - Remove @dst:@dport's association.
 * Return: 0, HOMA_ENOASSOC (none), or HOMA_EINVAL (NULL @p or @dst).
 */
HOMA_API int homa_psp_tx_remove(homa_psp *p, const homa_addr *dst, uint16_t dport);

/** homa_psp_tx_has() - True if packets to @dst:@dport can be sealed (false for NULL). */
HOMA_API bool homa_psp_tx_has(const homa_psp *p, const homa_addr *dst, uint16_t dport);

/**
 * homa_psp_seal() - Seal the Homa packet of @len bytes at @pkt for
 * @dst (its Homa port is read from the header) in place: the packet
 * moves 16 bytes on, gains the PSP header and the ICV.
 * @cap: bytes available at @pkt (at least @len + HOMA_PSP_OVERHEAD).
 * Return: the sealed length; HOMA_ENOASSOC; HOMA_ENOSPC (@cap too
 * small); HOMA_EINVAL (NULL argument, shorter than a common header, or
 * too long for an int result); HOMA_EKEYEXPIRED (the association's IV
 * counter is used up); HOMA_EIO (cipher failure). On error @pkt is
 * unchanged.
 */
HOMA_API int homa_psp_seal(homa_psp *p, const homa_addr *dst, uint8_t *pkt, size_t len, size_t cap);

/**
 * homa_psp_seal_ext() - homa_psp_seal() of a Homa packet whose first
 * @len bytes (at least its common header) are at @pkt and whose other
 * @ext_len bytes are at @ext, elsewhere (a message's payload): they are
 * encrypted straight from @ext into @pkt after the header, one pass
 * without a copy first. @ext is only read and must not overlap the
 * @cap bytes at @pkt. The result is the same as homa_psp_seal() of the
 * whole packet. @cap: at least @len + @ext_len + HOMA_PSP_OVERHEAD.
 * Return: as homa_psp_seal(), HOMA_EINVAL also for a NULL @ext with
 * @ext_len > 0.
 */
HOMA_API int homa_psp_seal_ext(homa_psp *p, const homa_addr *dst, uint8_t *pkt, size_t len,
			       const uint8_t *ext, size_t ext_len, size_t cap);

/**
 * homa_psp_seal_extv() - homa_psp_seal_ext() of a packet whose bytes
 * after the first @len lie in @n pieces (@ext[0], @ext[1], ..., in
 * order; e.g. a payload that spans two chunks of a message), encrypted
 * from there into @pkt in one pass. No piece may overlap the @cap bytes
 * at @pkt. @cap: at least @len + the pieces' bytes + HOMA_PSP_OVERHEAD.
 * Return: as homa_psp_seal(), HOMA_EINVAL also for @n < 0, a NULL @ext
 * with @n > 0 or a NULL piece with bytes.
 */
HOMA_API int homa_psp_seal_extv(homa_psp *p, const homa_addr *dst, uint8_t *pkt, size_t len,
				const struct homa_iov *ext, int n, size_t cap);

/**
 * homa_psp_open() - Check and decrypt the sealed packet of @len bytes at
 * @pkt in place; on success the Homa packet starts at @pkt.
 * Return: the Homa packet's length; HOMA_EPROTO if it does not
 * authenticate (the reason, an enum homa_psp_reject, is counted in
 * homa_psp_get_stats() rejected[]); HOMA_EINVAL for a NULL @p or @pkt or
 * a @len above INT_MAX (not counted). Never reads outside @pkt[0..@len).
 */
HOMA_API int homa_psp_open(homa_psp *p, uint8_t *pkt, size_t len);

/**
 * homa_psp_open_view() - homa_psp_open() without moving the Homa packet
 * back to @pkt: on success it stays where it travelled, at @pkt +
 * HOMA_PSP_HDR_LEN, and the PSP header is left in place before it, so a
 * receiver that can take the packet at an offset saves a pass over every
 * received byte. On failure @pkt's bytes may be changed (as with
 * homa_psp_open()). Return: as homa_psp_open(), HOMA_EINVAL also for a
 * NULL @homa; *@homa is set only on success.
 */
HOMA_API int homa_psp_open_view(homa_psp *p, uint8_t *pkt, size_t len, uint8_t **homa);

/**
 * homa_psp_hooks() - Engine packet hooks that seal and open with @p
 * (overhead HOMA_PSP_OVERHEAD). @p must outlive their use. With a NULL
 * @p they refuse every packet (HOMA_EINVAL).
 */
HOMA_API struct homa_packet_hooks homa_psp_hooks(homa_psp *p);

/**
 * homa_psp_get_stats() - Copy @p's counters into @out (all zero for a
 * NULL @p; a NULL @out is ignored).
 */
HOMA_API void homa_psp_get_stats(const homa_psp *p, struct homa_psp_stats *out);

/**
 * homa_psp_reject_name() - Short name of a reject reason ("auth",
 * "replay", ...; "unknown" out of range).
 */
HOMA_API const char *homa_psp_reject_name(int reason);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_PSP_H */
