/* SPDX-License-Identifier: MIT */
/**
 * @file internal.h
 * Private structures of the protocol engine, shared by the core's files
 * (one concern per file: rpc, peer, msgbuf, incoming, outgoing, grant,
 * cutoffs, control, timer, engine). Nothing here is part of the API.
 */
#ifndef HOMA_CORE_INTERNAL_H
#define HOMA_CORE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "homa/engine.h"
#include "homa/wire.h"
#include "list.h"

/** Bytes per message buffer chunk (messages are stored in chunks). */
#define HOMA_CHUNK_SHIFT 16
#define HOMA_CHUNK ((uint32_t)1 << HOMA_CHUNK_SHIFT)

/** Counter bits of a client RPC id (the local port is in the top 16, engine.c). */
#define HOMA_ID_COUNTER_MASK (((uint64_t)1 << 48) - 1)

/** Initial (and least) ring size of the finished-RPC memory (see done.c). */
#define HOMA_DONE_MIN 4096

/** Records of each kind a struct homa_cache keeps for reuse (cache.c). */
#define HOMA_CACHE_MAX 64

/** A free list of one kind of small record (cache.c). */
struct homa_cache {
	void *head;     /**< first kept record; each starts with the next's address */
	uint32_t count; /**< records kept */
};

/** Groups of a peer that homa_pport_near() looks at before it gives up (pport.c). */
#define HOMA_PPORT_NEAR 4

/** Watermark slots of the finished-RPC memory (see done.c). */
#define HOMA_DONE_MARKS 256

/**
 * A client fails (HOMA_ETIMEDOUT) an RPC it has not heard about for this
 * many timeouts (timeout_ticks x tick_ns) of wall time, so it never retries
 * later than that; servers remember finished RPCs one timeout longer.
 */
#define HOMA_CLIENT_RETRY_TIMEOUTS 4
/**
 * Replies per tick (tick_ns of engine time), all peers together, to
 * strangers: peers no whole message came from and to which we started no
 * RPC (homa_peer.proven). RPC_UNKNOWN, CUTOFFS and the timer's RESENDs for
 * their requests count (homa_ctl_stranger_ok()).
 */
#define HOMA_STRANGER_REPLIES 8
/** Ports per peer host remembered as timed out (see peer.c). */
#define HOMA_PEER_DEAD_PORTS 4
/** Ports per peer remembered as serving (homa_peer_port_serves()). */
#define HOMA_PEER_SERVED_PORTS 2
/**
 * Default of settings.max_peer_partial_msgs: requests one peer host may
 * have partly received at once (server RPCs in RPC_INCOMING). A packet
 * that would open one more, and does not carry its whole message, is
 * dropped (HOMA_DROP_PEER_LIMIT); the client's RESEND then draws
 * RPC_UNKNOWN and it sends the request again. Without it, forged DATA
 * from a few hosts opened a message per packet: every one was inserted in
 * the sorted grantable list (linear), probed with RESENDs and answered by
 * ICMP until it timed out (homa-flood: every honest RPC failed).
 * settings.max_partial_msgs bounds the same across all hosts.
 */
#define HOMA_PEER_PARTIAL_MSGS 64
/**
 * Default of settings.max_stranger_partial_msgs: the same for a host that
 * is still a stranger (homa_peer.proven false). Forged requests that
 * never finish live as RPCs until they time out, and the timer visits
 * each every resend_interval ticks on the thread that serves the honest
 * peers, so their number sets how long a flooded tick holds the honest
 * RPCs up (homa-flood: docs/HARDENING.md). A genuine newcomer rarely has
 * more than a few long requests under way before its first message
 * completes and proves it.
 */
#define HOMA_STRANGER_PARTIAL_MSGS 16


/** Buckets of evictable requests by log2 of bytes left (see evict.c). */
#define HOMA_EVICT_BUCKETS 32

/** Size buckets of the cutoff histogram (geometric, see cutoffs.c). */
#define HOMA_CUTOFF_BUCKETS 64

/**
 * struct homa_msg - A message's bytes, stored in HOMA_CHUNK-sized chunks
 * allocated on demand. Incoming messages are handed to the application
 * as this struct (homa_msg in engine.h) and freed on release.
 */
struct homa_msg {
	uint32_t length;
	uint32_t nchunks;
	uint8_t **chunks;     /**< nchunks pointers, allocated with the record (after it); each NULL until first written */
	uint64_t charged;     /**< bytes charged to the engine's rx or tx budget */
	struct homa_link link; /**< on engine.delivered once handed to the application */
	/**
	 * Borrowed bytes (homa_msg_build_ref()): the caller's gather list,
	 * copied after the record; NULL when the bytes are in chunks.
	 */
	const struct homa_iov *ref;
	uint32_t nref;        /**< entries in ref */
	void (*done)(void *ctx); /**< called once when a borrowed message is freed */
	void *done_ctx;
	/** Hooks of the chunks (homa_engine_set_rx_alloc()); NULL: the record's. */
	const struct homa_alloc *chunk_alloc;
	/**
	 * Received payload kept in the driver's buffers (lend.c), sorted by
	 * offset and disjoint from each other; bytes there are not in chunks.
	 */
	struct homa_frag *frags;
	uint32_t nfrags, frags_cap;
	struct homa_rx_lend lend;  /**< gives every frag's buffer back */
	/** Copies into this message left to the caller (rxcopy.c), not yet done. */
	uint32_t copying;
	bool orphan;          /**< freed while copying: rxcopy.c frees it when they are done */
	/**
	 * engine.ref_gen when a packet last borrowed a piece of its chunks
	 * (outgoing.c); freed in that generation it is retired, not freed
	 * (homa_engine_output_sent()). 0: never borrowed.
	 */
	uint64_t ref_gen;
};

