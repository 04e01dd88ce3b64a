/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_share.c
 * The interfaces the process's XDP drivers share (see xdp_share.h): a
 * list guarded by one lock, taken only to open and close sockets.
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "homa/errors.h"
#include "xdp_drv.h"
#include "xdp_share.h"

/** Sockets one interface's program can reach (its XSKMAP's size). */
#define MAX_SLOTS 1024
/** Queues one interface can serve (as link.c allows a driver). */
#define MAX_QUEUES 256

/** Key of the program's homa_ports map (struct homa_xdp_key in homa_xdp.bpf.c). */
struct port_key {
	uint16_t port;   /**< host byte order */
	uint8_t raw;
	uint8_t pad;
	uint32_t queue;
};

/** One interface the process's XDP drivers use. */
struct homa_xdp_iface {
	struct homa_xdp_iface *next;
	int ifindex;
	uint32_t users;                        /**< drivers open on it */
	struct bpf_object *obj;
	int link_fd;                           /**< the attached program (detached on close) */
	int xsks_fd, ports_fd;                 /**< its maps */
	struct homa_xsk_umem *umem[MAX_QUEUES]; /**< per queue, made by its first socket */
	bool slot_used[MAX_SLOTS];
};

static pthread_mutex_t ifaces_lock = PTHREAD_MUTEX_INITIALIZER;
static struct homa_xdp_iface *ifaces;       /**< guarded by ifaces_lock */

/** free_iface() - Detach the program of @f and free it (no sockets left). */
static void free_iface(struct homa_xdp_iface *f)
{
	if (f->link_fd >= 0)
		close(f->link_fd);
	if (f->obj)
		bpf_object__close(f->obj);
	free(f);
}

/**
 * new_iface() - Load the embedded program for interface @ifname and attach
 * it in native mode (its maps empty: it passes everything to the kernel).
 * Return: 0 and *@out, or a homa error (with a message on stderr).
 */
static int new_iface(const char *ifname, int ifindex, struct homa_xdp_iface **out)
{
	struct homa_xdp_iface *f = calloc(1, sizeof(*f));
	struct bpf_program *prog;
	int err = 0;

	if (!f)
		return HOMA_ENOMEM;
	f->ifindex = ifindex;
	f->link_fd = -1;
	f->obj = bpf_object__open_mem(homa_xdp_bpf_obj, homa_xdp_bpf_obj_len, NULL);
	if (!f->obj)
		err = homa_xdp_errno("open the XDP program", ifname, errno);
	else if (bpf_object__load(f->obj))
		err = homa_xdp_errno("load the XDP program", ifname, errno);
	if (!err) {
		prog = bpf_object__find_program_by_name(f->obj, "homa_xdp");
		f->xsks_fd = bpf_object__find_map_fd_by_name(f->obj, "homa_xsks");
		f->ports_fd = bpf_object__find_map_fd_by_name(f->obj, "homa_ports");
		err = prog && f->xsks_fd >= 0 && f->ports_fd >= 0 ? 0 : HOMA_EIO;
	}
	if (!err) {
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);
		f->link_fd = bpf_link_create(bpf_program__fd(prog), ifindex, BPF_XDP, &lo);
		if (f->link_fd < 0)
			err = homa_xdp_errno("attach the XDP program", ifname, errno);
	}
	if (err) {
		free_iface(f);
		return err;
	}
	*out = f;
	return 0;
}

/** take_slot() - A free XSKMAP slot of @f, marked used, or -1. */
static int take_slot(struct homa_xdp_iface *f)
{
	for (int i = 0; i < MAX_SLOTS; i++)
		if (!f->slot_used[i]) {
			f->slot_used[i] = true;
			return i;
		}
	return -1;
}

/**
 * unroute() - Stop sending packets for @r's port on queue @queue of @f
 * to any socket (program map first, then the XSKMAP slot).
 */
static void unroute(struct homa_xdp_iface *f, const struct homa_xdp_share_req *r,
		    uint32_t queue)
{
	struct port_key k = {.port = r->port, .raw = r->raw, .queue = queue};
	uint32_t slot;

	if (bpf_map_lookup_elem(f->ports_fd, &k, &slot))
		return;
	bpf_map_delete_elem(f->ports_fd, &k);
	bpf_map_delete_elem(f->xsks_fd, &slot);
	if (slot < MAX_SLOTS)
		f->slot_used[slot] = false;
}

