/* SPDX-License-Identifier: MIT */
/**
 * @file tp.h
 * The transport layer: RPCs of a homa_socket carried by kernel TCP
 * instead of Homa (transport TCP), or per peer by either (AUTO).
 *
 * The runtime (src/runtime) keeps one struct homa_tp per socket opened
 * with transport TCP or AUTO (rt->tp; NULL with HOMA) and asks it, for
 * each request, which transport carries it (homa_tp_route()). RPCs
 * carried by TCP get their ids from the engine's counters
 * (homa_engine_reserve_id()), so the application sees one id space, and
 * their messages are handed to the engine (homa_engine_msg_adopt()) and
 * delivered through the runtime's queue (homa_rt_deliver()): homa_recv(),
 * homa_fd(), message views and releases work unchanged.
 *
 * Wire format (all integers big-endian): a connection starts with a
 * preface from the client, TP_MAGIC (8 bytes), then the client's Homa
 * port (2 bytes) and 2 zero bytes. Then both sides send frames: a
 * 16-byte header (payload length 4, type 1, version 1, 2 zero bytes, the
 * client's RPC id 8) and the payload. Types: TP_REQUEST (client to
 * server), TP_RESPONSE (server to client). Anything else drops the
 * connection.
 *
 * Reading: one thread at a time holds the reader role (tp->reading) and
 * reads the connections in rx_epfd. An application thread blocked in
 * homa_recv() takes it when it is free (homa_tp_drive()), so a message
 * goes from the socket to the thread that waits for it without a
 * hand-off; otherwise the transport thread reads. The thread watches
 * rx_epfd through a one-shot entry in its own epoll set: while an
 * application thread reads it leaves that entry disarmed ("parked") and
 * re-arms it at a later check (1 ms, doubling up to 8 ms) once no
 * application thread reads any more.
 *
 * Locks: tp->lock guards the RPC tables, peers, connection lists,
 * counters and the reader role; it nests inside rt->lock (rt->lock
 * first) and is never held while rt->lock is taken. A connection's wlock
 * serialises its writers.
 */
#ifndef HOMA_TP_H
#define HOMA_TP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rt.h"

struct epoll_event;

/** Connection preface: magic bytes. */
#define TP_MAGIC "HOMATCP1"
/** Bytes of the preface: magic, client's Homa port, 2 zero bytes. */
#define TP_PREFACE_LEN 12
/** Bytes of a frame header. */
#define TP_HDR_LEN 16
/** Frame types. */
#define TP_REQUEST 1
#define TP_RESPONSE 2
/** Frame format version. */
#define TP_VERSION 1
/** Connections per peer at most (besides the express one). */
#define TP_POOL 4
/** SO_PRIORITY of an express connection (TC_PRIO_INTERACTIVE). */
#define TP_EXPRESS_PRIORITY 6
/** Answered server RPCs remembered (homa_reply() on them: HOMA_ESTATE). */
#define TP_ANSWERED 1024
/** homa_tp_reply()'s result for an id that TCP does not carry. */
#define TP_NOT_MINE 1

/** A decoded frame header. */
struct tp_hdr {
	uint32_t len;
	uint8_t type;
	uint64_t id;
};

struct tp_peer;

/** One TCP connection (either side). */
struct tp_conn {
	struct tp_conn *next;   /**< in tp->conns (under tp->lock) */
	int fd;
	_Atomic int refs;       /**< the list's, plus each thread using it */
	pthread_mutex_t wlock;  /**< held while a frame is written */
	bool dead;              /**< failed: no new RPCs (under tp->lock) */
	bool accepted;          /**< server side */
	bool preface_ok;        /**< server side: preface read */
	struct tp_peer *peer;   /**< client side: its pool */
	homa_addr addr;         /**< the other end's address */
	uint16_t port;          /**< ... and Homa port */
	/* receive state (the holder of the reader role only) */
	uint8_t *rbuf;          /**< bytes read, not yet parsed */
	size_t rlen, roff;
	bool in_body;
	struct tp_hdr hdr;
	uint8_t *body;          /**< the payload being read (malloc) */
	size_t body_got;
	size_t pub_got;         /**< body_got last published to partial readers */
	bool pub;               /**< this frame was published (tp_partial_publish()) */
	uint64_t rx_handle;     /**< server side: the request being read was announced as this RPC (0: not) */
};

