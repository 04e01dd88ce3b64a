/* SPDX-License-Identifier: MIT */
/**
 * @file homa.h
 * The application API: socket-like Homa RPCs over a real network.
 *
 * A homa_socket is one Homa endpoint (an address and a port). A client
 * sends a request with homa_request_iov() and later receives the
 * response with homa_recv(); a server (opened with opts.server = true)
 * receives requests with homa_recv() and answers each with homa_reply_iov().
 * Every RPC is identified by a 64-bit id (client ids are even, server ids
 * odd) and may carry a client-chosen cookie.
 *
 * Tour:
 *     struct homa_open_opts o;
 *     homa_open_opts_default(&o);            // UDP driver, threaded, ephemeral port
 *     homa_socket *s;
 *     int err = homa_open(&s, &o);           // negative HOMA_E* on failure
 *     uint64_t id;
 *     homa_request_buf(s, (struct sockaddr *)&srv, "ping", 4, 0, &id);
 *     struct homa_message m;
 *     err = homa_recv(s, HOMA_RECV_RESPONSE, id, 1000000000, &m);
 *     ... homa_message_copy(&m, 0, buf, m.length) or homa_message_segment() ...
 *     homa_message_release(&m);
 *     homa_close(s);
 *
 * Names: sending is homa_request_*() (a client starts an RPC) and
 * homa_reply_*() (a server answers one), each in four forms: _buf (one
 * buffer, copied), _iov (a gather list, copied), _zc (a gather list the
 * library borrows: zero copy) and _opts (a gather list with struct
 * homa_send_opts: a per-call send timeout, the cookie, zero copy).
 * Receiving is homa_recv() (whole messages) and homa_recv_partial*()
 * (bytes of a message still arriving). Earlier names stay as aliases of
 * the same functions (the same symbol, no cost): homa_send() is
 * homa_request_buf(), homa_send_request() homa_request_iov(),
 * homa_send_request_zc() homa_request_zc(), homa_reply() homa_reply_iov().
 *
 * Drivers: HOMA_DRIVER_UDP (default) carries each Homa packet as the
 * payload of a UDP datagram whose port is the Homa port; it needs no
 * privilege. HOMA_DRIVER_RAW sends IP protocol 146 packets in the Linux
 * Homa module's format (interoperable with it); it needs CAP_NET_RAW.
 *
 * Modes: HOMA_MODE_THREADED (default) runs one runtime thread per socket
 * that receives packets, runs the protocol's timers and pacer, and wakes
 * the application. In HOMA_MODE_POLLED packets move while an application
 * thread is inside homa_poll(), a blocking homa_recv(), or a send call;
 * this gives the lowest latency when the application spins on the
 * socket. A standby thread sleeps meanwhile; once no application thread
 * has driven the socket for settings.resend_ticks ticks it drives it
 * instead (answering peers, running timers) until one is back, so an
 * application that is away (busy, descheduled) never makes an RPC fail.
 *
 * Threading: every function may be called from any number of threads at
 * once on the same socket. homa_close() may be called while other threads
 * are blocked in the socket: they return HOMA_ESHUTDOWN.
 *
 * Handles: a homa_socket pointer is an opaque handle that the application
 * never dereferences. A handle used after homa_close() is detected and the
 * call returns HOMA_ESHUTDOWN (it does not crash).
 *
 * Errors: every function that can fail returns a negative HOMA_E* code
 * (errors.h); homa_strerror() gives its text; each code has one meaning
 * (errors.h says which). Arguments that are NULL or out of range give
 * HOMA_EINVAL unless stated otherwise. Each function's comment says when
 * its output arguments are written; they are never written otherwise.
 *
 * Timeouts: a call that waits takes a timeout in ns: 0 = do not wait
 * (HOMA_EAGAIN if it would have to), -1 = wait as long as it takes,
 * > 0 = wait at most that long (then HOMA_ETIME); any other negative
 * value is HOMA_EINVAL. RPC timeouts (the peer stopped answering) are
 * different: they end the RPC with HOMA_ETIMEDOUT.
 */
#ifndef HOMA_HOMA_H
#define HOMA_HOMA_H

#include "homa/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "homa/errors.h"
#include "homa/iov.h"
#include "homa/pcap_opts.h"
#include "homa/settings.h"
#include "homa/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Bump when fields are added to struct homa_open_opts. homa_open() also
 * accepts every older version: it reads only the fields that version
 * had and takes the defaults for the rest (version 1 ends at xdp_raw,
 * version 2 at auto_retry_ms, version 3 at rx_alloc, version 4 at
 * auto_tcp_min_bytes, version 5 at rcvbuf_bytes, version 6 at known_peers,
 * version 7 at stranger_budget, version 8 at stranger_cpu_us, version 9
 * at spin_us).
 */
#define HOMA_OPEN_OPTS_VERSION 10

/** homa_open_opts.known_peers when 0: known peers given a receive queue of their own. */
#define HOMA_KNOWN_PEERS_DEFAULT 64
/** homa_open_opts.stranger_budget when 0: packets per ms strangers may cost while known peers are active. */
#define HOMA_STRANGER_BUDGET_DEFAULT 64
/** Largest homa_open_opts.stranger_budget. */
#define HOMA_STRANGER_BUDGET_MAX 1000000
/** homa_open_opts.stranger_cpu_us when 0: µs of CPU time per ms strangers may cost while known peers are active. */
#define HOMA_STRANGER_CPU_DEFAULT 100
/** Largest homa_open_opts.stranger_cpu_us (all of every millisecond). */
#define HOMA_STRANGER_CPU_MAX 1000
/** Largest homa_open_opts.known_peers. */
#define HOMA_KNOWN_PEERS_MAX 1024
/** homa_open_opts.spin_us set by homa_open_opts_default(): µs a waiting thread looks before it sleeps. */
#define HOMA_SPIN_US_DEFAULT 0
/** Largest homa_open_opts.spin_us (10 ms). */
#define HOMA_SPIN_US_MAX 10000
/** homa_open_opts.rx_lend_slots when 0: receive buffers messages may hold (zero-copy receive). */
#define HOMA_RX_LEND_SLOTS_DEFAULT 256
/** Largest homa_open_opts.rx_lend_slots. */
#define HOMA_RX_LEND_SLOTS_MAX 65536

struct homa_encrypt_opts;
struct homa_alloc;

/** Opaque socket handle. */
typedef struct homa_socket homa_socket;

/** How packets reach the network. */
enum homa_driver_kind {
	HOMA_DRIVER_UDP = 0, /**< UDP datagrams, Homa port == UDP port; unprivileged */
	HOMA_DRIVER_RAW = 1, /**< raw IP protocol 146; needs CAP_NET_RAW */
	/** AF_XDP kernel bypass on opts.ifname (docs/XDP.md); IPv4; CAP_NET_ADMIN and CAP_BPF */
	HOMA_DRIVER_XDP = 2,
};

/**
 * Which transport carries the socket's RPCs (docs/PROGRAMMING.md,
 * "Transports"). The API and its semantics are the same over each.
 */