/** Payload bytes [off, off+len) of a message, at ptr inside a lent buffer buf. */
struct homa_frag {
	uint32_t off;
	uint32_t len;
	const uint8_t *ptr;
	uint8_t *buf;
};

/** A hole in a partially received message: bytes [start, end) missing. */
struct homa_gap {
	uint32_t start;
	uint32_t end;
};

/** Receive state of one message (request at a server, response at a client). */
struct homa_msgin {
	struct homa_msg *msg;     /**< NULL until the first DATA or START_MSG */
	uint32_t length;
	uint32_t received;        /**< bytes received (no duplicates) */
	uint32_t recv_end;        /**< one past the highest byte received */
	uint32_t granted;         /**< sender may send below this offset */
	uint32_t ngaps;
	uint32_t gaps_cap;
	struct homa_gap *gaps;    /**< holes below recv_end, sorted */
	uint32_t settled;         /**< contiguous bytes present when msg->copying was last 0 (rxcopy.c) */
	uint32_t counted;         /**< our share of engine.total_incoming */
	bool explicit_grant;      /**< we sent at least one GRANT for it */
	bool outstanding;         /**< explicitly granted bytes not yet received */
	bool scheduled;           /**< needs grants beyond what the sender announced */
	uint64_t grant_seq;       /**< 1 + ring sequence number of our latest queued GRANT (0: none) */
	uint64_t birth;           /**< arrival of first packet (FIFO grants) */
	uint32_t fifo_end;        /**< granted offset our latest FIFO grant reached (0: none) */
	uint64_t heard_ns;        /**< latest DATA for it or GRANT from us (grant.c silence) */
	uint64_t heard_rx_ns;     /**< engine.rx_link_ns at heard_ns */
	struct homa_link out_link; /**< on engine.outstanding while outstanding */
	struct homa_link grant_link; /**< on engine.grantable, sorted by bytes left */
	bool counted_unsched;     /**< counted is in engine.unsched_incoming too */
	bool evict_tracked;       /**< on engine.evict[evict_bucket] (evict.c) */
	uint8_t evict_bucket;
	uint64_t evict_charge;    /**< our share of engine.evict_bytes[evict_bucket] */
	struct homa_link evict_link;
};

/** Send state of one message (request at a client, response at a server). */
struct homa_msgout {
	struct homa_msg *msg;     /**< NULL when no message (or freed) */
	uint32_t length;
	uint32_t next_xmit;       /**< first byte never sent */
	uint32_t granted;         /**< may send below this offset */
	uint32_t unsched;         /**< bytes sent without grants */
	uint32_t resend_start;    /**< pending retransmission [start, end) */
	uint32_t resend_end;
	uint8_t resend_priority;
	uint8_t sched_priority;   /**< from the latest GRANT */
	uint8_t data_priority;    /**< of its latest DATA packet sent (timer.c: probe()) */
	bool start_pending;       /**< a START_MSG must be sent */
	bool start_sent;          /**< START_MSG mode for this message */
	bool seal_refused;        /**< the seal hook refused its latest packet (outgoing.c) */
	bool empty_pending;       /**< an empty message's one DATA packet must be sent */
	uint32_t start_ticks;     /**< ticks since the START_MSG without a grant */
	uint64_t birth;
	struct homa_link tx_link; /**< on engine.tx_list, sorted by bytes left */
	struct homa_iov *ref;     /**< borrowed caller bytes (send_request_ref): engine-owned
				       copy of the gather list; NULL when the bytes are in msg */
	uint32_t nref;            /**< entries in ref */
};

/** RPC states. */
enum homa_rpc_state {
	RPC_OUTGOING = 1, /**< client: sending the request; server: sending the reply */
	RPC_INCOMING,     /**< client: awaiting/receiving the response; server: receiving the request */
	RPC_IN_SERVICE,   /**< server: request delivered, application working */
	RPC_DONE,         /**< server: reply fully sent, awaiting the client's ack */
};

struct homa_peer;

/** One RPC, client or server side. */
struct homa_rpc {
	uint64_t id;              /**< local wire id: even for client, client id ^ 1 for server */
	uint64_t handle;          /**< what the application sees: client = id; server = unique odd */
	struct homa_peer *peer;
	uint16_t dport;           /**< the other side's port */
	uint8_t state;
	bool incast;              /**< server: reply limited to incast_unsched_bytes */
	bool ev_reserved;         /**< owns one node of engine.spare_events for its event */
	bool announced;           /**< server: HOMA_EV_REQUEST_BEGIN was queued for it */
	bool partial;             /**< server: counted in peer.partial_in (request partly received) */
	bool retry_due;           /**< client: a tick found retry_expired() (timer.c); the next one fails it */
	uint16_t probes;          /**< RESEND/NEED_ACK probes sent since we last heard of it */
	uint16_t restarts;        /**< client: restarts after RPC_UNKNOWN (settings.max_restarts) */
	uint16_t start_resends;   /**< client: RESENDs for the response's start since the last (re)start */
	bool parked;              /**< the ticks skip it until its slot is due (scan.c) */
	union {
		uint64_t restart_ns; /**< client: engine time of its first restart (incoming.c) */
		/** server: its fingerprint in the finished-RPC memory (done.c), 0 if not made */
		uint64_t done_f;
	};
	uint32_t silent_ticks;    /**< timer ticks without hearing from the peer (while parked:
				       as of the tick that parked it, scan.c) */
	uint32_t resend_at;       /**< silent_ticks value at which the next RESEND is due */
	uint64_t heard_ns;        /**< engine time of the latest sign of life (timer.c) */
	uint64_t cookie;
	uint64_t start_ns;
	struct homa_msgout out;
	struct homa_msgin in;
	struct homa_rpc *hash_next;   /**< chain in engine.rpcs (by id, peer, port) */
	struct homa_rpc *handle_next; /**< chain in engine.handles (by handle) */
	uint32_t key;                 /**< keyed hash of (id, peer address), made once (rpc.c) */
	uint32_t scan_slot;           /**< its slot in engine.scan */
	struct homa_link all_link; /**< engine.rpcs, in timer scan order */
	struct homa_pport *pport;   /**< the group of RPCs with this peer and dport (pport.c) */
	struct homa_link port_link; /**< pport.rpcs */
};