/** A peer (address and port) this socket sends requests to. */
struct tp_peer {
	struct tp_peer *next;
	homa_addr addr;
	uint16_t port;
	struct tp_conn *pool[TP_POOL];
	int npool;
	struct tp_conn *express; /**< latency-sensitive RPCs only (HOMA_SEND_LATENCY), or NULL */
	unsigned rr;
	/* AUTO */
	bool on_tcp;            /**< requests go over TCP */
	uint64_t wait_since;    /**< first Homa request not yet followed by a packet (0: none) */
	uint64_t retry_at;      /**< on_tcp: when Homa is tried again */
	uint64_t backoff_ns;    /**< next back-off */
};

/** A client RPC carried by TCP. */
struct tp_crpc {
	uint64_t id, cookie, start_ns;
	struct tp_conn *conn;
	uint64_t len;           /**< request bytes, charged to tp->tx_buffered */
	homa_addr addr;
	uint16_t port;
	/*
	 * Its response while it arrives, for partial reads (tp_partial.c):
	 * the connection's payload buffer, valid while this record exists
	 * (the frame's completion ends the record first, under tp->lock).
	 */
	const uint8_t *rx_body; /**< NULL until the response's header is read */
	uint32_t rx_len;        /**< the response's length */
	size_t rx_got;          /**< its bytes present from offset 0 */
};

/** A server RPC carried by TCP. */
struct tp_srpc {
	uint64_t handle, client_id;
	struct tp_conn *conn;   /**< NULL once the connection is lost */
	bool answered;
	bool announced;         /**< told to the server while arriving (HOMA_RECV_PARTIAL) */
	/*
	 * An announced request while it arrives (tp_partial.c), as struct
	 * tp_crpc's response: the connection's payload buffer and its bytes
	 * present; rx_body is NULL once the request is whole (or never was).
	 */
	const uint8_t *rx_body;
	uint32_t rx_len;
	size_t rx_got;
};

/** The transport layer of one socket. */
struct homa_tp {
	struct homa_rt *rt;
	int transport;          /**< HOMA_TRANSPORT_TCP or _AUTO */
	pthread_mutex_t lock;
	pthread_cond_t space;   /**< senders waiting for tx budget */
	int listen_fd, epfd, stop_fd;
	int rx_epfd;            /**< the connections and kick_fd (level-triggered) */
	int kick_fd;            /**< eventfd: interrupts an application reader's wait */
	bool reading;           /**< a thread holds the reader role (under lock) */
	bool app_reading;       /**< ... and it is an application thread */
	bool parked;            /**< the thread's rx_epfd entry is disarmed (under lock) */
	_Atomic bool announce_due; /**< the reader role's holder must announce requests being read (tp_partial_due()) */
	pthread_t thread;
	bool thread_started;
	uint16_t port;          /**< our Homa port */
	int family;
	struct rt_idset crpcs;  /**< id -> struct tp_crpc * */
	struct rt_idset srpcs;  /**< handle -> struct tp_srpc * */
	uint64_t answered[TP_ANSWERED]; /**< ring of answered handles */
	uint32_t answered_pos;
	struct tp_peer *peers;
	struct tp_conn *conns;  /**< every live connection */
	uint64_t tx_buffered;
	uint64_t max_tx, max_message;
	uint64_t connect_ns;    /**< how long a connect may take */
	uint64_t fallback_ns, retry_ns;
	uint64_t tcp_min_bytes; /**< AUTO: requests this long go over TCP (0: no such rule) */
	struct homa_transport_stats st; /**< under lock, except the two below */
	_Atomic uint64_t tx_bytes, rx_bytes;
};