enum homa_transport {
	HOMA_TRANSPORT_HOMA = 0, /**< Homa over the chosen driver (default) */
	/**
	 * Kernel TCP to the same port number: a small pool of connections
	 * per peer, each carrying many RPCs as length-prefixed frames.
	 */
	HOMA_TRANSPORT_TCP = 1,
	/**
	 * Per peer: Homa first; a peer that sends no Homa packet for
	 * auto_fallback_ms after a request but accepts TCP is reached over
	 * TCP, and tried on Homa again after auto_retry_ms (doubling while
	 * it keeps failing). RPCs already sent stay on their transport.
	 */
	HOMA_TRANSPORT_AUTO = 2,
};

/**
 * Per-RPC transport choice (homa_send_opts.hint, homa_request_opts()):
 * which transport carries one request, whatever the socket would pick.
 */
enum homa_hint {
	HOMA_HINT_NONE = 0, /**< the socket decides (its transport; per peer with AUTO) */
	/** This RPC over Homa, even on a TCP socket or toward a peer AUTO moved to TCP. */
	HOMA_HINT_HOMA = 1,
	/** This RPC over TCP (a socket opened with transport TCP or AUTO only). */
	HOMA_HINT_TCP = 2,
};

/** Who moves packets. */
enum homa_mode {
	HOMA_MODE_THREADED = 0, /**< one runtime thread per socket */
	HOMA_MODE_POLLED = 1,   /**< no thread; application calls drive I/O */
};

