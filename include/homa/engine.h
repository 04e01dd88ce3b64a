/* SPDX-License-Identifier: MIT */
/**
 * @file engine.h
 * The Homa protocol engine, sans I/O.
 *
 * One engine is one Homa endpoint: a local address and port that acts as a
 * client, and as a server once homa_engine_set_server() says so. It owns
 * all protocol state and never touches a clock, a socket, a thread or a
 * global: every call takes the current time in nanoseconds (any monotonic
 * origin), received packets go in through homa_engine_input(), packets to
 * send come out of homa_engine_output() into caller buffers, and
 * homa_engine_next_deadline() says when the engine wants to be called
 * again (homa_engine_on_timer()). Completed messages and failed RPCs are
 * reported as events (homa_engine_next_event()).
 *
 * Threading: an engine is not thread-safe; the caller serializes all calls
 * on one engine. Different engines are independent.
 */
#ifndef HOMA_ENGINE_H
#define HOMA_ENGINE_H

#include "homa/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa/errors.h"
#include "homa/iov.h"
#include "homa/settings.h"
#include "homa/stats.h"
#include "homa/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A host address: IPv6, or IPv4 mapped as ::ffff:a.b.c.d. */
typedef struct homa_addr {
	uint8_t b[16];
} homa_addr;

/**
 * homa_addr_ipv4() - Build a mapped IPv4 address.
 * @ip_host_order: the IPv4 address as a host-order integer (10.0.0.1 = 0x0a000001).
 */
HOMA_API homa_addr homa_addr_ipv4(uint32_t ip_host_order);

/** homa_addr_is_ipv4() - True if @a is an IPv4-mapped address (false for NULL). */
HOMA_API bool homa_addr_is_ipv4(const homa_addr *a);

/** homa_addr_get_ipv4() - The host-order IPv4 address inside a mapped @a (0 for NULL). */
HOMA_API uint32_t homa_addr_get_ipv4(const homa_addr *a);

/** homa_addr_equal() - True if the two addresses are the same (false if either is NULL). */
HOMA_API bool homa_addr_equal(const homa_addr *a, const homa_addr *b);

/**
 * homa_addr_format() - Write @a as text ("10.0.0.1" or "fe80::1").
 * @buf: output, @cap bytes (46 hold any address; shorter text is cut and
 *	still NUL-terminated). A NULL @a writes "".
 * Return: @buf (NULL if @buf is NULL; nothing is written).
 */
HOMA_API char *homa_addr_format(const homa_addr *a, char *buf, size_t cap);

/**
 * Optional allocation hooks. All engine memory goes through them; when
 * alloc is NULL, malloc/free are used. Freed RPC records, event nodes and
 * RPC groups are kept for reuse (up to 64 of each) and given back to free
 * at homa_engine_free(). alloc returns NULL on failure; the
 * engine then returns HOMA_ENOMEM or drops the packet (counted as
 * HOMA_DROP_MEMORY) and carries on.
 */
struct homa_alloc {
	void *(*alloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *ptr, size_t size);
	void *ctx;
};

/**
 * Seam for per-packet encryption. seal() is given a complete packet in
 * @pkt (@len bytes, of which the first @hdr_len are the Homa header) and
 * may rewrite it in place, growing it up to @cap bytes (the engine leaves
 * `overhead` bytes of room); it returns the new length or a negative error
 * (the packet is then not sent: a control packet is dropped; a message's
 * DATA packet is built again when the next timer tick, or the next packet
 * heard for its RPC, offers it again, other messages going meanwhile, and
 * an RPC whose packets keep being refused times out). open() checks and
 * transforms a received packet in place and returns its new length, or a
 * negative value to reject it (counted as HOMA_DROP_VERIFY). The protocol logic never sees either.
 * seal_to(), when set, replaces seal() and is also told the destination
 * host (keys are chosen per destination, e.g. PSP associations).
 */
struct homa_packet_hooks {
	int (*seal)(void *ctx, uint8_t *pkt, size_t hdr_len, size_t len, size_t cap);
	int (*open)(void *ctx, const homa_addr *src, uint8_t *pkt, size_t len);
	size_t overhead;
	void *ctx;
	int (*seal_to)(void *ctx, const homa_addr *dst, uint8_t *pkt, size_t hdr_len,
		       size_t len, size_t cap);
};

/** Everything the caller needs to put a packet on the wire. */
struct homa_tx {
	homa_addr dst;      /**< destination host */
	uint16_t dport;     /**< destination Homa port (also in the header) */
	uint8_t priority;   /**< 0 (lowest) .. 7 (highest) */
	uint8_t type;       /**< packet type, for drivers that batch DATA */
	size_t len;         /**< bytes written to the caller's buffer */
};

