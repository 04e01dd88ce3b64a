/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_slots.c
 * An interface's XSKMAP slots shared between processes (see xdp_slots.h).
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xdp_slots.h"
#include "xsk_shm.h"

/** The table in shared memory. */
struct homa_xdp_slot_tab {
	int32_t pid[HOMA_XDP_SLOTS];     /**< holder of each slot, 0: free */
	uint64_t key[HOMA_XDP_SLOTS];    /**< its homa_ports key */
};

/** alive() - See homa_xdp_pid_alive(). */
static bool alive(int32_t pid)
{
	return homa_xdp_pid_alive(pid);
}

/** map_tab() - Open (creating) and map the table named t->name. Return: 0 or -errno. */
static int map_tab(struct homa_xdp_slots *t)
{
	void *m;

	t->fd = shm_open(t->name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (t->fd < 0)
		return -errno;
	if (ftruncate(t->fd, sizeof(*t->tab)) ||
	    (m = mmap(NULL, sizeof(*t->tab), PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0)) ==
		    MAP_FAILED) {
		int e = -errno;

		close(t->fd);
		t->fd = -1;
		return e;
	}
	t->tab = m;
	return 0;
}

/** homa_xdp_slots_open() - See xdp_slots.h. */
int homa_xdp_slots_open(struct homa_xdp_slots *t, int ifindex)
{
	struct stat ns = {0};

	stat("/proc/self/ns/net", &ns);
	t->tab = NULL;
	snprintf(t->name, sizeof(t->name), "/homa-xdp-%llu-%d-slots",
		 (unsigned long long)ns.st_ino, ifindex);
	return map_tab(t);
}

/**
 * lock_tab() - flock() the table, mapping it anew while the last process
 * removed its name meanwhile. Return: 0 or -errno (then not locked).
 */
static int lock_tab(struct homa_xdp_slots *t)
{
	for (;;) {
		struct stat st;

		if (flock(t->fd, LOCK_EX) || fstat(t->fd, &st))
			return -errno;
		if (st.st_nlink)
			return 0;
		munmap(t->tab, sizeof(*t->tab));
		close(t->fd);
		t->tab = NULL;
		if (map_tab(t))
			return -errno;
	}
}

/** free_dead() - Free the slots of dead processes and unroute them. The caller holds the flock. */
static void free_dead(struct homa_xdp_slot_tab *tab, int ports_fd, int xsks_fd)
{
	for (uint32_t s = 0; s < HOMA_XDP_SLOTS; s++) {
		uint32_t cur;

		if (!tab->pid[s] || alive(tab->pid[s]))
			continue;
		if (!bpf_map_lookup_elem(ports_fd, &tab->key[s], &cur) && cur == s)
			bpf_map_delete_elem(ports_fd, &tab->key[s]);
		bpf_map_delete_elem(xsks_fd, &s);
		tab->pid[s] = 0;
	}
}

/** homa_xdp_slots_sweep() - See xdp_slots.h. */
void homa_xdp_slots_sweep(struct homa_xdp_slots *t, int ports_fd, int xsks_fd)
{
	if (lock_tab(t))
		return;
	free_dead(t->tab, ports_fd, xsks_fd);
	flock(t->fd, LOCK_UN);
}

/** homa_xdp_slot_take() - See xdp_slots.h. */
int homa_xdp_slot_take(struct homa_xdp_slots *t, int ports_fd, int xsks_fd, const void *key)
{
	int slot = -1;

	if (lock_tab(t))
		return -1;
	free_dead(t->tab, ports_fd, xsks_fd);
	for (int s = 0; s < HOMA_XDP_SLOTS && slot < 0; s++)
		if (!t->tab->pid[s]) {
			t->tab->pid[s] = getpid();
			memcpy(&t->tab->key[s], key, sizeof(t->tab->key[s]));
			slot = s;
		}
	flock(t->fd, LOCK_UN);
	return slot;
}

/** homa_xdp_slot_put() - See xdp_slots.h. */
void homa_xdp_slot_put(struct homa_xdp_slots *t, uint32_t slot)
{
	if (slot >= HOMA_XDP_SLOTS)
		return;
	flock(t->fd, LOCK_EX);
	if (t->tab->pid[slot] == getpid())
		t->tab->pid[slot] = 0;
	flock(t->fd, LOCK_UN);
}

/** any_alive() - True if a live process holds a slot of @tab. */
static bool any_alive(const struct homa_xdp_slot_tab *tab)
{
	for (uint32_t s = 0; s < HOMA_XDP_SLOTS; s++)
		if (alive(tab->pid[s]))
			return true;
	return false;
}

/** homa_xdp_slots_stale() - See xdp_slots.h. */
bool homa_xdp_slots_stale(int fd)
{
	struct homa_xdp_slot_tab *tab;
	struct stat st;
	bool dead;

	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*tab))
		return false;
	tab = mmap(NULL, sizeof(*tab), PROT_READ, MAP_SHARED, fd, 0);
	if (tab == MAP_FAILED)
		return false;
	dead = !any_alive(tab);
	munmap(tab, sizeof(*tab));
	return dead;
}

/** homa_xdp_slots_close() - See xdp_slots.h. */
void homa_xdp_slots_close(struct homa_xdp_slots *t)
{
	if (!t->tab)
		return;
	flock(t->fd, LOCK_EX);
	if (!any_alive(t->tab))
		shm_unlink(t->name);
	munmap(t->tab, sizeof(*t->tab));
	close(t->fd);
	t->tab = NULL;
	t->fd = -1;
}