/** Options for homa_open(); fill with homa_open_opts_default() first. */
struct homa_open_opts {
	uint32_t version;     /**< HOMA_OPEN_OPTS_VERSION */
	int driver;           /**< enum homa_driver_kind (default UDP) */
	int mode;             /**< enum homa_mode (default THREADED) */
	/**
	 * Local address as text, IPv4 ("127.0.0.1", "0.0.0.0") or IPv6
	 * ("::1", "::"). NULL means "0.0.0.0". An IPv6 socket also reaches
	 * IPv4 peers through mapped addresses (UDP driver).
	 */
	const char *bind_addr;
	/** If not NULL, used instead of bind_addr and port (sockaddr_in or sockaddr_in6). */
	const struct sockaddr *bind_sa;
	uint16_t port;        /**< Homa port; 0 picks a free (ephemeral) one */
	bool server;          /**< accept incoming requests (default false) */
	/** Engine settings (copied); NULL means homa_settings_default(). */
	const struct homa_settings *settings;
	/**
	 * How long a send waits when the engine's transmit buffer or RPC cap
	 * is full: -1 waits until space frees up or the socket closes
	 * (default), 0 returns HOMA_EAGAIN at once, > 0 waits at most that
	 * many ns and then returns HOMA_ETIME; below -1 homa_open() returns
	 * HOMA_EINVAL. One send can set its own instead:
	 * homa_send_opts.timeout_ns (homa_request_opts(), homa_reply_opts()).
	 */
	int64_t send_timeout_ns;
	/** Packets moved per batched system call, 1..1024 (default 32). */
	uint32_t batch;
	/** Use UDP_SEGMENT / UDP_GRO when the kernel has them (default true). */
	bool offload;
	/*
	 * Observability (docs/OBSERVABILITY.md); all off by default.
	 */
	/** Write every packet sent and received to this pcap file (NULL: no capture). */
	const char *pcap_path;
	/** Capture bounds: size limit and rotation, sampling, snaplen (zeros: defaults). */
	struct homa_pcap_opts pcap;
	/**
	 * Serve this socket's counters on GET /metrics at this TCP port (0: no
	 * listener). Sockets of one process that name the same port share it.
	 */
	uint16_t metrics_port;
	/** Numeric address the metrics listener binds (NULL: "127.0.0.1"). */
	const char *metrics_addr;
	/**
	 * Encrypt and authenticate every packet in the PSP format (UDP
	 * driver; include/homa/encrypt.h). NULL (default): clear text.
	 */
	const struct homa_encrypt_opts *encrypt;
	/** XDP driver: the network interface it attaches to (required there). */
	const char *ifname;
	/** XDP driver: serve receive queues 0..xdp_queues-1 (0: all the interface has). */
	uint32_t xdp_queues;
	/** XDP driver: the raw driver's format (IP protocol 146) instead of UDP. */
	bool xdp_raw;
	/* version 2 */
	/**
	 * enum homa_transport (default HOMA). With TCP or AUTO a server
	 * socket also listens on TCP at its port number and accepts RPCs
	 * over both transports.
	 */
	int transport;
	/** AUTO: Homa silence after which a peer moves to TCP (0: 50 ms). */
	uint32_t auto_fallback_ms;
	/** AUTO: first back-off before a TCP peer is tried on Homa again (0: 1000 ms). */
	uint32_t auto_retry_ms;
	/* version 3 */
	/**
	 * Where received messages' bytes land (Homa transport; NULL, the
	 * default: the library's own buffers). The hooks (struct homa_alloc,
	 * engine.h; copied) are given each 64 KiB piece of a message, bytes
	 * [i * 65536, (i + 1) * 65536): alloc(ctx, size) with size 65536,
	 * or less for a message's last piece, when the piece's first packet
	 * arrives, and free(ctx, ptr, size) once the library is done with it
	 * (homa_message_release(), the RPC's end, homa_close()). Packets are
	 * copied straight into the pieces and homa_message_segment() points
	 * into them, so a message can arrive in memory the application chose,
	 * one piece per segment. A NULL from alloc drops the packet (the
	 * sender resends it). The hooks run on library threads under the
	 * socket's lock: they must be thread-safe, quick, and must not call
	 * this library.
	 */
	const struct homa_alloc *rx_alloc;
	/* version 4 */
	/**
	 * AUTO: requests of at least this many bytes go over TCP, also to a
	 * peer Homa reaches (bulk transfers: TCP streams them without
	 * grants); smaller ones over Homa. 0 (the default): a request's size
	 * does not matter. A request with HOMA_SEND_LATENCY stays on Homa
	 * whatever its size, and a homa_send_opts.hint decides over both.
	 * Such a request needs a peer that accepts TCP (a server opened with
	 * transport TCP or AUTO); else it fails with HOMA_ENOSERVER. A
	 * non-zero value with a transport other than AUTO is HOMA_EINVAL.
	 */
	uint64_t auto_tcp_min_bytes;
	/* version 5 */
	/**
	 * UDP and raw drivers: bytes of received packets the kernel may
	 * queue for this socket before it drops them (SO_RCVBUF, asked with
	 * SO_RCVBUFFORCE; the kernel doubles it for its overhead, and
	 * without CAP_NET_ADMIN caps it at net.core.rmem_max). 0 (the
	 * default): 1 MiB. A flood of forged packets keeps this queue full
	 * and every honest packet waits behind it, so a deeper queue makes
	 * a flood slower to get through; a shallower one drops packets of
	 * bursts it cannot hold (Homa resends them). 4096..1 GiB, else
	 * homa_open() returns HOMA_EINVAL. The XDP driver ignores it.
	 */
	uint32_t rcvbuf_bytes;
	/* version 6 */
	/**
	 * UDP driver: most known peers given a kernel receive queue of
	 * their own (docs/HARDENING.md section 6). A peer is known once a
	 * whole message came from its address and port: a request (server)
	 * or a response (client). Its socket is connected to it, so its
	 * packets never wait behind a stranger's; these queues are read
	 * first, the port's own (strangers, and peers not yet known) after
	 * every 4 known batches in a row and whenever no known peer has
	 * packets. When all are taken a new peer replaces the one read
	 * least lately only if that one has been silent for 1 s, so a
	 * flood of new addresses cannot push out active peers; until then
	 * (or where the kernel refuses a socket) the peer stays on the
	 * port's queues, counted in homa_io_stats.rx_known_refused. Costs
	 * one descriptor per known peer. 0 (the default):
	 * HOMA_KNOWN_PEERS_DEFAULT; -1: none; 1..HOMA_KNOWN_PEERS_MAX;
	 * else homa_open() returns HOMA_EINVAL. Other drivers ignore it.
	 */
	int32_t known_peers;
	/* version 7 */
	/**
	 * UDP driver with known peers: most packets per millisecond the
	 * receiving thread reads from the port's own queues (strangers, and
	 * peers not yet known) while a known peer's packets were read within
	 * the last 10 ms (docs/HARDENING.md section 6). Past it those queues
	 * are neither read nor polled until the millisecond ends: the excess
	 * waits in the kernel, which drops it when the queue is full, so a
	 * flood of forged packets costs known peers at most this share of
	 * the thread (counted in homa_io_stats.rx_gate_closed). In a
	 * millisecond that follows one where they ran out, those queues are
	 * read once, when it begins, in full batches up to the budget, and
	 * closed for the rest of it once a read drains them. With no
	 * known peer active strangers are read without limit, so a new
	 * client's first RPC still gets through. 0 (the default):
	 * HOMA_STRANGER_BUDGET_DEFAULT; -1: no limit;
	 * 1..HOMA_STRANGER_BUDGET_MAX; else homa_open() returns HOMA_EINVAL.
	 * Other drivers, and known_peers -1, ignore it.
	 */
	int32_t stranger_budget;
	/* version 8 */
	/**
	 * UDP driver with known peers: most µs per millisecond the receiving
	 * thread spends on packets from the port's own queues (the receive
	 * call that reads them, the engine's work, the replies they cause;
	 * the monotonic clock from before that receive call to the end of the
	 * batch, so time the thread waited for its CPU counts too) while a
	 * known peer's packets
	 * were read within the last 10 ms. Counted beside stranger_budget;
	 * whichever runs out first closes those queues until the millisecond
	 * ends (docs/HARDENING.md section 6), so packets that cost more each
	 * are admitted fewer. 0 (the default): HOMA_STRANGER_CPU_DEFAULT;
	 * -1: no CPU limit; 1..HOMA_STRANGER_CPU_MAX; else homa_open()
	 * returns HOMA_EINVAL. Other drivers, and known_peers -1, ignore it.
	 */
	int32_t stranger_cpu_us;
	/* version 9 */
	/**
	 * Microseconds a thread waiting in the socket keeps looking for
	 * packets before it sleeps, as the Linux module's receive wait polls
	 * for poll_usecs (50) before it blocks. The thread that drives the
	 * socket's I/O while it waits (a blocking homa_recv() or
	 * homa_recv_partial_wait(), homa_poll() with a timeout) checks the
	 * driver's sockets without sleeping (a ppoll() with a zero timeout
	 * per look, sched_yield() between looks; the XDP driver reads its
	 * rings, with a ppoll() every eighth look) and sleeps only once
	 * nothing came for this long. Waking a sleeping thread costs tens of
	 * microseconds on a virtual machine, so a message that arrives
	 * during the looks is taken sooner, for the CPU time the looks use.
	 * The looks start when a wait begins and again after each step that
	 * read packets (a thread receiving a long message looks between its
	 * packets); a timer that wakes the thread starts none, so a thread
	 * that waits long for nothing looks once per wait and then sleeps.
	 * Threads that wait while another one drives the socket sleep at
	 * once, as do the runtime's own threads (standby, I/O). The looks
	 * stop, and the thread sleeps, as soon as a sched_yield() between
	 * them shows that another thread needed this CPU; after three such
	 * waits in a row none looks for 5 ms. It pays where the waiting
	 * thread and its peer each have a CPU; with many RPCs in flight
	 * the looks cost more CPU per RPC than the wake-ups they save
	 * (docs/BENCH.md, "Looking before sleeping"), hence the default
	 * 0. 0: never look, sleep at once. Default HOMA_SPIN_US_DEFAULT
	 * (homa_open_opts_default(); older versions of this struct get it
	 * too); 0..HOMA_SPIN_US_MAX, else homa_open() returns HOMA_EINVAL.
	 */
	uint32_t spin_us;
	/* version 10 */
	/**
	 * UDP driver: zero-copy receive. A datagram that fills at least a
	 * quarter of its receive buffer (64 KiB with UDP_GRO; the largest
	 * packet without) and carries in-order payload stays in that buffer,
	 * which the message holds until homa_message_release() (or the RPC's
	 * end, or homa_close()) instead of the payload being copied into the
	 * message; homa_message_segment() points into it. This many buffers
	 * beyond the receive batch's may be held at once (reserved address
	 * space, committed as packets fill them; a buffer given back stays
	 * committed for the next); while they are all held, payload is
	 * copied as without this. rx_lent_bytes counts the bytes left in
	 * place, homa_io_stats.rx_lent_slots the buffers held. Received
	 * bytes are charged to the socket's receive budget as copied ones;
	 * a held buffer can hold 4x the bytes it carries. With rx_alloc the
	 * payload always goes to the application's pieces. 0 (the default):
	 * HOMA_RX_LEND_SLOTS_DEFAULT; -1: copy every payload;
	 * 1..HOMA_RX_LEND_SLOTS_MAX, else homa_open() returns HOMA_EINVAL.
	 * Other drivers ignore it.
	 */
	int32_t rx_lend_slots;
};

/** Flags for homa_recv(): which kinds of message to accept. */
#define HOMA_RECV_REQUEST 0x1  /**< incoming requests (server sockets) */
#define HOMA_RECV_RESPONSE 0x2 /**< responses to this socket's requests */
/**
 * With HOMA_RECV_REQUEST (server sockets): also take a request as soon as
 * its first bytes arrive, before it is complete. Such a message has type
 * HOMA_RECV_PARTIAL, its id, peer and total length, and nothing to read
 * or release: read its bytes with homa_recv_partial_wait() as they
 * arrive. A request taken this way is not delivered again when complete.
 * The socket announces requests so from its first such call on; that
 * call also announces every request already partly received (over Homa
 * or TCP), so none that started earlier is missed.
 */
#define HOMA_RECV_PARTIAL 0x4

/**
 * A received message (or a failed RPC). Filled by homa_recv(); the bytes
 * are a zero-copy view into the socket's buffer pool and stay valid until
 * homa_message_release() (or homa_close() of the socket, whichever comes
 * first). The struct itself belongs to the caller.
 */