/* tp_frame.c */
/** tp_hdr_encode() - Write @h as TP_HDR_LEN bytes at @out. */
void tp_hdr_encode(const struct tp_hdr *h, uint8_t *out);
/**
 * tp_hdr_decode() - Parse TP_HDR_LEN bytes at @in, of a frame that may
 * carry at most @max_len payload bytes and whose type must be @want.
 * Return: 0, or HOMA_EINVAL (wrong type or version, non-zero padding,
 * longer than @max_len).
 */
int tp_hdr_decode(const uint8_t *in, uint32_t max_len, uint8_t want, struct tp_hdr *h);
/** tp_preface_encode() - Write the preface for client Homa port @port at @out. */
void tp_preface_encode(uint16_t port, uint8_t *out);
/**
 * tp_preface_decode() - Parse a preface; *@port receives the client's
 * Homa port. Return: 0 or HOMA_EINVAL (bad magic, port 0, padding).
 */
int tp_preface_decode(const uint8_t *in, uint16_t *port);

/* tp_conn.c */
/**
 * tp_conn_new() - Wrap connected socket @fd (made non-blocking) in a
 * connection holding one reference (the list's) and add it to tp->conns
 * and the thread's epoll set. Call with tp->lock held.
 * Return: the connection, or NULL (@fd is closed).
 */
struct tp_conn *tp_conn_new(struct homa_tp *tp, int fd, bool accepted);
/** tp_conn_put() - Drop a reference; the last one closes and frees @c. */
void tp_conn_put(struct tp_conn *c);
/**
 * tp_connect() - Open a connection to @addr:@port within tp->connect_ns
 * and send the preface. Call without locks.
 * Return: the socket, or HOMA_ENOSERVER (refused), HOMA_ETIMEDOUT (no
 * answer in time, unreachable), HOMA_EIO.
 */
int tp_connect(struct homa_tp *tp, const homa_addr *addr, uint16_t port);
/**
 * tp_write() - Write the frame (@h, then @iov) on @c, waiting for room
 * while the socket is open. Call without locks, holding a reference.
 * Return: 0, HOMA_ESHUTDOWN (socket closing) or HOMA_EIO (connection lost).
 */
int tp_write(struct homa_tp *tp, struct tp_conn *c, const struct tp_hdr *h,
	     const struct homa_iov *iov, int iovcnt);
/**
 * tp_conn_fail() - @c is lost: take it out of its pool and the lists, end
 * its client RPCs with @error and detach its server RPCs (a reply to
 * them is accepted and dropped). Call from the transport thread (or
 * homa_tp_close()) without locks; idempotent.
 */
void tp_conn_fail(struct homa_tp *tp, struct tp_conn *c, int error);
/**
 * tp_pool_get() - A connection to @p (with a reference for the caller),
 * opening one if the pool has room and the others are busy. Call without
 * locks. Return: 0 with *@out set, or tp_connect()'s error.
 */
int tp_pool_get(struct homa_tp *tp, struct tp_peer *p, struct tp_conn **out);
/**
 * tp_express_get() - @p's express connection (with a reference for the
 * caller): the one connection to @p that carries only latency-sensitive
 * RPCs (HOMA_SEND_LATENCY), opened with SO_PRIORITY TP_EXPRESS_PRIORITY
 * if there is none. Call without locks.
 * Return: 0 with *@out set, or tp_connect()'s error.
 */
int tp_express_get(struct homa_tp *tp, struct tp_peer *p, struct tp_conn **out);
/** tp_peer_get() - The peer record of @addr:@port, created if new (tp->lock held); NULL: no memory. */
struct tp_peer *tp_peer_get(struct homa_tp *tp, const homa_addr *addr, uint16_t port);

