/* SPDX-License-Identifier: MIT */
/**
 * @file test_conformance.c
 * Code and comment agree for include/homa/psp.h and include/homa/encrypt.h:
 * the test reads both headers (tests/api/doc_codes.c), drives every
 * HOMA_API function into each error its comment lists and into its
 * documented answer to misuse (NULL arguments, unknown versions, SPIs
 * and destinations, buffers too small, lengths that wrap, closed
 * sockets, cleartext where a sealed packet belongs), and fails if a call
 * returns something its comment does not say, a documented code is not
 * provoked here or accounted for, or a function has no case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "doc_codes.h"
#include "homa/encrypt.h"
#include "homa/psp.h"

/** Sockets shared by the encrypt.h cases. */
static homa_socket *enc;    /**< encrypted, no certificate files */
static homa_socket *plain;  /**< not encrypted */
static homa_socket *dead;   /**< a closed handle */
static struct sockaddr_storage peer; /**< 127.0.0.1, port 9 */

static const uint8_t key32[32] = {1, 2, 3};

/** new_psp() - A homa_psp with fixed master keys. */
static homa_psp *new_psp(void)
{
	static uint8_t master[64] = {7};
	homa_psp *p = NULL;

	assert_int_equal(homa_psp_new(&p, HOMA_PSP_AES_GCM_128, master), 0);
	return p;
}

/** one_psp() - Run @fn on a fresh homa_psp, free it. Return: @fn's result. */
static int one_psp(int (*fn)(homa_psp *p))
{
	homa_psp *p = new_psp();
	int r = fn(p);

	homa_psp_free(p);
	return r;
}

/* ---- psp.h ---- */

static int new_null(void) { return homa_psp_new(NULL, 0, NULL); }

static int new_bad_version(void)
{
	homa_psp *p;

	return homa_psp_new(&p, 4, NULL);
}

static int free_null(void)
{
	homa_psp_free(NULL);
	return 0;
}

static int version_null(void) { return homa_psp_version(NULL); }
static int key_len_unknown(void) { return (int)homa_psp_key_len(-1) + (int)homa_psp_key_len(4); }

static int derive_null(void)
{
	uint8_t k[32];

	return homa_psp_derive(NULL, 0, 1, k);
}

static int derive_bad_version(void)
{
	uint8_t k[32];

	return homa_psp_derive(key32, 9, 1, k);
}

static int issue_null_of(homa_psp *p)
{
	uint8_t k[32];

	return homa_psp_rx_issue(p, NULL, k);
}

static int issue_null(void) { return one_psp(issue_null_of); }

static int accept_zero_of(homa_psp *p) { return homa_psp_rx_accept(p, 0, NULL); }
static int accept_zero(void) { return one_psp(accept_zero_of); }

/** accept_expired_of() - An SPI number of a master key rotated out. */
static int accept_expired_of(homa_psp *p)
{
	uint8_t k[32];
	uint32_t spi;

	assert_int_equal(homa_psp_rx_issue(p, &spi, k), 0);
	assert_int_equal(homa_psp_rx_rotate(p, NULL), 0);
	assert_int_equal(homa_psp_rx_rotate(p, NULL), 0);
	return homa_psp_rx_accept(p, spi, NULL);
}

static int accept_expired(void) { return one_psp(accept_expired_of); }
static int rotate_null(void) { return homa_psp_rx_rotate(NULL, NULL); }
static int phase_null(void) { return homa_psp_rx_phase(NULL); }

static int tx_add_bad_version_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);

	return homa_psp_tx_add(p, &a, 9, 1, key32, 7);
}

static int tx_add_bad_version(void) { return one_psp(tx_add_bad_version_of); }

static int tx_remove_none_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);

	return homa_psp_tx_remove(p, &a, 9);
}

static int tx_remove_none(void) { return one_psp(tx_remove_none_of); }

