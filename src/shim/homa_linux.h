/* SPDX-License-Identifier: MIT */
/**
 * @file homa_linux.h
 * The Linux Homa module's user API (socket options, ioctls and the
 * structures passed in msg_control), written from its documented layout:
 * the module's homa(7), sendmsg(2) and recvmsg(2) pages and the field
 * list of its uapi header. Programs written for the module use the same
 * names and the same binary layout, so a program built against the
 * module's header runs unchanged under libhoma-linux.so (LD_PRELOAD), and
 * a program built against this header runs against the module.
 *
 * Every offset and size is checked at compile time below: the layout is
 * an interface shared with binaries built elsewhere, and a change here
 * would break them silently.
 */
#ifndef HOMA_LINUX_H
#define HOMA_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

/** IP protocol number of Homa (IANA); the third argument of socket(). */
#ifndef IPPROTO_HOMA
#define IPPROTO_HOMA 146
#endif

/** Longest request or response the module accepts, in bytes. */
#define HOMA_MAX_MESSAGE_LENGTH 1000000

/** log2 of the size of a receive-buffer page (bpage). */
#define HOMA_BPAGE_SHIFT 16
/** Size of a bpage: 64 KiB. Messages land in the region in bpages. */
#define HOMA_BPAGE_SIZE (1 << HOMA_BPAGE_SHIFT)
/** Most bpages one message needs (16). */
#define HOMA_MAX_BPAGES ((HOMA_MAX_MESSAGE_LENGTH + HOMA_BPAGE_SIZE - 1) >> \
			 HOMA_BPAGE_SHIFT)

/** Ports from here up are assigned automatically; bind() takes 1..0x7fff. */
#define HOMA_MIN_DEFAULT_PORT 0x8000

/**
 * struct homa_sendmsg_args - msg_control of sendmsg() on a Homa socket.
 * @id: in: 0 sends a new request (and receives its id, even), non-zero
 *	sends the response to that (odd) server RPC id.
 * @completion_cookie: requests: returned with the response; responses: 0.
 * @flags: HOMA_SENDMSG_* bits.
 * @reserved: must be 0.
 */
struct homa_sendmsg_args {
	uint64_t id;
	uint64_t completion_cookie;
	uint32_t flags;
	uint32_t reserved;
};

/** The response can only be received by asking for its id (private RPC). */
#define HOMA_SENDMSG_PRIVATE 0x01
/** Every flag bit sendmsg() accepts. */
#define HOMA_SENDMSG_VALID_FLAGS 0x01

/**
 * struct homa_recvmsg_args - msg_control of recvmsg() on a Homa socket;
 *	msg_controllen must be exactly its size.
 * @id: in: 0 for any message that is not a private response, or the id
 *	of one private client RPC; out: the id received.
 * @completion_cookie: out: a response's cookie (0 for requests).
 * @num_bpages: in: entries of @bpage_offsets being given back; out:
 *	entries describing the new message.
 * @reserved: must be 0.
 * @bpage_offsets: offsets in the receive region. Out: every entry but the
 *	last is a whole, aligned bpage; the last may be a fragment. The
 *	application owns them until it passes them back in a later call.
 */
struct homa_recvmsg_args {
	uint64_t id;
	uint64_t completion_cookie;
	uint32_t num_bpages;
	uint32_t reserved;
	uint32_t bpage_offsets[HOMA_MAX_BPAGES];
};

/**
 * struct homa_abort_args - Argument of the HOMAIOCABORT ioctl.
 * @id: client RPC to abort, or 0 for every client RPC of the socket.
 * @error: 0 frees the RPCs silently; otherwise recvmsg() returns each
 *	of them as failed with this errno value.
 * @_pad1, @_pad2: must be 0.
 */
struct homa_abort_args {
	uint64_t id;
	uint32_t error;
	uint32_t _pad1;
	uint64_t _pad2[2];
};

/** setsockopt(IPPROTO_HOMA) option: the receive buffer region. */
#define SO_HOMA_RCVBUF 10
/** setsockopt(IPPROTO_HOMA) option: int, non-zero accepts requests. */
#define SO_HOMA_SERVER 11

/**
 * struct homa_rcvbuf_args - Value of SO_HOMA_RCVBUF.
 * @start: address of the region (page-aligned).
 * @length: its size in bytes.
 */
struct homa_rcvbuf_args {
	uint64_t start;
	uint64_t length;
};

/** Module flag word bit (sysctl): send without pacing. */
#define HOMA_FLAG_DONT_THROTTLE 2

/**
 * struct homa_rpc_info - One RPC in the HOMAIOCINFO reply.
 * @id: RPC id (odd: this socket is the server).
 * @peer: the other end.
 * @completion_cookie: client RPCs: the request's cookie; else 0.
 * @tx_length: outgoing message length, -1 if not sent yet.
 * @tx_sent, @tx_granted, @tx_prio: transmit progress.
 * @rx_length: incoming message length, -1 if not known yet.
 * @rx_remaining, @rx_gaps, @rx_gap_bytes, @rx_granted: receive progress.
 * @flags: HOMA_RPC_* bits.
 */
struct homa_rpc_info {
	uint64_t id;
	union {
		struct sockaddr_storage storage;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} peer;
	uint64_t completion_cookie;
	int32_t tx_length;
	uint32_t tx_sent;
	uint32_t tx_granted;
	uint32_t tx_prio;
	int32_t rx_length;
	uint32_t rx_remaining;
	uint32_t rx_gaps;
	uint32_t rx_gap_bytes;
	uint32_t rx_granted;
	uint16_t flags;
};