/**
 * The RPCs with one port of one peer (pport.c): lets ICMP port
 * unreachable end them without a walk over the host's other RPCs.
 */
struct homa_pport {
	struct homa_pport *hash_next; /**< chain in engine.pports */
	struct homa_peer *peer;
	uint64_t h;                   /**< keyed hash of (peer address, port): homa_done_client() */
	uint32_t key;                 /**< its low 32 bits, the table's key */
	uint16_t port;
	struct homa_link rpcs;        /**< homa_rpc.port_link; never empty while the group lives */
	struct homa_link peer_link;   /**< peer.ports */
};

/**
 * Acks waiting to be sent to one peer (client side). Each request's
 * first DATA packet carries one and the tick sends the rest, so a list
 * longer than an ACK packet's HOMA_MAX_ACKS (the Linux module's length)
 * lets a client that finishes many RPCs at once (a received batch of
 * responses) hand their acks to the requests it sends next instead of
 * an ACK packet per five.
 */
#define HOMA_PEER_ACKS 32

/**
 * Acks a client owes one peer, allocated at the first (homa_peer_add_ack()):
 * a peer this engine never was a client of (every stranger) costs no room.
 */
struct homa_peer_acks {
	uint64_t ids[HOMA_PEER_ACKS];   /**< completed client RPC ids to ack */
	uint16_t ports[HOMA_PEER_ACKS]; /**< their server ports */
};

/** What an endpoint knows about another host. */
struct homa_peer {
	homa_addr addr;
	struct homa_peer *hash_next;
	uint32_t key;             /**< keyed hash of addr, made once (peer.c) */
	uint32_t rpcs;            /**< RPCs referencing this peer */
	uint32_t client_rpcs;     /**< our outstanding client RPCs to it (incast) */
	/** its server RPCs whose request is partly received (settings.max_peer_partial_msgs) */
	uint32_t partial_in;
	struct homa_link ports;   /**< its groups of RPCs by port (homa_pport.peer_link) */
	uint32_t cutoffs[HOMA_MAX_PRIORITIES]; /**< its unscheduled cutoffs */
	uint16_t cutoff_version;  /**< version of cutoffs (0 = defaults) */
	uint16_t cutoffs_sent_version; /**< our version last sent to it */
	uint64_t cutoffs_sent_tick;
	uint64_t resend_tick;     /**< tick of our latest RESEND to it */
	uint64_t heard_tick;      /**< tick of the latest packet from it */
	uint64_t heard_ns;        /**< engine time of the latest packet from it */
	uint64_t rx_ns;           /**< same, but 0 until a packet really came (homa_engine_peer_heard()) */
	uint64_t unknown_tick;    /**< tick of our latest RPC_UNKNOWN to it */
	uint32_t unknown_sent;    /**< RPC_UNKNOWNs sent during unknown_tick */
	bool proven;              /**< a whole message came from it, or we started an RPC to it */
	/**
	 * ports of this host that timed out: new RPCs to them fail before
	 * until, in engine time (ns): it expires even when no tick runs, as
	 * while an application keeps sending to the dead port
	 */
	struct homa_peer_port {
		uint16_t port;
		uint64_t until;       /**< dead: engine time (ns); served: tick */
	} dead[HOMA_PEER_DEAD_PORTS];
	/**
	 * ports of this host that answered one of our requests within
	 * timeout_ticks (until, a tick): they serve, so an RPC_UNKNOWN from one
	 * means a lost request, and restarts toward it are not capped
	 * (homa_peer_port_serves())
	 */
	struct homa_peer_port served[HOMA_PEER_SERVED_PORTS];
	uint64_t grant_gen;       /**< grant pass that already chose this peer */
	uint32_t grant_outstanding; /**< its messages with explicitly granted bytes in flight (grant.c) */
	uint32_t unsched_pass;    /**< unscheduled claims of its messages counted in grant pass unsched_gen */
	uint64_t unsched_gen;
	struct homa_peer_acks *acks; /**< acks owed to it: NULL until the first (client side) */
	uint16_t num_acks;
	bool ours;                /**< it sent our extension marker (HOMA_EXT_MARK) */
};

/** A queued control packet, encoded. */
struct homa_ctl {
	homa_addr dst;
	uint16_t dport;
	uint8_t priority;
	uint8_t len;
	uint8_t bytes[HOMA_ACK_LEN];
};

/** A queued event. */
struct homa_ev_node {
	struct homa_event ev;
	struct homa_link link;
};

/** A SipHash key (hash.c). */
struct homa_hash_key {
	uint64_t k0, k1;
};

