/* SPDX-License-Identifier: MIT */
/**
 * @file send.c
 * sendmsg() on a Homa socket (the module's sendmsg(2)): a request when
 * homa_sendmsg_args.id is 0 (the new RPC's id is written back), else the
 * response to that server RPC.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "shim.h"

/**
 * check_args() - Validate the parts of @m every message needs; copy the
 * control block to @a and total the iovecs into @len.
 * Return: 0 or an errno (with s->error_msg set).
 */
static int check_args(struct shim_sock *s, const struct msghdr *m,
		      struct homa_sendmsg_args *a, size_t *len)
{
	const struct sockaddr *dst = m ? m->msg_name : NULL;

	if (!m || !dst)
		return shim_sock_fail(s, EINVAL, "no msg_name passed to sendmsg"), EINVAL;
	if (!m->msg_control)
		return shim_sock_fail(s, EFAULT, "invalid address for msg_control argument "
				      "to sendmsg"), EFAULT;
	memcpy(a, m->msg_control, sizeof(*a));
	if ((a->flags & ~HOMA_SENDMSG_VALID_FLAGS) || a->reserved)
		return shim_sock_fail(s, EINVAL, "reserved fields in homa_sendmsg_args "
				      "must be zero"), EINVAL;
	if (dst->sa_family != s->family)
		return shim_sock_fail(s, EAFNOSUPPORT, "address family in sendmsg address "
				      "must match the socket"), EAFNOSUPPORT;
	if (m->msg_namelen < (s->family == AF_INET6 ? sizeof(struct sockaddr_in6)
						    : sizeof(struct sockaddr_in)))
		return shim_sock_fail(s, EINVAL, "msg_namelen too short"), EINVAL;
	if (m->msg_iovlen > 0 && !m->msg_iov)
		return shim_sock_fail(s, EFAULT, "invalid msg_iov"), EFAULT;
	if (m->msg_iovlen > UIO_MAXIOV)  /* as the kernel's sendmsg() */
		return shim_sock_fail(s, EMSGSIZE, "more than UIO_MAXIOV vectors"), EMSGSIZE;
	*len = 0;
	for (size_t i = 0; i < m->msg_iovlen; i++) {
		if (m->msg_iov[i].iov_len && !m->msg_iov[i].iov_base)
			return shim_sock_fail(s, EFAULT, "invalid iov_base"), EFAULT;
		*len += m->msg_iov[i].iov_len;
		if (*len > HOMA_MAX_MESSAGE_LENGTH)
			return shim_sock_fail(s, EINVAL, "message length exceeded "
					      "HOMA_MAX_MESSAGE_LENGTH"), EINVAL;
	}
	if (*len == 0)
		return shim_sock_fail(s, EINVAL, "empty message"), EINVAL;
	return 0;
}

/** Vectors up to this many are converted on the stack. */
#define SHIM_IOV_STACK 64

/**
 * to_iov() - @m's iovecs as homa_iov entries: in @stack when they fit,
 * else in memory the caller frees. Return: the array, or NULL (ENOMEM).
 */
static struct homa_iov *to_iov(const struct msghdr *m, struct homa_iov *stack)
{
	struct homa_iov *v = stack;

	stack[0] = (struct homa_iov){0};  /* gcc -O3 cannot see msg_iovlen > 0 */
	if (m->msg_iovlen > SHIM_IOV_STACK)
		v = malloc(m->msg_iovlen * sizeof(*v));
	for (size_t i = 0; v && i < m->msg_iovlen; i++) {
		v[i].base = m->msg_iov[i].iov_base;
		v[i].len = m->msg_iov[i].iov_len;
	}
	return v;
}

/**
 * send_request() - Start a client RPC, track it, write its id to the
 * caller's control block. Return: 0 or -1 with errno.
 */
static int send_request(struct shim_sock *s, homa_socket *h, const struct msghdr *m,
			struct homa_sendmsg_args *a, size_t len)
{
	struct homa_iov stack[SHIM_IOV_STACK], *iov = to_iov(m, stack);
	struct shim_rpc r;
	int err, e;

	if (!iov)
		return shim_sock_fail(s, ENOMEM, "no memory for the message's vectors");
	err = homa_send_request(h, m->msg_name, iov, (int)m->msg_iovlen,
				a->completion_cookie, &a->id);
	if (iov != stack)
		free(iov);
	if (err)
		return shim_sock_fail(s, shim_errno(err), homa_strerror(err));
	memset(&r, 0, sizeof(r));
	r.id = a->id;
	r.cookie = a->completion_cookie;
	memcpy(&r.peer, m->msg_name, s->family == AF_INET6 ? sizeof(struct sockaddr_in6)
							   : sizeof(struct sockaddr_in));
	r.tx_length = (int32_t)len;
	r.rx_length = -1;
	r.private_rpc = a->flags & HOMA_SENDMSG_PRIVATE;
	pthread_mutex_lock(&s->lock);
	e = shim_rpcs_add(&s->rpcs, &r);
	pthread_cond_broadcast(&s->cond);  /* a receiver may wait for this entry */
	pthread_mutex_unlock(&s->lock);
	if (e) {
		pthread_mutex_lock(&s->lock);
		shim_rpcs_mark_aborted(&s->rpcs, a->id);  /* its response is dropped */
		pthread_mutex_unlock(&s->lock);
		homa_abort(h, a->id);
		return shim_sock_fail(s, ENOMEM, "no memory to track the RPC");
	}
	memcpy(m->msg_control, a, sizeof(*a));
	return 0;
}

/** send_reply() - Answer server RPC a->id. Return: 0 or -1 with errno. */
static int send_reply(struct shim_sock *s, homa_socket *h, const struct msghdr *m,
		      const struct homa_sendmsg_args *a)
{
	struct homa_iov stack[SHIM_IOV_STACK], *iov;
	int err;

	if (a->completion_cookie)
		return shim_sock_fail(s, EINVAL, "completion_cookie must be zero when "
				      "sending responses");
	iov = to_iov(m, stack);
	if (!iov)
		return shim_sock_fail(s, ENOMEM, "no memory for the message's vectors");
	err = homa_reply(h, a->id, iov, (int)m->msg_iovlen);
	if (iov != stack)
		free(iov);
	pthread_mutex_lock(&s->lock);
	shim_rpcs_remove(&s->rpcs, a->id, NULL);
	pthread_mutex_unlock(&s->lock);
	if (err == HOMA_ENOTFOUND)
		return 0;  /* sendmsg(2): the client may be gone; not an error */
	if (err)
		return shim_sock_fail(s, shim_errno(err), err == HOMA_ESTATE ?
				      "RPC is not in a state where a response can be sent" :
				      homa_strerror(err));
	return 0;
}

/** shim_sendmsg() - See the module's sendmsg(2). Return: 0 or -1 with errno. */
ssize_t shim_sendmsg(struct shim_sock *s, const struct msghdr *m, int flags)
{
	struct homa_sendmsg_args a;
	homa_socket *h;
	size_t len;
	int e = check_args(s, m, &a, &len);

	(void)flags;  /* MSG_DONTWAIT: see homa-linux(7) */
	if (e)
		return -1;
	pthread_mutex_lock(&s->lock);
	h = shim_sock_handle(s);
	pthread_mutex_unlock(&s->lock);
	if (!h)
		return -1;
	return a.id == 0 ? send_request(s, h, m, &a, len) : send_reply(s, h, m, &a);
}
