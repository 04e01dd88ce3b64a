/* SPDX-License-Identifier: MIT */
/**
 * @file rt.h
 * Internals of the runtime behind include/homa/homa.h.
 *
 * One struct homa_rt per socket. Its mutex `lock` guards the engine, the
 * queue of delivered messages, the list of waiting threads and the set of
 * outstanding client ids. Output is drained from the engine under `lock`
 * into the transmit batch, which `tx_lock` guards, and sent after `lock`
 * is dropped (lock order: tx_lock, then lock). In threaded mode one I/O
 * thread receives packets and runs timers; in polled mode an application
 * thread takes the "poller" role instead.
 */
#ifndef HOMA_RT_H
#define HOMA_RT_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "driver.h"
#include "observe.h"
#include "pool.h"
#include "homa/homa.h"

struct rt_zc;

/** A delivered engine event waiting for homa_recv(). */
struct rt_item {
	struct rt_item *next;
	struct homa_event ev;
	bool tcp;               /**< carried by TCP (src/transport) */
};

/**
 * Levels of the queue of delivered messages nobody waited for (queue.c):
 * one per priority level the socket's unscheduled cutoffs give messages
 * of at most its unscheduled bytes (homa_engine_rx_priority(): level 0 the
 * highest priority, with events without a message), then one for longer
 * messages.
 */
#define RT_LEVELS (HOMA_MAX_PRIORITIES + 1)

/** Bit of a held message's token: the message came over TCP (homa_message_transport()). */
#define RT_TOKEN_TCP (1ull << 63)

struct homa_tp;

/** An application thread blocked in homa_recv(). */
struct rt_waiter {
	struct rt_waiter *next;
	int flags;              /**< HOMA_RECV_* accepted */
	uint64_t id;            /**< 0 = any */
	_Atomic uint32_t word;  /**< futex word: 1 = look again */
	bool polling;           /**< this thread is the poller: needs no wake-up */
	bool tp_reader;         /**< it reads TCP connections (homa_tp_drive()): wake it there */
	struct rt_item *item;   /**< set when a message is handed over */
	bool data;              /**< waits for bytes of RPC id past `want` (partial.c); flags 0 */
	bool ready;             /**< data waiter: bytes came, or the RPC ended: look again */
	size_t want;            /**< data waiter: the offset it reads from */
	bool fresh;             /**< its deadline was just computed from the clock:
				     the first pass waits (or polls once) without
				     reading the clock again */
};

/** Open-addressing set of 64-bit keys, each with a value (idset.c). */
struct rt_idset {
	uint64_t *slots;        /**< 0 = empty, UINT64_MAX = deleted */
	uint64_t *vals;         /**< value of the key in the same slot */
	size_t cap, used, tomb;
};

/** The runtime state of one socket. */
/** Largest batch homa_open() accepts (packets per system call). */
#define HOMA_RT_MAX_BATCH 1024

/**
 * Entries of the receive copy list (homa_rt.rx_copies) kept free before
 * each packet: with fewer left the batch's copies are done first (io.c
 * copy_midway()). Only a packet filling more holes than this finds the
 * list full; the engine drops the pieces without room (counted, resent).
 */
#define RT_RX_COPIES_ROOM 16

/** Futex wake-ups deferred until rt->lock is released. */
#define RT_MAX_DEFERRED_WAKES 16

struct homa_rt {
	pthread_mutex_t lock;
	uint32_t reg_slot;          /**< the handle's registry slot (registry.c) */
	_Atomic uint32_t *wake[RT_MAX_DEFERRED_WAKES]; /**< under lock */
	int nwake;
	homa_engine *engine;
	struct rt_pool pool;        /**< chunk cache the engine and senders allocate from */
	struct homa_alloc chunk_alloc; /**< hooks onto pool (engine and sent messages) */
	struct homa_driver *drv;
	int mode;
	bool server;
	_Atomic bool closing;       /**< set (under lock) by homa_close() */
	int64_t send_timeout_ns;
	_Atomic uint64_t max_message; /**< settings.max_message, read without lock */

	/* delivered messages and waiters (under lock) */
	struct rt_item *head[RT_LEVELS], *tail[RT_LEVELS]; /**< queued by level, short first (queue.c) */
	size_t nready;
	struct rt_waiter *waiters;
	struct rt_idset ids;
	struct rt_idset held;       /**< messages the application holds: token -> homa_msg * */
	bool announce;              /**< the engine announces requests as they start (partial.c) */
	struct rt_item *bhead, *btail; /**< HOMA_EV_REQUEST_BEGIN items not yet taken (partial.c) */
	size_t nbegin;
	struct rt_idset reading;    /**< requests read as they arrive: id -> their complete item, 0 before */
	int data_waiters;           /**< waiters with data set */
	uint64_t next_token;        /**< last token given to a held message */
	pthread_cond_t space_cond;  /**< senders waiting for buffer space */
	int space_waiters;
	bool poller_active;         /**< polled mode: a thread drives I/O */
	bool standby_active;        /**< polled mode: that thread is the standby (standby.c) */
	bool poll_input;            /**< the poller's last homa_rt_poll_step() read packets or TCP */
	uint64_t app_poll_ns;       /**< polled mode: last time an application thread drove I/O */
	uint64_t standby_ns;        /**< absence after which the standby (threaded: I/O) thread steps in */
	uint64_t spin_ns;           /**< homa_open_opts.spin_us in ns: an application poller's looks (spin.c) */
	/**
	 * Set (under lock, by a thread about to take the poller role) when a
	 * wait begins: the poller's next wait opens a window of looks of
	 * spin_ns from its clock reading (spin.c). Poller's own after that.
	 */
	bool spin_arm;
	uint64_t spin_until;        /**< end of the poller's window of looks (poller's own; spin.c) */
	uint64_t spin_quiet_until;  /**< no window of looks opens before this: the CPU was crowded (spin.c) */
	unsigned spin_crowds;       /**< windows in a row a crowded yield ended (spin.c) */
	pthread_cond_t standby_cond; /**< the standby or I/O thread naps here while applications drive */
	pthread_cond_t role_cond;   /**< polled mode: homa_poll() waits here for the poller role */
	int role_waiters;           /**< threads waiting on role_cond */
	int ready_fd;               /**< eventfd: readable while nready > 0, once exported */
	bool ready_exported;        /**< homa_fd() handed out ready_fd or the epoll set */