/** Highest id forced out of the finished-RPC memory for a set of clients (done.c). */
struct homa_done_mark {
	uint64_t max_id;
	uint64_t t;               /**< when (0: never) */
	uint64_t max_added;       /**< highest id of these clients in the ring (or its watermark) */
	uint32_t count;           /**< entries of these clients in the ring */
};

struct homa_done_ent;

/** One slot of the timer's scan order (scan.c). */
struct homa_scan_slot {
	struct homa_rpc *rpc;     /**< NULL for a hole */
	uint64_t due;             /**< parked quiet: the first tick that visits it (else 0) */
	struct homa_peer *peer;   /**< parked behind its peer: rpc->peer (else NULL) */
	uint64_t timeout_at;      /**< parked behind its peer: first tick it may time out */
	uint64_t since;           /**< parked: the tick that parked it */
};

/**
 * The timer's scan order (scan.c): the RPCs of engine.all_rpcs, in its
 * order, with holes where RPCs left.
 */
struct homa_scan {
	struct homa_scan_slot *slot;
	uint32_t len;             /**< slots used (RPCs and holes) */
	uint32_t cap;             /**< slots allocated */
	uint32_t holes;
	bool walking;             /**< a tick walks the slots: no compaction */
	bool broken;              /**< the slots could not grow: ticks walk all_rpcs */
	uint64_t broken_count;    /**< times that happened (for tests) */
};

/** Simple chained hash table of RPCs or peers. */
struct homa_table {
	void **buckets;
	uint32_t nbuckets;        /**< power of two */
	uint32_t count;
};

/** The engine (homa_engine in engine.h). */
struct homa_engine {
	struct homa_settings s;
	struct homa_alloc alloc;
	/** Payload hooks of incoming messages (homa_engine_set_rx_alloc()), if has_rx_alloc. */
	struct homa_alloc rx_alloc;
	bool has_rx_alloc;
	struct homa_packet_hooks hooks;
	bool has_hooks;
	struct homa_ack_pool ack_pool; /**< acks owed to module hosts, shared (put NULL: none) */
	bool announce;            /**< queue HOMA_EV_REQUEST_BEGIN (homa_engine_announce_requests()) */
	homa_addr local;
	uint16_t port;
	bool server;
	bool shut;
	uint64_t next_client_id;
	uint64_t now;             /**< time of the latest call */
	uint64_t short_rx_ns;     /**< when the latest message needing no grant started (grant_short_window) */
	bool short_rx_seen;       /**< short_rx_ns is set */

	struct homa_table rpcs;      /**< by (id, peer address, peer port) */
	struct homa_table handles;   /**< by handle */
	uint64_t next_server_handle;
	struct homa_table peers;
	struct homa_peer *peer_last; /**< the peer homa_peer_find() found last, or NULL (peer.c) */
	struct homa_table pports;    /**< groups of RPCs by (peer, port) (pport.c) */
	struct homa_link all_rpcs;   /**< every RPC, timer scan order */
	struct homa_link grantable;  /**< incoming scheduled messages, fewest bytes left first */
	struct homa_link tx_list;    /**< messages with something to send, fewest bytes left first */
	struct homa_link events;
	struct homa_link delivered;  /**< messages handed out and not yet released */
	/**
	 * Chunk messages freed while a packet not yet sent borrows their
	 * bytes (homa_msg.ref_gen): freed by homa_engine_output_sent().
	 */
	struct homa_link retired;
	uint64_t ref_gen;            /**< generation of borrows; starts at 1, +1 per output_sent */
	uint32_t nevents;
	/**
	 * Event nodes reserved at RPC creation, one per RPC that has not yet
	 * reported (request, response or error), so that reporting never
	 * needs memory and an event can never be lost.
	 */
	struct homa_link spare_events;
	struct homa_cache rpc_cache;   /**< freed homa_rpc records (cache.c) */
	struct homa_cache ev_cache;    /**< freed homa_ev_node records */
	struct homa_cache pport_cache; /**< freed homa_pport records */
	uint64_t cache_reused;         /**< records the caches handed out again */

	/* control packet ring */
	struct homa_ctl *ctl;
	uint32_t ctl_cap, ctl_head, ctl_count;
	uint64_t ctl_taken;          /**< packets ever taken from the ring (its head's sequence number) */

	/* pacer */
	uint64_t link_idle_ns;
	uint64_t nic_queue_ns;       /**< backlog bound: homa_pacer_configure() */
	uint64_t pacer_wake_ns;      /**< output resumes when the backlog is down to this */
	uint64_t pacer_slack_ns;     /**< learned lateness of output calls, added to both (pacer.c) */
	uint64_t pacer_due_ns;       /**< deadline the pacer is waiting for, 0 if none */
	uint64_t pacer_fifo_credit;

