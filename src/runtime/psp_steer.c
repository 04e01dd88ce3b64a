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
 * dropped by the kernel and counted by reason in the program's second
 * map, an array of three u64 (homa_rt_psp_steer_drops() reads it).
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
/** Offset from the UDP header of the end of the shortest PSP packet (headers and ICV). */
#define STEER_MIN_END (8 + HOMA_PSP_HDR_LEN + HOMA_PSP_CRYPT_OFF * 4 + HOMA_PSP_ICV_LEN)
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

/** new_map() - A map of @type named @name, u32 keys, @value_size-byte values, @n entries. Return: fd or -errno. */
static int new_map(uint32_t type, const char *name, uint32_t value_size, uint32_t n)
{
	union bpf_attr a = {0};
	int fd;

	a.map_type = type;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = n;
	snprintf(a.map_name, sizeof(a.map_name), "%s", name);
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
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define LDX_B(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_B, d, s, o, 0)
#define LDX_H(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_H, d, s, o, 0)
#define STX_W(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define XADD_DW(d, s, o) INSN(BPF_STX | BPF_XADD | BPF_DW, d, s, o, 0)  /* atomic *(d+o) += s */
#define TO_BE16(d) INSN(BPF_ALU | BPF_END | BPF_TO_BE, d, 0, 0, 16)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/** The jump at instruction @at to instruction @to (offsets count from the next one). */
#define TO(to, at) ((to) - (at) - 1)

/** Instruction indexes of new_prog()'s jump targets and jumps. */
enum {
	AT_NEXT_HDR_READ = 7, AT_NEXT_HDR = 9, AT_MIN_LEN = 16, AT_DPORT = 23, AT_SELECT = 34,
	L_NOT_PSP = 37, AT_NOT_PSP_JA = 38, L_TRUNC = 39, AT_TRUNC_JA = 40, L_NO_PORT = 41,
	L_COUNT = 42, AT_LOOKUP = 48, L_DROP = 51, PROG_LEN = 53
};

/**
 * new_prog() - Load the steering program with socket map @map and drop
 * counters @drops: read the PSP next header, check the datagram holds a
 * PSP header, common header and ICV, read the Homa destination port
 * (bpf_skb_load_bytes, offsets from the UDP header), select the map's
 * socket for that port, SK_PASS. Else SK_DROP, counting the reason in
 * @drops (PSP_STEER_NOT_PSP, _TRUNCATED, _NO_PORT; atomic adds).
 * Return: fd or -errno.
 */
static int new_prog(int map, int drops)
{
	const struct bpf_insn insns[] = {
		MOV64_REG(BPF_REG_6, BPF_REG_1),           /* r6 = ctx */
		MOV64_REG(BPF_REG_1, BPF_REG_6),           /* 1 byte at 8: PSP next header */
		MOV64_IMM(BPF_REG_2, STEER_NEXT_OFF),
		MOV64_REG(BPF_REG_3, BPF_REG_10),
		ADD64_IMM(BPF_REG_3, -8),
		MOV64_IMM(BPF_REG_4, 1),
		CALL(BPF_FUNC_skb_load_bytes),
		JNE_IMM(BPF_REG_0, 0, TO(L_NOT_PSP, AT_NEXT_HDR_READ)),  /* empty */
		LDX_B(BPF_REG_0, BPF_REG_10, -8),
		JNE_IMM(BPF_REG_0, HOMA_PSP_NEXT_HDR, TO(L_NOT_PSP, AT_NEXT_HDR)),
		MOV64_REG(BPF_REG_1, BPF_REG_6),           /* the last byte a PSP packet must have */
		MOV64_IMM(BPF_REG_2, STEER_MIN_END - 1),
		MOV64_REG(BPF_REG_3, BPF_REG_10),
		ADD64_IMM(BPF_REG_3, -8),
		MOV64_IMM(BPF_REG_4, 1),
		CALL(BPF_FUNC_skb_load_bytes),
		JNE_IMM(BPF_REG_0, 0, TO(L_TRUNC, AT_MIN_LEN)),
		MOV64_REG(BPF_REG_1, BPF_REG_6),           /* the Homa destination port */
		MOV64_IMM(BPF_REG_2, STEER_DPORT_OFF),
		MOV64_REG(BPF_REG_3, BPF_REG_10),
		ADD64_IMM(BPF_REG_3, -4),
		MOV64_IMM(BPF_REG_4, 2),
		CALL(BPF_FUNC_skb_load_bytes),
		JNE_IMM(BPF_REG_0, 0, TO(L_TRUNC, AT_DPORT)),
		LDX_H(BPF_REG_0, BPF_REG_10, -4),
		TO_BE16(BPF_REG_0),                        /* network to host order */
		STX_W(BPF_REG_10, BPF_REG_0, -8),          /* key (u32) at fp-8 */
		MOV64_REG(BPF_REG_1, BPF_REG_6),
		LD_MAP(BPF_REG_2, map),
		MOV64_REG(BPF_REG_3, BPF_REG_10),
		ADD64_IMM(BPF_REG_3, -8),
		MOV64_IMM(BPF_REG_4, 0),
		CALL(BPF_FUNC_sk_select_reuseport),
		JNE_IMM(BPF_REG_0, 0, TO(L_NO_PORT, AT_SELECT)),
		MOV64_IMM(BPF_REG_0, SK_PASS),
		EXIT(),
		MOV64_IMM(BPF_REG_7, PSP_STEER_NOT_PSP),   /* L_NOT_PSP */
		JA(TO(L_COUNT, AT_NOT_PSP_JA)),
		MOV64_IMM(BPF_REG_7, PSP_STEER_TRUNCATED), /* L_TRUNC */
		JA(TO(L_COUNT, AT_TRUNC_JA)),
		MOV64_IMM(BPF_REG_7, PSP_STEER_NO_PORT),   /* L_NO_PORT */
		STX_W(BPF_REG_10, BPF_REG_7, -12),         /* L_COUNT: drops[r7] += 1 */
		LD_MAP(BPF_REG_1, drops),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -12),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, TO(L_DROP, AT_LOOKUP)),
		MOV64_IMM(BPF_REG_1, 1),
		XADD_DW(BPF_REG_0, BPF_REG_1, 0),
		MOV64_IMM(BPF_REG_0, SK_DROP),             /* L_DROP */
		EXIT(),
	};
	union bpf_attr a = {0};
	int fd;

	_Static_assert(sizeof(insns) / sizeof(insns[0]) == PROG_LEN, "labels out of date");
	a.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
	a.expected_attach_type = BPF_SK_REUSEPORT_SELECT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = PROG_LEN;
	a.license = (uint64_t)(uintptr_t)"Dual MIT/GPL";
	memcpy(a.prog_name, STEER_PROG_NAME, sizeof(STEER_PROG_NAME));
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

