/* SPDX-License-Identifier: MIT */
/**
 * @file lendpool.h
 * The UDP driver's zero-copy receive: receive buffers ("slots") the engine
 * may keep (homa_engine_input_lend()), so that a bulk message's payload
 * stays where the kernel put it instead of being copied into the message.
 *
 * All slots live in one arena. The table names the slot each entry of a
 * receive batch reads into; every receiver of the driver reads through
 * it (one recv() reads one socket, and its packets live until the next).
 * Before each recv() (homa_lendpool_settle()), a slot some of whose
 * packets the engine kept leaves the table and a free slot takes its
 * place; the kept slot goes back to the free list when the engine has
 * given back every packet it kept from it (homa_lendpool_release(), any
 * thread that calls the engine).
 *
 * Counting: a slot's refs are the packets messages hold in it, plus
 * HOMA_LEND_HOLD while it is in the table. Keeps are added when the batch
 * is settled, releases are taken when they happen; a release that comes
 * first only takes refs below the hold, never to zero, so a slot is free
 * exactly when it is out of the table and nothing holds it.
 *
 * The receiving thread owns the table and the free list; releases from
 * other threads reach it through a list under a mutex. Not a general
 * allocator: one receiving thread, one engine.
 */
#ifndef HOMA_IO_LENDPOOL_H
#define HOMA_IO_LENDPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.h"

/** refs a slot carries while it is in the table (above any keeps a batch can make). */
#define HOMA_LEND_HOLD (1u << 24)
/** Most slots beyond the table's (homa_open_opts.rx_lend_slots). */
#define HOMA_LEND_SLOTS_MAX 65536
/** A datagram is lent only if it fills at least 1/HOMA_LEND_MIN_FRACTION of its slot. */
#define HOMA_LEND_MIN_FRACTION 4

/** A driver's lendable receive buffers. */
struct homa_lendpool {
	uint8_t *arena;        /**< nslots * slot_size bytes (anonymous mapping) */
	size_t arena_len;
	size_t slot_size;
	uint32_t nslots;       /**< batch + extra */
	uint32_t batch;        /**< table entries */
	uint8_t **table;       /**< batch entries: where each receive entry reads */
	uint32_t *table_slot;  /**< the slot index of each table entry */
	uint32_t *refs;        /**< per slot (__atomic builtins) */
	uint16_t *kept;        /**< per slot, homa_lendpool_settle()'s count of keeps */
	uint32_t *free;        /**< free slot indexes (receiving thread's) */
	uint32_t nfree;
	pthread_mutex_t lock;  /**< guards ret, nret */
	uint32_t *ret;         /**< slots released to zero by homa_lendpool_release() */
	uint32_t nret;         /**< written under lock; read without it (__atomic builtins) */
	struct homa_rx_lend lend; /**< the engine's hook: homa_lendpool_release() */
};

/**
 * homa_lendpool_init() - A pool of @batch table slots and @extra more for
 * messages to hold, each @slot_size bytes, in one anonymous mapping whose
 * pages the kernel commits as receives touch them. The table starts with
 * slots 0..@batch-1. Return: 0, HOMA_EINVAL (@batch, @extra or
 * @slot_size 0, or @extra above HOMA_LEND_SLOTS_MAX), or HOMA_ENOMEM
 * (then nothing is allocated).
 */
int homa_lendpool_init(struct homa_lendpool *p, uint32_t batch, uint32_t extra,
		       size_t slot_size);

/**
 * homa_lendpool_free() - Unmap and free @p. Every kept packet must have
 * been given back (the engine that held them freed first).
 */
void homa_lendpool_free(struct homa_lendpool *p);

/**
 * homa_lendpool_settle() - Before a receive: count the packets of the last
 * batch (@pkts, @n, as recv() returned them; the runtime set each one's
 * kept) the engine kept, and give every table entry whose slot holds some
 * a free slot instead (the batch's lendable entries were at most
 * homa_lendpool_spare() when it was read); take in the slots released by
 * other threads.
 * Return: table entries given a new slot.
 */
uint32_t homa_lendpool_settle(struct homa_lendpool *p, const struct homa_io_rx *pkts, int n);

/**
 * homa_lendpool_spare() - How many entries of a batch read now may be
 * lent: the free slots that can replace them at the next settle.
 */
uint32_t homa_lendpool_spare(const struct homa_lendpool *p);

/**
 * homa_lendpool_lendable() - Whether a received datagram of @len bytes in
 * a slot is worth lending (it fills at least 1/HOMA_LEND_MIN_FRACTION of
 * the slot, which a message then holds whole).
 */
bool homa_lendpool_lendable(const struct homa_lendpool *p, size_t len);

/** homa_lendpool_owns() - Whether @buf lies in @p's arena. */
bool homa_lendpool_owns(const struct homa_lendpool *p, const uint8_t *buf);

/**
 * homa_lendpool_held() - Slots out of the table that messages still hold
 * (or whose release the receiving thread has not taken in yet), as of
 * the latest settle.
 */
uint32_t homa_lendpool_held(const struct homa_lendpool *p);

/**
 * homa_lendpool_release() - struct homa_rx_lend's release: the engine no
 * longer reads packet @buf of pool @ctx (any thread, concurrently with
 * the receiving thread). A slot whose last hold this was goes to the
 * receiving thread's free list at its next settle.
 */
void homa_lendpool_release(void *ctx, uint8_t *buf);

#endif /* HOMA_IO_LENDPOOL_H */