	/* grants */
	uint64_t total_incoming;     /**< granted but not received, scheduled messages */
	uint64_t unsched_incoming;   /**< of which in messages never explicitly granted */
	uint32_t outstanding_msgs;   /**< messages with explicitly granted bytes in flight */
	struct homa_link outstanding; /**< those messages (msgin.out_link), oldest first */
	uint64_t rx_link_ns;         /**< link time of every packet received so far */
	uint64_t grant_gen;          /**< grant passes run (each one's generation) */
	/**
	 * input asked for a grant pass (homa_grant_defer()); it runs once,
	 * before the next output or tick (homa_grant_flush())
	 */
	bool grant_pending;
	uint64_t fifo_grant_credit;
	bool grant_module;           /**< grant as the Linux module does (grant_module.c) */
	uint64_t fifo_grant_ns;      /**< grant_module: time of the next FIFO grant */
	/**
	 * rx bytes that releases must free before a pass can grant to a message
	 * the latest pass refused for want of room (has_room()); UINT64_MAX:
	 * it refused none; 0: not known yet (grant.c, homa_grant_released())
	 */
	uint64_t grant_room_need;
	uint64_t grant_room_freed;   /**< rx bytes released since the latest pass */
	uint64_t grant_visits;       /**< grantable entries grant passes walked (their cost, for tests) */
	uint64_t unreach_visits;     /**< RPCs homa_unreach() examined (its cost, for tests) */
	uint64_t stranger_window;    /**< engine time / tick_ns of the strangers' reply count */
	uint32_t stranger_replies;   /**< replies to strangers in that window (HOMA_STRANGER_REPLIES) */
	uint64_t stranger_refused;   /**< replies to strangers left out (for tests) */
	uint32_t partial_in;         /**< server RPCs partly received, all peers (settings.max_partial_msgs) */

	/* timer */
	uint64_t next_tick_ns;
	uint64_t tick;
	struct homa_scan scan;       /**< the RPCs in scan order, parked ones skipped (scan.c) */
	uint64_t timer_visits;       /**< RPCs the ticks examined (their cost, for tests) */

	/* cutoffs (as a receiver) */
	uint32_t cutoffs[HOMA_MAX_PRIORITIES];
	uint16_t cutoff_version;
	uint64_t size_hist[HOMA_CUTOFF_BUCKETS]; /**< unscheduled bytes by size bucket */
	uint64_t size_hist_msgs;      /**< messages recorded since last recompute */

	/* finished server RPCs (at-most-once, done.c) */
	struct homa_done_ent *done;  /**< ring of done_cap entries */
	uint64_t *done_index;        /**< 2 x done_cap fingerprint slots */
	uint32_t done_cap;
	uint32_t done_head;          /**< next ring slot to write */
	uint32_t done_count;         /**< entries in the ring */
	uint32_t done_unindexed;     /**< newest entries not yet in the index (added on a slow lookup) */
	uint64_t done_probes;        /**< index slots read or written (for tests) */
	uint64_t done_forced_out;    /**< entries the cap forced out inside the horizon */
	struct homa_done_mark done_marks[HOMA_DONE_MARKS];

	struct homa_hash_key hash_key; /**< keys every table hash (hash.c) */

	/* memory */
	uint64_t rx_buffered;
	uint64_t tx_buffered;
	struct homa_link evict[HOMA_EVICT_BUCKETS]; /**< incomplete requests by log2(bytes left) */
	uint64_t evict_bytes[HOMA_EVICT_BUCKETS];   /**< rx bytes each bucket's requests hold */
	bool evict_sweep;            /**< this tick frees stale requests (memory pressure at its start) */

	struct homa_stats st;

	/* the packet homa_engine_input_lend() is handling (lend.c) */
	const struct homa_rx_lend *lend;  /**< NULL: not lending */
	uint8_t *lend_buf;
	size_t lend_len;
	bool lend_kept;                   /**< the engine took lend_buf */

	/* payload copies left to the caller (homa_engine_defer_copies(), rxcopy.c) */
	struct homa_rx_copy *copies;      /**< the caller's list; NULL: copy at once */
	uint32_t copies_cap;
	uint32_t *ncopies;                /**< entries used in copies */

	/* debug invariant checker (check.c, HOMA_INVARIANTS builds) */
	uint64_t check_budget;       /**< largest hard bound of the grant budget the settings allowed */
	uint64_t check_calls;        /**< entry points seen (sampling in large engines) */
	uint64_t check_failures;     /**< broken invariants found */
	void (*check_fail)(void *ctx, const char *why); /**< NULL: abort() */
	void *check_ctx;
};

/* mem.c */
void *homa_hook_alloc(const struct homa_alloc *a, size_t size);
void homa_hook_free(const struct homa_alloc *a, void *p, size_t size);
void *homa_mem_alloc(homa_engine *e, size_t size);
/* cache.c */
void *homa_cache_get(homa_engine *e, struct homa_cache *c, size_t size);
void homa_cache_put(homa_engine *e, struct homa_cache *c, void *p, size_t size);
void homa_cache_drain(homa_engine *e, struct homa_cache *c, size_t size);
/* mem.c */
void *homa_mem_zalloc(homa_engine *e, size_t size);
void homa_mem_free(homa_engine *e, void *p, size_t size);
struct homa_msg *homa_msg_new(homa_engine *e, uint32_t length);
int homa_msg_fill(homa_engine *e, struct homa_msg *m, const struct homa_iov *iov, int iovcnt);
int homa_msg_write(homa_engine *e, struct homa_msg *m, uint32_t off, const uint8_t *src, uint32_t len);
void homa_msg_free(homa_engine *e, struct homa_msg *m);

/* rxcopy.c */
int homa_rxcopy_add(homa_engine *e, struct homa_msg *m, uint8_t *dst, const uint8_t *src,
		    uint32_t len);
uint32_t homa_rxcopy_settled(const struct homa_msgin *in);

/* lend.c */
int homa_lend_take(homa_engine *e, struct homa_msg *m, uint32_t off, const uint8_t *data,
		   uint32_t len);
size_t homa_lend_segment(const struct homa_msg *m, size_t offset, const uint8_t **ptr,
			 size_t *limit);
void homa_lend_free(const struct homa_alloc *a, struct homa_msg *m);

