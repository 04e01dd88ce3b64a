/* SPDX-License-Identifier: MIT */
/**
 * @file http_get.h
 * A blocking loopback HTTP client for the tests.
 */
#ifndef HOMA_TESTS_HTTP_GET_H
#define HOMA_TESTS_HTTP_GET_H

#include <stddef.h>
#include <stdint.h>

/**
 * http_exchange() - Connect to 127.0.0.1:@port, send @req (@len bytes),
 * read until the server closes. Return: the response (malloc'd,
 * NUL-terminated; caller frees) or NULL on a socket error.
 */
char *http_exchange(uint16_t port, const char *req, size_t len);

/** http_status() - The status code in a response, or -1. */
int http_status(const char *resp);

/** http_body() - Pointer to the body of @resp (after the blank line), or NULL. */
const char *http_body(const char *resp);

#endif