struct homa_message {
	uint64_t id;        /**< RPC id: even for a response, odd for a request */
	uint64_t cookie;    /**< the cookie given with the request (0 for requests) */
	int type;           /**< HOMA_RECV_REQUEST, HOMA_RECV_RESPONSE or HOMA_RECV_PARTIAL */
	int error;          /**< 0, or why the RPC failed (then length is 0) */
	struct sockaddr_storage peer; /**< the other end (address and Homa port) */
	socklen_t peer_len; /**< bytes used in peer */
	size_t length;      /**< message length in bytes */
	uint64_t rtt_ns;    /**< responses: time from send to arrival; else 0 */
	void *priv[3];      /**< runtime use only */
};

/** Counters of the runtime and driver for one socket (homa_io_stats()). */
struct homa_io_stats {
	uint64_t tx_packets;      /**< Homa packets handed to the driver */
	uint64_t tx_bytes;        /**< their bytes (Homa headers included) */
	uint64_t tx_calls;        /**< send system calls (sendmmsg/sendmsg) */
	uint64_t tx_gso_batches;  /**< UDP_SEGMENT super-packets sent */
	uint64_t tx_errors;       /**< packets the kernel refused (dropped) */
	uint64_t rx_packets;      /**< Homa packets given to the engine */
	uint64_t rx_bytes;
	uint64_t rx_calls;        /**< receive system calls that returned data */
	uint64_t rx_gro_batches;  /**< coalesced UDP_GRO buffers split */
	uint64_t rx_filtered;     /**< raw driver: packets for another port */
	uint64_t rx_packets_prio[8]; /**< received Homa packets by priority (from the DSCP bits) */
	uint64_t wakeups;         /**< application threads woken with a message */
	uint64_t send_waits;      /**< sends that waited for buffer space */
	uint64_t tx_full;         /**< sends that found the kernel's send buffer full */
	uint64_t tx_deferred;     /**< packets held back by a full send buffer and sent later */
	/**
	 * Payload bytes the library copied in user space while sending:
	 * the application's buffers into the message (homa_request_*(),
	 * homa_reply_*() other than zero copy) and the message into packets, plus the
	 * XDP driver's copies into its send frames. Divided by the bytes
	 * sent, copies per payload byte (the kernel's own copy not counted).
	 */
	uint64_t tx_copied_bytes;
	/** Payload bytes copied from received packets into messages (homa_message_copy() not counted). */
	uint64_t rx_copied_bytes;
	/** Payload bytes left in place in the driver's receive buffers instead (UDP: rx_lend_slots; XDP: UMEM frames). */
	uint64_t rx_lent_bytes;
	/* XDP driver (docs/XDP.md); zero with the other drivers */
	uint64_t xdp_zerocopy;      /**< 1: bound in zero-copy mode; 0: copy mode */
	uint64_t xdp_fill_empty;    /**< packets dropped by the kernel: fill ring empty */
	uint64_t xdp_rx_dropped;    /**< packets dropped by the kernel: rx ring full, other */
	uint64_t xdp_invalid_descs; /**< ring descriptors the kernel refused */
	uint64_t xdp_tx_ring_full;  /**< sends that found the tx ring or send frames full */
	uint64_t xdp_rx_invalid;    /**< frames refused for bad headers or checksums */
	uint64_t xdp_unresolved;    /**< packets dropped while the next hop was resolved */
	uint64_t xdp_rx_lent;       /**< gauge: receive frames held by messages (zero-copy receive) */
	uint64_t xdp_reclaimed;     /**< frames taken back from processes that died on the driver's queues */
	/*
	 * UDP driver's kernel receive queues (docs/HARDENING.md section 6):
	 * short messages' and control packets' priorities have a queue of
	 * their own, read first, so they do not wait behind bulk or forged
	 * datagrams.
	 */
	uint64_t rx_queues;         /**< 2: by priority; 1: one queue (other drivers, or the kernel refused; logged) */
	uint64_t rx_fast_packets;   /**< packets read from the high-priority queue */
	/*
	 * UDP driver's known peers (homa_open_opts.known_peers): each has a
	 * kernel receive queue of its own, read before strangers'.
	 */
	uint64_t rx_known_peers;    /**< gauge: known peers with a queue of their own */
	uint64_t rx_known_packets;  /**< packets read from known peers' queues */
	uint64_t rx_known_refused;  /**< peers left on the port's queues (all slots busy, kernel refused) */
	uint64_t rx_gate_closed;    /**< milliseconds in which the port's queues closed early: strangers used up their budget (homa_open_opts.stranger_budget), or drained them in a millisecond after one where they did */
	uint64_t rx_lent_slots;     /**< gauge: UDP driver's receive buffers held by messages (homa_open_opts.rx_lend_slots), as of its latest receive */
	/**
	 * Encrypted sockets: times a sending thread offered its CPU to other
	 * threads (sched_yield()) after sealing 256 KiB since its last such
	 * offer, so that a thread woken for a short message on the same CPU
	 * need not wait until the sealing thread sleeps (docs/ENCRYPTION.md).
	 */
	uint64_t tx_seal_yields;
};

/** Counters of the transport layer for one socket (homa_transport_stats()). */
struct homa_transport_stats {
	uint64_t homa_rpcs;       /**< client RPCs this socket sent over Homa */
	uint64_t tcp_rpcs;        /**< client RPCs this socket sent over TCP */
	uint64_t tcp_requests;    /**< requests received over TCP (server) */
	uint64_t tcp_tx_bytes;    /**< bytes written to TCP connections (frames included) */
	uint64_t tcp_rx_bytes;    /**< bytes read from TCP connections */
	uint64_t tcp_connects;    /**< connections opened to peers */
	uint64_t tcp_accepts;     /**< connections accepted from peers */
	uint64_t tcp_conn_errors; /**< connections refused, reset or closed with RPCs pending */
	uint64_t tcp_bad_frames;  /**< connections dropped for a malformed frame or preface */
	uint64_t auto_to_tcp;     /**< AUTO: peers moved from Homa to TCP */
	uint64_t auto_to_homa;    /**< AUTO: peers moved back to Homa after the back-off */
	uint64_t auto_tcp_peers;  /**< AUTO: peers on TCP now */
};

/**
 * homa_open_opts_default() - Fill @o with the defaults documented above.
 * @o: caller-owned; every field is written.
 */
HOMA_API void homa_open_opts_default(struct homa_open_opts *o);

