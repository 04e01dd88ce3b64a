/* SPDX-License-Identifier: MIT */
/**
 * @file eventq.h
 * The discrete-event core: a queue of events ordered by (time,
 * sequence number): a ring of one-ns buckets for the near future and a
 * 4-ary min-heap for the rest. The sequence number is assigned at insertion,
 * so events due at the same time run in the order they were scheduled and
 * a run is deterministic.
 */
#ifndef HOMA_SIM_EVENTQ_H
#define HOMA_SIM_EVENTQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * An event handler. @obj and @ptr are what was given to
 * homa_sim_eventq_push(); @now is the event's time.
 */
typedef void (*homa_sim_event_fn)(void *obj, void *ptr, uint64_t now);

/**
 * A re-armable event: at most one queue entry, moved in place when it is
 * armed again (see homa_sim_eventq_arm()), so an owner that keeps
 * changing its mind (a host whose next wakeup moves earlier with every
 * packet it receives) leaves no stale entries behind. Zero-initialize.
 */
struct homa_sim_timer {
	uint32_t slot; /**< its slot + 1 while armed; 0 when not armed */
};

/** One scheduled event, as homa_sim_eventq_pop() returns it. */
struct homa_sim_event {
	uint64_t time;          /**< when it fires, ns */
	uint64_t seq;           /**< insertion order, breaks ties */
	homa_sim_event_fn fn;   /**< handler */
	void *obj;              /**< handler's object (a port, a host, ...) */
	void *ptr;              /**< handler's argument (often a packet) */
};

/**
 * Far-heap entry: the ordering key only (16 bytes, four to a cache line).
 * @tie packs the sequence number (high 39 bits), a timer flag (bit 24)
 * and the slot holding the handler (low 24 bits); sequence numbers are
 * unique, so ordering by (time, tie) is ordering by (time, seq).
 */
struct homa_sim_eventq_key {
	uint64_t time;
	uint64_t tie;
};

/** Where an event's handler waits while the event is queued. */
struct homa_sim_eventq_slot {
	homa_sim_event_fn fn;
	void *obj;
	void *ptr;
	struct homa_sim_timer *timer; /**< or NULL */
	uint64_t time, seq;           /**< the event's key (ring entries) */
	uint32_t pos;                 /**< far-heap index (timers only) */
	uint32_t next;                /**< ring bucket or free list link (slot + 1, 0 ends) */
	uint8_t where;                /**< HOMA_SIM_EVQ_IN_FREE/HEAP/RING/DEAD */
};

/** Slot states. */
enum { HOMA_SIM_EVQ_IN_FREE = 0, HOMA_SIM_EVQ_IN_HEAP, HOMA_SIM_EVQ_IN_RING, HOMA_SIM_EVQ_IN_DEAD };

/** log2 of the near ring's span: one bucket per ns for the next 4096 ns. */
#define HOMA_SIM_EVQ_RING_SHIFT 12
#define HOMA_SIM_EVQ_RING (1u << HOMA_SIM_EVQ_RING_SHIFT)

/** One ring bucket: a FIFO (in sequence order) of the events due at one ns. */
struct homa_sim_eventq_bucket {
	uint32_t head, tail; /**< slot + 1; 0 when empty */
};

/**
 * The queue: events due within HOMA_SIM_EVQ_RING ns of the last popped
 * one sit in a ring of one-ns FIFO buckets (O(1) push and pop, the
 * common case: packets crossing links); later ones in a 4-ary min-heap
 * of keys. A pop takes the earlier (time, seq) of the ring's first event
 * and the heap's top, so the order is exactly (time, seq).
 * Zero-initialize or use homa_sim_eventq_init().
 */
struct homa_sim_eventq {
	struct homa_sim_eventq_key *heap;  /**< owned, heap-ordered far events */
	size_t heap_len;                   /**< far events */
	size_t cap;                        /**< heap entries allocated */
	size_t len;                        /**< events queued (ring and heap) */
	struct homa_sim_eventq_slot *slots;/**< owned, indexed by slot */
	uint32_t nslots;                   /**< slots allocated */
	uint32_t free_slot;                /**< first free slot + 1, 0 if none */
	uint64_t next_seq;                 /**< next sequence number */
	uint64_t now;                      /**< time of the last popped event */
	size_t ring_len;                   /**< entries in the ring (dead ones included) */
	struct homa_sim_eventq_bucket ring[HOMA_SIM_EVQ_RING];
	uint64_t ring_bits[HOMA_SIM_EVQ_RING / 64]; /**< bit set: bucket not empty */
};

/** homa_sim_eventq_init() - Make @q empty (allocates nothing yet). */
void homa_sim_eventq_init(struct homa_sim_eventq *q);

/** homa_sim_eventq_free() - Release @q's memory; pending events are discarded. */
void homa_sim_eventq_free(struct homa_sim_eventq *q);

/**
 * homa_sim_eventq_reserve() - Make room for @n events so that pushes do
 * not allocate. Return: 0 or HOMA_ENOMEM.
 */
int homa_sim_eventq_reserve(struct homa_sim_eventq *q, size_t n);

/**
 * homa_sim_eventq_push() - Schedule @fn(@obj, @ptr, @time).
 * Return: 0, or HOMA_ENOMEM if the heap had to grow and could not.
 */
int homa_sim_eventq_push(struct homa_sim_eventq *q, uint64_t time,
			 homa_sim_event_fn fn, void *obj, void *ptr);

/**
 * homa_sim_eventq_pop() - Remove the earliest event into @out.
 * Return: 1, or 0 if the queue is empty.
 */
int homa_sim_eventq_pop(struct homa_sim_eventq *q, struct homa_sim_event *out);

/**
 * homa_sim_eventq_pop_until() - Like homa_sim_eventq_pop(), but only if
 * the earliest event is due at or before @t_end (one search instead of a
 * peek and a pop). Return: 1, or 0 if the queue is empty or its earliest
 * event is later (it stays queued).
 */
int homa_sim_eventq_pop_until(struct homa_sim_eventq *q, uint64_t t_end,
			      struct homa_sim_event *out);

/**
 * homa_sim_eventq_arm() - Schedule @fn(@obj, @ptr, @time) as timer @t: if
 * @t is armed its entry is replaced, else one is added. Either way the
 * entry gets a new sequence number, so it runs exactly where a freshly
 * pushed event would. @t is disarmed again when the event is popped.
 * Return: 0, or HOMA_ENOMEM (then @t is unchanged).
 */
int homa_sim_eventq_arm(struct homa_sim_eventq *q, struct homa_sim_timer *t,
			uint64_t time, homa_sim_event_fn fn, void *obj, void *ptr);

/** homa_sim_eventq_disarm() - Remove timer @t's entry, if it is armed. */
void homa_sim_eventq_disarm(struct homa_sim_eventq *q, struct homa_sim_timer *t);

/** homa_sim_eventq_peek_time() - Time of the earliest event; UINT64_MAX if empty. */
uint64_t homa_sim_eventq_peek_time(const struct homa_sim_eventq *q);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_EVENTQ_H */