typedef struct homa_engine homa_engine;
/** A received message; owned by the engine until released. */
typedef struct homa_msg homa_msg;

/** Kinds of events. */
enum homa_event_type {
	HOMA_EV_REQUEST = 1,  /**< a complete request arrived (server) */
	HOMA_EV_RESPONSE = 2, /**< a client RPC's response arrived */
	HOMA_EV_ERROR = 3,    /**< a client RPC failed; error says why */
	/**
	 * A request started arriving (server; only after
	 * homa_engine_announce_requests()): no msg; its bytes so far and
	 * length through homa_engine_rx_progress(). HOMA_EV_REQUEST follows
	 * when it is complete (or nothing, if the RPC ends first).
	 */
	HOMA_EV_REQUEST_BEGIN = 4,
};

/** One event. msg is set for REQUEST and RESPONSE and must be released. */
struct homa_event {
	int type;
	uint64_t id;        /**< local RPC id (client: even; server: odd) */
	uint64_t cookie;    /**< the client's cookie (0 on server events) */
	int error;          /**< HOMA_EV_ERROR: HOMA_ETIMEDOUT, HOMA_ESHUTDOWN, ... */
	homa_addr peer;
	uint16_t peer_port;
	homa_msg *msg;
	uint64_t start_ns;  /**< client: when the RPC was sent */
};

/**
 * homa_engine_new() - Create an endpoint.
 * @out: receives the engine (caller owns; free with homa_engine_free()).
 * @s: settings (copied); NULL means homa_settings_default().
 * @local: this host's address (copied).
 * @port: this endpoint's Homa port, non-zero.
 * @alloc: optional hooks (copied); NULL for malloc.
 * @now: current time, ns.
 * Return: 0, HOMA_EINVAL (NULL @out or @local, port 0, settings
 * rejected by homa_settings_validate()), HOMA_ENOMEM (nothing kept).
 */
HOMA_API int homa_engine_new(homa_engine **out, const struct homa_settings *s,
		    const homa_addr *local, uint16_t port,
		    const struct homa_alloc *alloc, uint64_t now);

/** Bytes of the key homa_engine_set_hash_key() takes. */
#define HOMA_HASH_KEY_LEN 16

/**
 * homa_engine_set_hash_key() - Key the hash of the engine's tables (RPCs,
 * peers, finished RPCs) with @key, HOMA_HASH_KEY_LEN random bytes the
 * caller draws (e.g. from getrandom()); each engine should get its own.
 * Ids in those tables are chosen by remote peers: with a secret key they
 * cannot choose ids that share a bucket and make every lookup walk all
 * RPCs. Until it is called, the key is derived from homa_engine_new()'s
 * arguments, which a peer may guess. Call it right after homa_engine_new().
 * Return: 0, or HOMA_EINVAL (NULL argument, or the engine already holds
 * RPCs, peers or finished RPCs, which were hashed with the old key).
 */
HOMA_API int homa_engine_set_hash_key(homa_engine *e, const uint8_t key[HOMA_HASH_KEY_LEN]);

/**
 * homa_engine_free() - Destroy an engine and everything it owns,
 * including unreleased messages. NULL is ignored; @e is freed, so a
 * second call with it is the caller's error (use after free).
 */
HOMA_API void homa_engine_free(homa_engine *e);

/**
 * homa_engine_set_settings() - Apply new settings at run time.
 * Return: 0 or HOMA_EINVAL (NULL argument, settings rejected, or
 * max_done_rpcs turned on or off; the old ones are kept).
 */
HOMA_API int homa_engine_set_settings(homa_engine *e, const struct homa_settings *s);

/** homa_engine_settings() - The settings in force (engine owns; NULL for a NULL @e). */
HOMA_API const struct homa_settings *homa_engine_settings(const homa_engine *e);

/**
 * homa_engine_rx_priority() - The priority (0 lowest .. 7) that peers give
 * the unscheduled bytes of a message of @length bytes sent to @e: the
 * highest level whose cutoff @e announces (its current unscheduled
 * cutoffs, which follow the sizes it receives when settings.dynamic_cutoffs
 * is on) is at least @length; 0 if none is. Lets a receiver serve what it
 * received in the order senders send it.
 * Return: that priority; 0 for a NULL @e.
 */
HOMA_API uint8_t homa_engine_rx_priority(const homa_engine *e, uint64_t length);

/**
 * homa_engine_set_hooks() - Install (or with NULL @h, remove) packet
 * hooks (copied). A NULL @e is ignored.
 */
HOMA_API void homa_engine_set_hooks(homa_engine *e, const struct homa_packet_hooks *h);

