/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_pattern.h
 * The bytes simulated senders put in their messages: byte i of a message
 * is a hash of (seed, i), so any delivered message can be checked
 * byte for byte against what its sender sent. Compiled without coverage
 * instrumentation (fuzz/CMakeLists.txt): these loops are hot and their
 * comparisons tell the fuzzer nothing.
 */
#ifndef HOMA_FUZZ_PATTERN_H
#define HOMA_FUZZ_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "homa/engine.h"

/** fz_pattern_byte() - Byte @i of the message with @seed. */
uint8_t fz_pattern_byte(uint64_t seed, uint64_t i);

/** fz_pattern_fill() - Write bytes [off, off+len) of the @seed message into @buf. */
void fz_pattern_fill(uint8_t *buf, uint64_t seed, uint64_t off, size_t len);

/**
 * fz_pattern_match() - True if @len bytes at @p equal bytes [off, off+len)
 * of the @seed message.
 */
int fz_pattern_match(const uint8_t *p, uint64_t seed, uint64_t off, size_t len);

/**
 * fz_msg_matches() - True if received message @m has exactly @len bytes,
 * all present, equal to the @seed pattern.
 */
int fz_msg_matches(const homa_msg *m, uint64_t seed, size_t len);

/**
 * fz_msg_matches_from() - Like fz_msg_matches(), but only bytes
 * [@from, @len) are checked against the pattern (the caller checks the
 * first @from bytes itself); the message length must still be @len.
 */
int fz_msg_matches_from(const homa_msg *m, uint64_t seed, size_t from, size_t len);

#endif
