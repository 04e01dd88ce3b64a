/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_slots.h
 * The XSKMAP slots of an interface's program, shared by every process
 * using it: a table in POSIX shared memory
 * (/dev/shm/homa-xdp-NETNS-IFINDEX-slots) saying which process holds each
 * slot and for which homa_ports key, updated under flock(). The slots of
 * a process that died are freed, and their homa_ports entries removed,
 * by the next process that takes a slot.
 */
#ifndef HOMA_IO_XDP_SLOTS_H
#define HOMA_IO_XDP_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

/** Sockets one interface's program can reach (its XSKMAP's size). */
#define HOMA_XDP_SLOTS 1024

/** A process's view of an interface's slot table. */
struct homa_xdp_slots {
	struct homa_xdp_slot_tab *tab;
	int fd;
	char name[64];
};

/**
 * homa_xdp_slots_open() - Map the slot table of @ifindex in this network
 * namespace, creating it if needed. Return: 0 or -errno.
 */
int homa_xdp_slots_open(struct homa_xdp_slots *t, int ifindex);

/**
 * homa_xdp_slots_sweep() - Free the slots of processes that died and
 * remove their entries from the maps @ports_fd and @xsks_fd.
 */
void homa_xdp_slots_sweep(struct homa_xdp_slots *t, int ports_fd, int xsks_fd);

/**
 * homa_xdp_slot_take() - Free the slots of dead processes (removing their
 * entries from the maps @ports_fd and @xsks_fd), then take a free slot
 * for homa_ports key @key (8 bytes). Return: the slot, or -1 if all are taken.
 */
int homa_xdp_slot_take(struct homa_xdp_slots *t, int ports_fd, int xsks_fd, const void *key);

/** homa_xdp_slot_put() - Give back @slot (taken by this process). */
void homa_xdp_slot_put(struct homa_xdp_slots *t, uint32_t slot);

/**
 * homa_xdp_slots_stale() - True if the slot table open on @fd (flock()ed
 * by the caller) has no live process in it (xsk_shm.c removes it then).
 */
bool homa_xdp_slots_stale(int fd);

/**
 * homa_xdp_slots_close() - Unmap the table; remove its name if no live
 * process holds a slot. Safe on a table that failed to open.
 */
void homa_xdp_slots_close(struct homa_xdp_slots *t);

#endif /* HOMA_IO_XDP_SLOTS_H */