/**
 * Acks owed to Linux module hosts, shared by several engines (e.g. all of
 * a process's sockets). The module keeps one list of owed acks per peer
 * host and takes an ack from any packet of that host, whatever its ports;
 * with a pool, an engine puts each ack it owes a host not known to be
 * ours (no extension marker heard from it) in the pool instead of its own
 * list, and takes from the pool, after its own list, the acks its DATA
 * and ACK packets to that host carry, so one engine's ack rides on
 * another's packet; each engine's tick also sends the pool's acks for the
 * hosts it knows in ACK packets. Acks owed to hosts known to be ours stay
 * per engine. The hooks run inside the engine's calls, under whatever
 * lock the caller holds there; they must not call an engine, and must
 * serialise themselves if engines sharing them run on several threads.
 */
struct homa_ack_pool {
	/**
	 * Keep the ack of client RPC @client_id to @server_port owed to
	 * @host. Return: false if there is no room (the engine keeps it).
	 */
	bool (*put)(void *ctx, const homa_addr *host, uint64_t client_id, uint16_t server_port);
	/** Take the oldest ack owed to @host. Return: false if there is none. */
	bool (*take)(void *ctx, const homa_addr *host, uint64_t *client_id, uint16_t *server_port);
	void *ctx;
};

/**
 * homa_engine_set_ack_pool() - Share acks owed to module hosts through
 * @pool (copied; NULL, or one without put or take: every ack stays in
 * the engine's own lists). Acks already owed stay where they are. A NULL
 * @e is ignored.
 */
HOMA_API void homa_engine_set_ack_pool(homa_engine *e, const struct homa_ack_pool *pool);

/**
 * homa_engine_set_server() - Accept incoming requests (true) or drop them
 * (false, the default; counted as HOMA_DROP_NOT_SERVER). After
 * homa_engine_shutdown() it stays false. A NULL @e is ignored.
 */
HOMA_API void homa_engine_set_server(homa_engine *e, bool serve);

/** Bytes of one piece of a received message's payload (64 KiB). */
#define HOMA_RX_CHUNK ((size_t)1 << 16)

/**
 * homa_engine_set_rx_alloc() - Allocate the payload of messages received
 * from now on through @a (copied; NULL: back to the engine's own hooks).
 * A message of L bytes is stored in pieces: piece i holds bytes
 * [i * HOMA_RX_CHUNK, (i + 1) * HOMA_RX_CHUNK) and is allocated with
 * a->alloc(ctx, size), size = HOMA_RX_CHUNK except for the last piece
 * (L - i * HOMA_RX_CHUNK), when its first byte arrives. Each piece is
 * freed with a->free(ctx, ptr, size) when the message is. The hooks
 * never see the engine's other memory, so the payload can land in
 * memory the caller chose (e.g. a receive region shared with an
 * application); homa_msg_segment() then points into it. A NULL return
 * drops the packet, counted as HOMA_DROP_MEMORY (the sender resends).
 * Call it before the engine holds RPCs (e.g. right after
 * homa_engine_new()). The hooks run inside the engine's calls, under
 * whatever lock the caller holds there; they must not call the engine.
 * Return: 0, or HOMA_EINVAL (NULL @e, @a lacks alloc or free, or the
 * engine holds RPCs or delivered messages, whose pieces were allocated
 * otherwise).
 */
HOMA_API int homa_engine_set_rx_alloc(homa_engine *e, const struct homa_alloc *a);

/** homa_engine_port() - This endpoint's port (0 for a NULL @e). */
HOMA_API uint16_t homa_engine_port(const homa_engine *e);

/**
 * homa_engine_send_request() - Start a client RPC.
 * @dst, @dport: the server.
 * @iov, @iovcnt: the request (copied into the engine; 0 bytes is a valid,
 *	empty request; a list whose lengths do not sum within 64 bits is not).
 * @cookie: returned in the RPC's events.
 * @id: receives the RPC id (even).
 * Return: 0; HOMA_EINVAL (NULL @e, @dst or @id, port 0, @iovcnt < 1,
 * a list homa_iov_length() refuses), HOMA_EMSGSIZE (above max_message,
 * or above HOMA_MODULE_MAX_MESSAGE toward a host not known to be ours),
 * HOMA_EAGAIN (tx buffer or RPC cap reached: retry after some output),
 * HOMA_EPEERDEAD (that address and port timed out recently),
 * HOMA_ESHUTDOWN (after homa_engine_shutdown()), HOMA_ENOMEM. Nothing
 * is kept on error.
 */
HOMA_API int homa_engine_send_request(homa_engine *e, const homa_addr *dst,
			     uint16_t dport, const struct homa_iov *iov,
			     int iovcnt, uint64_t cookie, uint64_t now,
			     uint64_t *id);