/**
 * homa_open() - Create a socket, bind it and start its runtime.
 * @out: receives the handle (written only on success); the caller must
 *	homa_close() it.
 * @opts: options (copied); NULL means homa_open_opts_default().
 * Return: 0; HOMA_EINVAL (NULL @out, bad version, driver, mode, address
 * text, batch, send_timeout_ns or settings; auto_tcp_min_bytes without
 * transport AUTO); HOMA_EADDRINUSE (port already
 * bound, by any process); HOMA_EADDRNOTAVAIL (the address is not one of
 * this host's); HOMA_EPERM (raw driver without CAP_NET_RAW, XDP driver
 * without CAP_NET_ADMIN and CAP_BPF; a message saying so is also written
 * to stderr); HOMA_ENOTSUP (address family not supported by the kernel;
 * XDP driver: not built in, no AF_XDP in the kernel, no native XDP on the
 * interface, IPv6); HOMA_ENOMEM (also: XDP UMEM could not be pinned);
 * HOMA_EIO (another system call failed). XDP driver: HOMA_EINVAL (no or
 * unknown ifname, mtu too large for the interface), HOMA_EADDRINUSE (the
 * interface already has an XDP program, or a queue an AF_XDP socket);
 * docs/XDP.md lists them with their messages.
 * With pcap_path or metrics_port set: HOMA_EIO (the capture file cannot
 * be created), HOMA_EADDRINUSE (the metrics port is taken by another
 * listener), HOMA_EINVAL (bad metrics_addr or pcap options).
 * With transport TCP or AUTO: HOMA_EINVAL (unknown transport, raw or XDP
 * driver, encryption); a server socket: HOMA_EADDRINUSE also when the
 * TCP port of that number is taken.
 */
HOMA_API int homa_open(homa_socket **out, const struct homa_open_opts *opts);

/**
 * homa_close() - Shut the socket down and free it. Outstanding client RPCs
 * end; threads blocked in the socket return HOMA_ESHUTDOWN; an epoll or
 * poll loop waiting on homa_fd() wakes; unreleased messages become
 * invalid. Waits for threads still inside calls on the
 * socket to leave. The handle is dead afterwards.
 * Return: 0; HOMA_ESHUTDOWN (already closed); HOMA_EINVAL (NULL).
 */
HOMA_API int homa_close(homa_socket *s);

/**
 * homa_close_wait() - Close the socket as homa_close() does, after
 * letting the replies it already gave finish. homa_close() drops a reply
 * still being sent (a server that replies and closes at once loses the
 * part of a large response not sent yet: its client gets an error, or the
 * whole reply if it happened to go out first); this call first stops taking new requests
 * (a request arriving now is answered as by a socket that does not
 * serve) and keeps the socket running
 * until every reply given with homa_reply_*() was sent and acknowledged
 * by its client, or its client stopped answering (settings.timeout_ticks),
 * or @timeout_ns passed; then it closes. Requests not yet answered are
 * dropped as by homa_close(). Replies that went over TCP (transport TCP
 * or AUTO) are not waited for. Another thread may still call
 * homa_reply_*() meanwhile; that reply is waited for too.
 * @timeout_ns: the longest wait, in nanoseconds; 0 closes at once; -1
 *	waits until the replies end (bounded by the clients' timeouts).
 * Return: 0 (every reply finished; the socket is closed); HOMA_ETIME
 * (@timeout_ns passed first; the socket is closed all the same and the
 * replies left were dropped); HOMA_ESHUTDOWN (already closed, or closed
 * by another thread meanwhile); HOMA_EINVAL (NULL @s, or @timeout_ns
 * below -1: nothing is closed).
 */
HOMA_API int homa_close_wait(homa_socket *s, int64_t timeout_ns);

/**
 * homa_local_port() - The socket's Homa port (useful after port 0).
 * Return: the port (1..65535), HOMA_EINVAL (NULL @s) or HOMA_ESHUTDOWN.
 */
HOMA_API int homa_local_port(homa_socket *s);

/**
 * homa_request_iov() - Start a client RPC (formerly homa_send_request()).
 * @dst: the server: a sockaddr_in or sockaddr_in6 (read by its family)
 *	whose port is the server's Homa port.
 * @iov, @iovcnt: the request, 0..2^32-1 bytes in total (an empty request
 *	is valid); copied (without
 *	holding the socket's lock) before the call returns, so the buffers
 *	may be reused at once.
 * @cookie: any value; returned in the response's homa_message.
 * @id: receives the RPC id (even; written only on success); may not be NULL.
 * May wait for buffer space (see opts.send_timeout_ns).
 * Return: 0; HOMA_EINVAL (NULL argument, iovcnt < 1, a NULL base with a
 * non-zero length, lengths whose sum wraps, port 0,
 * unknown family); HOMA_ENOTSUP (IPv6 destination on an IPv4 socket or
 * the reverse, raw driver); HOMA_EMSGSIZE (longer than
 * settings.max_message, or, in module-compatible mode (settings.compat),
 * than HOMA_MODULE_MAX_MESSAGE toward a peer not known to be ours);
 * HOMA_EAGAIN (no space and send_timeout_ns is 0);
 * HOMA_ETIME (no space within send_timeout_ns); HOMA_EPEERDEAD (this
 * peer address and port timed out recently); HOMA_ESHUTDOWN (socket
 * closed); HOMA_ENOMEM. On an encrypted socket (encrypt.h) also
 * HOMA_ENOASSOC (no association with @dst and no key exchange
 * configured), HOMA_ECERT and HOMA_EHANDSHAKE (the key exchange with @dst
 * failed: see homa_encrypt_connect()), HOMA_EKEYEXPIRED (renewals failed
 * until @dst's SPI expired). Nothing is sent on any error.
 */
HOMA_API int homa_request_iov(homa_socket *s, const struct sockaddr *dst,
			     const struct homa_iov *iov, int iovcnt,
			     uint64_t cookie, uint64_t *id);

/**
 * homa_request_buf() - homa_request_iov() with one contiguous buffer
 * (formerly homa_send()).
 * @id: as homa_request_iov() (written only on success).
 * Return: as homa_request_iov() (HOMA_EINVAL also for a NULL @buf with a
 * non-zero @len).
 */
HOMA_API int homa_request_buf(homa_socket *s, const struct sockaddr *dst, const void *buf,
			      size_t len, uint64_t cookie, uint64_t *id);

/**
 * homa_release_fn - Told that a zero-copy send's buffers are free again.
 * @arg: the value given with them.
 * It is called exactly once per successful homa_request_zc() or
 * homa_reply_zc() (or _opts() call with a release function), from whichever thread of the library (an application
 * thread inside a homa_* call, or the runtime thread) ends the library's
 * use of the buffers, never with the socket's lock held. It may call
 * homa_* functions, except homa_close() of the same socket; it should
 * return quickly (the runtime thread may be the caller).
 */
typedef void (*homa_release_fn)(void *arg);

/**
 * homa_request_zc() - homa_request_iov() without copying the request
 * (formerly homa_send_request_zc()): the library reads the bytes of @iov from the caller's buffers
 * whenever it sends them (first transmission and retransmissions).
 * @release, @arg: @release(@arg) reports that the library reads the
 *	buffers no more; until then the caller keeps them valid and does not
 *	change them (what a peer receives is the bytes at send time).
 * Buffer ownership: on success the library borrows the buffers until
 * @release is called: after the RPC ended, that is its response was
 * fully received or it failed (as homa_recv() reports the response or the
 * error, or shortly before), or homa_abort() ended it (reported before
 * homa_abort() returns, unless another thread is transmitting packets
 * from the buffers at that moment: then as soon as that transmission
 * ends), or homa_close() ended it (reported before homa_close()
 * returns). DATA packets go to the kernel straight from the buffers (no
 * copy in the library, except for a packet whose payload spans two
 * buffers of @iov or that a capture or encryption must read whole). On
 * any error @release is never called and the caller keeps its buffers.
 * Return: as homa_request_iov(); also HOMA_EINVAL for a NULL @release.
 */