/* tp_rpc.c */
/**
 * tp_deliver() - Hand a message or a failed RPC to the runtime: @type is
 * HOMA_EV_REQUEST, HOMA_EV_RESPONSE or HOMA_EV_ERROR. A message @msg
 * (owned by the caller until this call) is adopted by the engine or
 * freed if nobody can receive it (socket closing, RPC aborted).
 */
void tp_deliver(struct homa_tp *tp, int type, uint64_t id, uint64_t cookie,
		const homa_addr *peer, uint16_t port, homa_msg *msg, uint64_t start_ns,
		int error);
/** tp_crpc_end() - Forget client RPC @r (tp->lock held): uncharge and free it. */
void tp_crpc_end(struct homa_tp *tp, struct tp_crpc *r);
/**
 * tp_on_frame() - A whole frame arrived on @c: its payload @body (malloc,
 * now owned here) of @h->len bytes. Called by the transport thread.
 */
void tp_on_frame(struct homa_tp *tp, struct tp_conn *c, const struct tp_hdr *h,
		 uint8_t *body);

/* tp_partial.c */
/**
 * tp_partial_publish() - Reader role held, @c in the middle of a frame:
 * let partial readers of its RPC see the bytes read so far (and the
 * length), and wake those waiting. A request (server side) is published
 * only once a server asked for requests as they start (HOMA_RECV_PARTIAL):
 * the first time, it becomes a server RPC announced by a
 * HOMA_EV_REQUEST_BEGIN item (c->rx_handle). Call without locks.
 */
void tp_partial_publish(struct homa_tp *tp, struct tp_conn *c);
/**
 * tp_partial_forget() - The frame @c was reading (a response for RPC @id,
 * or a request) will not be delivered (its buffer is about to be freed):
 * hide it from partial readers (an announced request's server RPC ends).
 * Call without locks.
 */
void tp_partial_forget(struct homa_tp *tp, struct tp_conn *c, uint64_t id);
/**
 * tp_partial_due() - Reader role held, no locks: if a server just asked
 * for requests as they start while the role was held
 * (homa_tp_announce_arriving()), announce the requests being read now.
 */
void tp_partial_due(struct homa_tp *tp);

/**
 * tp_partial_drop_request() - tp->lock held, @c (server side) lost or its
 * request not deliverable: end the server RPC its announced request was
 * (c->rx_handle), if still arriving. Return: whether there was one
 * (partial readers then see HOMA_ENOTFOUND: wake them).
 */
bool tp_partial_drop_request(struct homa_tp *tp, struct tp_conn *c);

/* tp_thread.c */
/**
 * tp_rx_handle() - Reader role held: handle @n events of rx_epfd (read
 * and parse frames, fail lost connections, consume a kick).
 */
void tp_rx_handle(struct homa_tp *tp, const struct epoll_event *evs, int n);
/** tp_thread_start() - Start the transport thread. Return: 0 or HOMA_EIO. */
int tp_thread_start(struct homa_tp *tp);
/** tp_thread_stop() - Stop and join it (if started). */
void tp_thread_stop(struct homa_tp *tp);

/* tp_drive.c */
/**
 * tp_thread_read() - The transport thread saw rx_epfd readable (its
 * one-shot entry is now disarmed): read what is there unless an
 * application thread holds the reader role (then park), and re-arm.
 */
void tp_thread_read(struct homa_tp *tp);
/**
 * tp_thread_unpark() - The transport thread's check after each wait,
 * @park_ms being the last one's park check (0: not parked): re-arm a
 * parked entry once no application thread reads.
 * Return: ms until the next check (0: not parked, none needed), growing
 * while an application thread keeps reading.
 */
int tp_thread_unpark(struct homa_tp *tp, int park_ms);

/* tp_auto.c */
/**
 * tp_auto_tick() - AUTO: move peers that have not answered Homa within
 * tp->fallback_ns but accept TCP to TCP. Called by the transport thread.
 */