static int tx_remove_null_of(homa_psp *p) { return homa_psp_tx_remove(p, NULL, 9); }
static int tx_remove_null(void) { return one_psp(tx_remove_null_of); }

static int tx_has_null(void)
{
	homa_addr a = homa_addr_ipv4(1);

	return homa_psp_tx_has(NULL, &a, 9) || one_psp(tx_remove_null_of) != HOMA_EINVAL;
}

/** sealable() - @p with an association to 127.0.0.1:9; a 100-byte packet to it in @pkt. */
static void sealable(homa_psp *p, uint8_t *pkt)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);

	assert_int_equal(homa_psp_tx_add(p, &a, 9, 1, key32, HOMA_PSP_AES_GCM_128), 0);
	memset(pkt, 0, 100);
	pkt[3] = 9;  /* destination port 9 */
}

static int seal_no_assoc_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);
	uint8_t pkt[200] = {0};

	return homa_psp_seal(p, &a, pkt, 100, sizeof(pkt));
}

static int seal_no_assoc(void) { return one_psp(seal_no_assoc_of); }

static int seal_small_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);
	uint8_t pkt[200];

	sealable(p, pkt);
	return homa_psp_seal(p, &a, pkt, 100, 100 + HOMA_PSP_OVERHEAD - 1);
}

static int seal_small(void) { return one_psp(seal_small_of); }

static int seal_short_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);
	uint8_t pkt[200];

	sealable(p, pkt);
	return homa_psp_seal(p, &a, pkt, HOMA_COMMON_LEN - 1, sizeof(pkt));
}

static int seal_short(void) { return one_psp(seal_short_of); }

/** seal_wrap_of() - A length whose sum with the overhead wraps: refused, nothing moved. */
static int seal_wrap_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);
	uint8_t pkt[200];

	sealable(p, pkt);
	return homa_psp_seal(p, &a, pkt, SIZE_MAX - 8, sizeof(pkt));
}

static int seal_wrap(void) { return one_psp(seal_wrap_of); }

/** seal_ext_null_of() - homa_psp_seal_ext() with bytes elsewhere but no pointer to them. */
static int seal_ext_null_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);
	uint8_t pkt[200];

	sealable(p, pkt);
	return homa_psp_seal_ext(p, &a, pkt, 28, NULL, 72, sizeof(pkt));
}

static int seal_ext_null(void) { return one_psp(seal_ext_null_of); }

/** seal_ext_wrap_of() - Lengths whose sum wraps: refused. */
static int seal_ext_wrap_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);
	uint8_t pkt[200];

	sealable(p, pkt);
	return homa_psp_seal_ext(p, &a, pkt, 28, pkt, SIZE_MAX - 40, sizeof(pkt));
}

static int seal_ext_wrap(void) { return one_psp(seal_ext_wrap_of); }

/** seal_extv_bad_of() - homa_psp_seal_extv() with a NULL piece, no list, a negative count, a wrapping sum. */
static int seal_extv_bad_of(homa_psp *p)
{
	homa_addr a = homa_addr_ipv4(0x7f000001);
	uint8_t pkt[200];
	struct homa_iov null_piece[2] = {{pkt, 0}, {NULL, 8}};
	struct homa_iov wrap[2] = {{pkt, 8}, {pkt, SIZE_MAX - 4}};
	int r[4];

	sealable(p, pkt);
	r[0] = homa_psp_seal_extv(p, &a, pkt, 28, null_piece, 2, sizeof(pkt));
	r[1] = homa_psp_seal_extv(p, &a, pkt, 28, NULL, 1, sizeof(pkt));
	r[2] = homa_psp_seal_extv(p, &a, pkt, 28, null_piece, -1, sizeof(pkt));
	r[3] = homa_psp_seal_extv(p, &a, pkt, 28, wrap, 2, sizeof(pkt));
	for (int i = 0; i < 4; i++)
		if (r[i] != HOMA_EINVAL)
			return r[i] ? r[i] : -1;
	return HOMA_EINVAL;
}