/**
 * homa_engine_send_request_ref() - homa_engine_send_request() without
 * copying the request: the engine copies only the gather list and reads
 * the bytes it describes whenever it builds a DATA packet (first sends and
 * retransmissions). The caller keeps those bytes unchanged and valid until
 * the RPC ends: its HOMA_EV_RESPONSE message was released, its
 * HOMA_EV_ERROR event taken, or homa_engine_abort(), homa_engine_free() on
 * it returned. The message counts against max_tx_buffered as a copied one.
 * For senders that own long-lived buffers (the simulator).
 * Return: as homa_engine_send_request().
 */
HOMA_API int homa_engine_send_request_ref(homa_engine *e, const homa_addr *dst,
				 uint16_t dport, const struct homa_iov *iov,
				 int iovcnt, uint64_t cookie, uint64_t now,
				 uint64_t *id);

/**
 * homa_iov_length() - Total bytes of a gather list.
 * @len: receives the sum.
 * Return: 0; HOMA_EINVAL (NULL @len, @iovcnt < 0, NULL @iov with
 * @iovcnt > 0, a NULL base with a non-zero length, or a sum that does not
 * fit in 64 bits).
 */
HOMA_API int homa_iov_length(const struct homa_iov *iov, int iovcnt, uint64_t *len);

/**
 * homa_msg_build() - Copy a gather list into a new outgoing message
 * without an engine, so that the copy can run outside whatever lock
 * serializes the engine; homa_engine_send_request_msg() or
 * homa_engine_send_reply_msg() then attach it.
 * @alloc: the hooks to allocate with: the engine's own, or NULL (malloc)
 *	if the engine's free hook passes blocks it did not cache to free().
 * @out: receives the message (caller owns until it is attached; free it
 *	with homa_msg_discard() otherwise).
 * Return: 0; HOMA_EINVAL (as homa_iov_length(), or NULL @out);
 * HOMA_EMSGSIZE (more than 2^32-1 bytes); HOMA_ENOMEM.
 */
HOMA_API int homa_msg_build(const struct homa_alloc *alloc, const struct homa_iov *iov,
		   int iovcnt, homa_msg **out);

/**
 * homa_msg_build_ref() - An outgoing message whose bytes stay in the
 * caller's buffers (zero copy): only the gather list is copied, and the
 * engine reads the bytes whenever it builds a DATA packet (first sends
 * and retransmissions). Attach it like a homa_msg_build() message.
 * @alloc: as homa_msg_build().
 * @done: if not NULL, called with @ctx exactly once, when the message is
 *	freed: by the engine once it reads the bytes no more (the RPC
 *	ended: response released or error event taken, the server RPC
 *	acknowledged or timed out, homa_engine_abort(), homa_engine_shutdown()
 *	or homa_engine_free()), or by homa_msg_discard(). It runs inside the
 *	engine call that freed the message and must not call the engine.
 * The caller keeps the bytes valid and unchanged until @done. The
 * message counts against max_tx_buffered like a copied one.
 * Return: as homa_msg_build() (@done is not called on failure).
 */
HOMA_API int homa_msg_build_ref(const struct homa_alloc *alloc, const struct homa_iov *iov,
				int iovcnt, void (*done)(void *ctx), void *ctx, homa_msg **out);

/**
 * homa_msg_discard() - Free a message built by homa_msg_build() and never
 * attached (@alloc: the hooks it was built with). NULL @m is ignored.
 */
HOMA_API void homa_msg_discard(const struct homa_alloc *alloc, homa_msg *m);

/**
 * homa_engine_send_request_msg() - homa_engine_send_request() with a
 * message built by homa_msg_build(). On success the engine owns @msg; on
 * any error the caller still does.
 * Return: as homa_engine_send_request() (HOMA_EINVAL also for NULL @msg).
 */
HOMA_API int homa_engine_send_request_msg(homa_engine *e, const homa_addr *dst,
				 uint16_t dport, homa_msg *msg, uint64_t cookie,
				 uint64_t now, uint64_t *id);

/**
 * homa_engine_send_reply_msg() - homa_engine_send_reply() with a message
 * built by homa_msg_build(); ownership as homa_engine_send_request_msg().
 * Return: as homa_engine_send_reply().
 */
HOMA_API int homa_engine_send_reply_msg(homa_engine *e, uint64_t id, homa_msg *msg,
			       uint64_t now);

/**
 * homa_engine_send_reply() - Answer a server RPC delivered by a
 * HOMA_EV_REQUEST event.
 * Return: 0; HOMA_ENOTFOUND (no such server RPC: unknown id, or the
 * client aborted and the RPC was freed); HOMA_ESTATE (already replied or
 * request not yet delivered); HOMA_EINVAL (NULL @e, @iovcnt < 1, a list
 * homa_iov_length() refuses); HOMA_EMSGSIZE; HOMA_EAGAIN (tx buffer
 * full: retry after some output); HOMA_ENOMEM. The RPC is unchanged on
 * error (a reply may follow).
 */