	/* transmit (under tx_lock) */
	pthread_mutex_t tx_lock;
	atomic_int tx_pending;
	uint32_t batch;
	size_t pkt_cap;
	uint8_t *tx_bufs;
	uint8_t **tx_lent;          /**< batch: buffers the driver lent for drain() (tx.c) */
	struct homa_io_tx *tx_pkts;
	/** batch: the second piece of a payload the engine lent in two (encrypted sockets, tx.c) */
	struct homa_iov *tx_ext2;
	uint32_t tx_held_first;     /**< tx_pkts[first .. first + held) wait for room in */
	uint32_t tx_held;           /**< the kernel's send buffer (tx.c) */
	_Atomic bool tx_blocked;    /**< tx_held > 0: the waiter also waits for POLLOUT */
	_Atomic bool tx_corked;     /**< a HOMA_SEND_MORE send left its packets in the engine (tx.c) */
	_Atomic uint64_t tx_deferred; /**< packets ever held back that way */

	/* receive (the I/O thread or poller) */
	uint32_t *rx_order;         /**< drv->max_rx entries: a batch's processing order (io.c) */
	struct homa_rx_copy *rx_copies; /**< a batch's payload copies, done outside rt->lock (io.c) */
	uint32_t rx_copies_cap;
	uint32_t rx_ncopies;
	uint64_t rx_midway;         /**< lists copied mid-batch (io.c copy_midway(); under lock): a test's measure */
	/**
	 * Packets of a received batch not yet opened nor handed to the
	 * engine: an encrypted socket's poller that was handed its message
	 * mid-batch leaves the rest here (in the driver's buffers, valid
	 * until its next recv()) for the next homa_rt_input(), which takes
	 * them before receiving more. Only the thread in the poller role
	 * touches them.
	 */
	struct homa_io_rx *rx_rest;
	int rx_rest_n;
	/**
	 * The rest came from a batch the driver marked rx_metered
	 * (strangers' packets under their budget): whoever takes it
	 * reports its own time on it with rx_spent() (io.c).
	 */
	bool rx_rest_metered;

	/* I/O thread / poller */
	pthread_t thread;
	bool thread_started;
	int kick_fd;                /**< eventfd that interrupts a wait */
	int wait_tfd;               /**< timerfd ending the I/O wait (owned by the waiter) */
	uint64_t wait_armed;        /**< absolute time wait_tfd is armed for (UINT64_MAX: off) */
	_Atomic uint64_t wake_at;   /**< when the waiting I/O thread wakes */
	int poll_epfd;              /**< polled mode homa_fd(): epoll set, or -1 */
	int poll_tp_fd;             /**< the application poller also watches the TCP
				         connections (the transport's rx_epfd; set by
				         homa_rt_wait_item() around its turn), or -1 */
	int timer_fd;               /**< polled mode: engine deadline, or -1 (under lock) */
	/** timer_fd exists (set once by homa_fd(), after it): read without lock */
	_Atomic bool timer_on;
	uint64_t timer_armed;

	/* capture and metrics (observe.c) */
	struct rt_obs obs;

	/* transport TCP or AUTO (src/transport/tp.h); NULL: Homa only */
	struct homa_tp *tp;

	/* encryption (encrypt.c); NULL: clear text */
	struct rt_enc *enc;

	/* counters not kept by the driver */
	_Atomic uint64_t wakeups, send_waits;
	_Atomic uint64_t seal_yields;  /**< homa_rt_enc_yield()'s yields (homa_io_stats.tx_seal_yields) */
	_Atomic uint64_t built_bytes; /**< payload copied into messages by sends (send.c) */
	struct rt_zc *zc_done;      /**< zero-copy sends released, to notify after unlock (zc.c; under lock) */
	bool tx_refs;               /**< the transmit batch points into borrowed buffers: zc_done
				         waits until it is sent (tx.c; under lock) */
	struct rt_item *item_cache; /**< freed items kept for reuse (queue.c; under lock) */
	uint32_t nitem_cache;
};