/* table.c */
int homa_table_init(homa_engine *e, struct homa_table *t, uint32_t nbuckets);
void homa_table_destroy(homa_engine *e, struct homa_table *t);
void homa_table_maybe_grow(homa_engine *e, struct homa_table *t, size_t next_off,
			   uint32_t (*hash)(const homa_engine *e, const void *elem));

/* hash.c */
/**
 * SipHash computations made on this thread (homa_siphash()), so that tests
 * can count the hashes an RPC costs.
 */
extern __thread uint64_t homa_hash_calls;
uint64_t homa_siphash(const struct homa_hash_key *key, const uint64_t *m, int n);
uint32_t homa_hash_addr(const homa_engine *e, const homa_addr *a);
uint64_t homa_hash_rpc(const homa_engine *e, uint64_t id, const homa_addr *a, uint16_t port);
void homa_hash_default_key(homa_engine *e, uint64_t now);

/* peer.c */
struct homa_peer *homa_peer_find(homa_engine *e, const homa_addr *addr);
/** homa_pport_find() - The group of RPCs with @peer and @port, or NULL. */
struct homa_pport *homa_pport_find(homa_engine *e, const struct homa_peer *peer, uint16_t port);
/**
 * homa_pport_near() - The group of @peer:@port if it is among the first
 * HOMA_PPORT_NEAR groups of @peer (no hash made), else NULL (it may still
 * exist: homa_pport_find() hashes).
 */
struct homa_pport *homa_pport_near(const struct homa_peer *peer, uint16_t port);
/**
 * homa_pport_add() - Put new @rpc in the group of its peer and dport,
 * creating the group. @h: the group's keyed hash (homa_done_client() of
 * the peer and dport) if the caller made it, else NULL (hashed here when
 * the group is not near). Return: 0 or HOMA_ENOMEM (@rpc is in no group).
 */
int homa_pport_add(homa_engine *e, struct homa_rpc *rpc, const uint64_t *h);
/** homa_pport_del() - Take @rpc out of its group, freeing the group when empty. */
void homa_pport_del(homa_engine *e, struct homa_rpc *rpc);
struct homa_peer *homa_peer_get(homa_engine *e, const homa_addr *addr);
void homa_peer_put(homa_engine *e, struct homa_peer *p);
void homa_peer_add_ack(homa_engine *e, struct homa_peer *p, uint64_t client_id, uint16_t server_port);
bool homa_peer_owes_ack(const struct homa_peer *p, uint64_t client_id);
bool homa_peer_take_ack(const homa_engine *e, struct homa_peer *p, uint16_t server_port,
			struct homa_ack *out);
void homa_peers_free_all(homa_engine *e);
void homa_peer_flush_acks(homa_engine *e, struct homa_peer *p);
void homa_peers_tick(homa_engine *e);
bool homa_peer_port_dead(const homa_engine *e, const struct homa_peer *p, uint16_t port);
bool homa_peer_mark_dead(homa_engine *e, struct homa_peer *p, uint16_t port);
void homa_peer_port_alive(struct homa_peer *p, uint16_t port);
void homa_peer_mark_served(homa_engine *e, struct homa_peer *p, uint16_t port);
bool homa_peer_port_serves(const homa_engine *e, const struct homa_peer *p, uint16_t port);

/* rpc.c */
struct homa_rpc *homa_rpc_find(homa_engine *e, uint64_t id, const homa_addr *addr, uint16_t port);
struct homa_rpc *homa_rpc_find_host(homa_engine *e, uint64_t id, const homa_addr *addr);
struct homa_rpc *homa_rpc_find_handle(homa_engine *e, uint64_t handle);
struct homa_rpc *homa_rpc_new(homa_engine *e, uint64_t id, struct homa_peer *peer, uint16_t dport);
struct homa_rpc *homa_rpc_new_key(homa_engine *e, uint32_t key, uint64_t id,
				  struct homa_peer *peer, uint16_t dport, const uint64_t *group_h);
uint32_t homa_rpc_key(const homa_engine *e, uint64_t id, const homa_addr *addr);
struct homa_rpc *homa_rpc_find_host_key(homa_engine *e, uint32_t key, uint64_t id,
					const homa_addr *addr);
void homa_rpc_free(homa_engine *e, struct homa_rpc *rpc);
void homa_rpc_fail(homa_engine *e, struct homa_rpc *rpc, int error);
int homa_unreach(homa_engine *e, const homa_addr *dst, int kind, const uint8_t *q, size_t len);
int homa_event_push(homa_engine *e, const struct homa_event *ev);
int homa_rpc_event(homa_engine *e, struct homa_rpc *rpc, const struct homa_event *ev);

/* done.c */
int homa_done_init(homa_engine *e);
void homa_done_free(homa_engine *e);
void homa_done_add(homa_engine *e, const struct homa_rpc *rpc);
bool homa_done_seen(homa_engine *e, uint64_t id, const homa_addr *addr, uint16_t port);
bool homa_done_seen_h(homa_engine *e, uint64_t h, uint64_t id);
uint64_t homa_done_client(const homa_engine *e, const homa_addr *addr, uint16_t port);
uint64_t homa_done_fp(uint64_t h, uint64_t id);
uint64_t homa_done_fingerprint(const homa_engine *e, uint64_t id, const homa_addr *addr,
			       uint16_t port);
uint64_t homa_done_horizon_ns(const homa_engine *e);
uint32_t homa_done_count(const homa_engine *e);
uint32_t homa_done_capacity(const homa_engine *e);
uint64_t homa_done_bytes(const homa_engine *e);

