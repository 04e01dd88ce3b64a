/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_share.c
 * The interfaces the process's XDP drivers share (see xdp_share.h): a
 * list guarded by one lock, taken only to open and close sockets. The
 * program and its maps are also shared with other processes: a process
 * that finds the program of another attached to the interface holds its
 * link and maps (by id), so the program stays while any process uses it,
 * and the XSKMAP slots are shared through xdp_slots.c.
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
#include <sys/stat.h>
#include <unistd.h>

#include "homa/errors.h"
#include "xdp_drv.h"
#include "xdp_share.h"
#include "xdp_slots.h"

/** Sockets one interface's program can reach (its XSKMAP's size). */
#define MAX_SLOTS HOMA_XDP_SLOTS
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
	int ifindex;                           /**< in network namespace netns */
	uint64_t netns;                        /**< the namespace's inode (netns_id()) */
	uint32_t users;                        /**< drivers open on it */
	struct bpf_object *obj;
	int link_fd;                           /**< the attached program (detached on close) */
	int xsks_fd, ports_fd;                 /**< its maps */
	struct homa_xsk_umem *umem[MAX_QUEUES]; /**< per queue, made by its first socket */
	struct homa_xdp_slots slots;           /**< the XSKMAP slots of every process */
};

static pthread_mutex_t ifaces_lock = PTHREAD_MUTEX_INITIALIZER;
static struct homa_xdp_iface *ifaces;       /**< guarded by ifaces_lock */

/**
 * netns_id() - The network namespace of the calling thread (its inode
 * number; 0 if /proc is not there). Interface indexes are per namespace:
 * a process whose threads open drivers in several namespaces (setns())
 * may meet the same index twice.
 */
static uint64_t netns_id(void)
{
	struct stat st;

	return stat("/proc/thread-self/ns/net", &st) ? 0 : (uint64_t)st.st_ino;
}

/** free_iface() - Detach the program of @f and free it (no sockets left). */
static void free_iface(struct homa_xdp_iface *f)
{
	homa_xdp_slots_close(&f->slots);
	if (f->link_fd >= 0)
		close(f->link_fd);
	if (!f->obj && f->xsks_fd >= 0)
		close(f->xsks_fd);
	if (!f->obj && f->ports_fd >= 0)
		close(f->ports_fd);
	if (f->obj)
		bpf_object__close(f->obj);
	free(f);
}

/**
 * xdp_link_of() - A descriptor of the XDP link of program @prog_id on
 * @ifindex (it keeps the program attached while open), or -1.
 */
static int xdp_link_of(int ifindex, uint32_t prog_id)
{
	uint32_t id = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info li = {0};
		uint32_t len = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &li, &len) && li.type == BPF_LINK_TYPE_XDP &&
		    li.xdp.ifindex == (uint32_t)ifindex && li.prog_id == prog_id)
			return fd;
		close(fd);
	}
	return -1;
}

/**
 * adopt_maps() - Open the homa_xsks and homa_ports maps of program @prog_fd
 * into @f. Return: 0, or -1 if it is not this driver's program.
 */
static int adopt_maps(struct homa_xdp_iface *f, int prog_fd)
{
	struct bpf_prog_info pi = {0};
	uint32_t ids[8], len = sizeof(pi);

	pi.nr_map_ids = 8;
	pi.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &len) || strcmp(pi.name, "homa_xdp"))
		return -1;
	for (uint32_t i = 0; i < pi.nr_map_ids && i < 8; i++) {
		struct bpf_map_info mi = {0};
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (!strcmp(mi.name, "homa_xsks") && f->xsks_fd < 0)
			f->xsks_fd = fd;
		else if (!strcmp(mi.name, "homa_ports") && f->ports_fd < 0)
			f->ports_fd = fd;
		else
			close(fd);
	}
	return f->xsks_fd >= 0 && f->ports_fd >= 0 ? 0 : -1;
}

