/* SPDX-License-Identifier: MIT */
/**
 * @file list.h
 * Intrusive circular doubly-linked lists (private to the core).
 * A list head is a struct homa_link whose next/prev point to itself when
 * empty; elements embed a struct homa_link and are recovered with
 * homa_container_of().
 */
#ifndef HOMA_CORE_LIST_H
#define HOMA_CORE_LIST_H

#include <stdbool.h>
#include <stddef.h>

/** One link (or a list head). */
struct homa_link {
	struct homa_link *next;
	struct homa_link *prev;
};

#define homa_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/** homa_list_init() - Make @h an empty list (or mark a link as unlinked). */
static inline void homa_list_init(struct homa_link *h)
{
	h->next = h;
	h->prev = h;
}

/** homa_list_empty() - True if the list @h has no elements. */
static inline bool homa_list_empty(const struct homa_link *h)
{
	return h->next == h;
}

/** homa_list_linked() - True if link @l is on some list (initialized links only). */
static inline bool homa_list_linked(const struct homa_link *l)
{
	return l->next != l;
}

/** homa_list_insert_before() - Insert @l before @pos (at the tail if @pos is the head). */
static inline void homa_list_insert_before(struct homa_link *pos, struct homa_link *l)
{
	l->prev = pos->prev;
	l->next = pos;
	pos->prev->next = l;
	pos->prev = l;
}

/** homa_list_add_tail() - Append @l to list @h. */
static inline void homa_list_add_tail(struct homa_link *h, struct homa_link *l)
{
	homa_list_insert_before(h, l);
}

/** homa_list_del() - Unlink @l (safe on an unlinked, initialized link). */
static inline void homa_list_del(struct homa_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	homa_list_init(l);
}

#endif /* HOMA_CORE_LIST_H */
