/* SPDX-License-Identifier: MIT */
/**
 * @file psp_steer.c
 * Kernel steering of the PSP port: each encrypted socket binds the PSP
 * port with SO_REUSEPORT beside its own port, so the host's sockets on
 * the PSP port form one reuseport group, and an SK_REUSEPORT program
 * attached to the group picks the socket for each datagram from a
 * REUSEPORT_SOCKARRAY map keyed by Homa port: the destination port of the
 * clear common header (PSP's crypt offset keeps it in clear). A datagram
 * that is not PSP, is too short, or names a port no socket entered is
 * dropped by the kernel.
 *
 * Why not SO_ATTACH_REUSEPORT_CBPF (no privilege needed): a classic
 * program can only return an index into the group, which is the order the
 * sockets joined in, and the kernel moves the last socket into the slot of
 * one that leaves (or whose process dies), so no process can know which
 * index is whose; the map instead names sockets by Homa port and the
 * kernel removes a socket from it when the socket closes.
 *
 * Sharing between processes: the group is one per port and network
 * namespace, and so are its program and map. /dev/shm/homa-psp-steer-
 * NETNS-PORT holds the program's id; a joiner takes an exclusive flock on
 * it, opens the program by id (checking its type and name; the map comes
 * from the program's info), or loads a new one if it is gone (all
 * sockets of the group closed), attaches it to the group through its own
 * socket (the same program again: harmless) and enters its socket in the
 * map. Needs CAP_BPF and CAP_NET_ADMIN (map type, ids) and the right to
 * bind the port.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "psp_steer.h"
#include "homa/encrypt.h"
#include "homa/homa.h"

#ifndef SO_ATTACH_REUSEPORT_EBPF
#define SO_ATTACH_REUSEPORT_EBPF 52
#endif

/** The program's name (checked when a joiner opens it by id). */
#define STEER_PROG_NAME "homa_psp_steer"
/** Offset of the Homa destination port from the UDP header (the program's data). */
#define STEER_DPORT_OFF (8 + HOMA_PSP_HDR_LEN + 2)
/** Offset of the PSP next-header byte from the UDP header. */
#define STEER_NEXT_OFF 8

/** sys_bpf() - The bpf() system call. Return: its result (-1 and errno on failure). */
static int sys_bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(__NR_bpf, cmd, a, sizeof(*a));
}

/** homa_err() - The homa error for errno @e of a bpf() or socket call. */
static int homa_err(int e)
{
	switch (e) {
	case EPERM:
	case EACCES:
		return HOMA_EPERM;
	case EADDRINUSE:
		return HOMA_EADDRINUSE;
	case EINVAL:
	case ENOSYS:
	case EOPNOTSUPP:
	case ENOPROTOOPT:
		return HOMA_ENOTSUP;
	default:
		return HOMA_EIO;
	}
}

/** new_map() - A REUSEPORT_SOCKARRAY of 65536 entries, u32 Homa port -> socket. Return: fd or -errno. */
static int new_map(void)
{
	union bpf_attr a = {0};
	int fd;

	a.map_type = BPF_MAP_TYPE_REUSEPORT_SOCKARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 65536;
	memcpy(a.map_name, "homa_psp_ports", sizeof("homa_psp_ports"));
	fd = sys_bpf(BPF_MAP_CREATE, &a);
	return fd < 0 ? -errno : fd;
}

/** Instruction builders (struct bpf_insn) for the program below. */
#define INSN(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), \
					       .off = (o), .imm = (i)})
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define LDX_B(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_B, d, s, o, 0)
#define LDX_H(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_H, d, s, o, 0)
#define STX_W(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define TO_BE16(d) INSN(BPF_ALU | BPF_END | BPF_TO_BE, d, 0, 0, 16)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/**
 * new_prog() - Load the steering program with map @map: read the PSP
 * next header and the Homa destination port (bpf_skb_load_bytes, offsets
 * from the UDP header), select the map's socket for that port, SK_PASS;
 * SK_DROP if the datagram is not PSP, too short, or the port has no
 * socket. Return: fd or -errno.
 */
static int new_prog(int map)
{
	const struct bpf_insn insns[] = {
		MOV64_REG(BPF_REG_6, BPF_REG_1),           /* r6 = ctx */
		MOV64_REG(BPF_REG_1, BPF_REG_6),           /* load 4 bytes at 8: PSP next header.. */
		MOV64_IMM(BPF_REG_2, STEER_NEXT_OFF),
		MOV64_REG(BPF_REG_3, BPF_REG_10),
		ADD64_IMM(BPF_REG_3, -8),
		MOV64_IMM(BPF_REG_4, 4),
		CALL(BPF_FUNC_skb_load_bytes),
		JNE_IMM(BPF_REG_0, 0, 22),                 /* too short: drop */
		LDX_B(BPF_REG_0, BPF_REG_10, -8),
		JNE_IMM(BPF_REG_0, HOMA_PSP_NEXT_HDR, 20), /* not PSP: drop */
		MOV64_REG(BPF_REG_1, BPF_REG_6),           /* the Homa destination port */
		MOV64_IMM(BPF_REG_2, STEER_DPORT_OFF),
		MOV64_REG(BPF_REG_3, BPF_REG_10),
		ADD64_IMM(BPF_REG_3, -4),
		MOV64_IMM(BPF_REG_4, 2),
		CALL(BPF_FUNC_skb_load_bytes),
		JNE_IMM(BPF_REG_0, 0, 13),
		LDX_H(BPF_REG_0, BPF_REG_10, -4),
		TO_BE16(BPF_REG_0),                        /* network to host order */
		STX_W(BPF_REG_10, BPF_REG_0, -8),          /* key (u32) at fp-8 */
		MOV64_REG(BPF_REG_1, BPF_REG_6),
		INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, map),
		INSN(0, 0, 0, 0, 0),
		MOV64_REG(BPF_REG_3, BPF_REG_10),
		ADD64_IMM(BPF_REG_3, -8),
		MOV64_IMM(BPF_REG_4, 0),
		CALL(BPF_FUNC_sk_select_reuseport),
		JNE_IMM(BPF_REG_0, 0, 2),                  /* no socket for the port: drop */
		MOV64_IMM(BPF_REG_0, SK_PASS),
		EXIT(),
		MOV64_IMM(BPF_REG_0, SK_DROP),
		EXIT(),
	};
	union bpf_attr a = {0};
	int fd;

	a.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
	a.expected_attach_type = BPF_SK_REUSEPORT_SELECT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	a.license = (uint64_t)(uintptr_t)"Dual MIT/GPL";
	memcpy(a.prog_name, STEER_PROG_NAME, sizeof(STEER_PROG_NAME));
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