HOMA_API int homa_engine_send_reply(homa_engine *e, uint64_t id,
			   const struct homa_iov *iov, int iovcnt,
			   uint64_t now);

/**
 * homa_engine_abort() - Abort an RPC (client: no event follows; server:
 * the request is forgotten and no reply will be sent).
 * Return: 0, HOMA_ENOTFOUND (no such RPC), or HOMA_EINVAL (NULL @e).
 */
HOMA_API int homa_engine_abort(homa_engine *e, uint64_t id, uint64_t now);

/**
 * homa_engine_shutdown() - Fail every client RPC with HOMA_ESHUTDOWN
 * (reported as events) and free all server RPCs. Later sends return
 * HOMA_ESHUTDOWN. A NULL @e is ignored.
 */
HOMA_API void homa_engine_shutdown(homa_engine *e, uint64_t now);

/**
 * homa_engine_input() - Hand one received packet to the engine.
 * @src: the sending host; @buf/@len: the Homa packet (header first). The
 * engine copies what it keeps; @buf may be reused at once (it is modified
 * in place if packet hooks transform it).
 * Return: 0 if the packet was used; HOMA_INPUT_DROPPED + a HOMA_DROP_*
 * reason (a positive number, not an error) if it was dropped (also counted
 * in stats.drops); HOMA_EINVAL (NULL @e, @src or @buf).
 */
HOMA_API int homa_engine_input(homa_engine *e, const homa_addr *src, uint8_t *buf,
		      size_t len, uint64_t now);

/**
 * struct homa_rx_lend - How the engine gives back a received buffer it
 * kept (homa_engine_input_lend()).
 * @release: called exactly once per kept buffer, with @ctx and the @buf
 *	that was passed in, when the engine no longer reads it (the message
 *	whose bytes it holds was released or freed). It runs inside the
 *	engine call that freed the message (the caller's serialization, any
 *	thread that calls the engine) and must not call the engine.
 * @ctx: passed to @release.
 */
struct homa_rx_lend {
	void (*release)(void *ctx, uint8_t *buf);
	void *ctx;
};

/**
 * homa_engine_input_lend() - homa_engine_input() that may keep @buf
 * instead of copying from it (zero-copy receive): when the packet is DATA
 * whose payload is all new bytes at or beyond the highest offset received
 * so far, the message refers to the payload in place and *@kept becomes
 * true; the caller then leaves @buf untouched until @lend->release() gives
 * it back. Otherwise (control packets, retransmissions filling holes,
 * duplicates, drops, and every packet of an engine whose received
 * payload goes to homa_engine_set_rx_alloc() pieces) the engine copies
 * what it keeps, as homa_engine_input(), and *@kept is false. A NULL @lend is
 * homa_engine_input().
 * Return: as homa_engine_input() (HOMA_EINVAL also for NULL @kept, or a
 * @lend without release).
 */
HOMA_API int homa_engine_input_lend(homa_engine *e, const homa_addr *src, uint8_t *buf,
				    size_t len, uint64_t now, const struct homa_rx_lend *lend,
				    bool *kept);

/**
 * struct homa_rx_copy - A payload copy homa_engine_input() left to its
 * caller (homa_engine_defer_copies()): copy @len bytes from @src (inside
 * the packet buffer passed in) to @dst (inside message @msg).
 */
struct homa_rx_copy {
	uint8_t *dst;
	const uint8_t *src;
	size_t len;
	homa_msg *msg;
};

/**
 * homa_engine_defer_copies() - Until called again with a NULL @list,
 * homa_engine_input() and homa_engine_input_lend() copy no payload into
 * messages: they decide where each byte goes (allocating the message's
 * pieces) and append the copy to @list (room for @cap entries, *@n of them
 * used; the caller sets *@n, usually to 0). They never copy payload
 * themselves: with @list full, the piece that found no room is dropped,
 * counted in homa_stats.rx_copies_refused (the packet as
 * HOMA_DROP_MEMORY), and stays missing, so the sender resends it. A packet
 * needs one entry, two where it spans two of a message's 64 KB pieces,
 * more only where it fills several holes; a caller that does its copies
 * (and sets *@n back to 0) whenever few entries are left before the next
 * packet loses nothing else. This lets a caller that serializes engine
 * calls with a lock do the copies after unlocking: it keeps each packet
 * buffer unchanged until its copies are done, copies, and then calls
 * homa_engine_copies_done() (under its lock again). Meanwhile a message
 * with copies pending is not handed out by homa_engine_next_event() (later
 * events are), homa_engine_rx_progress() counts only bytes present before
 * them, and freeing it (abort, timeout,
 * eviction) only marks it: the engine frees it when its copies are done.
 * The caller must report every copy done before homa_engine_free().
 * Return: 0; HOMA_EINVAL (NULL @e; @list with @cap 0 or NULL @n).
 */