/* lock.c */
/** homa_rt_lock() - Take rt->lock (an adaptive mutex: spins briefly). */
void homa_rt_lock(struct homa_rt *rt);
/**
 * homa_rt_unlock() - Release rt->lock, then wake the threads that were
 * handed something while it was held (so they do not wake into a held
 * lock).
 */
void homa_rt_unlock(struct homa_rt *rt);
/**
 * homa_rt_wake_waiter() - Under rt->lock: mark @w to look again and
 * schedule its wake-up for homa_rt_unlock().
 */
void homa_rt_wake_waiter(struct homa_rt *rt, struct rt_waiter *w);
/**
 * homa_rt_futex_wait() - Sleep while *@word == 0, until a wake-up or the
 * absolute time @until (UINT64_MAX: no limit).
 */
void homa_rt_futex_wait(_Atomic uint32_t *word, uint64_t until);
/**
 * homa_rt_poll_self - The waiter whose thread is running as the poller
 * (homa_rt_wait_item()), or NULL: a delivery to it from its own thread
 * needs no wake-up, one from another thread kicks its wait.
 */
extern __thread struct rt_waiter *homa_rt_poll_self;
/**
 * homa_rt_wake_now() - Under rt->lock: issue the deferred wake-ups now
 * (before releasing the lock by other means, e.g. a condition wait).
 */
void homa_rt_wake_now(struct homa_rt *rt);
/** Times this thread took rt->lock (homa_rt_lock()): a test's measure of a path's cost. */
extern __thread uint64_t homa_rt_lock_takes;
/** homa_rt_lock_init() - Initialise rt->lock as an adaptive mutex. */
void homa_rt_lock_init(struct homa_rt *rt);

/* acks.c */
/**
 * homa_rt_ack_pool_attach() - Make new engine @e share the acks it owes
 * Linux module hosts with every other socket of the process (one list
 * per peer host, as the module keeps them: homa_engine_set_ack_pool()).
 */
void homa_rt_ack_pool_attach(homa_engine *e);

/* clock.c */
/**
 * homa_rt_key_engine() - Give new engine @e a random hash key from
 * getrandom() (key.c). Return: 0, or HOMA_EIO if no randomness is available.
 */
int homa_rt_key_engine(homa_engine *e);

/** homa_rt_now() - CLOCK_MONOTONIC in nanoseconds. */
uint64_t homa_rt_now(void);
/** Clock readings (homa_rt_now()) this thread took: a test's measure of a path's cost. */
extern __thread uint64_t homa_rt_clock_reads;
/** homa_rt_deadline() - Absolute time @timeout_ns from now (-1: UINT64_MAX). */
uint64_t homa_rt_deadline(int64_t timeout_ns);
/**
 * homa_rt_deadline_at() - Absolute time @timeout_ns after @now, a clock
 * reading the caller already has (-1: UINT64_MAX).
 */
uint64_t homa_rt_deadline_at(uint64_t now, int64_t timeout_ns);
/** homa_rt_timespec() - CLOCK_MONOTONIC timespec for absolute @ns. */
struct timespec homa_rt_timespec(uint64_t ns);

/* registry.c */
/** homa_rt_register() - Give @rt a handle. Return: 0 or HOMA_ENOMEM. */
int homa_rt_register(struct homa_rt *rt, homa_socket **handle);
/**
 * homa_rt_get() - Take a reference on a live socket, or NULL. Lock-free:
 * it touches only the handle's own slot.
 */
struct homa_rt *homa_rt_get(homa_socket *handle);
/** homa_rt_put() - Drop a reference taken by homa_rt_get(). */
void homa_rt_put(struct homa_rt *rt);
/**
 * homa_rt_unregister() - Make the handle dead (later homa_rt_get()
 * fails). Return: the socket, or NULL if the handle was already dead.
 */
struct homa_rt *homa_rt_unregister(homa_socket *handle);
/** homa_rt_wait_unused() - Wait until no reference to @rt is held. */
void homa_rt_wait_unused(struct homa_rt *rt);

/* linger.c */
/**
 * homa_rt_linger_close() - Close @fd (an exported descriptor of a closed
 * socket, readable) about a second from now instead of at once, so that
 * a loop waiting on it wakes first. Also closes those whose time came.
 */
void homa_rt_linger_close(int fd);
/** homa_rt_linger_reap() - Close the lingering descriptors whose time came. */
void homa_rt_linger_reap(void);

/* idset.c */
/** homa_rt_idset_add() - Add @id (value 0). Return: 0, HOMA_EINVAL or HOMA_ENOMEM. */
int homa_rt_idset_add(struct rt_idset *s, uint64_t id);
/** homa_rt_idset_put() - Add @id with value @val (or set its value). Return: as add. */
int homa_rt_idset_put(struct rt_idset *s, uint64_t id, uint64_t val);
/** homa_rt_idset_get() - If @id is present, set *@val to its value. Return: present. */
bool homa_rt_idset_get(const struct rt_idset *s, uint64_t id, uint64_t *val);
/** homa_rt_idset_has() - True if @id is present. */
bool homa_rt_idset_has(const struct rt_idset *s, uint64_t id);
/** homa_rt_idset_del() - Remove @id if present. */
void homa_rt_idset_del(struct rt_idset *s, uint64_t id);
/** homa_rt_idset_foreach() - Call @fn for every id in the set, with its value. */
void homa_rt_idset_foreach(const struct rt_idset *s,
			   void (*fn)(uint64_t id, uint64_t val, void *ctx), void *ctx);