void tp_auto_tick(struct homa_tp *tp);
/**
 * tp_auto_route() - AUTO, tp->lock held: whether @p's next request goes
 * over TCP (moving it back to Homa once its back-off has passed).
 */
bool tp_auto_route(struct homa_tp *tp, struct tp_peer *p, uint64_t now);

/**
 * homa_tp_homa_dead() - AUTO: the engine refused a request to
 * @addr:@port with HOMA_EPEERDEAD (its Homa port timed out): move the
 * peer to TCP (the request never left, so it may go there). Call without
 * rt->lock. Return: true if the request should be sent over TCP.
 */
bool homa_tp_homa_dead(struct homa_rt *rt, const homa_addr *addr, uint16_t port);

/* tp_api.c: the runtime's hooks (rt->tp) */
/**
 * homa_tp_open() - With @o->transport TCP or AUTO, create rt->tp (and a
 * TCP listener at the socket's port number on server sockets); with HOMA
 * leave rt->tp NULL. Return: 0; HOMA_EINVAL (unknown transport, a driver
 * other than UDP, encryption); HOMA_EADDRINUSE (the TCP port is taken);
 * HOMA_ENOMEM; HOMA_EIO.
 */
int homa_tp_open(struct homa_rt *rt, const struct homa_open_opts *o);
/** homa_tp_close() - Stop the thread, close every connection, free rt->tp (NULL: no-op). */
void homa_tp_close(struct homa_rt *rt);
/**
 * homa_tp_route() - Whether a request of @len bytes with HOMA_SEND_*
 * @flags to @addr:@port goes over TCP. The rules, first match wins:
 * @hint (enum homa_hint) HOMA_HINT_TCP or _HOMA; a TCP socket: TCP;
 * AUTO: a peer moved to TCP (fallback): TCP; HOMA_SEND_LATENCY: Homa;
 * @len at least tp->tcp_min_bytes (when set): TCP; else Homa. For a Homa
 * request of an AUTO socket chosen so, it notes that an answer is
 * awaited. False without rt->tp. Call without rt->lock.
 */
bool homa_tp_route(struct homa_rt *rt, const homa_addr *addr, uint16_t port, int hint,
		   uint64_t len, uint32_t flags);
/**
 * homa_tp_send() - Start a client RPC over TCP (homa_send_request()):
 * on the peer's express connection if @flags has HOMA_SEND_LATENCY, else
 * on its pool. Return: 0 (*@id set; a connection that cannot be opened ends the RPC
 * with HOMA_ENOSERVER or HOMA_ETIMEDOUT, reported by homa_recv());
 * HOMA_EMSGSIZE; HOMA_EAGAIN / HOMA_ETIME (no budget within @timeout_ns:
 * 0 does not wait, < 0 waits for ever); HOMA_ESHUTDOWN; HOMA_ENOMEM;
 * HOMA_EINVAL (bad @iov).
 */
int homa_tp_send(struct homa_rt *rt, const homa_addr *addr, uint16_t port,
		 const struct homa_iov *iov, int iovcnt, uint64_t cookie, uint32_t flags,
		 int64_t timeout_ns, uint64_t *id);
/**
 * homa_tp_reply() - homa_reply() for a request that came over TCP; a
 * request read as it arrived (HOMA_RECV_PARTIAL) is forgotten by the
 * runtime (homa_rt_partial_end()). Call without rt->lock.
 * Return: TP_NOT_MINE (not such a request: let the engine answer), 0,
 * HOMA_ESTATE (answered already, or the request is still arriving),
 * HOMA_EMSGSIZE, HOMA_EINVAL.
 */
int homa_tp_reply(struct homa_rt *rt, uint64_t id, const struct homa_iov *iov, int iovcnt);
/**
 * homa_tp_abort() - rt->lock held: forget TCP RPC @id (a late response
 * is dropped; a request is never answered). Return: 0 or HOMA_ENOTFOUND.
 */