HOMA_API int homa_engine_defer_copies(homa_engine *e, struct homa_rx_copy *list, uint32_t cap,
				      uint32_t *n);

/**
 * homa_engine_copies_done() - The @n copies of @list (from
 * homa_engine_defer_copies()) are done: their messages may be delivered,
 * read and freed again; one freed meanwhile is freed now. Each entry is
 * reported once. NULL @e or @list is ignored.
 */
HOMA_API void homa_engine_copies_done(homa_engine *e, const struct homa_rx_copy *list,
				      uint32_t n);

/** Kinds of undeliverable-packet reports (homa_engine_unreachable()). */
enum homa_unreach_kind {
	HOMA_UNREACH_PORT = 1,  /**< ICMP / ICMPv6 port unreachable: no socket serves that port */
	HOMA_UNREACH_PROTO = 2, /**< ICMP protocol unreachable: the host runs no Homa at all */
};

/**
 * homa_engine_unreachable() - The network reported that a packet this
 * engine sent to @dst could not be delivered (ICMP destination
 * unreachable, read by the driver): @kind says why, @quoted/@len is the
 * start of our packet as the report quotes it (at least the 28-byte common
 * header). Anyone can send such a report, so it is acted on only if it
 * quotes a packet of a live RPC of ours (our port as source port, an RPC
 * with that sender id to @dst and the quoted destination port). Then every
 * client RPC to that port (to any port of @dst for HOMA_UNREACH_PROTO)
 * fails with HOMA_ENOSERVER and every server RPC answering there is freed.
 * Return: the number of RPCs ended (0 if the report named none of ours, is
 * shorter than a common header or of another kind); HOMA_EINVAL (NULL @e,
 * @dst or @quoted).
 */
HOMA_API int homa_engine_unreachable(homa_engine *e, const homa_addr *dst, int kind,
				     const uint8_t *quoted, size_t len, uint64_t now);

/** Offset added to a drop reason in homa_engine_input()'s result. */
#define HOMA_INPUT_DROPPED 100

/**
 * homa_engine_output() - Produce the next packet to send, if any.
 * Control packets come first; DATA is paced by the NIC model (link_mbps,
 * max_nic_queue_ns) and sender SRPT.
 * @buf, @cap: caller's buffer, at least settings.mtu + hooks overhead.
 * @tx: filled with destination, priority and length.
 * Return: bytes written (> 0), 0 if nothing may be sent now,
 * HOMA_ENOSPC (@cap is below the next packet), HOMA_EINVAL (NULL @e,
 * @buf or @tx).
 */
HOMA_API int homa_engine_output(homa_engine *e, uint64_t now, uint8_t *buf,
		       size_t cap, struct homa_tx *tx);

/** Fewest payload bytes of the engine's own chunks lent to one packet (homa_engine_output_refs()). */
#define HOMA_REF_MIN_CHUNK 64

/**
 * homa_engine_output_refs() - homa_engine_output() that may leave a DATA
 * packet's payload where it is: @buf then receives only the header (the
 * return value and tx->len count it alone) and the first entries of @ref
 * (@nref of them, at least 1) point at the payload's pieces, in order,
 * which go on the wire right after it; the other entries are empty.
 * Otherwise every entry is empty and @buf holds the whole packet as with
 * homa_engine_output(). The payload is left where it is when no packet
 * hooks with a seal function are installed and either
 * - the message borrows the caller's bytes (homa_msg_build_ref()) and the
 *   payload lies in one piece of them (@ref[0]): they stay valid until
 *   the message's done callback runs, so a caller that lets that
 *   callback's effects through (e.g. tells the application) before the
 *   packet is sent must wait for the send; or
 * - hooks that only reserve overhead are installed (the caller seals
 *   header and payload itself, out of place), the payload is at least
 *   HOMA_REF_MIN_CHUNK bytes of the engine's own copy of the message and
 *   lies in at most @nref pieces of it (64 KiB chunks: 2 pieces hold any
 *   packet up to 64 KiB): a message freed meanwhile (acked, aborted,
 *   timed out, the engine freed) is kept until the caller calls
 *   homa_engine_output_sent(), which it must do once every packet it took
 *   so far is sent (or dropped).
 * Return: as homa_engine_output(); HOMA_EINVAL also for a NULL @ref or
 * @nref < 1.
 */
