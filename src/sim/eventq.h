/* SPDX-License-Identifier: MIT */
/**
 * @file eventq.h
 * The discrete-event core: a binary min-heap of events ordered by
 * (time, sequence number). The sequence number is assigned at insertion,
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

/** One scheduled event. */
struct homa_sim_event {
	uint64_t time;          /**< when it fires, ns */
	uint64_t seq;           /**< insertion order, breaks ties */
	homa_sim_event_fn fn;   /**< handler */
	void *obj;              /**< handler's object (a port, a host, ...) */
	void *ptr;              /**< handler's argument (often a packet) */
};

/** The queue; zero-initialize or use homa_sim_eventq_init(). */
struct homa_sim_eventq {
	struct homa_sim_event *heap; /**< owned array, heap-ordered */
	size_t len;                  /**< events queued */
	size_t cap;                  /**< slots allocated */
	uint64_t next_seq;           /**< next sequence number */
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

/** homa_sim_eventq_peek_time() - Time of the earliest event; UINT64_MAX if empty. */
uint64_t homa_sim_eventq_peek_time(const struct homa_sim_eventq *q);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_EVENTQ_H */