static int seal_extv_bad(void) { return one_psp(seal_extv_bad_of); }

/** open_clear_of() - Cleartext is malformed PSP: HOMA_EPROTO, counted by reason. */
static int open_clear_of(homa_psp *p)
{
	struct homa_psp_stats st;
	uint8_t pkt[100] = {0};
	int r = homa_psp_open(p, pkt, sizeof(pkt));

	homa_psp_get_stats(p, &st);
	return st.rejected[HOMA_PSP_REJ_NOT_PSP] == 1 ? r : 1;
}

static int open_clear(void) { return one_psp(open_clear_of); }

static int open_null_of(homa_psp *p) { return homa_psp_open(p, NULL, 100); }

static int open_null(void)
{
	uint8_t pkt[100] = {0};

	return homa_psp_open(NULL, pkt, sizeof(pkt)) == HOMA_EINVAL ? one_psp(open_null_of) : 1;
}

/** open_view_clear_of() - homa_psp_open_view() of cleartext: HOMA_EPROTO, counted, *homa untouched. */
static int open_view_clear_of(homa_psp *p)
{
	struct homa_psp_stats st;
	uint8_t pkt[100] = {0}, *homa = NULL;
	int r = homa_psp_open_view(p, pkt, sizeof(pkt), &homa);

	homa_psp_get_stats(p, &st);
	return st.rejected[HOMA_PSP_REJ_NOT_PSP] == 1 && !homa ? r : 1;
}

static int open_view_clear(void) { return one_psp(open_view_clear_of); }

/** open_view_null_of() - homa_psp_open_view() without a place for the Homa packet. */
static int open_view_null_of(homa_psp *p)
{
	uint8_t pkt[100] = {0};

	return homa_psp_open_view(p, pkt, sizeof(pkt), NULL);
}

static int open_view_null(void) { return one_psp(open_view_null_of); }

/** hooks_null() - Hooks of a NULL state: everything they see is refused. */
static int hooks_null(void)
{
	struct homa_packet_hooks h = homa_psp_hooks(NULL);
	homa_addr a = homa_addr_ipv4(1);
	uint8_t pkt[100] = {0};

	return h.overhead == HOMA_PSP_OVERHEAD && h.open(h.ctx, &a, pkt, sizeof(pkt)) < 0 &&
	       h.seal_to(h.ctx, &a, pkt, 28, 28, sizeof(pkt)) < 0 ? 0 : 1;
}

static int stats_null(void)
{
	struct homa_psp_stats st;
	homa_psp *p = new_psp();

	memset(&st, 0x55, sizeof(st));
	homa_psp_get_stats(NULL, &st);
	homa_psp_get_stats(p, NULL);
	homa_psp_free(p);
	return st.sealed || st.rotations;
}

static int reject_name_unknown(void)
{
	return strcmp(homa_psp_reject_name(-1), "unknown") ||
	       strcmp(homa_psp_reject_name(HOMA_PSP_REJ_REASONS), "unknown");
}

/* ---- encrypt.h ---- */

static int opts_default_null(void)
{
	homa_encrypt_opts_default(NULL);
	return 0;
}

static const struct sockaddr *dst(void) { return (const struct sockaddr *)&peer; }

static int tx_add_null_dst(void) { return homa_encrypt_tx_add(enc, NULL, 1, key32, 0); }
static int tx_add_null_key(void) { return homa_encrypt_tx_add(enc, dst(), 1, NULL, 0); }
static int tx_add_plain(void) { return homa_encrypt_tx_add(plain, dst(), 1, key32, 0); }
static int tx_add_dead(void) { return homa_encrypt_tx_add(dead, dst(), 1, key32, 0); }
static int rm_none(void) { return homa_encrypt_tx_remove(enc, dst()); }
static int rm_null_dst(void) { return homa_encrypt_tx_remove(enc, NULL); }
static int rm_plain(void) { return homa_encrypt_tx_remove(plain, dst()); }
static int rm_dead(void) { return homa_encrypt_tx_remove(dead, dst()); }