HOMA_API int homa_engine_output_refs(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap,
				     struct homa_tx *tx, struct homa_iov *ref, int nref);

/**
 * homa_engine_output_ref() - homa_engine_output_refs() with one entry
 * (@ref: the payload, if left where it is, lies in one piece).
 * Return: as homa_engine_output_refs().
 */
HOMA_API int homa_engine_output_ref(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap,
				    struct homa_tx *tx, struct homa_iov *ref);

/**
 * homa_engine_output_sent() - Every packet taken so far with
 * homa_engine_output_refs() was sent or dropped: free the messages whose
 * chunks those packets borrowed and that were freed meanwhile. Cheap when
 * there are none; a NULL @e is ignored. homa_engine_free() also frees
 * them (call it only once nothing is being sent).
 */
HOMA_API void homa_engine_output_sent(homa_engine *e);

/**
 * homa_engine_next_deadline() - When the engine next needs a call: now
 * (0) while control packets or a grant pass that input deferred wait for
 * homa_engine_output(), else the earlier of the next timer tick and the
 * time the pacer allows more DATA out.
 * Return: absolute ns; UINT64_MAX if nothing is pending (or @e is NULL).
 */
HOMA_API uint64_t homa_engine_next_deadline(const homa_engine *e);

/**
 * homa_engine_wake_by() - The latest time a sleeping host should wake up:
 * exactly when control packets, a deferred grant pass (both: now) or the
 * pacer need it, but up to half a tick after the timer tick is due.
 * Ticks only count silence, so a tick run late delays RESENDs and
 * timeouts by at most half a tick; a host that
 * wakes for packets in between runs the tick then (homa_engine_on_timer()
 * once homa_engine_next_deadline() has passed), so a busy endpoint does
 * not also wake once per tick for the timer alone. Sleep until this;
 * check homa_engine_next_deadline() on every wake-up.
 * Return: absolute ns; UINT64_MAX if nothing is pending (or @e is NULL).
 */
HOMA_API uint64_t homa_engine_wake_by(const homa_engine *e);

/**
 * homa_engine_want_output() - True if homa_engine_output() has something
 * to do at @now: control packets wait, a grant pass input deferred is to
 * run (it may queue GRANTs), or the pacer lets DATA out (false for a NULL
 * @e).
 */
HOMA_API bool homa_engine_want_output(const homa_engine *e, uint64_t now);

/**
 * homa_engine_has_output() - False when a homa_engine_output() call,
 * whatever its time, could neither return a packet nor change the engine:
 * no control packet waits, no grant decision is pending (input defers the
 * grant pass to the next output: one pass per receive batch), no message
 * has data queued and the pacer waits for no deadline. A host can then
 * skip the output call and the clock reading it needs. True otherwise
 * (even if the pacer holds the data back until later: ask
 * homa_engine_want_output() with a time for that); false for a NULL @e.
 */
HOMA_API bool homa_engine_has_output(const homa_engine *e);

/**
 * homa_engine_on_timer() - Run timers due at @now (resends, timeouts,
 * acks, START_MSG repeats). Cheap when nothing is due. A NULL @e is
 * ignored.
 */
HOMA_API void homa_engine_on_timer(homa_engine *e, uint64_t now);

/**
 * homa_engine_next_event() - Take the oldest event.
 * Return: 1 and fills @ev, or 0 if none (also for a NULL @e or @ev).
 */
HOMA_API int homa_engine_next_event(homa_engine *e, struct homa_event *ev);

/** homa_msg_length() - Bytes in a received message (0 for NULL). */
HOMA_API size_t homa_msg_length(const homa_msg *m);

/**
 * homa_msg_segment() - Zero-copy view of the bytes at @offset.
 * @ptr: receives a pointer into engine memory, valid until release.
 * Return: contiguous bytes available at @ptr (0 if @offset >= length,
 * or @m or @ptr is NULL).
 */
HOMA_API size_t homa_msg_segment(const homa_msg *m, size_t offset, const uint8_t **ptr);

/**
 * homa_msg_copy() - Copy up to @len bytes from @offset into @dst.
 * Return: bytes copied (0 if @m or @dst is NULL).
 */
HOMA_API size_t homa_msg_copy(const homa_msg *m, size_t offset, void *dst, size_t len);

/**
 * homa_engine_msg_release() - Give a message back to the engine. For a
 * client response this also frees the RPC and schedules its ack. A NULL
 * @e or @m is ignored. @m must be a message of @e not yet released: @m
 * is freed, so releasing it twice is the caller's error (the engine
 * cannot tell a freed pointer; homa_message_release() of homa.h does and
 * returns HOMA_EALREADY).
 */
HOMA_API void homa_engine_msg_release(homa_engine *e, homa_msg *m);

