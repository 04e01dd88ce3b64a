/* SPDX-License-Identifier: MIT */
/**
 * @file fault_wrap.h
 * Driver-level fault injection for tests on the real stack, without
 * touching the library: test binaries link with -Wl,--wrap=recvmmsg, so
 * every recvmmsg() the UDP driver makes goes through fault_wrap.c, which
 * drops, duplicates and reorders the datagrams the kernel returned, at
 * rates set per million. All sockets of the process are affected (a
 * client and a server in one process see faults in both directions).
 */
#ifndef HOMA_HARDENING_FAULT_WRAP_H
#define HOMA_HARDENING_FAULT_WRAP_H

#include <stdint.h>

/** What the injector did so far. */
struct hd_fault_counts {
	uint64_t seen;        /**< datagrams the kernel returned */
	uint64_t dropped;
	uint64_t duplicated;
	uint64_t reordered;   /**< held back behind the next datagram */
};

/**
 * hd_faults_set() - Set the rates (parts per million of received
 * datagrams) and the random seed; all zero turns injection off.
 */
void hd_faults_set(uint32_t loss_ppm, uint32_t dup_ppm, uint32_t reorder_ppm, uint64_t seed);

/** hd_faults_counts() - Copy the counters (and, with @reset, zero them). */
void hd_faults_counts(struct hd_fault_counts *out, int reset);

#endif