/** map_type() - The type of map @fd (0 if unknown). */
static uint32_t map_type(int fd)
{
	struct bpf_map_info info = {0};
	union bpf_attr a = {0};

	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	return sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0 ? info.type : 0;
}

/**
 * open_maps() - Open the maps of ids @ids[0..1] into *@map (the socket
 * array) and *@drops (the counters), whichever order the kernel lists
 * them in. Return: 0 with both open, or -1 (none open).
 */
static int open_maps(const uint32_t ids[2], int *map, int *drops)
{
	union bpf_attr a = {0};
	int fd[2];

	*map = *drops = -1;
	for (int i = 0; i < 2; i++) {
		memset(&a, 0, sizeof(a));
		a.map_id = ids[i];
		fd[i] = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (fd[i] < 0)
			continue;
		switch (map_type(fd[i])) {
		case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
			*map = *map < 0 ? fd[i] : *map;
			break;
		case BPF_MAP_TYPE_ARRAY:
			*drops = *drops < 0 ? fd[i] : *drops;
			break;
		}
	}
	if (*map >= 0 && *drops >= 0)
		return 0;
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	*map = *drops = -1;
	return -1;
}

/**
 * open_by_id() - The program of id @id and its maps, if it is still
 * loaded and is ours (SK_REUSEPORT, named STEER_PROG_NAME, a socket array
 * and a counter array). Return: 0 with *@prog, *@map and *@drops open, or
 * -1 (nothing open).
 */