/**
 * homa_engine_msg_adopt() - Take @m (built by homa_msg_build() or
 * homa_msg_build_ref() with a NULL allocator, not yet given to the
 * engine) as a delivered message: it is charged to the receive budget
 * and homa_engine_msg_release() gives it back like a received one. Used
 * for messages that arrived by another transport. With a NULL @e or @m
 * nothing happens (the caller keeps @m).
 */
HOMA_API void homa_engine_msg_adopt(homa_engine *e, homa_msg *m);

/**
 * homa_engine_reserve_id() - Take an RPC id from the engine's counters
 * for an RPC that another transport carries, so that it never equals an
 * id or handle of the engine's own RPCs: a client id (even, as
 * homa_engine_send_request() gives out) or, with @server, a server
 * handle (odd).
 * Return: the id; 0 (never an id) for a NULL @e.
 */
HOMA_API uint64_t homa_engine_reserve_id(homa_engine *e, bool server);

/**
 * homa_engine_replies_pending() - Server RPCs whose reply was given
 * (homa_engine_send_reply()) and is not yet acknowledged by its client:
 * still being sent, or sent and waiting for the client's ack. They end
 * when acknowledged, when the client stops answering (timeout_ticks), or
 * with homa_engine_abort() or homa_engine_shutdown().
 * Return: their number (0 for a NULL @e).
 */
HOMA_API uint32_t homa_engine_replies_pending(const homa_engine *e);

/**
 * homa_engine_peer_heard() - When the latest packet from @addr arrived.
 * @heard_ns: written (engine time) when the call returns true.
 * Return: false if the engine keeps no state for @addr or has heard
 * nothing from it, or an argument is NULL.
 */
HOMA_API bool homa_engine_peer_heard(homa_engine *e, const homa_addr *addr,
				     uint64_t *heard_ns);

/**
 * homa_engine_peer_waiting() - Our client RPCs to port @port of @addr
 * that still wait for the server (completed and aborted ones are gone).
 * @probes: if not NULL, receives the most probes (RESENDs, START_MSG
 *	repeats) any of them sent without an answer since it last heard
 *	about itself (a GRANT, BUSY or response byte resets the count). A
 *	live server answers each probe, so a high count means its Homa port
 *	is silent.
 * Return: how many RPCs wait (0 for a NULL @e or @addr; *@probes is 0).
 */
HOMA_API uint32_t homa_engine_peer_waiting(const homa_engine *e, const homa_addr *addr,
					   uint16_t port, uint32_t *probes);

/**
 * homa_engine_announce_requests() - From now on (@on) or no longer, queue
 * a HOMA_EV_REQUEST_BEGIN event when the first bytes of a request arrive
 * that do not complete it, so the application can read it as it arrives.
 * Turning it on also queues the event at once for every request already
 * partly received. NULL @e is ignored.
 */
HOMA_API void homa_engine_announce_requests(homa_engine *e, bool on);

/**
 * homa_engine_rx_progress() - Incremental receive: how many bytes of the
 * message being received for RPC @id are present from offset 0 on.
 * @msg: if not NULL, receives the partial message (read-only, engine owns;
 * valid until the RPC's event is taken or the RPC ends).
 * Return: contiguous bytes, or HOMA_ENOTFOUND (no such RPC; NULL @e).
 */
HOMA_API int64_t homa_engine_rx_progress(homa_engine *e, uint64_t id,
				const homa_msg **msg);

/**
 * homa_engine_rpc_peer() - The other side of RPC @id: its address into
 * @addr and its port into @port (either may be NULL).
 * Return: 0, or HOMA_ENOTFOUND (no such RPC; NULL @e).
 */
HOMA_API int homa_engine_rpc_peer(homa_engine *e, uint64_t id, homa_addr *addr,
				  uint16_t *port);

/**
 * homa_engine_count_drop() - Count @n packets the caller dropped before
 * homa_engine_input() for @reason (a HOMA_DROP_* value), e.g. ones that
 * failed authentication in the caller's own verifier. A NULL @e or a
 * reason out of range is ignored.
 */
HOMA_API void homa_engine_count_drop(homa_engine *e, int reason, uint64_t n);

/**
 * homa_engine_stats() - Copy the counters into @out (all zero for a NULL
 * @e; a NULL @out is ignored).
 */
HOMA_API void homa_engine_stats(const homa_engine *e, struct homa_stats *out);

/**
 * homa_engine_state_sizes() - Bytes of engine state per RPC and per peer,
 * excluding message buffers and the list of owed acks a client allocates
 * for a server at its first finished RPC there (for documentation and
 * tests). NULL pointers are skipped.
 */
HOMA_API void homa_engine_state_sizes(size_t *per_rpc, size_t *per_peer);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_ENGINE_H */