/** homa_rt_idset_free() - Free the set's memory. */
void homa_rt_idset_free(struct rt_idset *s);

/* queue.c (all under rt->lock) */
/**
 * homa_rt_export_ready() - homa_fd() is handing out ready_fd (or the
 * epoll set holding it): from now on keep it readable while messages are
 * queued, starting with those queued already. Called with rt->lock held.
 */
void homa_rt_export_ready(struct homa_rt *rt);

/**
 * homa_rt_item_get() - A zeroed item from the socket's cache of freed
 * items, or a new one (malloc; counted in homa_rt_item_mallocs); NULL if
 * memory is out. The caller owns it.
 */
struct rt_item *homa_rt_item_get(struct homa_rt *rt);
/**
 * homa_rt_item_put() - Done with @item (its message already released or
 * handed on): keep it for homa_rt_item_get(), or free it beyond the
 * cache's bound. NULL is ignored.
 */
void homa_rt_item_put(struct homa_rt *rt, struct rt_item *item);
/** homa_rt_item_cache_free() - Free the cached items (closing; lock not needed). */
void homa_rt_item_cache_free(struct homa_rt *rt);
/** Items this thread allocated with malloc (homa_rt_item_get()): a test's measure of a path's cost. */
extern __thread uint64_t homa_rt_item_mallocs;

/** homa_rt_collect() - Move every pending engine event to a waiter or the queue. */
void homa_rt_collect(struct homa_rt *rt);
/** homa_rt_deliver() - Hand @item to a matching waiter, else queue it. */
void homa_rt_deliver(struct homa_rt *rt, struct rt_item *item);
/** homa_rt_find_item() - The queued item of RPC @id (not removed), or NULL. */
struct rt_item *homa_rt_find_item(struct homa_rt *rt, uint64_t id);
/** homa_rt_take() - Remove and return the queued item matching: short messages first, then oldest first (queue.c). */
struct rt_item *homa_rt_take(struct homa_rt *rt, int flags, uint64_t id);
/** homa_rt_item_matches() - True if @item satisfies @flags and @id. */
bool homa_rt_item_matches(const struct rt_item *item, int flags, uint64_t id);
/**
 * homa_rt_wake_all() - Closing: signal every waiter, sender and the
 * standby thread, and make homa_fd()'s descriptor readable.
 */
void homa_rt_wake_all(struct homa_rt *rt);
/** homa_rt_drop_queue() - Release every queued message (closing). */
void homa_rt_drop_queue(struct homa_rt *rt);
/** homa_rt_remove_waiter() - Unlink @w from the waiter list. */
void homa_rt_remove_waiter(struct homa_rt *rt, struct rt_waiter *w);

/* partial.c (all under rt->lock) */
/**
 * homa_rt_partial_complete() - @item (a complete request) belongs to a
 * request the application reads as it arrives: keep it for those reads
 * (taking ownership) and return true; otherwise forget the request's
 * queued announcement, if any, and return false (deliver it as usual).
 */
bool homa_rt_partial_complete(struct homa_rt *rt, struct rt_item *item);
/**
 * homa_rt_begin_queue() - Queue announcement @item (HOMA_EV_REQUEST_BEGIN)
 * for a later homa_recv() with HOMA_RECV_PARTIAL (taking ownership); the
 * oldest is dropped beyond a bound (its request is still delivered whole).
 */
void homa_rt_begin_queue(struct homa_rt *rt, struct rt_item *item);
/**
 * homa_rt_begin_take() - The oldest queued announcement whose request is
 * still arriving (stale ones are freed), marked as being read; or NULL.
 */
struct rt_item *homa_rt_begin_take(struct homa_rt *rt);
/** homa_rt_begin_handed() - Announcement @item goes to the application: mark its request as being read. */
void homa_rt_begin_handed(struct homa_rt *rt, const struct rt_item *item);
/**
 * homa_rt_partial_end() - Server RPC @id was answered or aborted: free
 * what its partial reads kept. Unknown ids are ignored.
 */
void homa_rt_partial_end(struct homa_rt *rt, uint64_t id);
/** homa_rt_partial_drop() - Closing: free every announcement and kept request. */
void homa_rt_partial_drop(struct homa_rt *rt);
/** homa_rt_wake_data() - Wake the data waiters whose RPC moved on (after events). */
void homa_rt_wake_data(struct homa_rt *rt);
/**
 * homa_rt_partial_length() - Total length of the request of @id being
 * read as it arrives (0 if it is gone).
 */
size_t homa_rt_partial_length(struct homa_rt *rt, uint64_t id);

/* tx.c */
/**
 * homa_rt_flush() - Send whatever the engine has to send now, from the
 * calling thread, and wake the I/O thread if its wake-up time must move
 * earlier. Call without rt->lock held.
 */
void homa_rt_flush(struct homa_rt *rt);
/**
 * homa_rt_tx_work() - Whether a flush would have anything to do: the
 * engine has output, packets wait for room in the send buffer, or
 * HOMA_SEND_MORE sends are corked. Call with rt->lock held.
 */