static int open_by_id(uint32_t id, int *prog, int *map, int *drops)
{
	union bpf_attr a = {0};
	struct bpf_prog_info info = {0};
	uint32_t map_ids[2] = {0, 0};

	if (!id)
		return -1;
	a.prog_id = id;
	*prog = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
	if (*prog < 0)
		return -1;
	info.nr_map_ids = 2;
	info.map_ids = (uint64_t)(uintptr_t)map_ids;
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)*prog;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0 && info.type == BPF_PROG_TYPE_SK_REUSEPORT &&
	    !strcmp(info.name, STEER_PROG_NAME) && info.nr_map_ids == 2 &&
	    open_maps(map_ids, map, drops) == 0)
		return 0;
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
 * maps, opened by the id @rec holds or made anew (then its id is written
 * to @rec). Return: 0 with *@prog, *@map and *@drops open, or -errno.
 */
static int get_prog(int rec, int *prog, int *map, int *drops)
{
	uint32_t id = 0;
	int err;

	if (pread(rec, &id, sizeof(id), 0) == sizeof(id) && open_by_id(id, prog, map, drops) == 0)
		return 0;
	*map = new_map(BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, "homa_psp_ports", 8, 65536);
	if (*map < 0)
		return *map;
	*drops = new_map(BPF_MAP_TYPE_ARRAY, "homa_psp_drops", 8, PSP_STEER_REASONS);
	*prog = *drops < 0 ? *drops : new_prog(*map, *drops);
	if (*prog < 0) {
		err = *prog;
		close(*map);
		if (*drops >= 0)
			close(*drops);
		*prog = *map = *drops = -1;
		return err;
	}
	id = prog_id(*prog);
	if (pwrite(rec, &id, sizeof(id), 0) != sizeof(id)) {
		/* the next joiner makes its own program; this one still works */
	}
	return 0;
}

/**
 * open_record() - Open this namespace's record of @port (made if @create),
 * locked. Return: fd or -errno.
 */
static int open_record(uint16_t port, bool create)
{
	struct stat ns;
	char path[96];
	int fd;

	if (stat("/proc/self/ns/net", &ns) < 0)
		ns.st_ino = 0;
	snprintf(path, sizeof(path), "/dev/shm/homa-psp-steer-%lu-%u", (unsigned long)ns.st_ino,
		 port);
	fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
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
	int rec, prog = -1, map = -1, drops = -1, fd, err;

	if (homa_rt_psp_steer_off())
		return HOMA_ENOTSUP;
	rec = open_record(udp_port, true);
	if (rec < 0)
		return homa_err(-rec);
	err = get_prog(rec, &prog, &map, &drops);
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
	if (drops >= 0)
		close(drops);
	close(rec);  /* and its lock */
	return fd >= 0 ? fd : homa_err(-fd);
}

/** homa_rt_psp_steer_drops() - See psp_steer.h. */
int homa_rt_psp_steer_drops(uint16_t udp_port, uint64_t out[PSP_STEER_REASONS])
{
	int rec, prog = -1, map = -1, drops = -1, err = 0;
	union bpf_attr a;
	uint32_t id = 0;

	rec = open_record(udp_port, false);
	if (rec < 0)
		return homa_err(-rec);
	if (pread(rec, &id, sizeof(id), 0) != sizeof(id) ||
	    open_by_id(id, &prog, &map, &drops) < 0) {
		close(rec);
		return HOMA_ENOTSUP;
	}
	close(rec);
	for (uint32_t k = 0; k < PSP_STEER_REASONS && !err; k++) {
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)drops;
		a.key = (uint64_t)(uintptr_t)&k;
		a.value = (uint64_t)(uintptr_t)&out[k];
		if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0)
			err = homa_err(errno);
	}
	close(prog);
	close(map);
	close(drops);
	return err;
}
