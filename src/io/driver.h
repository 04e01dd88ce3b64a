/* SPDX-License-Identifier: MIT */
/**
 * @file driver.h
 * Packet drivers: the small interface between the runtime and the OS.
 *
 * A driver owns one kernel socket bound to a local address and Homa port.
 * It sends batches of Homa packets (each with a destination and a
 * priority, marked in the DSCP bits) and receives batches of Homa packets
 * (header first, with the sender's address and the priority read back
 * from the DSCP bits they arrived with). The runtime never sees
 * which driver is in use, and the engine never sees a driver at all.
 *
 * Threading: send and recv may run concurrently in different threads
 * (they use separate state); two sends or two recvs on one driver must be
 * serialized by the caller.
 */
#ifndef HOMA_IO_DRIVER_H
#define HOMA_IO_DRIVER_H

#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "homa/engine.h"

/** One packet to send. */
struct homa_io_tx {
	const uint8_t *data; /**< Homa packet, header first (caller owns) */
	size_t len;
	const uint8_t *ext;  /**< if ext_len > 0: the packet's rest, sent after data
				  (a payload left in message memory; caller owns) */
	size_t ext_len;
	homa_addr dst;       /**< destination host */
	uint16_t dport;      /**< destination Homa port */
	uint8_t priority;    /**< 0..7, written to the DSCP bits */
	/**
	 * Packets whose flow differs never share a UDP_SEGMENT send: the
	 * Homa destination port when dport is a port shared by the host's
	 * sockets (PSP's), where the receiving kernel picks one socket for a
	 * whole coalesced send; 0 otherwise.
	 */
	uint16_t flow;
};

/**
 * A report that a packet we sent could not be delivered (ICMP destination
 * unreachable), for homa_engine_unreachable().
 */
struct homa_io_unreach {
	homa_addr dst;        /**< the host our packet was sent to */
	int kind;             /**< HOMA_UNREACH_PORT or HOMA_UNREACH_PROTO */
	size_t len;           /**< bytes of quoted (at most its size) */
	uint8_t quoted[64];   /**< the start of our Homa packet, as the report quotes it */
};

/** One received packet; the bytes belong to the driver. */
struct homa_io_rx {
	uint8_t *data;       /**< Homa packet, header first; may be modified */
	size_t len;
	homa_addr src;       /**< sending host */
	uint8_t priority;    /**< 0..7, from the DSCP bits (TOS / traffic class >> 5) */
	/**
	 * Drivers with a lend (struct homa_driver): true if the engine may
	 * keep the buffer (homa_engine_input_lend() with the driver's lend).
	 */
	bool lendable;
	/**
	 * Set by the caller of recv() when the engine kept the buffer: the
	 * driver reuses it only after lend->release() gives it back.
	 */
	bool kept;
};

/**
 * homa_io_count() - Add @n to counter @c. Counters are written by the
 * thread that moves packets and read by any thread (homa_io_stats(), the
 * metrics exporter) without a lock, so both sides use relaxed atomics:
 * each value read is one that was written, and no thread sanitizer race.
 */