bool homa_rt_tx_work(const struct homa_rt *rt);
/**
 * homa_rt_unlock_flush() - Release rt->lock (held by the caller), then
 * homa_rt_flush(), without taking rt->lock again when the flush would
 * have nothing to send (homa_rt_tx_work()).
 */
void homa_rt_unlock_flush(struct homa_rt *rt);
/**
 * homa_rt_flush_share() - After attaching a message (a send or reply):
 * send at most one batch of the engine's output from the calling thread,
 * then hand what is left to the thread that drives I/O (a waiting poller
 * is kicked; in threaded mode the I/O thread steps in at once; in polled
 * mode it goes out at the next poll or from the standby thread), so the
 * caller returns before a large message is transmitted. Call without
 * rt->lock held.
 */
void homa_rt_flush_share(struct homa_rt *rt);
/**
 * homa_rt_unlock_send_out() - After a send attached its message, with
 * rt->lock still held: with @more (HOMA_SEND_MORE) leave its packets in
 * the engine, note it in rt->tx_corked (for homa_rt_uncork() or any
 * flush) and release rt->lock; else homa_rt_flush_share(), which sends
 * them with the earlier ones, its first batch drained in the caller's
 * hold of rt->lock, which it releases.
 */
void homa_rt_unlock_send_out(struct homa_rt *rt, bool more);
/**
 * homa_rt_uncork() - Send the packets HOMA_SEND_MORE sends left in the
 * engine, if any (homa_recv(), homa_poll()): one atomic read when none.
 * Call without rt->lock held.
 */
void homa_rt_uncork(struct homa_rt *rt);
/**
 * homa_rt_flush_wait() - Like homa_rt_flush(), but if another thread is
 * sending, wait for it and then send what is left, so that afterwards
 * the engine's deadline reflects only timers and the pacer. Used by the
 * I/O thread and the poller, which would otherwise spin on a deadline of
 * "now" while another thread drains.
 */
void homa_rt_flush_wait(struct homa_rt *rt);
/** homa_rt_kick() - Interrupt the I/O thread's or poller's wait. */
void homa_rt_kick(struct homa_rt *rt);

/* io.c */
/**
 * homa_rt_timers() - With rt->lock held (by the caller, who passes the
 * poller's hold on), run the engine timers due at *@now (a clock reading
 * the caller just took); deliver events; flush (waiting for a thread that
 * is sending, homa_rt_flush_wait()). Publishes in rt->wake_at the earlier
 * of the engine's wake-up time and @limit, so senders know when to kick.
 * Returns without rt->lock, which it takes again only to flush. *@now is
 * read again only if timers ran or output was sent (else it still is the
 * time: nothing was done since).
 * Return: the engine's wake-up time (homa_engine_wake_by()).
 */
uint64_t homa_rt_timers(struct homa_rt *rt, uint64_t *now, uint64_t limit);
/**
 * homa_rt_input() - Receive and process what the driver has, each batch
 * highest priority first (payload copied into messages through
 * homa_engine_defer_copies()), then its ICMP unreachable reports; flush.
 * Reads up to INPUT_ROUNDS batches, fewer when a batch was not full
 * (drv->rx_full) or when it handed the calling poller its message.
 * An encrypted socket opens a batch a chunk at a time and, where the
 * driver can (recv_urgent), reads its queues of short messages between
 * chunks, so a short message that arrives while bulk data is opened is
 * handed over first; a poller handed its message mid-batch stops there
 * and leaves the rest (rx_rest) for its next call, which takes it
 * before anything else.
 * A batch the driver marks rx_metered (strangers' packets under their
 * budget) has its handling's CPU time reported back with rx_spent();
 * so has each part of its rest, by the call that takes it (every
 * strangers' packet's opening and engine work is charged once).
 * Sets *@last to the time of its last clock reading (unchanged when it
 * received nothing). Return: packets.
 */
int homa_rt_input(struct homa_rt *rt, uint64_t *last);
/**
 * homa_rt_rx_order() - Fill @order with the indices of @rx's @n packets,
 * highest priority first and in arrival order within a priority. The
 * socket's queue is FIFO: where no priority queue sits in front of it
 * (loopback), a short message's packet read in the same batch as bulk
 * data is then still handled first.
 */
void homa_rt_rx_order(const struct homa_io_rx *rx, int n, uint32_t *order);
/**
 * homa_rt_input_init() - Size the receive path to what rt->drv's recv()
 * may return at most (drv->max_rx packets: a batch of UDP_GRO buffers
 * holds up to 64 packets each). Return: 0 or HOMA_ENOMEM.
 */
int homa_rt_input_init(struct homa_rt *rt);
/**
 * homa_rt_poll_step() - The poller's turn: timers, then wait up to @until
 * (an absolute time; bounded by the engine's next deadline) for packets
 * and process them, and read the TCP connections too when the caller
 * holds the transport's reader role (rt->poll_tp_fd). Call with
 * rt->lock held: the timers run in that hold, which ends before the wait;
 * returns with rt->lock held again. @now is a clock reading the caller
 * just took (for the timers). An application poller looks before it
 * sleeps while its window of looks is open, and a step that read packets
 * opens it again (spin.c). Return: a clock reading taken after the
 * wait (the receive's, when packets came), for the caller's bookkeeping.
 */