static int issue_enc_null(void)
{
	uint8_t k[32];

	return homa_encrypt_rx_issue(enc, NULL, k);
}

static int issue_plain(void)
{
	uint8_t k[32];
	uint32_t spi;

	return homa_encrypt_rx_issue(plain, &spi, k);
}

static int issue_dead(void)
{
	uint8_t k[32];
	uint32_t spi;

	return homa_encrypt_rx_issue(dead, &spi, k);
}

static int rotate_plain(void) { return homa_encrypt_rotate(plain, NULL); }
static int rotate_dead(void) { return homa_encrypt_rotate(dead, NULL); }
static int rotate_enc_null(void) { return homa_encrypt_rotate(NULL, NULL); }
static int connect_no_files(void) { return homa_encrypt_connect(enc, dst()); }
static int connect_null(void) { return homa_encrypt_connect(enc, NULL); }
static int connect_dead(void) { return homa_encrypt_connect(dead, dst()); }

static int estats_null(void) { return homa_encrypt_stats(enc, NULL); }

static int estats_plain(void)
{
	struct homa_psp_stats st;

	return homa_encrypt_stats(plain, &st);
}

static int estats_dead(void)
{
	struct homa_psp_stats st;

	return homa_encrypt_stats(dead, &st);
}

static int host_stats_null(void) { return homa_encrypt_host_stats(NULL); }

static int host_stats_none(void)
{
	struct homa_psp_host_stats st;

	return homa_encrypt_host_stats(&st);
}

static const struct doc_case psp_cases[] = {
	DOC_CASE(homa_psp_new, HOMA_EINVAL, new_null),
	DOC_CASE(homa_psp_new, HOMA_EINVAL, new_bad_version),
	DOC_ANSWER(homa_psp_free, free_null),
	DOC_CASE(homa_psp_version, HOMA_EINVAL, version_null),
	DOC_ANSWER(homa_psp_key_len, key_len_unknown),
	DOC_CASE(homa_psp_derive, HOMA_EINVAL, derive_null),
	DOC_CASE(homa_psp_derive, HOMA_EINVAL, derive_bad_version),
	DOC_CASE(homa_psp_rx_issue, HOMA_EINVAL, issue_null),
	DOC_CASE(homa_psp_rx_accept, HOMA_EINVAL, accept_zero),
	DOC_CASE(homa_psp_rx_accept, HOMA_EKEYEXPIRED, accept_expired),
	DOC_CASE(homa_psp_rx_rotate, HOMA_EINVAL, rotate_null),
	DOC_CASE(homa_psp_rx_phase, HOMA_EINVAL, phase_null),
	DOC_CASE(homa_psp_tx_add, HOMA_EINVAL, tx_add_bad_version),
	DOC_CASE(homa_psp_tx_remove, HOMA_ENOASSOC, tx_remove_none),
	DOC_CASE(homa_psp_tx_remove, HOMA_EINVAL, tx_remove_null),
	DOC_ANSWER(homa_psp_tx_has, tx_has_null),
	DOC_CASE(homa_psp_seal, HOMA_ENOASSOC, seal_no_assoc),
	DOC_CASE(homa_psp_seal, HOMA_ENOSPC, seal_small),
	DOC_CASE(homa_psp_seal, HOMA_EINVAL, seal_short),
	DOC_CASE(homa_psp_seal, HOMA_EINVAL, seal_wrap),
	DOC_CASE(homa_psp_seal_ext, HOMA_EINVAL, seal_ext_null),
	DOC_CASE(homa_psp_seal_ext, HOMA_EINVAL, seal_ext_wrap),
	DOC_CASE(homa_psp_seal_extv, HOMA_EINVAL, seal_extv_bad),
	DOC_CASE(homa_psp_open, HOMA_EPROTO, open_clear),
	DOC_CASE(homa_psp_open, HOMA_EINVAL, open_null),
	DOC_CASE(homa_psp_open_view, HOMA_EPROTO, open_view_clear),
	DOC_CASE(homa_psp_open_view, HOMA_EINVAL, open_view_null),
	DOC_ANSWER(homa_psp_hooks, hooks_null),
	DOC_ANSWER(homa_psp_get_stats, stats_null),
	DOC_ANSWER(homa_psp_reject_name, reject_name_unknown),
};