#define HOMA_RPC_BUF_STALL 1 /**< waiting for receive buffer space */
#define HOMA_RPC_PRIVATE 2   /**< private client RPC */
#define HOMA_RPC_RX_READY 4  /**< complete, waiting for recvmsg() */
#define HOMA_RPC_RX_COPY 8   /**< data not yet copied to the region */

/** Size of homa_info.error_msg. */
#define HOMA_ERROR_MSG_SIZE 104

/**
 * struct homa_info - In/out argument of the HOMAIOCINFO ioctl.
 * @rpc_info: in: address of a struct homa_rpc_info array (or 0).
 * @rpc_info_length: in: bytes available there.
 * @bpool_avail_bytes: out: free bytes in the receive region.
 * @port: out: the socket's port.
 * @num_rpcs: out: active RPCs (more than were written if the array is short).
 * @error_msg: out: text about the last error of a call on this socket.
 */
struct homa_info {
	uint64_t rpc_info;
	uint64_t rpc_info_length;
	uint64_t bpool_avail_bytes;
	uint32_t port;
	uint32_t num_rpcs;
	char error_msg[HOMA_ERROR_MSG_SIZE];
};

/** ioctl: socket status and its RPCs (struct homa_info). */
#define HOMAIOCINFO _IOWR('h', 0x90, struct homa_info)
/** ioctl: abort client RPCs (struct homa_abort_args). */
#define HOMAIOCABORT _IOWR('h', 0x91, struct homa_abort_args)
/** ioctl: freeze the module's time trace (no argument). */
#define HOMAIOCFREEZE _IO('h', 0x92)

/*
 * The binary layout, as documented for the module (x86-64 and arm64).
 */
#ifdef __cplusplus
#define HOMA_LINUX_ASSERT static_assert
#else
#define HOMA_LINUX_ASSERT _Static_assert
#endif
#define HOMA_LINUX_AT(type, field, off) \
	HOMA_LINUX_ASSERT(offsetof(struct type, field) == (off), #type "." #field)
#define HOMA_LINUX_SIZE(type, size) \
	HOMA_LINUX_ASSERT(sizeof(struct type) == (size), "sizeof " #type)

HOMA_LINUX_ASSERT(HOMA_MAX_BPAGES == 16, "HOMA_MAX_BPAGES");
HOMA_LINUX_AT(homa_sendmsg_args, id, 0);
HOMA_LINUX_AT(homa_sendmsg_args, completion_cookie, 8);
HOMA_LINUX_AT(homa_sendmsg_args, flags, 16);
HOMA_LINUX_AT(homa_sendmsg_args, reserved, 20);
HOMA_LINUX_SIZE(homa_sendmsg_args, 24);
HOMA_LINUX_AT(homa_recvmsg_args, id, 0);
HOMA_LINUX_AT(homa_recvmsg_args, completion_cookie, 8);
HOMA_LINUX_AT(homa_recvmsg_args, num_bpages, 16);
HOMA_LINUX_AT(homa_recvmsg_args, reserved, 20);
HOMA_LINUX_AT(homa_recvmsg_args, bpage_offsets, 24);
HOMA_LINUX_SIZE(homa_recvmsg_args, 88);
HOMA_LINUX_AT(homa_abort_args, id, 0);
HOMA_LINUX_AT(homa_abort_args, error, 8);
HOMA_LINUX_AT(homa_abort_args, _pad1, 12);
HOMA_LINUX_AT(homa_abort_args, _pad2, 16);
HOMA_LINUX_SIZE(homa_abort_args, 32);
HOMA_LINUX_AT(homa_rcvbuf_args, start, 0);
HOMA_LINUX_AT(homa_rcvbuf_args, length, 8);
HOMA_LINUX_SIZE(homa_rcvbuf_args, 16);
HOMA_LINUX_AT(homa_rpc_info, id, 0);
HOMA_LINUX_AT(homa_rpc_info, peer, 8);
HOMA_LINUX_AT(homa_rpc_info, completion_cookie, 136);
HOMA_LINUX_AT(homa_rpc_info, tx_length, 144);
HOMA_LINUX_AT(homa_rpc_info, tx_sent, 148);
HOMA_LINUX_AT(homa_rpc_info, tx_granted, 152);
HOMA_LINUX_AT(homa_rpc_info, tx_prio, 156);
HOMA_LINUX_AT(homa_rpc_info, rx_length, 160);
HOMA_LINUX_AT(homa_rpc_info, rx_remaining, 164);
HOMA_LINUX_AT(homa_rpc_info, rx_gaps, 168);
HOMA_LINUX_AT(homa_rpc_info, rx_gap_bytes, 172);
HOMA_LINUX_AT(homa_rpc_info, rx_granted, 176);
HOMA_LINUX_AT(homa_rpc_info, flags, 180);
HOMA_LINUX_SIZE(homa_rpc_info, 184);
HOMA_LINUX_AT(homa_info, rpc_info, 0);
HOMA_LINUX_AT(homa_info, rpc_info_length, 8);
HOMA_LINUX_AT(homa_info, bpool_avail_bytes, 16);
HOMA_LINUX_AT(homa_info, port, 24);
HOMA_LINUX_AT(homa_info, num_rpcs, 28);
HOMA_LINUX_AT(homa_info, error_msg, 32);
HOMA_LINUX_SIZE(homa_info, 136);
HOMA_LINUX_ASSERT(HOMAIOCINFO == 0xc0886890UL, "HOMAIOCINFO");
HOMA_LINUX_ASSERT(HOMAIOCABORT == 0xc0206891UL, "HOMAIOCABORT");
HOMA_LINUX_ASSERT(HOMAIOCFREEZE == 0x6892UL, "HOMAIOCFREEZE");

#ifdef __cplusplus
}
#endif
#endif /* HOMA_LINUX_H */