uint64_t homa_rt_poll_step(struct homa_rt *rt, uint64_t now, uint64_t until);
/**
 * homa_rt_spawn() - Start @fn(@rt) as the socket's thread (rt->thread),
 * with every signal blocked in it. Return: 0 or HOMA_EIO.
 */
int homa_rt_spawn(struct homa_rt *rt, void *(*fn)(void *));
/** homa_rt_thread_start() - Start the I/O thread. Return: 0 or HOMA_EIO. */
int homa_rt_thread_start(struct homa_rt *rt);
/** homa_rt_thread_stop() - Stop and join the I/O thread (if started). */
void homa_rt_thread_stop(struct homa_rt *rt);
/**
 * homa_rt_arm_timer() - Polled mode: point timer_fd at the engine
 * deadline, if homa_fd() made it (timer_on; nothing otherwise). Takes
 * rt->lock: call it without.
 */
void homa_rt_arm_timer(struct homa_rt *rt);

/* rxmem.c */
/**
 * homa_rt_copy_payload() - Do the @n payload copies at @c (each @c[i].len
 * bytes from .src to .dst). The poller calls it with rt->lock released
 * (io.c copy_listed()); the caller owns the list, the engine keeps the
 * destinations in place until the copies are reported done.
 */
void homa_rt_copy_payload(const struct homa_rx_copy *c, uint32_t n);

/* spin.c */
/** Looks this thread made before sleeping (homa_rt_spin()): a test's measure of the window. */
extern __thread uint64_t homa_rt_spin_looks;
/** Windows of looks this thread ended because another thread ran during a yield (spin.c). */
extern __thread uint64_t homa_rt_spin_crowded;
/**
 * homa_rt_spin() - The poller's looks before it sleeps (homa_open_opts
 * .spin_us): called by homa_rt_poll_step()'s wait with the @n entries of
 * @p it would sleep on, *@now a clock reading just taken and @first the
 * wait's earliest deadline. If the calling thread is an application
 * thread holding the poller role (not the standby or I/O thread) and its
 * window of looks is open (rt->spin_arm, rt->spin_until), looks at @p
 * without sleeping (ppoll() with a zero timeout; with a driver that has
 * pending(), that instead, and a ppoll() every few looks or once it says
 * packets wait), sched_yield() between looks, until something is
 * readable, the window or @first ends, the socket closes, or a yield
 * shows another thread needs this CPU (then no window opens for a few
 * milliseconds). *@now is updated when it looked more than once.
 * Return: ppoll()'s result of the last look (> 0: @p's revents are set),
 * 0 when nothing came (or it did not look).
 */
int homa_rt_spin(struct homa_rt *rt, struct pollfd *p, nfds_t n, uint64_t *now,
		 uint64_t first);
/**
 * homa_rt_spin_renew() - The poller's step read packets at @after (a clock
 * reading): an application poller's window of looks opens again from
 * there, so a thread receiving a message's packets keeps looking between
 * them. No-op for the standby or I/O thread and with spin_ns 0.
 */
void homa_rt_spin_renew(struct homa_rt *rt, uint64_t after);

/* standby.c */
/**
 * homa_rt_standby_start() - Polled mode: start the standby thread (in
 * rt->thread; homa_rt_thread_stop() joins it). It sleeps while
 * application threads drive I/O and drives it itself once none has for
 * rt->standby_ns, so the protocol keeps answering peers (grants, RESENDs,
 * timers) while the application is away. Return: 0 or HOMA_EIO.
 */
int homa_rt_standby_start(struct homa_rt *rt);
/**
 * homa_rt_app_present() - Polled mode, rt->lock held: an application
 * thread is about to drive I/O; if the standby thread holds the poller
 * role, interrupt it so that it hands the role over.
 */
void homa_rt_app_present(struct homa_rt *rt);
/**
 * homa_rt_standby_after() - The absence after which the standby steps
 * in, for settings @st and @mode: in polled mode resend_ticks ticks (the
 * silence after which a peer starts asking for data again); in threaded
 * mode, where the I/O thread is the standby, one tick.
 */
uint64_t homa_rt_standby_after(const struct homa_settings *st, int mode);
/**
 * homa_rt_standby_loop() - The standby thread's loop (polled mode's
 * standby thread, threaded mode's I/O thread): nap while application
 * threads drive I/O, drive it while none has for rt->standby_ns (in
 * threaded mode also as soon as the engine has work due). Ends when the
 * socket closes.
 */
void homa_rt_standby_loop(struct homa_rt *rt);
/**
 * homa_rt_app_drives() - True if threads waiting in this socket drive its
 * I/O themselves (the poller role): always in polled mode; in threaded
 * mode unless a TCP transport is attached (its waiters read the TCP
 * connections instead, src/transport/tp_drive.c). Then the I/O thread
 * naps meanwhile and a message needs no hand-off from it: no wake-up,
 * no context switch.
 */
bool homa_rt_app_drives(const struct homa_rt *rt);
/**
 * homa_rt_app_leaves() - rt->lock held, threaded mode: an application
 * thread stopped driving and no other takes over; if the engine has work
 * due now (e.g. the pacer), wake the napping I/O thread to do it.
 * Otherwise the I/O thread steps in at its next look (at most
 * rt->standby_ns later, or at the engine's next deadline).
 */