static const struct doc_case encrypt_cases[] = {
	DOC_ANSWER(homa_encrypt_opts_default, opts_default_null),
	DOC_CASE(homa_encrypt_tx_add, HOMA_EINVAL, tx_add_null_dst),
	DOC_CASE(homa_encrypt_tx_add, HOMA_EINVAL, tx_add_null_key),
	DOC_CASE(homa_encrypt_tx_add, HOMA_ENOTSUP, tx_add_plain),
	DOC_CASE(homa_encrypt_tx_add, HOMA_ESHUTDOWN, tx_add_dead),
	DOC_CASE(homa_encrypt_tx_remove, HOMA_ENOASSOC, rm_none),
	DOC_CASE(homa_encrypt_tx_remove, HOMA_EINVAL, rm_null_dst),
	DOC_CASE(homa_encrypt_tx_remove, HOMA_ENOTSUP, rm_plain),
	DOC_CASE(homa_encrypt_tx_remove, HOMA_ESHUTDOWN, rm_dead),
	DOC_CASE(homa_encrypt_rx_issue, HOMA_EINVAL, issue_enc_null),
	DOC_CASE(homa_encrypt_rx_issue, HOMA_ENOTSUP, issue_plain),
	DOC_CASE(homa_encrypt_rx_issue, HOMA_ESHUTDOWN, issue_dead),
	DOC_CASE(homa_encrypt_rotate, HOMA_ENOTSUP, rotate_plain),
	DOC_CASE(homa_encrypt_rotate, HOMA_ESHUTDOWN, rotate_dead),
	DOC_CASE(homa_encrypt_rotate, HOMA_EINVAL, rotate_enc_null),
	DOC_CASE(homa_encrypt_connect, HOMA_ENOTSUP, connect_no_files),
	DOC_CASE(homa_encrypt_connect, HOMA_EINVAL, connect_null),
	DOC_CASE(homa_encrypt_connect, HOMA_ESHUTDOWN, connect_dead),
	DOC_CASE(homa_encrypt_stats, HOMA_EINVAL, estats_null),
	DOC_CASE(homa_encrypt_stats, HOMA_ENOTSUP, estats_plain),
	DOC_CASE(homa_encrypt_stats, HOMA_ESHUTDOWN, estats_dead),
	DOC_CASE(homa_encrypt_host_stats, HOMA_EINVAL, host_stats_null),
	DOC_CASE(homa_encrypt_host_stats, HOMA_ENOTSUP, host_stats_none),
};

