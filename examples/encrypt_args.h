/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt_args.h
 * --encrypt [--certs DIR] for the examples: every packet sealed in PSP,
 * keys from the TLS 1.3 key exchange (include/homa/encrypt.h). DIR holds
 * ca.pem and ROLE.pem / ROLE.key (ROLE = server or client), as
 * scripts/gen_certs.sh writes them; without --certs the examples use
 * /tmp/homa-example-certs and generate it there when it is missing.
 */
#ifndef HOMA_EXAMPLE_ENCRYPT_ARGS_H
#define HOMA_EXAMPLE_ENCRYPT_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "homa/encrypt.h"

#define EXAMPLE_ENCRYPT_USAGE "[--encrypt [--certs DIR]]"

/** Encryption settings of an example. */
struct example_encrypt {
	bool on;
	const char *dir;
	char cert[256], key[256], ca[256];
	struct homa_encrypt_opts eo;
};

/** getopt_long() values of the encryption options. */
enum { EXAMPLE_OPT_ENCRYPT = 0x120, EXAMPLE_OPT_CERTS };

/** The encryption options' entries of a struct option table. */
#define EXAMPLE_ENCRYPT_OPTIONS                                             \
	{ "encrypt", no_argument, NULL, EXAMPLE_OPT_ENCRYPT },              \
	{ "certs", required_argument, NULL, EXAMPLE_OPT_CERTS }

/**
 * example_encrypt_opt() - Take getopt_long()'s option @c (value @arg) if
 * it is --encrypt or --certs DIR. Return: true if taken.
 */
static inline bool example_encrypt_opt(int c, const char *arg, struct example_encrypt *e)
{
	if (c == EXAMPLE_OPT_ENCRYPT)
		e->on = true;
	else if (c == EXAMPLE_OPT_CERTS)
		e->dir = arg;
	return c == EXAMPLE_OPT_ENCRYPT || c == EXAMPLE_OPT_CERTS;
}

/**
 * example_encrypt_setup() - With --encrypt: point @o->encrypt at
 * certificates for @role ("server" or "client"), generating the default
 * folder if needed. Return: 0, or -1 (message printed).
 */
static inline int example_encrypt_setup(struct example_encrypt *e, const char *role,
					struct homa_open_opts *o)
{
	if (!e->on)
		return 0;
	if (!e->dir) {
		e->dir = "/tmp/homa-example-certs";
		if (access("/tmp/homa-example-certs/ca.pem", R_OK) != 0 &&
		    system(HOMA_GEN_CERTS " /tmp/homa-example-certs") != 0) {
			fprintf(stderr, "could not generate certificates with %s\n", HOMA_GEN_CERTS);
			return -1;
		}
	}
	snprintf(e->cert, sizeof(e->cert), "%s/%s.pem", e->dir, role);
	snprintf(e->key, sizeof(e->key), "%s/%s.key", e->dir, role);
	snprintf(e->ca, sizeof(e->ca), "%s/ca.pem", e->dir);
	homa_encrypt_opts_default(&e->eo);
	e->eo.cert_file = e->cert;
	e->eo.key_file = e->key;
	e->eo.ca_file = e->ca;
	o->encrypt = &e->eo;
	return 0;
}

#endif /* HOMA_EXAMPLE_ENCRYPT_ARGS_H */