void homa_rt_app_leaves(struct homa_rt *rt);
/**
 * homa_rt_app_away() - rt->lock held, threaded mode: a thread waits in
 * the socket without driving it (a sender waiting for space): let the
 * I/O thread step in now rather than a tick later.
 */
void homa_rt_app_away(struct homa_rt *rt);

/* wait.c */
/**
 * homa_rt_wait_space() - Called with rt->lock held after the engine said
 * HOMA_EAGAIN: wait (until the absolute @until) for buffer space.
 * Return: 0 to retry, HOMA_ETIME (time is up), HOMA_ESHUTDOWN.
 */
int homa_rt_wait_space(struct homa_rt *rt, uint64_t until);
/**
 * homa_rt_wait_item() - Called with rt->lock held and @w on the waiter
 * list: wait until @w->item is set, the socket closes or @until passes.
 * Return: 0 (item set), HOMA_ETIME or HOMA_ESHUTDOWN; @w is unlinked.
 */
int homa_rt_wait_item(struct homa_rt *rt, struct rt_waiter *w, uint64_t until);

/**
 * homa_rt_wait_replies() - Called with rt->lock held by homa_close_wait():
 * drive or wait for I/O until the engine has no reply left to send or to
 * see acknowledged (homa_engine_replies_pending()), or the absolute
 * @until passes. Return: 0 (none left) or HOMA_ETIME.
 */
int homa_rt_wait_replies(struct homa_rt *rt, uint64_t until);

/**
 * homa_rt_run_poller() - Polled mode, rt->lock held and no poller active:
 * drive I/O once (until the absolute @until at most) as the poller; the
 * lock is dropped meanwhile. Application threads call it through the
 * waits below; the standby thread directly.
 */
void homa_rt_run_poller(struct homa_rt *rt, uint64_t until, bool app);
/**
 * homa_rt_pass_poller() - A poller is leaving (rt->lock held): wake the
 * first remaining waiter so that it can take the role.
 */
void homa_rt_pass_poller(struct homa_rt *rt);

/**
 * homa_rt_poll_locked() - Polled mode, rt->lock held: if no other
 * application thread is the poller, drive I/O until the absolute @until
 * (bounded by engine deadlines) and hand the role on. The standby thread,
 * if it holds the role, is interrupted and waited for (it hands the role
 * over at the end of its current poll step), whatever @until: a caller
 * never returns with the packets that woke it left unread for the
 * standby. Return: true if this thread polled.
 */
bool homa_rt_poll_locked(struct homa_rt *rt, uint64_t until);

/**
 * homa_rt_poll_turn() - homa_poll()'s wait, rt->lock held: drive I/O
 * until the absolute @until as homa_rt_poll_locked() does, but while
 * another thread holds the poller role wait for it (interrupting the
 * standby thread, which hands the role over at the end of its current
 * poll step, waited for even when @until has passed) instead of
 * returning; gives up waiting when messages are ready, the socket
 * closes or @until passes. A turn whose wait ended with nothing read (a
 * wake-up left by homa_abort() or by the standby's hand-over, a timer)
 * is followed by another: homa_poll() returns once something arrived.
 */
void homa_rt_poll_turn(struct homa_rt *rt, uint64_t until);

/* zc.c */
/**
 * homa_rt_zc_build() - A message borrowing @iov (homa_msg_build_ref())
 * with a record that will call @release(@arg) once the engine frees it
 * after homa_rt_zc_attached(). Call without rt->lock.
 * Return: 0 (*@msg and *@out set: the caller owns both until the engine
 * takes @msg; homa_msg_discard() frees both, with no call); HOMA_EINVAL
 * (NULL @release, or as homa_msg_build()); HOMA_EMSGSIZE; HOMA_ENOMEM.
 */
int homa_rt_zc_build(struct homa_rt *rt, const struct homa_iov *iov, int iovcnt,
		     homa_release_fn release, void *arg, homa_msg **msg, struct rt_zc **out);
/**
 * homa_rt_zc_attached() - The engine took @z's message for good (under
 * rt->lock): its release will be reported. NULL is ignored.
 */
void homa_rt_zc_attached(struct rt_zc *z);
/** homa_rt_zc_take() - Under rt->lock: detach and return the released records. */
struct rt_zc *homa_rt_zc_take(struct homa_rt *rt);
/**
 * homa_rt_zc_notify() - Without rt->lock: call each record's release
 * function, then free the records of @list.
 */
void homa_rt_zc_notify(struct rt_zc *list);

/* encrypt.c, encrypt_kx.c */
/**
 * homa_rt_enc_open() - With @o->encrypt set: create the socket's PSP
 * state, install its packet hooks, and on server sockets with
 * certificates start the key-exchange service on @bind_sa's address.
 * The caller has refused other drivers than UDP (HOMA_ENOTSUP).
 * Return: 0; HOMA_EINVAL (only some of the
 * certificate files, unreadable files, bad version); HOMA_EADDRINUSE
 * (service port taken); HOMA_ENOMEM; HOMA_EIO.
 */
int homa_rt_enc_open(struct homa_rt *rt, const struct homa_open_opts *o,
		     const struct sockaddr_storage *bind_sa, socklen_t len);
