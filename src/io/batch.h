/* SPDX-License-Identifier: MIT */
/**
 * @file batch.h
 * Batched system calls shared by the drivers: a sender that groups
 * packets into one sendmmsg() (with per-packet DSCP marks and, where
 * allowed, UDP_SEGMENT super-packets) and a receiver that fills a set of
 * buffers with one recvmmsg().
 */
#ifndef HOMA_IO_BATCH_H
#define HOMA_IO_BATCH_H

#include <stdatomic.h>
#include <sys/socket.h>

#include "driver.h"

/** Control-message room for one sent message: TOS/TCLASS and UDP_SEGMENT. */
#define HOMA_IO_TX_CTL (CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint16_t)))
/** Control-message room for one received message: UDP_GRO size and TOS/TCLASS. */
#define HOMA_IO_RX_CTL (CMSG_SPACE(sizeof(int)) * 3)
/** Bits the priority is shifted by in the TOS / traffic class byte. */
#define HOMA_IO_TOS_SHIFT 5
/** Most segments the kernel accepts in one UDP_SEGMENT send. */
#define HOMA_IO_GSO_MAX_SEGS 64
/** Most payload bytes in one UDP_SEGMENT send. */
#define HOMA_IO_GSO_MAX_BYTES 65000

/** Sender state; owned by one driver, used by one thread at a time. */
struct homa_io_sender {
	int fd;
	int family;
	bool gso;          /**< group same-size runs with UDP_SEGMENT */
	bool zero_port;    /**< raw sockets: destination port must be 0 */
	uint32_t batch;
	struct mmsghdr *msgs;
	struct iovec *iovs;  /**< 2 * batch: each packet's data and ext */
	int *first;          /**< per message: index of its first packet in the call's list */
	int *npkts;          /**< per message: packets it carries (GSO segments) */
	struct sockaddr_storage *names;
	char *ctl;         /**< batch * HOMA_IO_TX_CTL bytes */
	_Atomic int error; /**< errno of the latest send that failed on a pending socket
			        error (ECONNREFUSED: an ICMP report with IP_RECVERR, which
			        the failure consumed); the owner clears it; atomic: the
			        receiving thread reads it */
};

/** Receiver state; owned by one driver, used by one thread at a time. */
struct homa_io_receiver {
	int fd;
	uint32_t batch;
	size_t buf_size;   /**< bytes per receive buffer */
	uint8_t *bufs;     /**< batch * buf_size; NULL with slots */
	/**
	 * NULL, or where entry i reads (buf_size bytes each; a lendable
	 * pool's table, lendpool.h, shared with the driver's other
	 * receivers and not owned): looked up at every receive.
	 */
	uint8_t *const *slots;
	struct mmsghdr *msgs;
	struct iovec *iovs;
	struct sockaddr_storage *names;
	char *ctl;         /**< batch * HOMA_IO_RX_CTL bytes */
	int error;         /**< errno of the latest receive that failed with a socket
			        error (an ICMP report with IP_RECVERR); the owner clears it */
	/**
	 * Entries 0..*stale-1 of msgs may hold what the kernel wrote (lengths,
	 * flags) and are set afresh before a receive. Allocated with msgs,
	 * so a receiver copied from this one (sharing its arrays) shares it.
	 */
	uint32_t *stale;
};

/**
 * homa_io_sender_init() - Allocate a sender for @fd.
 * Return: 0 or HOMA_ENOMEM (then nothing is allocated).
 */
int homa_io_sender_init(struct homa_io_sender *s, int fd, int family,
			uint32_t batch, bool gso, bool zero_port);

/** homa_io_sender_free() - Free what homa_io_sender_init() allocated. */
void homa_io_sender_free(struct homa_io_sender *s);

/**
 * homa_io_sender_send() - Send @n packets, @s->batch at a time, without
 * ever waiting. Packets the kernel refuses are counted in @c->tx_errors
 * and dropped. A full send buffer stops the call (counted in tx_full).
 * Return: packets taken (sent or dropped) from the front of @pkts; fewer
 * than @n when the send buffer filled (the rest were not sent; the caller
 * keeps them for later), or HOMA_EIO if the socket itself failed.
 */
int homa_io_sender_send(struct homa_io_sender *s, const struct homa_io_tx *pkts,
			int n, struct homa_io_counters *c);

/**
 * homa_io_receiver_init() - Allocate @batch buffers of @buf_size bytes.
 * Return: 0 or HOMA_ENOMEM (then nothing is allocated).
 */
int homa_io_receiver_init(struct homa_io_receiver *r, int fd, uint32_t batch,
			  size_t buf_size);

/**
 * homa_io_receiver_use_slots() - Read entry i into @slots[i] from now on
 * (batch entries of buf_size bytes, owned by the caller, who may change
 * them between receives) and free @r's own buffers.
 */
void homa_io_receiver_use_slots(struct homa_io_receiver *r, uint8_t *const *slots);

/** homa_io_receiver_free() - Free what homa_io_receiver_init() allocated. */
void homa_io_receiver_free(struct homa_io_receiver *r);

/**
 * homa_io_receiver_recv() - One non-blocking recvmmsg() into all buffers.
 * Only the headers the previous call can have changed are set afresh (the
 * kernel writes those of the datagrams it returned); with slots, every
 * entry's buffer is looked up again.
 * Afterwards msgs[i].msg_len, names[i] and the control data describe
 * datagram i. A pending socket error (an ICMP report) is recorded in
 * r->error, and the receive is made once more (the refused call took
 * the error, not the datagrams waiting behind it).
 * Return: datagrams received (0 if none waiting, or if the second call
 * was refused by a further ECONNREFUSED too), or HOMA_EIO (another
 * socket error).
 */
int homa_io_receiver_recv(struct homa_io_receiver *r);

/**
 * homa_io_tos_priority() - The Homa priority of a packet whose TOS (IPv4)
 * or traffic class (IPv6) byte is @tos: the inverse of the sender's
 * priority << HOMA_IO_TOS_SHIFT (ECN and unused DSCP bits are ignored).
 */
static inline uint8_t homa_io_tos_priority(unsigned int tos)
{
	return (uint8_t)((tos >> HOMA_IO_TOS_SHIFT) & 7);
}

/**
 * homa_io_recv_tos_enable() - Ask the kernel to report the TOS / traffic
 * class of each datagram received on @fd as a control message: IP_RECVTOS
 * on IPv4 sockets, and on IPv6 sockets IPV6_RECVTCLASS plus IP_RECVTOS
 * (for IPv4-mapped peers). Failures leave priorities reported as 0.
 */
void homa_io_recv_tos_enable(int fd, int family);

/**
 * homa_io_cmsg_priority() - The priority carried by the IP_TOS or
 * IPV6_TCLASS control message of received message @h (see
 * homa_io_recv_tos_enable()); 0 if there is none.
 */
uint8_t homa_io_cmsg_priority(struct msghdr *h);

#endif /* HOMA_IO_BATCH_H */
