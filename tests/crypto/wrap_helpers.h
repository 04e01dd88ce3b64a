/* SPDX-License-Identifier: MIT */
/**
 * @file wrap_helpers.h
 * Helpers of the crypto tests that interpose recvmmsg() and sendmmsg()
 * (-Wl,--wrap=recvmmsg -Wl,--wrap=sendmmsg: test_enc_pipeline.c,
 * test_enc_urgent.c, test_enc_gate.c), to watch an encrypted socket's
 * datagrams as they pass. Link wrap_helpers.c only into such tests: it
 * calls __real_recvmmsg().
 */
#ifndef HOMA_TESTS_CRYPTO_WRAP_HELPERS_H
#define HOMA_TESTS_CRYPTO_WRAP_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/** The real recvmmsg() behind the test's __wrap_recvmmsg(). */
int __real_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
		    struct timespec *timeout);

/** crypto_fd_port() - The local IPv4 port of socket @fd (network order), 0 if it has none. */
uint16_t crypto_fd_port(int fd);

/**
 * crypto_gather() - Add to the @n datagrams a read on @fd put into @msgs
 * (room for @vlen), reading without waiting every 0.1 ms, until @want are
 * there or about 20 ms passed: one batch of several datagrams for the
 * socket, as a busy sender's would be. Return: the datagrams in @msgs.
 */
int crypto_gather(int fd, struct mmsghdr *msgs, unsigned int vlen, int n, int want);

/**
 * crypto_sent_to() - Whether one of the @vlen datagrams at @msgs goes to
 * IPv4 port @port (network order) with a length from @min to @max bytes
 * (a control packet, a response: by size).
 */
bool crypto_sent_to(const struct mmsghdr *msgs, unsigned int vlen, uint16_t port, size_t min,
		    size_t max);

#endif /* HOMA_TESTS_CRYPTO_WRAP_HELPERS_H */