/**
 * homa_rt_psp_host_join() - Serve Homa port @homa_port of this process
 * through the host's PSP receiver on UDP port @udp_port (psp_host.c),
 * starting this process's receiver thread on the first join.
 * Return: 0; HOMA_EPERM (no privilege to bind @udp_port or to forward
 * with the sender's address); HOMA_EINVAL (the process's receiver uses
 * another port); HOMA_EIO; HOMA_ENOMEM.
 */
int homa_rt_psp_host_join(uint16_t udp_port, uint16_t homa_port);
/** homa_rt_psp_host_leave() - Undo a join; the last one stops the thread. */
void homa_rt_psp_host_leave(uint16_t homa_port);
/**
 * homa_rt_psp_host_steered() - Count a socket that the kernel steers to
 * (@delta 1) or no longer (-1) in homa_psp_host_stats.steered, and one
 * that tried steering and uses the receiver (@refused). @udp_port is the
 * PSP port of the socket: homa_encrypt_host_stats() adds the drop counts
 * of its steering program.
 */
void homa_rt_psp_host_steered(int delta, bool refused, uint16_t udp_port);
/**
 * homa_rt_enc_metrics() - Append an encrypted socket's /metrics values
 * (PSP counters, the PSP port's path and drops; encrypt_obs.c) to @ex,
 * which has room for HOMA_RT_ENC_METRICS. Takes rt->enc->mu: call
 * without it. Return: entries written (0 for clear sockets).
 */
size_t homa_rt_enc_metrics(struct homa_rt *rt, struct homa_metric_value *ex);
/** Most entries homa_rt_enc_metrics() writes. */
#define HOMA_RT_ENC_METRICS (HOMA_PSP_REJ_REASONS + 11 + 8)
/** homa_rt_enc_close() - Stop the service and free the PSP state (no-op if none). */
void homa_rt_enc_close(struct homa_rt *rt);
/**
 * homa_rt_enc_ready() - Before a request to @addr:@port: make sure an
 * association exists (key exchange if none, or if its renewal is due).
 * Call without rt->lock. Return: 0 (also for clear-text sockets);
 * HOMA_ENOASSOC (none and no key exchange configured); the errors of
 * the exchange (HOMA_ECERT, HOMA_EHANDSHAKE, HOMA_ENOTSUP, ...) when
 * there is no association; HOMA_EKEYEXPIRED when a renewal failed and
 * the association has outlived the lifetime the receiver announced (a
 * failed renewal before that keeps it: 0).
 */
int homa_rt_enc_ready(struct homa_rt *rt, const homa_addr *addr, uint16_t port);
/**
 * homa_rt_enc_can_reply() - Under rt->lock: whether the reply to server
 * RPC @id can be sealed. Return: 0 (also for clear-text sockets and ids
 * the engine does not know: it reports those itself); HOMA_ENOASSOC (no
 * association to the RPC's client: it was removed, or never installed).
 */
int homa_rt_enc_can_reply(struct homa_rt *rt, uint64_t id);

/**
 * homa_rt_enc_seal() - With rt->tx_lock held and rt->lock not: seal the
 * @n drained packets of @pkts (in rt->tx_bufs) in place, each packet's
 * payload read from its ext piece and then from @more[i] (the second
 * piece of a payload the engine lent in two; NULL: none); packets that
 * cannot be sealed (no association to their destination) are left out
 * and counted in the PSP counters. No-op for clear sockets.
 * Return: the packets kept, moved to the front of @pkts.
 */
int homa_rt_enc_seal(struct homa_rt *rt, struct homa_io_tx *pkts, const struct homa_iov *more,
		     int n);
/**
 * homa_rt_enc_yield() - After a sealed batch went to the driver, with
 * rt->tx_lock held and rt->lock not: once the calling thread has sealed
 * HOMA_RT_SEAL_YIELD_BYTES since it last yielded (on any socket), it
 * offers its CPU to other runnable threads (sched_yield()), counted in
 * rt->seal_yields. AES-GCM over a large transfer otherwise keeps a CPU
 * for milliseconds at a time, and a thread woken for a short message on
 * that CPU waits for it to sleep. A yield that lasted over
 * HOMA_RT_SEAL_YIELD_LONG_NS (another thread used a whole slice) stops
 * the thread's yields for HOMA_RT_SEAL_YIELD_BACKOFF_NS. No-op for clear
 * sockets.
 */
void homa_rt_enc_yield(struct homa_rt *rt);
/**
 * homa_rt_enc_unquote() - For an encrypted socket, point report @u at the
 * Homa packet it quotes: a sealed packet starts with the PSP header, so
 * its 16 bytes are dropped and the engine finds the (clear) common header
 * first. Quotes that are not PSP, and clear sockets, are left alone.
 */
void homa_rt_enc_unquote(const struct homa_rt *rt, struct homa_io_unreach *u);
/**
 * homa_rt_enc_open_rx() - Without rt->lock: authenticate and decrypt the
 * @n received packets of @rx in place (rotating the master keys first
 * if their time has come); rejected ones are left out, counted in the
 * PSP counters by reason and in *@rejected for the engine's
 * HOMA_DROP_VERIFY. No-op for clear sockets.
 * Return: the packets kept, moved to the front of @rx.
 */
int homa_rt_enc_open_rx(struct homa_rt *rt, struct homa_io_rx *rx, int n, int *rejected);

#endif /* HOMA_RT_H */