static const struct doc_elsewhere elsewhere[] = {
	{"homa_psp_new", "HOMA_ENOMEM", "allocation failure"},
	{"homa_psp_new", "HOMA_EIO", "OpenSSL without AES-GCM/CMAC, or no random source"},
	{"homa_psp_derive", "HOMA_EIO", "OpenSSL failure"},
	{"homa_psp_rx_issue", "HOMA_EAGAIN", "65536 SPIs issued: too costly here (psp.c add_rx())"},
	{"homa_psp_rx_issue", "HOMA_ENOMEM", "allocation failure"},
	{"homa_psp_rx_issue", "HOMA_EIO", "OpenSSL failure"},
	{"homa_psp_rx_accept", "HOMA_EAGAIN", "as homa_psp_rx_issue()'s (the same add_rx())"},
	{"homa_psp_rx_accept", "HOMA_ENOMEM", "allocation failure"},
	{"homa_psp_rx_accept", "HOMA_EIO", "OpenSSL failure"},
	{"homa_psp_rx_rotate", "HOMA_EIO", "no random source"},
	{"homa_psp_tx_add", "HOMA_ENOMEM", "allocation failure"},
	{"homa_psp_tx_add", "HOMA_EIO", "OpenSSL failure"},
	{"homa_psp_seal", "HOMA_EIO", "OpenSSL failure"},
	{"homa_psp_hooks", "HOMA_EINVAL", "what its hooks return for a NULL state (hooks_null here)"},
	{"homa_psp_seal", "HOMA_EKEYEXPIRED", "2^64 packets on one association"},
	{"homa_encrypt_tx_add", "HOMA_ENOMEM", "allocation failure (homa_psp_tx_add())"},
	{"homa_encrypt_tx_add", "HOMA_EIO", "OpenSSL failure (homa_psp_tx_add())"},
	{"homa_encrypt_rx_issue", "HOMA_EAGAIN", "as homa_psp_rx_issue()'s"},
	{"homa_encrypt_rx_issue", "HOMA_ENOMEM", "allocation failure"},
	{"homa_encrypt_rx_issue", "HOMA_EIO", "OpenSSL failure"},
	{"homa_encrypt_rotate", "HOMA_EIO", "no random source"},
	{"homa_encrypt_connect", "HOMA_ECERT", "tests/crypto/test_rt_encrypt.c encrypt__key_exchange"},
	{"homa_encrypt_connect", "HOMA_EHANDSHAKE", "tests/crypto/test_rt_encrypt.c encrypt__key_exchange"},
	{"homa_encrypt_connect", "HOMA_EKEYEXPIRED",
	 "tests/crypto/test_rt_encrypt.c encrypt__expired_after_failed_renewals (through homa_send())"},
	{"homa_encrypt_connect", "HOMA_EAGAIN", "as homa_psp_rx_issue()'s"},
	{"homa_encrypt_connect", "HOMA_ENOMEM", "allocation failure"},
	{"homa_encrypt_connect", "HOMA_EIO", "OpenSSL or system call failure"},
	{"homa_encrypt_connect", "HOMA_ENOASSOC", "names homa_send()'s code (encrypt.h file comment)"},
};

/** setup() - An encrypted and a plain socket on loopback, and a closed handle. */
static int setup(void **state)
{
	struct homa_encrypt_opts eo;
	struct homa_open_opts o;
	struct sockaddr_in *in = (struct sockaddr_in *)&peer;

	(void)state;
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	assert_int_equal(homa_open(&plain, &o), 0);
	assert_int_equal(homa_open(&dead, &o), 0);
	assert_int_equal(homa_close(dead), 0);
	homa_encrypt_opts_default(&eo);
	o.encrypt = &eo;
	assert_int_equal(homa_open(&enc, &o), 0);
	in->sin_family = AF_INET;
	in->sin_port = htons(9);
	in->sin_addr.s_addr = htonl(0x7f000001);
	return 0;
}

/** teardown() - Close the sockets. */
static int teardown(void **state)
{
	(void)state;
	homa_close(enc);
	homa_close(plain);
	return 0;
}

/** conformance__psp_h() - psp.h's functions against their comments. */
static void conformance__psp_h(void **state)
{
	(void)state;
	doc_assert_header(PSP_H_PATH, 17, psp_cases, DOC_N(psp_cases), elsewhere, DOC_N(elsewhere));
}

/** conformance__encrypt_h() - encrypt.h's functions against their comments. */
static void conformance__encrypt_h(void **state)
{
	(void)state;
	doc_assert_header(ENCRYPT_H_PATH, 7, encrypt_cases, DOC_N(encrypt_cases), elsewhere, DOC_N(elsewhere));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conformance__psp_h),
		cmocka_unit_test(conformance__encrypt_h),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