/**
 * open_by_id() - The program of id @id and its map, if it is still loaded
 * and is ours (SK_REUSEPORT, named STEER_PROG_NAME, one map).
 * Return: 0 with *@prog and *@map open, or -1 (nothing open).
 */
static int open_by_id(uint32_t id, int *prog, int *map)
{
	union bpf_attr a = {0};
	struct bpf_prog_info info = {0};
	uint32_t map_id = 0;

	if (!id)
		return -1;
	a.prog_id = id;
	*prog = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (*prog < 0)
		return -1;
	info.nr_map_ids = 1;
	info.map_ids = (uint64_t)(uintptr_t)&map_id;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)*prog;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0 && info.type == BPF_PROG_TYPE_SK_REUSEPORT &&
	    !strcmp(info.name, STEER_PROG_NAME) && info.nr_map_ids == 1) {
		memset(&a, 0, sizeof(a));
		a.map_id = map_id;
		*map = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (*map >= 0)
			return 0;
	}
	close(*prog);
	return -1;
}

/** prog_id() - The id of loaded program @fd (0 if unknown). */
static uint32_t prog_id(int fd)
{
	struct bpf_prog_info info = {0};
	union bpf_attr a = {0};

	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0 ? info.id : 0;
}

/**
 * get_prog() - Under the record's lock (@rec): the group's program and
 * map, opened by the id @rec holds or made anew (then its id is written
 * to @rec). Return: 0 with *@prog and *@map open, or -errno.
 */
static int get_prog(int rec, int *prog, int *map)
{
	uint32_t id = 0;

	if (pread(rec, &id, sizeof(id), 0) == sizeof(id) && open_by_id(id, prog, map) == 0)
		return 0;
	*map = new_map();
	if (*map < 0)
		return *map;
	*prog = new_prog(*map);
	if (*prog < 0) {
		int err = *prog;

		close(*map);
		return err;
	}
	id = prog_id(*prog);
	if (pwrite(rec, &id, sizeof(id), 0) != sizeof(id)) {
		/* the next joiner makes its own program; this one still works */
	}
	return 0;
}

/** open_record() - Open (make) this namespace's record of @port, locked. Return: fd or -errno. */
static int open_record(uint16_t port)
{
	struct stat ns;
	char path[96];
	int fd;

	if (stat("/proc/self/ns/net", &ns) < 0)
		ns.st_ino = 0;
	snprintf(path, sizeof(path), "/dev/shm/homa-psp-steer-%lu-%u", (unsigned long)ns.st_ino,
		 port);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/**
 * bind_port() - A UDP socket on the wildcard address and @port with
 * SO_REUSEPORT: IPv6 dual-stack, or IPv4 without IPv6. Return: fd or -errno.
 */
static int bind_port(uint16_t port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port),
				  .sin6_addr = IN6ADDR_ANY_INIT};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	int on = 1, off = 0, err;
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	bool v6 = fd >= 0;

	if (!v6 && errno == EAFNOSUPPORT)
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) < 0 ||
	    (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0) ||
	    (v6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6))
		: bind(fd, (struct sockaddr *)&a4, sizeof(a4))) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/** enter() - Attach @prog to @fd's group and map @homa_port to @fd. Return: 0 or -errno. */
static int enter(int fd, int prog, int map, uint16_t homa_port)
{
	union bpf_attr a = {0};
	uint32_t key = homa_port;
	uint64_t val = (uint64_t)fd;

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &prog, sizeof(prog)) < 0)
		return -errno;
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&val;
	a.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a) < 0 ? -errno : 0;
}

/** homa_rt_psp_steer_off() - See psp_steer.h. */
bool homa_rt_psp_steer_off(void)
{
	const char *v = getenv(PSP_STEER_ENV);

	return v && (!strcmp(v, "off") || !strcmp(v, "0"));
}

/** homa_rt_psp_steer_open() - See psp_steer.h. */
int homa_rt_psp_steer_open(uint16_t udp_port, uint16_t homa_port)
{
	int rec, prog = -1, map = -1, fd, err;

	if (homa_rt_psp_steer_off())
		return HOMA_ENOTSUP;
	rec = open_record(udp_port);
	if (rec < 0)
		return homa_err(-rec);
	err = get_prog(rec, &prog, &map);
	fd = err ? err : bind_port(udp_port);
	if (fd >= 0) {
		err = enter(fd, prog, map, homa_port);
		if (err) {
			close(fd);
			fd = err;
		}
	}
	if (prog >= 0)
		close(prog);
	if (map >= 0)
		close(map);
	close(rec);  /* and its lock */
	return fd >= 0 ? fd : homa_err(-fd);
}
