/* SPDX-License-Identifier: MIT */
/**
 * @file api.h
 * How the API suite (tests/api) opens its sockets: every socket of the
 * suite comes from api_opts(), so running the whole suite over another
 * driver or transport means changing that one function (or setting
 * HOMA_API_DRIVER, see api.c).
 */
#ifndef HOMA_TEST_API_H
#define HOMA_TEST_API_H

#include <stdbool.h>
#include <stdint.h>

#include "homa/homa.h"

/** The transport every socket of the suite uses (homa_open_opts.transport). */
extern int api_transport;

/**
 * api_opts() - Fill @o for a socket of the suite on 127.0.0.1: the
 * driver named by the environment variable HOMA_API_DRIVER ("udp", the
 * default, or "raw"), @mode, @server, an ephemeral port, settings @st
 * (NULL: the defaults with a 3 s RPC timeout, as tests/runtime uses).
 * @st must stay valid until homa_open().
 */
void api_opts(struct homa_open_opts *o, int mode, bool server, const struct homa_settings *st);

/** api_open() - homa_open() of api_opts(@mode, @server, @st). Return: its result. */
int api_open(homa_socket **s, int mode, bool server, const struct homa_settings *st);

/** api_dst() - The address of socket @s (its port on 127.0.0.1). */
struct sockaddr_storage api_dst(homa_socket *s);

/** api_now_ns() - CLOCK_MONOTONIC in ns. */
uint64_t api_now_ns(void);

#endif /* HOMA_TEST_API_H */
