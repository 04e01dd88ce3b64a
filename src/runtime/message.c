/* SPDX-License-Identifier: MIT */
/**
 * @file message.c
 * Reading and releasing received messages, and parsing addresses. A
 * homa_message's bytes stay in the engine (zero copy); priv[0] is the
 * socket handle, priv[1] the engine's homa_msg (NULL once released),
 * priv[2] the message's token in the socket's set of held messages.
 * Tokens are never reused, so a stale copy of a released homa_message is
 * recognised even when its memory now holds another message.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "rt.h"

/** homa_message_segment() - See homa.h. */
size_t homa_message_segment(const struct homa_message *m, size_t offset,
			    const void **ptr)
{
	const uint8_t *p = NULL;
	size_t n;

	if (!m || !ptr || !m->priv[1])
		return 0;
	n = homa_msg_segment(m->priv[1], offset, &p);
	*ptr = p;
	return n;
}

/** homa_message_copy() - See homa.h. */
size_t homa_message_copy(const struct homa_message *m, size_t offset,
			 void *dst, size_t len)
{
	if (!m || !dst || !m->priv[1])
		return 0;
	return homa_msg_copy(m->priv[1], offset, dst, len);
}

/** homa_message_release() - See homa.h. */
int homa_message_release(struct homa_message *m)
{
	uint64_t token, held = 0;
	struct homa_rt *rt;
	bool ok;

	if (!m)
		return HOMA_EINVAL;
	token = (uint64_t)(uintptr_t)m->priv[2];
	if (!token)
		return 0;  /* nothing to release (a failed RPC) */
	if (!m->priv[1])
		return HOMA_EALREADY;
	rt = homa_rt_get(m->priv[0]);
	if (!rt)
		return HOMA_ESHUTDOWN;
	homa_rt_lock(rt);
	ok = homa_rt_idset_get(&rt->held, token, &held) && held == (uint64_t)(uintptr_t)m->priv[1];
	if (ok) {
		homa_rt_idset_del(&rt->held, token);
		homa_engine_msg_release(rt->engine, m->priv[1]);
		if (rt->space_waiters)
			pthread_cond_broadcast(&rt->space_cond);
	}
	if (ok && !atomic_load(&rt->tx_corked))
		homa_rt_unlock_flush(rt);
	else
		homa_rt_unlock(rt);  /* corked: what it freed leaves with the HOMA_SEND_MORE sends */
	homa_rt_put(rt);
	m->priv[1] = NULL;
	return ok ? 0 : HOMA_EALREADY;
}

/** homa_message_transport() - See homa.h. */
int homa_message_transport(const struct homa_message *m)
{
	if (!m || !m->priv[1])
		return HOMA_EINVAL;
	return ((uint64_t)(uintptr_t)m->priv[2] & RT_TOKEN_TCP) ? HOMA_TRANSPORT_TCP
		: HOMA_TRANSPORT_HOMA;
}

/** homa_sockaddr_parse() - See homa.h. */
int homa_sockaddr_parse(const char *host, uint16_t port,
			struct sockaddr_storage *out, socklen_t *len)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};

	if (!host || !out || !len)
		return HOMA_EINVAL;
	/* @out and @len are written on success only */
	if (inet_pton(AF_INET, host, &in.sin_addr) == 1) {
		memset(out, 0, sizeof(*out));
		memcpy(out, &in, sizeof(in));
		*len = sizeof(in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6.sin6_addr) == 1) {
		memset(out, 0, sizeof(*out));
		memcpy(out, &in6, sizeof(in6));
		*len = sizeof(in6);
		return 0;
	}
	return HOMA_EINVAL;
}