static inline void homa_io_count(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/** homa_io_counter() - Read counter @c written with homa_io_count(). */
static inline uint64_t homa_io_counter(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/** Driver counters (added to the runtime's struct homa_io_stats); see homa_io_count(). */
struct homa_io_counters {
	uint64_t tx_packets, tx_bytes, tx_calls, tx_gso_batches, tx_errors;
	uint64_t tx_full;    /**< sends that found the send buffer full (the rest deferred) */
	uint64_t rx_packets, rx_bytes, rx_calls, rx_gro_batches, rx_filtered;
	uint64_t rx_prio[HOMA_MAX_PRIORITIES]; /**< received packets by priority */
	/* XDP driver only (zero elsewhere); the kernel's ring statistics are
	 * read by homa_driver_refresh() */
	uint64_t xdp_zerocopy;      /**< 1 if bound in zero-copy mode, 0 in copy mode */
	uint64_t xdp_fill_empty;    /**< packets the kernel dropped: fill ring empty */
	uint64_t xdp_rx_dropped;    /**< packets the kernel dropped: rx ring full or other */
	uint64_t xdp_invalid_descs; /**< descriptors the kernel refused (rx and tx) */
	uint64_t xdp_tx_ring_full;  /**< sends that found the tx ring or send frames exhausted */
	uint64_t xdp_rx_invalid;    /**< received frames refused (bad headers or checksums) */
	uint64_t xdp_unresolved;    /**< packets dropped while the kernel resolved the next hop */
	uint64_t xdp_rx_lent;       /**< gauge: receive frames held by messages (zero-copy receive) */
	uint64_t xdp_tx_copied;     /**< packet bytes copied into send frames (not built in place) */
	uint64_t xdp_reclaimed;     /**< frames taken back from processes that died (shared UMEM) */
	/* UDP driver's receive queues (steer.h) */
	uint64_t rx_queues;         /**< gauge: kernel receive queues read (2: by priority, 1) */
	uint64_t rx_fast_packets;   /**< packets read from the fast (high-priority) queue */
	/* UDP driver's known peers (known.h) */
	uint64_t rx_known_peers;    /**< gauge: known peers with a receive queue of their own */
	uint64_t rx_known_packets;  /**< packets read from known peers' queues */
	uint64_t rx_known_refused;  /**< peers named known left on the port's queues (cap, kernel) */
	uint64_t rx_empty;          /**< receive calls that found their socket empty (UDP) */
	uint64_t rx_scans;          /**< epoll_wait() calls asking which receive queue has packets */
	uint64_t rx_repolls;        /**< poll() calls after a full batch asking which listed sockets have packets now */
	uint64_t rx_gate_closed;    /**< intervals in which strangers used up their budget (gate.h) */
	uint64_t rx_lent_slots;     /**< gauge: UDP receive buffers held by messages (lendpool.h) */
};

/**
 * Most receiving sockets a driver asks its waiter to poll one by one
 * (homa_driver.rx_poll); with more it is polled through its epoll set,
 * and every wake-up then costs an epoll_wait() asking which socket has
 * packets. 16: the port's two queues, the strangers' gate timer and 13
 * known peers. With 8, a host talking to 7 peers (the 8-host testbed:
 * 10 sockets) made an epoll_wait() on almost every wake-up, about 35
 * system calls per W4 RPC at 20 Mbit/s (docs/RESULTS.md section 8).
 */
#define HOMA_DRIVER_POLL_MAX 16

/** What to open. */
struct homa_driver_config {
	struct sockaddr_storage bind; /**< local address; its port is the Homa port (0 = pick) */
	socklen_t bind_len;
	uint32_t batch;      /**< packets per system call (1..1024) */
	size_t max_packet;   /**< largest Homa packet to send or receive */
	bool offload;        /**< use UDP_SEGMENT / UDP_GRO if available */
	const char *ifname;  /**< XDP driver: the interface (caller-owned, read at open) */
	uint32_t queues;     /**< XDP driver: receive queues 0..queues-1 (0 = all) */
	bool xdp_raw;        /**< XDP driver: IP protocol 146 (raw format) instead of UDP */
	/**
	 * UDP and raw drivers: bytes the kernel may queue on the receive
	 * side (SO_RCVBUF; 0: HOMA_DRIVER_RCVBUF). Checked by the caller.
	 */
	uint32_t rcvbuf;
	/**
	 * UDP driver: packets whose DSCP priority is at least this go to a
	 * kernel receive queue of their own, read before the other (steer.h);
	 * 0: one queue for all.
	 */
	uint8_t rx_fast_prio;
	/**
	 * UDP driver: most known peers given a receive queue of their own,
	 * read before the port's (known.h); 0: none.
	 */
	uint32_t known_peers;
	/**
	 * UDP driver with known peers: packets per millisecond read from the
	 * port's own queues (strangers) while known peers are active
	 * (gate.h); 0: no limit.
	 */
	uint32_t stranger_budget;
	/**
	 * UDP driver with known peers: ns of the receiving thread's CPU time
	 * per millisecond that handling the port's own queues' packets may
	 * take while known peers are active (reported with rx_spent());
	 * 0: no limit.
	 */
	uint64_t stranger_cpu_ns;
	/**
	 * UDP driver: receive buffers beyond the batch's that messages may
	 * hold (zero-copy receive, lendpool.h); 0: payload is copied.
	 */
	uint32_t lend_slots;
};

struct homa_driver;

/** Operations every driver provides. */
struct homa_driver_ops {
	const char *name;
	/**
	 * send() - Send @n packets in as few system calls as possible; never
	 * blocks. Return: packets taken from the front of @pkts (packets the
	 * kernel refused count as taken: they are counted in tx_errors and
	 * dropped, Homa recovers them); fewer than @n if the send buffer is
	 * full (the caller keeps the rest and tries again when the socket is
	 * writable); or HOMA_EIO if the socket failed.
	 */
	int (*send)(struct homa_driver *d, const struct homa_io_tx *pkts, int n);
	/**
	 * recv() - Receive what is queued, without blocking.
	 * @out: receives an array of packets owned by the driver, valid until
	 *	the next recv() or close().
	 * Return: number of packets (0 if none; never more than max_rx), or
	 * HOMA_EIO.
	 */
	int (*recv)(struct homa_driver *d, struct homa_io_rx **out);
	/**
	 * recv_urgent() - Optional (UDP): receive, without blocking, what
	 * waits in the queues that hold short messages and control packets
	 * (the high-priority queue, unless a strangers' budget is on:
	 * gate.h; known peers whose latest batch was all short packets of
	 * its priorities)
	 * into buffers of its own, so that the packets the last recv()
	 * returned stay valid (until the next recv() or close()), and a
	 * caller still working through a batch of bulk data can serve a
	 * short message that arrived meanwhile. Called by the thread that
	 * calls recv.
	 * @out: receives an array of packets owned by the driver, valid until
	 *	the next recv_urgent(), recv() or close().
	 * Return: number of packets (0 if none; never more than max_rx), or
	 * HOMA_EIO.
	 */
	int (*recv_urgent)(struct homa_driver *d, struct homa_io_rx **out);
	/**
	 * unreach() - Optional: take up to @max reports that packets of ours
	 * could not be delivered, quoting a packet from our port, into @out.
	 * Called by the thread that calls recv (same serialization), after it.
	 * Return: reports written (0 when none is pending: cheap).
	 */
	int (*unreach)(struct homa_driver *d, struct homa_io_unreach *out, int max);
	/** close() - Close the socket and free the driver. */
	void (*close)(struct homa_driver *d);
	/**
	 * refresh() - Optional: bring the counters the kernel keeps (XDP ring
	 * statistics) into c; any thread, concurrently with send and recv.
	 */
	void (*refresh)(struct homa_driver *d);
	/**
	 * pending() - Optional: whether recv() would return packets now,
	 * answered without a system call (the XDP driver reads its receive
	 * rings), so that a caller spinning with a zero timeout makes none.
	 * Called by the thread that calls recv.
	 */
	bool (*pending)(struct homa_driver *d);
	/**
	 * tx_bufs() - Optional: lend up to @n buffers of at least @cap bytes
	 * (their addresses in @out) in which the caller builds packets that
	 * send() then sends where they lie, without copying them (the XDP
	 * driver: UMEM send frames, behind room for the headers). A lent
	 * buffer is the caller's until it passes it to send() as a packet's
	 * data (a packet send() takes, sent or dropped, gives its buffer
	 * back; one it leaves stays the caller's) or returns it with
	 * tx_unbufs(). Called by the thread that calls send (same
	 * serialization). Return: buffers lent (0: none, copy as usual).
	 */
	int (*tx_bufs)(struct homa_driver *d, uint8_t **out, int n, size_t cap);
	/**
	 * rx_spent() - Optional: the batch the last recv() returned took @ns
	 * of the calling thread's time, CLOCK_MONOTONIC from rx_t0 to the end
	 * of the caller's work on it (the receive call, the engine's work,
	 * the sends it caused). Called, by the thread that calls recv,
	 * only after a recv() that set rx_metered (UDP: strangers' packets
	 * while known peers are active, charged to their budget, gate.h).
	 * A caller that handles the batch in parts (an encrypted socket's
	 * poller served mid-batch leaves the rest for a later call, before
	 * the next recv()) calls it once per part, each with the time of
	 * that part only (from the start of its handling to its end).
	 */
	void (*rx_spent)(struct homa_driver *d, uint64_t ns);
	/** tx_unbufs() - Give back @n buffers tx_bufs() lent and send() never took. */
	void (*tx_unbufs)(struct homa_driver *d, uint8_t *const *bufs, int n);
	/**
	 * add_rx() - Optional (UDP): receive from the bound UDP socket @fd
	 * too (the PSP port's, kernel-steered): recv() returns its datagrams
	 * like the driver's own, and rx_fd2 becomes @fd. The driver owns @fd
	 * from then on (close() closes it), also when this fails. Called
	 * before any recv(). Return: 0; HOMA_EINVAL (already one); HOMA_ENOMEM.
	 */
	int (*add_rx)(struct homa_driver *d, int fd);
	/**
	 * steer() - Optional: from now on, steer packets of priority
	 * @fast_prio and above (1..7) into the fast receive queue (the
	 * settings' levels changed). Any thread. Return: 0, or HOMA_ENOTSUP
	 * when the driver reads one queue (nothing changes).
	 */
	int (*steer)(struct homa_driver *d, uint8_t fast_prio);
	/**
	 * know() - Optional (UDP): @addr:@port is a known peer (a whole
	 * message came from it): give it a receive queue of its own if the
	 * cap allows (known.h; done by the next recv()). Any thread; never
	 * fails (a peer left out is counted in rx_known_refused).
	 */
	void (*know)(struct homa_driver *d, const homa_addr *addr, uint16_t port);
};

/** State common to all drivers (each driver embeds it first). */
struct homa_driver {
	const struct homa_driver_ops *ops;
	int fd;              /**< readable when packets are waiting (may be an epoll set) */
	int rx_fd2;          /**< also readable when packets wait (add_rx()), or -1 */
	int tx_fd;           /**< writable when the send buffer has room (fd, or the socket that sends) */
	int family;          /**< AF_INET or AF_INET6 */
	uint16_t port;       /**< bound Homa port */
	homa_addr local;     /**< bound address (may be the wildcard) */
	bool gso, gro;       /**< offloads in use */
	bool maps_v4;        /**< an IPv6 socket reaches IPv4 peers (mapped) */
	/**
	 * Most packets one recv() returns, fixed at open: the caller sizes
	 * its per-batch state to it (UDP with UDP_GRO: batch x 64 segments).
	 */
	uint32_t max_rx;
	/**
	 * Set by recv(): the batch it returned was as large as it reads at
	 * once, so more packets are likely queued (a driver that bounds some
	 * reads below the caller's batch says so here; others leave it false).
	 */
	bool rx_full;
	/**
	 * Set by recv() when the caller is to measure the CPU time it spends
	 * on the batch returned and report it with rx_spent(); cleared by the
	 * next recv().
	 */
	bool rx_metered;
	/**
	 * Set by recv() with rx_metered: CLOCK_MONOTONIC (ns) when it began,
	 * before the receive call that read the batch, so that the time the
	 * caller reports with rx_spent() covers that call too (the kernel's
	 * copy and free of every packet).
	 */
	uint64_t rx_t0;
	/**
	 * Zero-copy receive: how the engine gives back the buffers of
	 * received packets it keeps (see homa_io_rx.lendable), or NULL when
	 * the driver lends none (raw; UDP with lend_slots 0). Its release may run in any thread
	 * that calls the engine, concurrently with recv().
	 */
	const struct homa_rx_lend *lend;
	/**
	 * With lend: the driver's release() knows a kept buffer only by the
	 * address the packet began at (XDP frames), so a packet whose Homa
	 * bytes start further in (after a PSP header) must be moved there
	 * before the engine may keep it. False: any address inside the
	 * buffer will do (UDP's lend pool).
	 */
	bool lend_by_start;
	/**
	 * Optional (UDP with several receiving sockets): the sockets the
	 * waiter polls one by one instead of fd when n_rx_poll > 0, so that
	 * the wait itself tells which have packets. The driver fills fd and
	 * events (in its recv(), the waiter's thread); the waiter ppoll()s
	 * them with its own descriptors, stores the revents back and sets
	 * rx_polled. recv() then reads only the sockets reported readable
	 * (POLLIN or POLLERR), no epoll_wait() and no empty receive; without
	 * rx_polled (a caller that waited on fd) it asks the epoll set.
	 */
	struct pollfd rx_poll[HOMA_DRIVER_POLL_MAX];
	int n_rx_poll;
	bool rx_polled;
	/**
	 * Set by recv() (UDP with a strangers' gate, gate.h): while it is
	 * not 0 and n_rx_poll > 0, the waiter that polls rx_poll calls
	 * recv() again once CLOCK_MONOTONIC reaches it, even if no listed
	 * socket became readable (the closed gate opens then): it sleeps no
	 * longer (ppoll()'s timeout) and then calls recv() with rx_polled
	 * set and the revents it polled (all 0 after a timeout). In place of
	 * the gate's timerfd, which the driver then leaves unarmed: a waiter
	 * on fd (fd_watched, or no list) is woken by that timer instead.
	 * 0: no such time.
	 */
	uint64_t rx_wake_ns;
	/**
	 * Set by the runtime (any thread) once something besides its own
	 * wait watches fd (homa_fd() in polled mode puts it in an epoll set
	 * of its own). While it is clear and n_rx_poll > 0 nobody waits on
	 * fd, and a driver whose fd is an epoll set of its sockets may let
	 * that set's interest lag behind what it polls (UDP: the strangers'
	 * gate, gate.h, then costs no epoll_ctl() per interval).
	 */
	_Atomic bool fd_watched;
	struct homa_io_counters c;
};

/** Driver kinds (same values as enum homa_driver_kind in homa.h). */
#define HOMA_IO_UDP 0
#define HOMA_IO_RAW 1
#define HOMA_IO_XDP 2

/**
 * homa_driver_open() - Open a driver of kind @kind.
 * @out: receives the driver; free it with homa_driver_close().
 * Return: 0; HOMA_EINVAL (unknown kind, bad config); HOMA_EADDRINUSE;
 * HOMA_EPERM (raw without CAP_NET_RAW; XDP without CAP_NET_ADMIN and
 * CAP_BPF); HOMA_ENOTSUP (family not available; XDP not built in or not
 * supported by the kernel or the interface); HOMA_ENOMEM; HOMA_EIO.
 */
int homa_driver_open(int kind, const struct homa_driver_config *cfg,
		     struct homa_driver **out);

/**
 * homa_driver_settings() - The settings the engine behind @d runs with:
 * @in (caller-owned) copied to @out with settings.compat HOMA_COMPAT_AUTO
 * made HOMA_COMPAT_MODULE on the raw driver (a Linux module host is
 * reachable only there) and HOMA_COMPAT_OFF on UDP, and the default mtu
 * (1472) lowered on an IPv6 socket so that a packet with its IPv6 header
 * fits a 1500-byte link (1460 raw, 1452 UDP). Never fails.
 */
void homa_driver_settings(const struct homa_driver *d, const struct homa_settings *in,
			  struct homa_settings *out);

/**
 * homa_driver_fast_prio() - The lowest priority the UDP driver steers into
 * its fast receive queue for an engine running @st (caller-owned): the
 * unscheduled levels above the lowest one, which carry short messages,
 * with control packets at the top level (by default 5: messages of at
 * most 15,000 bytes); the top level alone with one unscheduled level;
 * 0 (one queue) with one level. Never fails.
 */
uint8_t homa_driver_fast_prio(const struct homa_settings *st);

/**
 * homa_driver_refresh() - Update @d's counters kept by the kernel (a no-op
 * for drivers that keep all their counters themselves).
 */
void homa_driver_refresh(struct homa_driver *d);

/** homa_driver_close() - Close @d (NULL is ignored). */
void homa_driver_close(struct homa_driver *d);

/** Send buffer size the drivers ask for. */
#define HOMA_DRIVER_SOCKBUF (8 << 20)
/**
 * Receive buffer size the drivers ask for by default (the kernel doubles
 * it for its own overhead). A forged flood keeps this queue full, and
 * every honest packet then waits behind it: 1 MiB holds more than
 * max_incoming (400 KB) of granted data plus the unscheduled bytes of
 * a few dozen senders, and drains 8 times sooner than 8 MiB
 * (docs/HARDENING.md has the figures).
 */
#define HOMA_DRIVER_RCVBUF (1 << 20)

/**
 * homa_driver_set_bufs() - Ask for a HOMA_DRIVER_SOCKBUF-byte send buffer
 * and an @rcvbuf-byte receive buffer (0: HOMA_DRIVER_RCVBUF) on @fd,
 * forcing past the sysctl caps when privileged (otherwise the kernel's
 * cap applies; never fails).
 */
void homa_driver_set_bufs(int fd, uint32_t rcvbuf);

/** homa_udp_open() - The UDP driver (see homa_driver_open()). */
int homa_udp_open(const struct homa_driver_config *cfg, struct homa_driver **out);

/** homa_raw_open() - The raw IP protocol 146 driver (see homa_driver_open()). */
int homa_raw_open(const struct homa_driver_config *cfg, struct homa_driver **out);

/**
 * homa_xdp_open() - The AF_XDP driver (see homa_driver_open() and
 * docs/XDP.md); HOMA_ENOTSUP with a message when the library was built
 * without libxdp, libbpf and clang.
 */
int homa_xdp_open(const struct homa_driver_config *cfg, struct homa_driver **out);

/**
 * homa_io_reserve_port() - Bind a UDP socket to @cfg's address and port so
 * that no other endpoint takes the Homa port (drivers that do not receive
 * through it); @port receives the port (picked by the kernel if 0).
 * Return: the fd, or HOMA_EADDRINUSE, HOMA_EADDRNOTAVAIL, HOMA_ENOTSUP, HOMA_EIO.
 */
int homa_io_reserve_port(const struct homa_driver_config *cfg, uint16_t *port);

/**
 * homa_io_addr_from_sockaddr() - Convert a sockaddr_in/in6 to a homa_addr
 * and port. Return: 0 or HOMA_EINVAL (NULL or another family).
 */
int homa_io_addr_from_sockaddr(const struct sockaddr *sa, homa_addr *addr,
			       uint16_t *port);

/**
 * homa_io_addr_to_sockaddr() - Build the sockaddr that reaches @addr and
 * @port from a socket of @family (AF_INET6 sockets reach IPv4 peers
 * through mapped addresses).
 * Return: the address length, or HOMA_ENOTSUP (IPv6 peer from an IPv4
 * socket).
 */
int homa_io_addr_to_sockaddr(int family, const homa_addr *addr, uint16_t port,
			     struct sockaddr_storage *out);

/**
 * homa_io_errno() - Map an errno value from socket()/bind() to a homa
 * error: EADDRINUSE, EPERM/EACCES, EADDRNOTAVAIL, EAFNOSUPPORT (HOMA_ENOTSUP), ENOMEM;
 * anything else is HOMA_EIO.
 */
int homa_io_errno(int err);

#endif /* HOMA_IO_DRIVER_H */