/**
 * route() - Send packets for @r's port arriving on queue @queue of @f to
 * socket @fd. Return: 0 or a homa error (with a message on stderr).
 */
static int route(struct homa_xdp_iface *f, const struct homa_xdp_share_req *r, uint32_t queue,
		 int fd)
{
	struct port_key k = {.port = r->port, .raw = r->raw, .queue = queue};
	int slot = take_slot(f);
	uint32_t s = (uint32_t)slot;

	if (slot < 0) {
		fprintf(stderr, "homa: %s has %d Homa XDP sockets already\n", r->ifname, MAX_SLOTS);
		return HOMA_EADDRINUSE;
	}
	if (bpf_map_update_elem(f->xsks_fd, &s, &fd, BPF_ANY)) {
		f->slot_used[slot] = false;
		return homa_xdp_errno("add a socket to the XSKMAP", r->ifname, errno);
	}
	if (bpf_map_update_elem(f->ports_fd, &k, &s, BPF_NOEXIST)) {
		int e = errno;

		bpf_map_delete_elem(f->xsks_fd, &s);
		f->slot_used[slot] = false;
		if (e == EEXIST) {
			fprintf(stderr, "homa: port %u already has a Homa XDP socket on %s\n",
				r->port, r->ifname);
			return HOMA_EADDRINUSE;
		}
		return homa_xdp_errno("route a port to its socket", r->ifname, e);
	}
	return 0;
}

/**
 * port_free() - 0 if @r's port has no socket on @f yet, else
 * HOMA_EADDRINUSE (with a message on stderr).
 */
static int port_free(struct homa_xdp_iface *f, const struct homa_xdp_share_req *r)
{
	struct port_key k = {.port = r->port, .raw = r->raw, .queue = 0};
	uint32_t slot;

	if (bpf_map_lookup_elem(f->ports_fd, &k, &slot))
		return 0;
	fprintf(stderr, "homa: port %u already has a Homa XDP socket on %s\n", r->port, r->ifname);
	return HOMA_EADDRINUSE;
}

/** close_queues() - Unroute and close @q[0..n-1] on @f. The caller holds ifaces_lock. */
static void close_queues(struct homa_xdp_iface *f, const struct homa_xdp_share_req *r,
			 struct homa_xsk *q, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		unroute(f, r, i);
		homa_xsk_close(&q[i], &f->umem[i]);
	}
}

/** drop_user() - One driver less on @f; the last frees it. The caller holds ifaces_lock. */
static void drop_user(struct homa_xdp_iface *f)
{
	if (--f->users)
		return;
	for (struct homa_xdp_iface **p = &ifaces; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	free_iface(f);
}

/** homa_xdp_share_open() - See xdp_share.h. */
int homa_xdp_share_open(const struct homa_xdp_share_req *r, struct homa_xsk *q,
			struct homa_xdp_iface **out)
{
	struct homa_xdp_iface *f;
	uint32_t i = 0;
	int err = 0;

	if (r->nq > MAX_QUEUES)
		return HOMA_EINVAL;
	pthread_mutex_lock(&ifaces_lock);
	for (f = ifaces; f && f->ifindex != r->ifindex; f = f->next)
		;
	if (!f) {
		err = new_iface(r->ifname, r->ifindex, &f);
		if (!err) {
			f->next = ifaces;
			ifaces = f;
		}
	}
	if (!err) {
		f->users++;
		err = port_free(f, r);
		for (i = 0; i < r->nq && !err; i++) {
			err = homa_xsk_open(&q[i], &f->umem[i], r->ifname, i, i == 0, r->batch);
			if (!err)
				err = route(f, r, i, homa_xsk_fd(&q[i]));
			if (err && q[i].xsk)
				homa_xsk_close(&q[i], &f->umem[i]);  /* opened, not routed */
		}
		if (err) {
			close_queues(f, r, q, i ? i - 1 : 0);
			drop_user(f);
		}
	}
	pthread_mutex_unlock(&ifaces_lock);
	if (!err)
		*out = f;
	return err;
}

/** homa_xdp_share_close() - See xdp_share.h. */
void homa_xdp_share_close(struct homa_xdp_iface *f, const struct homa_xdp_share_req *r,
			  struct homa_xsk *q)
{
	if (!f)
		return;
	pthread_mutex_lock(&ifaces_lock);
	close_queues(f, r, q, r->nq);
	drop_user(f);
	pthread_mutex_unlock(&ifaces_lock);
}