HOMA_API int homa_request_zc(homa_socket *s, const struct sockaddr *dst,
			     const struct homa_iov *iov, int iovcnt, uint64_t cookie,
			     homa_release_fn release, void *arg, uint64_t *id);

/**
 * homa_reply_zc() - homa_reply_iov() without copying the response; buffers
 * and @release as homa_request_zc(). The server keeps a response
 * until the client acknowledges it (it may ask for it again), so
 * @release follows the client's acknowledgement (it rides on the
 * client's next packets to this server, or is asked for after
 * settings.request_ack_ticks), the client's silence (the RPC times out),
 * homa_abort() of the request's id, or homa_close() (reported before
 * homa_close() returns). On any error @release is never called.
 * Return: as homa_reply_iov(); also HOMA_EINVAL for a NULL @release.
 */
HOMA_API int homa_reply_zc(homa_socket *s, uint64_t id, const struct homa_iov *iov,
			   int iovcnt, homa_release_fn release, void *arg);

/**
 * homa_recv() - Wait for a message.
 * @flags: HOMA_RECV_REQUEST, HOMA_RECV_RESPONSE or both; with
 *	HOMA_RECV_REQUEST also HOMA_RECV_PARTIAL (requests as they start).
 * @id: 0 for any RPC; otherwise only the response to this client RPC
 *	(requires HOMA_RECV_RESPONSE).
 * @timeout_ns: 0 = do not wait, -1 = wait forever, > 0 = wait at most
 *	(like poll(): the wait may end up to the calling thread's timer
 *	slack late, 50 us by default; see PR_SET_TIMERSLACK); other
 *	negative values are HOMA_EINVAL.
 * @out: filled when the call returns 0 (a message) or a failed RPC's
 *	error (then id, cookie, peer and error are set); not written for
 *	any other result.
 * Messages waiting for a caller are handed out by priority, as senders
 * send them: failed RPCs' errors and messages of at most the socket's
 * unsched_bytes setting by the priority level its unscheduled cutoffs
 * give their length (shortest first), then longer ones, each level oldest
 * first; a message goes to exactly one caller.
 * A waiter for a specific id has priority over a waiter for any.
 * Return: 0 with @out holding a message the caller must release;
 * a failed client RPC's error, with @out filled and nothing to release:
 * HOMA_ETIMEDOUT (the server stopped answering), HOMA_ENOSERVER (nothing
 * serves at that port: the destination said so, or ICMP port or protocol
 * unreachable came back), HOMA_ECANCELED (homa_abort() while a thread
 * waited for it), HOMA_EABANDONED (the server finished or dropped the RPC
 * without a response reaching us, including a request it dropped on each
 * of 1 + settings.max_restarts sends);
 * HOMA_EAGAIN (@timeout_ns is 0 and nothing is ready); HOMA_ETIME
 * (nothing within @timeout_ns); HOMA_EINVAL (NULL @out, flags 0 or
 * unknown bits, HOMA_RECV_PARTIAL without HOMA_RECV_REQUEST, a non-zero
 * @id without HOMA_RECV_RESPONSE,
 * HOMA_RECV_REQUEST on a non-server socket, @timeout_ns < -1);
 * HOMA_ENOTFOUND (@id is not an outstanding RPC of this socket: odd ids
 * never are); HOMA_ESHUTDOWN (socket closed, also while waiting);
 * HOMA_ENOMEM (the message could not be tracked and was dropped).
 */
HOMA_API int homa_recv(homa_socket *s, int flags, uint64_t id, int64_t timeout_ns,
	      struct homa_message *out);

/**
 * homa_message_segment() - Zero-copy view of a received message.
 * @offset: byte offset in the message.
 * @ptr: receives a pointer to the bytes at @offset (read-only); written
 *	whenever @m holds a message (NULL at or past its end), not written
 *	for a NULL @m, a failed RPC's or a released message.
 * Return: how many contiguous bytes start at *@ptr (0 at or past the end,
 * or for a message with nothing to read).
 */
HOMA_API size_t homa_message_segment(const struct homa_message *m, size_t offset,
			    const void **ptr);

/**
 * homa_message_copy() - Copy up to @len bytes from @offset into @dst.
 * @dst: receives exactly the bytes copied; nothing else is written.
 * Return: bytes copied (less than @len only at the end of the message;
 * 0 for a NULL argument, a failed RPC's or a released message).
 */
HOMA_API size_t homa_message_copy(const struct homa_message *m, size_t offset,
			 void *dst, size_t len);

/**
 * homa_message_release() - Give a message's buffers back to its socket.
 * For a response this also completes the client RPC. The socket tracks
 * the messages the application holds, so a message released twice (also
 * through a copy of the struct) is caught rather than freed twice.
 * @m: on 0 and on HOMA_EALREADY its bytes are no longer readable (the
 *	struct stays the caller's); not written otherwise.
 * Return: 0 (released, or a failed RPC's message with nothing to
 * release); HOMA_EALREADY (this message was released before: nothing is
 * done); HOMA_ESHUTDOWN (the socket was closed, which freed the message
 * already); HOMA_EINVAL (NULL @m).
 */
HOMA_API int homa_message_release(struct homa_message *m);

/**
 * homa_recv_partial() - Incremental receive without waiting: copy bytes
 * of a response that is still arriving for client RPC @id (the waiting
 * form, which also reads requests, is homa_recv_partial_wait()).
 * @offset: first byte wanted. @buf, @cap: destination.
 * @available: if not NULL, receives how many bytes from offset 0 on have
 *	arrived so far (written when the call returns >= 0, not otherwise).
 * @buf receives the bytes copied (written only when the result is > 0).
 * Return: bytes copied (0 if none past @offset yet, also while no byte
 * of the response has arrived); HOMA_ENOTFOUND (no client RPC @id of
 * this socket receiving its response: unknown id, 0, an odd id (a
 * request's: read those with homa_recv_partial_wait()), an RPC that
 * failed or whose response is complete, in which case homa_recv()
 * returns it); HOMA_EINVAL (NULL @buf with @cap > 0); HOMA_ESHUTDOWN.
 */
HOMA_API int64_t homa_recv_partial(homa_socket *s, uint64_t id, size_t offset,
			  void *buf, size_t cap, size_t *available);

/** What homa_recv_partial_wait() saw of the message. */
struct homa_partial {
	size_t length;   /**< the message's total length */
	size_t arrived;  /**< bytes present from offset 0 on */
	bool complete;   /**< every byte is here (arrived == length) */
};