/* msgin.c */
int homa_msgin_init(homa_engine *e, struct homa_rpc *rpc, uint32_t length, uint32_t unsched);
int homa_msgin_add(homa_engine *e, struct homa_rpc *rpc, uint32_t off, const uint8_t *data, uint32_t len);
void homa_msgin_destroy(homa_engine *e, struct homa_msgin *in);
bool homa_msgin_first_gap(const struct homa_msgin *in, uint32_t *start, uint32_t *end);

/* outgoing.c */
int homa_msgout_init(homa_engine *e, struct homa_rpc *rpc, const struct homa_iov *iov, int iovcnt,
		     uint32_t unsched, bool borrow);
void homa_msgout_attach(homa_engine *e, struct homa_rpc *rpc, struct homa_msg *m,
			uint32_t unsched);
void homa_msgout_destroy(homa_engine *e, struct homa_msgout *out);
void homa_msgout_restart(homa_engine *e, struct homa_rpc *rpc);
void homa_tx_update(homa_engine *e, struct homa_rpc *rpc);
int homa_output_data(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap, struct homa_tx *tx,
		     struct homa_iov *ref, int nref);
uint32_t homa_data_payload(const homa_engine *e);
uint32_t homa_whole_packets(const homa_engine *e, uint32_t bytes);
uint32_t homa_unsched_window(const homa_engine *e);
uint8_t homa_unsched_priority(const homa_engine *e, const struct homa_peer *p, uint32_t length);
void homa_pacer_account(homa_engine *e, uint64_t now, size_t bytes);
void homa_pacer_configure(homa_engine *e);
uint64_t homa_pacer_bound(const homa_engine *e);
uint64_t homa_pacer_deadline(const homa_engine *e);
void homa_pacer_note_call(homa_engine *e, uint64_t now);
void homa_pacer_note_held(homa_engine *e);

/* grant.c */
void homa_grant_add(homa_engine *e, struct homa_rpc *rpc);
void homa_grant_remove(homa_engine *e, struct homa_rpc *rpc);
void homa_grant_received(homa_engine *e, struct homa_rpc *rpc, uint32_t newbytes);
void homa_grant_check(homa_engine *e);
void homa_grant_defer(homa_engine *e);
void homa_grant_flush(homa_engine *e);
void homa_grant_released(homa_engine *e, uint64_t bytes);
uint32_t homa_grant_step(const homa_engine *e);
uint32_t homa_grant_window(const homa_engine *e);
void homa_grant_recount(homa_engine *e, struct homa_msgin *in);
uint8_t homa_grant_rank_priority(const homa_engine *e, uint32_t rank, uint32_t active);

/* grant_module.c */
/**
 * homa_grant_module_set() - Grant as the Linux kernel module does (@on)
 * or with our scheduler (grant.c): for engines that model a module host.
 */
void homa_grant_module_set(homa_engine *e, bool on);
/** homa_grant_check_module() - homa_grant_check() under the module's algorithm. */
void homa_grant_check_module(homa_engine *e);

/** Bytes of Ethernet + IP + UDP framing the pacer adds per packet. */
#define HOMA_FRAMING_BYTES 66

/** homa_wire_ns() - Link time of a packet of @bytes (plus framing) at link_mbps. */
static inline uint64_t homa_wire_ns(const homa_engine *e, uint64_t bytes)
{
	return ((bytes + HOMA_FRAMING_BYTES) * 8000) / e->s.link_mbps;
}

/* evict.c */
void homa_evict_init(homa_engine *e);
void homa_evict_track(homa_engine *e, struct homa_rpc *rpc);
void homa_evict_untrack(homa_engine *e, struct homa_rpc *rpc);
bool homa_evict_room(homa_engine *e, const struct homa_rpc *self, uint32_t left, uint64_t need);
uint64_t homa_evict_headroom(const homa_engine *e, uint32_t left);
bool homa_evict_pressure(const homa_engine *e);
bool homa_evict_stale(homa_engine *e, struct homa_rpc *rpc);

/* cutoffs.c */
void homa_cutoffs_init(homa_engine *e);
void homa_cutoffs_record(homa_engine *e, uint32_t length);
void homa_cutoffs_maybe_update(homa_engine *e);
void homa_cutoffs_check_peer(homa_engine *e, struct homa_peer *p, uint16_t dport, uint16_t version,
			     uint64_t id);

/* control.c */
uint64_t homa_ctl_send(homa_engine *e, struct homa_pkt *pkt, const homa_addr *dst, uint8_t priority);
void homa_ctl_simple(homa_engine *e, struct homa_rpc *rpc, uint8_t type);
void homa_ctl_grant(homa_engine *e, struct homa_rpc *rpc, uint32_t offset, uint8_t priority);
void homa_ctl_resend(homa_engine *e, struct homa_rpc *rpc, uint32_t offset, uint32_t length);
/** homa_ctl_resend_at() - homa_ctl_resend(), the packet itself sent at @prio. */
void homa_ctl_resend_at(homa_engine *e, struct homa_rpc *rpc, uint32_t offset, uint32_t length,
			uint8_t prio);
void homa_ctl_reply_unknown(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt, struct homa_peer *p);
bool homa_ctl_stranger_ok(homa_engine *e, const struct homa_peer *p);
int homa_ctl_output(homa_engine *e, uint64_t now, uint8_t *buf, size_t cap, struct homa_tx *tx);
void homa_ctl_free(homa_engine *e);
int homa_seal(homa_engine *e, const homa_addr *dst, uint8_t *buf, size_t hdr, size_t len,
	      size_t cap);
