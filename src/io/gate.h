/* SPDX-License-Identifier: MIT */
/**
 * @file gate.h
 * The strangers' budget of the UDP driver: while known peers are active
 * (a packet was read from one within HOMA_GATE_ACTIVE_NS), the port's
 * own queues (strangers, and peers not yet known) give the receiving
 * thread at most a budget of packets per HOMA_GATE_NS interval. Past it
 * the gate closes: the driver stops reading and polling those queues
 * until the interval ends (the waiter wakes then: by the driver's
 * rx_wake_ns when only the runtime's polled list waits, else by a
 * timerfd in the driver's epoll set), so excess
 * packets wait in the kernel, which drops them when the queue is full,
 * and a flood of forged packets costs known peers at most the budget's
 * share of the thread. The budget is counted twice: in packets, and in
 * the receiving thread's time spent on them (the receive call, the
 * engine, the replies; CLOCK_MONOTONIC from before the receive call to
 * the end of the batch, measured without a system call; time the thread
 * lost to others on its CPU counts too, so a busy machine admits fewer;
 * the caller reports it with homa_gate_spend()); whichever runs out first closes the gate, so
 * packets that cost more each (replies, long scheduler passes) are
 * admitted fewer. With no known peer active the port's queues are
 * read without limit (a new client is a stranger until its first RPC
 * completes).
 *
 * Under a flood (the interval before this one used up a budget, and this
 * one began within HOMA_GATE_ACTIVE_NS of its start) the gate also closes after a read that did
 * not fill a batch (the queue is drained for now): the strangers' packets
 * are read once per interval, when it opens, in full batches back to
 * back, and the thread is not woken for each few that arrive meanwhile.
 */
#ifndef HOMA_IO_GATE_H
#define HOMA_IO_GATE_H

#include <stdbool.h>
#include <stdint.h>

/** Interval of the strangers' budget. */
#define HOMA_GATE_NS 1000000ull
/** Known peers count as active this long after a packet from one was read. */
#define HOMA_GATE_ACTIVE_NS 10000000ull
/** epoll data tag of the gate's timerfd in the driver's set. */
#define HOMA_GATE_TAG 0x20000u

/** A driver's strangers' gate. */
struct homa_gate {
	uint32_t budget;   /**< packets per interval while known peers are active; 0: no limit */
	uint32_t used;     /**< packets from the port's queues this interval */
	uint64_t cpu_budget_ns; /**< CPU ns per interval while known peers are active; 0: no limit */
	uint64_t cpu_used_ns;   /**< CPU ns spent on the port's queues' packets this interval */
	uint64_t start_ns; /**< this interval's start (CLOCK_MONOTONIC) */
	uint64_t known_ns; /**< when a known peer's packets were last read (0: never) */
	int tfd;           /**< timerfd at the end of a closed interval; -1 without a budget */
	bool closed;       /**< the port's queues wait for the next interval */
	bool armed;        /**< tfd is armed for this interval's end (homa_gate_arm()) */
	bool ran_out;      /**< this interval used up a budget (packets or CPU time) */
	bool flood;        /**< the interval before this one ran out, and this one followed it */
};

/**
 * homa_gate_init() - A gate of @budget packets and @cpu_ns ns of CPU time
 * per interval (0: no limit of that kind; both 0: none, then every other
 * call is a no-op and the gate never closes).
 * Return: 0, or HOMA_EIO when the kernel refuses the timerfd (@g then has
 * no budget).
 */
int homa_gate_init(struct homa_gate *g, uint32_t budget, uint64_t cpu_ns);

/** homa_gate_free() - Close @g's timerfd. */
void homa_gate_free(struct homa_gate *g);

/** homa_gate_now() - CLOCK_MONOTONIC in ns. */
uint64_t homa_gate_now(void);

/**
 * homa_gate_due() - At @now: start a new interval if this one is over;
 * it is a flood interval (homa_gate.flood) if the one that ends ran out
 * of a budget and began less than HOMA_GATE_ACTIVE_NS ago. Return: true if the
 * gate was closed and opens now (its timer, if armed, drained, and
 * disarmed if it had not fired yet; one read() and at most one
 * timerfd_settime(), none when it was not armed): the caller reads and
 * polls the port's queues again.
 */
bool homa_gate_due(struct homa_gate *g, uint64_t now);

/** homa_gate_end() - CLOCK_MONOTONIC ns at which @g's interval ends (a closed gate opens). */
static inline uint64_t homa_gate_end(const struct homa_gate *g)
{
	return g->start_ns + HOMA_GATE_NS;
}

/**
 * homa_gate_arm() - Arm @g's timerfd for homa_gate_end() (one
 * timerfd_settime()) if the gate is closed and the timer is not armed
 * yet; a no-op otherwise. For waiters that sleep on the timerfd (the
 * driver's epoll set); a waiter that sleeps with a timeout of its own
 * until homa_gate_end() needs none. Never fails (a timer the kernel
 * refuses leaves the gate to the next recv() after the interval).
 */
void homa_gate_arm(struct homa_gate *g);

/** homa_gate_on() - Whether @g has a budget (packets or CPU time). */
static inline bool homa_gate_on(const struct homa_gate *g)
{
	return g->budget || g->cpu_budget_ns;
}

/** homa_gate_active() - Whether known peers are active at @now (the budget applies). */
static inline bool homa_gate_active(const struct homa_gate *g, uint64_t now)
{
	return homa_gate_on(g) && g->known_ns && now - g->known_ns < HOMA_GATE_ACTIVE_NS;
}

/** homa_gate_known() - A known peer's packets were read at @now. */
static inline void homa_gate_known(struct homa_gate *g, uint64_t now)
{
	g->known_ns = now;
}

/**
 * homa_gate_charge() - @n packets were read from the port's queues at
 * @now; @more: more may wait (the read filled its batch, or another of
 * the port's queues has packets). Return:
 * true if this closes the gate (known peers active, and the budget used
 * up, or a flood interval and nothing more waiting) until
 * homa_gate_end(): the caller stops reading and polling the port's
 * queues, and makes sure its waiter wakes then (homa_gate_arm(), or a
 * timeout of its own). No system call.
 */
bool homa_gate_charge(struct homa_gate *g, uint32_t n, bool more, uint64_t now);

/**
 * homa_gate_spend() - Handling a batch read from the port's queues took
 * @ns of the receiving thread's time, reported at @now. Return: true
 * if this closes the gate (known peers active and the CPU budget used
 * up), as homa_gate_charge(); false if it was closed already.
 */
bool homa_gate_spend(struct homa_gate *g, uint64_t ns, uint64_t now);

#endif /* HOMA_IO_GATE_H */