/**
 * homa_recv_partial_wait() - Read a message as it arrives, waiting for
 * its bytes: the response of client RPC @id, or a request a server took
 * with HOMA_RECV_PARTIAL (@id is its homa_message.id).
 * @offset: first byte wanted. @buf, @cap: destination (@buf written only
 *	when the result is > 0).
 * @timeout_ns: how long to wait for a byte at @offset (0, -1 or > 0 as
 *	for homa_recv()).
 * @info: if not NULL, receives the message's length and progress
 *	(written when the result is >= 0, not otherwise).
 * Returns as soon as any byte at or past @offset is present (it does not
 * wait for @cap bytes). A response stays readable until homa_recv()
 * takes it; a request until homa_reply_*() or homa_abort() of its id.
 * Return: bytes copied (> 0; 0 only at or past the end of a complete
 * message, or for @cap 0); HOMA_EAGAIN (@timeout_ns 0, no byte at
 * @offset yet); HOMA_ETIME (none within @timeout_ns); HOMA_ENOTFOUND
 * (no such RPC: unknown id, a request not taken with HOMA_RECV_PARTIAL,
 * a response already taken by homa_recv(), or an RPC that ended); a
 * failed client RPC's error (HOMA_ETIMEDOUT, HOMA_ENOSERVER,
 * HOMA_EABANDONED: homa_recv() still reports it); HOMA_EINVAL (NULL @buf
 * with @cap > 0, @id 0, @timeout_ns < -1); HOMA_ESHUTDOWN (socket
 * closed, also while waiting).
 */
HOMA_API int64_t homa_recv_partial_wait(homa_socket *s, uint64_t id, size_t offset,
					void *buf, size_t cap, int64_t timeout_ns,
					struct homa_partial *info);

/**
 * homa_reply_iov() - Send the response to a request received by
 * homa_recv() (formerly homa_reply()).
 * @id: the request's homa_message.id. @iov, @iovcnt: the response (may
 *	be empty), copied as by homa_request_iov().
 * The request message may be released before or after replying.
 * May wait for buffer space (see opts.send_timeout_ns). Returns once the
 * response is attached and its first batch of packets sent: the I/O
 * thread (threaded mode) or the thread polling the socket (polled mode;
 * the standby thread while none does) sends the rest.
 * Return: 0; HOMA_ENOTFOUND (no such server RPC: unknown id, the client
 * went away, or it was answered and the client has acknowledged the
 * response); HOMA_ESTATE (already answered, response not yet
 * acknowledged; or a request taken with HOMA_RECV_PARTIAL not whole yet); HOMA_EINVAL (NULL socket or @iov, @iovcnt < 1, a NULL
 * base with a non-zero length, lengths whose sum wraps);
 * HOMA_EMSGSIZE; HOMA_EAGAIN (no space and send_timeout_ns is 0);
 * HOMA_ETIME (no space within send_timeout_ns); HOMA_ESHUTDOWN;
 * HOMA_ENOMEM; HOMA_ENOASSOC (encrypted socket without an association
 * to the request's client, e.g. after homa_encrypt_tx_remove(): nothing
 * is sent, the RPC stays unanswered and may be answered once one is
 * installed).
 */
HOMA_API int homa_reply_iov(homa_socket *s, uint64_t id, const struct homa_iov *iov,
			    int iovcnt);

/**
 * homa_reply_buf() - homa_reply_iov() with one contiguous buffer. Writes
 * no output argument.
 * Return: as homa_reply_iov() (HOMA_EINVAL also for a NULL @buf with a
 * non-zero @len).
 */
HOMA_API int homa_reply_buf(homa_socket *s, uint64_t id, const void *buf, size_t len);

/**
 * homa_send_opts.timeout_ns's default: the send waits as the socket's
 * opts.send_timeout_ns says.
 */
#define HOMA_SEND_TIMEOUT_SOCKET INT64_MIN

/**
 * Per-call options of homa_request_opts() and homa_reply_opts(). Fill
 * with homa_send_opts_default() first; versioned by size like struct
 * homa_settings (a program built against an older, shorter struct keeps
 * working: the fields it does not know take their defaults).
 */
struct homa_send_opts {
	uint32_t size;       /**< sizeof(struct homa_send_opts) when filled */
	/**
	 * This send's wait for buffer space (the per-RPC form of
	 * homa_open_opts.send_timeout_ns): HOMA_SEND_TIMEOUT_SOCKET (default)
	 * uses the socket's; -1 waits until space frees up or the socket
	 * closes; 0 returns HOMA_EAGAIN at once; > 0 waits at most that many
	 * ns, then HOMA_ETIME. Any other negative value is HOMA_EINVAL.
	 */
	int64_t timeout_ns;
	uint64_t cookie;     /**< requests: returned in the response's homa_message (0) */
	/** Non-NULL: zero copy, the buffers borrowed as by homa_request_zc() (NULL: copied). */
	homa_release_fn release;
	void *arg;           /**< given to @release */
	/**
	 * Requests: the transport of this RPC (enum homa_hint; default
	 * HOMA_HINT_NONE: the socket decides). homa_reply_opts() ignores it:
	 * a response goes back the way its request came.
	 */
	int hint;
	/**
	 * What the RPC needs (HOMA_SEND_* flags, default 0), which each
	 * transport maps to what it can do. homa_reply_opts() takes only
	 * HOMA_SEND_MORE and ignores the others.
	 */
	uint32_t flags;
};

/**
 * homa_send_opts.flags: a latency-sensitive RPC. Over TCP its request and
 * response travel on a connection to the peer kept for such RPCs (never
 * behind a bulk message on the same stream; one per peer, TCP_NODELAY,
 * SO_PRIORITY 6 on the client's side). Over Homa nothing changes: the
 * receivers already grant short messages first and at higher priorities.
 */
#define HOMA_SEND_LATENCY 0x1u

/**
 * homa_send_opts.flags: more sends follow at once (as MSG_MORE). The
 * message is attached to its RPC, but its packets stay in the socket, to
 * leave with the next ones in one system call, until the first of: the
 * socket's next send without this flag (which sends them all), a
 * homa_recv() on the socket that finds no message ready (before it
 * waits), homa_poll(), homa_abort(), homa_close(), packets arriving for
 * the socket, and the socket's own thread stepping in (polled mode:
 * homa_settings.resend_ticks ticks after the last application call;
 * threaded mode: its next timer tick). A server loop that replies with
 * it sends the responses to the requests that were waiting together, in
 * one system call, as a TCP server writes a batch of responses with one
 * writev(); a response still waits while the server handles the next
 * waiting request, so a handler that takes long should reply without
 * it. Requests and responses carried by TCP are written at once whatever
 * it says.
 */
#define HOMA_SEND_MORE 0x2u

/** Smallest homa_send_opts.size accepted (the fields up to @arg; @hint takes its default). */
#define HOMA_SEND_OPTS_SIZE_MIN ((uint32_t)offsetof(struct homa_send_opts, hint))

/**
 * homa_send_opts_default() - Fill @o with the defaults documented above
 * (size set, the socket's timeout, cookie 0, copied). NULL is ignored.
 */
HOMA_API void homa_send_opts_default(struct homa_send_opts *o);

/**
 * homa_request_opts() - homa_request_iov() (or with @o->release set,
 * homa_request_zc()) with per-call options.
 * @o: options (read only); NULL means homa_send_opts_default().
 * @id: receives the RPC id (written only on success).
 * Return: as homa_request_iov(); HOMA_EINVAL also for a bad @o->size or
 * @o->timeout_ns, an unknown @o->hint or @o->flags bit, or HOMA_HINT_TCP
 * on a socket opened with transport HOMA; HOMA_EAGAIN and HOMA_ETIME follow
 * @o->timeout_ns.
 */