/**
 * adopt() - Use the program another process attached to @f's interface:
 * hold its link and open its maps (the loaded copy in f->obj is freed).
 * Return: 0; HOMA_EADDRINUSE if the interface has another XDP program
 * (with a message on stderr); a homa error of homa_xdp_errno().
 */
static int adopt(struct homa_xdp_iface *f, const char *ifname)
{
	uint32_t prog_id = 0;
	int prog_fd;

	bpf_object__close(f->obj);
	f->obj = NULL;
	f->xsks_fd = f->ports_fd = -1;
	if (bpf_xdp_query_id(f->ifindex, XDP_FLAGS_DRV_MODE, &prog_id) || !prog_id)
		return homa_xdp_errno("find the attached XDP program", ifname, errno ? errno : EBUSY);
	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (prog_fd < 0)
		return homa_xdp_errno("open the attached XDP program", ifname, errno);
	if (adopt_maps(f, prog_fd)) {
		close(prog_fd);
		fprintf(stderr, "homa: %s has an XDP program that is not Homa's\n", ifname);
		return HOMA_EADDRINUSE;
	}
	close(prog_fd);
	f->link_fd = xdp_link_of(f->ifindex, prog_id);
	if (f->link_fd < 0) {
		fprintf(stderr, "homa: the Homa XDP program on %s is not attached by a link\n",
			ifname);
		return HOMA_EADDRINUSE;
	}
	return 0;
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
	f->link_fd = f->xsks_fd = f->ports_fd = -1;
	f->slots.fd = -1;
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
		if (f->link_fd < 0 && (errno == EBUSY || errno == EEXIST))
			err = adopt(f, ifname);  /* another process's program is there */
		else if (f->link_fd < 0)
			err = homa_xdp_errno("attach the XDP program", ifname, errno);
	}
	if (!err && homa_xdp_slots_open(&f->slots, ifindex))
		err = homa_xdp_errno("share the XDP socket slots", ifname, errno);
	if (err) {
		free_iface(f);
		return err;
	}
	*out = f;
	return 0;
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
	homa_xdp_slot_put(&f->slots, slot);
}

/**
 * route() - Send packets for @r's port arriving on queue @queue of @f to
 * socket @fd. Return: 0 or a homa error (with a message on stderr).
 */
static int route(struct homa_xdp_iface *f, const struct homa_xdp_share_req *r, uint32_t queue,
		 int fd)
{
	struct port_key k = {.port = r->port, .raw = r->raw, .queue = queue};
	int slot = homa_xdp_slot_take(&f->slots, f->ports_fd, f->xsks_fd, &k);
	uint32_t s = (uint32_t)slot;

	if (slot < 0) {
		fprintf(stderr, "homa: %s has %d Homa XDP sockets already\n", r->ifname, MAX_SLOTS);
		return HOMA_EADDRINUSE;
	}
	if (bpf_map_update_elem(f->xsks_fd, &s, &fd, BPF_ANY)) {
		homa_xdp_slot_put(&f->slots, s);
		return homa_xdp_errno("add a socket to the XSKMAP", r->ifname, errno);
	}
	if (bpf_map_update_elem(f->ports_fd, &k, &s, BPF_NOEXIST)) {
		int e = errno;

		bpf_map_delete_elem(f->xsks_fd, &s);
		homa_xdp_slot_put(&f->slots, s);
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
	uint64_t ns = netns_id();
	uint32_t i = 0;
	int err = 0;

	if (r->nq > MAX_QUEUES)
		return HOMA_EINVAL;
	pthread_mutex_lock(&ifaces_lock);
	for (f = ifaces; f && (f->ifindex != r->ifindex || f->netns != ns); f = f->next)
		;
	if (!f) {
		err = new_iface(r->ifname, r->ifindex, &f);
		if (!err) {
			f->netns = ns;
			f->next = ifaces;
			ifaces = f;
		}
	}
	if (!err) {
		f->users++;
		homa_xdp_slots_sweep(&f->slots, f->ports_fd, f->xsks_fd);
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