void homa_count_sent(homa_engine *e, uint8_t type, uint8_t priority, size_t len);

/* incoming.c */
int homa_incoming(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt);
int homa_incoming_foreign(homa_engine *e, const homa_addr *src, const struct homa_pkt *pkt);
/**
 * homa_announce_arriving() - Announcements were just turned on: queue
 * HOMA_EV_REQUEST_BEGIN for every server RPC whose request is partly here
 * and not yet announced (a request that started before is announced now,
 * not when its next packet comes, which may be never).
 */
void homa_announce_arriving(homa_engine *e);

/** homa_scan_unpark() - Let every tick visit @rpc again (scan.c). */
static inline void homa_scan_unpark(homa_engine *e, struct homa_rpc *rpc)
{
	struct homa_scan_slot *sl;

	rpc->parked = false;
	if (e->scan.broken)
		return;
	sl = &e->scan.slot[rpc->scan_slot];
	sl->due = 0;
	sl->peer = NULL;
}

/**
 * homa_rpc_heard() - The peer showed life for @rpc now: restart its
 * silence count; a parked RPC is visited by the next tick again (scan.c).
 */
static inline void homa_rpc_heard(homa_engine *e, struct homa_rpc *rpc)
{
	rpc->heard_ns = e->now;
	rpc->silent_ticks = 0;
	rpc->resend_at = 0;
	rpc->probes = 0;
	if (rpc->parked)
		homa_scan_unpark(e, rpc);
}

/** HOMA_DROP() - Encode a drop reason as a handler's negative return. */
#define HOMA_DROP(reason) (-(int)(reason) - 1)

/* check.c */
/**
 * homa_check_engine() - Recompute the engine's accounting from its records
 * and compare (the invariants are listed in check.c).
 * Return: NULL if all hold, else a static description of the first broken one.
 */
const char *homa_check_engine(const homa_engine *e);
/** homa_check_budget_note() - Settings changed: widen the grant budget bound to them. */
void homa_check_budget_note(homa_engine *e);
/**
 * homa_check_run() - Run homa_check_engine() (sampled in large engines);
 * on a broken invariant count it and call engine.check_fail, or abort().
 */
void homa_check_run(homa_engine *e);

/**
 * homa_check() - Called by every state-changing entry point before it
 * returns: homa_check_run() in HOMA_INVARIANTS builds, nothing otherwise.
 */
static inline void homa_check(homa_engine *e)
{
#ifdef HOMA_INVARIANTS
	homa_check_run(e);
#else
	(void)e;
#endif
}

/* timer.c */
void homa_timer_tick(homa_engine *e);
void homa_timer_arm(homa_engine *e);

/* scan.c */
/** homa_scan_add() - Append new RPC @rpc to the scan order (all_rpcs and its slots). */
void homa_scan_add(homa_engine *e, struct homa_rpc *rpc);
/** homa_scan_del() - Remove @rpc (being freed) from the scan order. */
void homa_scan_del(homa_engine *e, struct homa_rpc *rpc);
/** homa_scan_rotate() - Move @rpc to the end of the scan order (ticks visit it last). */
void homa_scan_rotate(homa_engine *e, struct homa_rpc *rpc);
/**
 * homa_scan_park() - Skip @rpc's slot until tick @due (> the current
 * tick); its silence then counts as if every tick between had visited it.
 * Nothing happens while the scan is broken.
 */
void homa_scan_park(homa_engine *e, struct homa_rpc *rpc, uint64_t due);
/**
 * homa_scan_park_behind() - @rpc's RESEND is due but its peer's RESEND of
 * this tick went to another RPC: skip its slot on every tick that finds
 * the same, while it cannot time out (its probes must not be
 * unanswered(): that is for the caller to check).
 */
void homa_scan_park_behind(homa_engine *e, struct homa_rpc *rpc);
/** homa_scan_wake() - Unpark @rpc for a visit now, adding the silent ticks it skipped. */
void homa_scan_wake(homa_engine *e, struct homa_rpc *rpc);
/**
 * homa_scan_walk() - One tick's walk: @visit (which may free, rotate or
 * park the RPC it gets) every RPC due at e->tick, or every RPC if @all,
 * in scan order; RPCs rotated meanwhile wait for the next tick.
 */
void homa_scan_walk(homa_engine *e, bool all, void (*visit)(homa_engine *, struct homa_rpc *));
/** homa_scan_free() - Free the slots (engine teardown, after every RPC). */
void homa_scan_free(homa_engine *e);

/** homa_hist_add() - Count @v in a log2 histogram. */
static inline void homa_hist_add(uint64_t *hist, uint64_t v)
{
	int b = 0;

	while (v > 1 && b < HOMA_HIST_BUCKETS - 1) {
		v >>= 1;
		b++;
	}
	hist[b]++;
}

/**
 * homa_peer_ext() - True if our extensions (START_MSG, the incast bit,
 * messages above HOMA_MODULE_MAX_MESSAGE) may be sent to @p: always unless
 * settings.compat is HOMA_COMPAT_MODULE, then only once @p showed our marker.
 */
static inline bool homa_peer_ext(const homa_engine *e, const struct homa_peer *p)
{
	return e->s.compat != HOMA_COMPAT_MODULE || p->ours;
}

/** homa_is_client_id() - True if @id (local) names one of our client RPCs. */
static inline bool homa_is_client_id(uint64_t id)
{
	return (id & 1) == 0;
}

#endif /* HOMA_CORE_INTERNAL_H */