HOMA_API int homa_request_opts(homa_socket *s, const struct sockaddr *dst,
			       const struct homa_iov *iov, int iovcnt,
			       const struct homa_send_opts *o, uint64_t *id);

/**
 * homa_reply_opts() - homa_reply_iov() (or with @o->release set,
 * homa_reply_zc()) with per-call options (@o->cookie is not used).
 * @o: options (read only); NULL means homa_send_opts_default().
 * Writes no output argument.
 * Return: as homa_reply_iov(); HOMA_EINVAL also for a bad @o->size or
 * @o->timeout_ns or an unknown @o->flags bit; HOMA_EAGAIN and HOMA_ETIME
 * follow @o->timeout_ns.
 */
HOMA_API int homa_reply_opts(homa_socket *s, uint64_t id, const struct homa_iov *iov,
			     int iovcnt, const struct homa_send_opts *o);

/*
 * Earlier names, kept as aliases: each is the same function (the same
 * code at the same address) as its new name.
 */

/**
 * homa_send() - Alias of homa_request_buf().
 * Return: as homa_request_buf().
 */
HOMA_API int homa_send(homa_socket *s, const struct sockaddr *dst, const void *buf,
		       size_t len, uint64_t cookie, uint64_t *id);

/**
 * homa_send_request() - Alias of homa_request_iov().
 * Return: as homa_request_iov().
 */
HOMA_API int homa_send_request(homa_socket *s, const struct sockaddr *dst,
			       const struct homa_iov *iov, int iovcnt,
			       uint64_t cookie, uint64_t *id);

/**
 * homa_send_request_zc() - Alias of homa_request_zc().
 * Return: as homa_request_zc().
 */
HOMA_API int homa_send_request_zc(homa_socket *s, const struct sockaddr *dst,
				  const struct homa_iov *iov, int iovcnt, uint64_t cookie,
				  homa_release_fn release, void *arg, uint64_t *id);

/**
 * homa_reply() - Alias of homa_reply_iov().
 * Return: as homa_reply_iov().
 */
HOMA_API int homa_reply(homa_socket *s, uint64_t id, const struct homa_iov *iov,
			int iovcnt);

/**
 * homa_abort() - Abandon an RPC. Client: no response will be delivered; a
 * thread waiting for this id returns HOMA_ECANCELED; a response already
 * queued is discarded. Server: the request is forgotten and no reply
 * will be sent.
 * Return: 0; HOMA_ENOTFOUND (no such RPC: unknown, already finished, or
 * its response already taken by homa_recv()); HOMA_EINVAL (NULL @s, @id
 * 0); HOMA_ESHUTDOWN.
 */
HOMA_API int homa_abort(homa_socket *s, uint64_t id);

/**
 * homa_fd() - A descriptor for epoll/poll/select.
 * Threaded mode: readable while at least one message (or failed RPC) is
 * waiting for homa_recv() and no thread is already waiting for it.
 * Polled mode: readable when the socket needs homa_poll() (packets
 * arrived or a protocol timer is due) or a message is waiting.
 * The socket owns the descriptor: never read, write or close it.
 * homa_close() makes it readable, which wakes a loop waiting on it in
 * another thread (its next call on the socket returns HOMA_ESHUTDOWN);
 * the descriptor stays open about a second for that, then the library
 * closes it: remove it from the loop's set once woken.
 * Return: the descriptor (>= 0); HOMA_EINVAL (NULL @s); HOMA_ESHUTDOWN;
 * HOMA_EIO (polled mode: its epoll set or timer could not be created, e.g.
 * at the process's descriptor limit; nothing is kept, a later call tries
 * again).
 */
HOMA_API int homa_fd(homa_socket *s);

/**
 * homa_poll() - Polled mode: move packets and run timers.
 * @timeout_ns: how long to wait for the first packet (0 = just drain
 *	what is there, -1 = until something arrives; below -1: HOMA_EINVAL).
 *	Protocol timers run meanwhile; the wait ends early only when packets
 *	(or a TCP connection's data) arrived, a message became ready or the
 *	socket closed.
 * One thread at a time drives I/O. While the standby thread does (the
 * application was away), the call interrupts it and takes the role over
 * at the end of its current step, even with @timeout_ns 0 (as does
 * homa_recv() with timeout 0 on a polled socket), so an event loop on
 * homa_fd() finds what made it readable;
 * while another application thread does, the call waits for its turn
 * (returning early once a message is ready), within @timeout_ns.
 * Return: number of messages ready for homa_recv() (>= 0); HOMA_EINVAL
 * (threaded socket, NULL, bad @timeout_ns); HOMA_ESHUTDOWN (the socket is
 * closed, also when it closed while this call waited).
 */
HOMA_API int homa_poll(homa_socket *s, int64_t timeout_ns);

/**
 * homa_set_settings() - Change the engine's settings at run time.
 * Return: 0; HOMA_EINVAL (NULL argument, a size out of range, settings
 * homa_settings_validate() rejects, an mtu above the driver's, or
 * max_done_rpcs turned on or off; the old settings stay); HOMA_ESHUTDOWN.
 */
HOMA_API int homa_set_settings(homa_socket *s, const struct homa_settings *st);

/**
 * homa_socket_stats() - Copy the engine's protocol counters.
 * @out: filled on 0, not written otherwise.
 * Return: 0, HOMA_EINVAL (NULL argument) or HOMA_ESHUTDOWN.
 */
HOMA_API int homa_socket_stats(homa_socket *s, struct homa_stats *out);

/**
 * homa_io_stats() - Copy the runtime's and driver's counters.
 * @out: filled on 0, not written otherwise.
 * Return: 0, HOMA_EINVAL (NULL argument) or HOMA_ESHUTDOWN.
 */
HOMA_API int homa_io_stats(homa_socket *s, struct homa_io_stats *out);

/**
 * homa_message_transport() - Which transport carried the message @m.
 * Return: HOMA_TRANSPORT_HOMA or HOMA_TRANSPORT_TCP; HOMA_EINVAL (NULL
 * @m, a failed RPC's or a released message).
 */
HOMA_API int homa_message_transport(const struct homa_message *m);

/**
 * homa_transport_stats() - Copy the transport layer's counters (all zero
 * on a socket opened with transport HOMA).
 * @out: filled on 0, not written otherwise.
 * Return: 0, HOMA_EINVAL (NULL argument) or HOMA_ESHUTDOWN.
 */
HOMA_API int homa_transport_stats(homa_socket *s, struct homa_transport_stats *out);

/**
 * homa_sockaddr_parse() - Build a sockaddr from text and a port.
 * @host: "10.0.0.1" or "fe80::1" (numeric only, no name lookup).
 * @out, @len: receive the address (sockaddr_in or sockaddr_in6); written
 *	on 0 only.
 * Return: 0 or HOMA_EINVAL (NULL argument, or @host is not a numeric
 * IPv4 or IPv6 address).
 */
HOMA_API int homa_sockaddr_parse(const char *host, uint16_t port,
			struct sockaddr_storage *out, socklen_t *len);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_HOMA_H */