int homa_tp_abort(struct homa_tp *tp, uint64_t id);

/**
 * homa_tp_partial() - rt->lock held: where the response of client RPC @id
 * carried by TCP (or the announced request of server RPC @id, an odd id)
 * stands while it arrives, in @info (length 0 before its header),
 * copying its bytes from @offset on into @buf (at most @cap).
 * Return: bytes copied; HOMA_ENOTFOUND (no such RPC in flight over TCP:
 * unknown, ended, its connection lost, or its message already delivered
 * whole).
 */
int64_t homa_tp_partial(struct homa_tp *tp, uint64_t id, size_t offset, void *buf, size_t cap,
			struct homa_partial *info);

/**
 * homa_tp_announce_arriving() - rt->lock held, rt->announce just set (the
 * first homa_recv() with HOMA_RECV_PARTIAL): announce every request whose
 * frame is being read, now if no thread holds the reader role, else by
 * the holder as soon as it has handled its events (it is kicked).
 * No-op without rt->tp.
 */
void homa_tp_announce_arriving(struct homa_rt *rt);

/**
 * homa_tp_drive() - Called by homa_rt_wait_item() with rt->lock held for
 * waiter @w, in place of sleeping: if the socket has a transport layer,
 * homa_fd() was never called and no other thread holds the reader role,
 * take it and read the connections (waiting until the absolute @until at
 * most, or until @w is woken); rt->lock is dropped meanwhile.
 * Return: true if it did (the caller looks at @w again), false if the
 * caller should sleep as usual.
 */
bool homa_tp_drive(struct homa_rt *rt, struct rt_waiter *w, uint64_t until);
/**
 * homa_tp_polls_homa() - Whether threads waiting in the socket drive
 * Homa's I/O as well as the TCP connections (homa_tp_poll_begin()): with
 * transport AUTO, whose requests mostly go over Homa. Transport TCP
 * leaves Homa's I/O (requests from Homa clients to a server) to the I/O
 * thread and its waiters read only the connections (homa_tp_drive()),
 * one system call fewer per TCP message.
 */
bool homa_tp_polls_homa(const struct homa_tp *tp);
/**
 * homa_tp_poll_begin() - Called by homa_rt_wait_item() with rt->lock held
 * before waiter @w's thread takes its turn as the poller: if the socket
 * has a transport layer, homa_fd() was never called and no other thread
 * holds the reader role, take it, so that the poller's wait also covers
 * the connections (rt->poll_tp_fd) and a message arriving on either
 * transport reaches @w's thread without a hand-off.
 * Return: true if it took the role (homa_tp_poll_end() gives it back).
 */
bool homa_tp_poll_begin(struct homa_rt *rt, struct rt_waiter *w);
/**
 * homa_tp_poll_read() - The poller holding the reader role saw the
 * connections readable: read them and deliver whole frames. Call without
 * locks.
 */
void homa_tp_poll_read(struct homa_rt *rt);
/** homa_tp_poll_end() - rt->lock held: the poller's turn is over; give the reader role back. */
void homa_tp_poll_end(struct homa_rt *rt);
/**
 * homa_tp_wake_reader() - rt->lock held: wake waiter @w, which reads the
 * connections in homa_tp_drive(), unless it is the calling thread.
 */
void homa_tp_wake_reader(struct homa_rt *rt, struct rt_waiter *w);

/**
 * homa_tp_metrics() - Append the transport layer's /metrics values
 * (client RPCs by transport, requests received over TCP, AUTO's switches
 * by direction) to @ex; nothing for a socket without rt->tp. Call
 * without rt->lock. Return: entries written (at most 5).
 */
size_t homa_tp_metrics(struct homa_rt *rt, struct homa_metric_value *ex);

#endif /* HOMA_TP_H */
