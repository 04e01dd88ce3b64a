/* SPDX-License-Identifier: MIT */
/**
 * @file shim.h
 * Internals of libhoma-linux.so: the Linux Homa module's socket API
 * (homa_linux.h) over the public homa.h API.
 *
 * Each Homa descriptor the application holds is an epoll descriptor of
 * the shim's (so poll, epoll and select work on it) that watches the
 * runtime socket's homa_fd() and an eventfd of the shim's own (readable
 * while failures the shim made up, from HOMAIOCABORT, wait for recvmsg).
 * The runtime socket opens lazily, at the first call that needs a port,
 * because bind() and SO_HOMA_SERVER decide its port and server flag.
 */
#ifndef HOMA_SHIM_H
#define HOMA_SHIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "homa/homa.h"
#include "homa_linux.h"

/* ---- real.c: the C library's own functions ---- */

/** The C library's implementations of the calls the shim intercepts. */
struct shim_real {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	int (*close)(int);
	int (*shutdown)(int, int);
	int (*ioctl)(int, unsigned long, ...);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
};

/** shim_real() - The C library's functions (looked up once, thread-safe). */
const struct shim_real *shim_real(void);

/* ---- env.c: settings from the environment ---- */

/** Settings read once from HOMA_LINUX_* variables (homa-linux(7)). */
struct shim_env {
	int driver;        /**< HOMA_DRIVER_UDP, HOMA_DRIVER_RAW or HOMA_DRIVER_XDP */
	const char *ifname;   /**< XDP: HOMA_LINUX_IFNAME (NULL: unset) */
	uint32_t xdp_queues;  /**< XDP: HOMA_LINUX_XDP_QUEUES (0: all) */
	bool xdp_raw;         /**< XDP: HOMA_LINUX_XDP_RAW=1, IP protocol 146 */
	uint32_t timeout_ms;  /**< HOMA_LINUX_TIMEOUT_MS (0: libhoma's default) */
	bool verbose;      /**< HOMA_LINUX_VERBOSE=1: log each socket's open */
	const char *addr4; /**< address IPv4 sockets bind (default 0.0.0.0) */
	const char *addr6; /**< address IPv6 sockets bind (default ::) */
};

/** shim_env() - The settings (read on first use). */
const struct shim_env *shim_env(void);

/**
 * shim_unsupported() - Tell the user, once per @what per process, on
 * stderr, that the application used something the shim does not
 * implement.
 */
void shim_unsupported(const char *what);

/* ---- errno.c ---- */

/** shim_errno() - The errno the module's man pages give for HOMA_E* @err. */
int shim_errno(int err);

/* ---- pool.c: the application's receive region, in bpages ---- */

/** The registered region and which bpages the application holds. */
struct shim_pool {
	/**
	 * Guards the fields below. The innermost lock: taken under s->lock
	 * and, through the receive hooks, under the runtime's socket lock;
	 * nothing is called with it held.
	 */
	pthread_mutex_t lock;
	char *base;          /**< NULL until SO_HOMA_RCVBUF */
	uint64_t length;     /**< bytes registered */
	uint32_t nbpages;    /**< whole bpages in the region */
	/** per bpage: holds (the application's fragments, the runtime's pieces, the pool's partial) */
	uint32_t *refs;
	uint32_t *rx_refs;   /**< per bpage: pieces of messages the runtime holds */
	uint32_t free_pages; /**< bpages with refs == 0 */
	int64_t partial;     /**< bpage tails are carved from (-1: none) */
	uint32_t partial_used; /**< bytes of it handed out */
};

/** shim_pool_init() - An empty pool (no region yet). */
void shim_pool_init(struct shim_pool *p);

/**
 * shim_pool_set() - Register the region [@base, @base + @length).
 * Return: 0; EINVAL (not page-aligned, too small for @min bytes, over
 * 4 GiB, already registered); EFAULT (not mapped, or not writable);
 * ENOMEM.
 */
int shim_pool_set(struct shim_pool *p, void *base, uint64_t length, uint64_t min);

/** shim_pool_destroy() - Free the pool's bookkeeping (not the region). */
void shim_pool_destroy(struct shim_pool *p);

/**
 * shim_pool_alloc() - Find room for a message of @len bytes: whole
 * bpages, lowest first, and for the tail a fragment of a shared bpage.
 * Writes the offsets to @offs and their count to @n.
 * Return: 0, or ENOMEM (not enough free space; nothing is taken).
 */
int shim_pool_alloc(struct shim_pool *p, uint32_t len, uint32_t *offs, uint32_t *n);

/**
 * shim_pool_free() - Take back @n offsets handed out by shim_pool_alloc().
 * All are checked first: if any is outside the region or names a bpage
 * the application does not hold, nothing is freed.
 * Return: 0 or EINVAL.
 */
int shim_pool_free(struct shim_pool *p, const uint32_t *offs, uint32_t n);

/** shim_pool_avail() - Bytes free for new messages. */
uint64_t shim_pool_avail(struct shim_pool *p);

/**
 * shim_pool_hooks() - Fill @a (homa_open_opts.rx_alloc) so that the
 * runtime receives messages into @p's region: a 64 KiB piece gets a whole
 * bpage, a message's shorter last piece a fragment of the shared bpage,
 * as shim_pool_alloc() would place them. Before SO_HOMA_RCVBUF, or when
 * the region is full, pieces come from malloc (shim_pool_place() then
 * gives them new room and recvmsg() copies them). @p must outlive the runtime socket.
 */
void shim_pool_hooks(struct shim_pool *p, struct homa_alloc *a);

/**
 * shim_pool_place() - Bpages for a received message of @n pieces, piece i
 * holding bytes [i * 64 KiB, ...) of it, @lens[i] bytes (64 KiB but the
 * last). A piece at @ptrs[i] that the receive hooks placed in the region
 * is handed over where it lies; any other piece (@ptrs[i] NULL, or bytes
 * outside the region) gets new room as shim_pool_alloc() gives it, and
 * @fresh[i] true: the caller copies that piece there. Either way each
 * piece gains the application's hold (released by shim_pool_free()) and
 * @offs[i] is its offset. Only the pieces outside need free room, so a
 * message that arrived partly in the region while other messages filled
 * it still fits in what is left.
 * Return: 0, or ENOMEM (no region, too many pieces, or no room for the
 * pieces outside it; nothing changed).
 */
int shim_pool_place(struct shim_pool *p, const void *const *ptrs, const uint32_t *lens,
		    uint32_t n, uint32_t *offs, bool *fresh);

/* ---- rpcs.c: the socket's RPCs as the module's API sees them ---- */

/** One RPC the shim tracks (client: sent, response not yet delivered;
 *  server: request delivered, not yet answered). */
struct shim_rpc {
	uint64_t id;
	uint64_t cookie;
	struct sockaddr_storage peer;
	int32_t tx_length;   /**< -1 until sent */
	int32_t rx_length;   /**< -1 until known */
	bool private_rpc;    /**< HOMA_SENDMSG_PRIVATE */
	struct shim_rpc *next;
};

/** A message or failure ready for recvmsg(), held by the shim. */
struct shim_ready {
	uint64_t id;
	uint64_t cookie;
	struct sockaddr_storage peer;
	int err;             /**< errno of a failed RPC, or 0 */
	bool has_msg;        /**< @msg holds a message to release */
	struct homa_message msg;
	struct shim_ready *next;
};

#define SHIM_RPC_BUCKETS 1024
#define SHIM_ABORTED_RING 256

/** The RPC tables of one socket (guarded by the socket's lock). */
struct shim_rpcs {
	struct shim_rpc *bucket[SHIM_RPC_BUCKETS];
	uint32_t count;
	uint64_t aborted[SHIM_ABORTED_RING]; /**< recently aborted client ids */
	uint32_t aborted_next;
	struct shim_ready *parked;    /**< private responses, by id */
	struct shim_ready *shared;    /**< failures for any-message receivers */
	struct shim_ready **shared_tail;
};

void shim_rpcs_init(struct shim_rpcs *t);
/** shim_ready_free() - Release @r's message, if it holds one, and free @r. */
void shim_ready_free(struct shim_ready *r);
/** shim_rpcs_destroy() - Free every entry; release held messages. */
void shim_rpcs_destroy(struct shim_rpcs *t);
/** shim_rpcs_add() - Track @r (copied). Return: 0 or ENOMEM. */
int shim_rpcs_add(struct shim_rpcs *t, const struct shim_rpc *r);
/** shim_rpcs_find() - The entry for @id, or NULL. */
struct shim_rpc *shim_rpcs_find(struct shim_rpcs *t, uint64_t id);
/** shim_rpcs_remove() - Drop @id's entry; copy it to @out if not NULL.
 *  Return: true if there was one. */
bool shim_rpcs_remove(struct shim_rpcs *t, uint64_t id, struct shim_rpc *out);
/** shim_rpcs_mark_aborted() - Remember @id so a late response is dropped. */
void shim_rpcs_mark_aborted(struct shim_rpcs *t, uint64_t id);
/** shim_rpcs_was_aborted() - Whether @id was aborted recently. */
bool shim_rpcs_was_aborted(const struct shim_rpcs *t, uint64_t id);
/** shim_rpcs_park() - Hold @r for the private receiver of its id. */
void shim_rpcs_park(struct shim_rpcs *t, struct shim_ready *r);
/** shim_rpcs_unpark() - Take the held item of @id, or NULL. */
struct shim_ready *shim_rpcs_unpark(struct shim_rpcs *t, uint64_t id);
/** shim_rpcs_push_shared() - Queue @r for any-message receivers. */
void shim_rpcs_push_shared(struct shim_rpcs *t, struct shim_ready *r);
/** shim_rpcs_pop_shared() - Oldest queued item, or NULL. */
struct shim_ready *shim_rpcs_pop_shared(struct shim_rpcs *t);
/**
 * shim_rpcs_each() - Call @fn on every tracked RPC (in no order).
 * Return: how many there are.
 */
uint32_t shim_rpcs_each(struct shim_rpcs *t, void (*fn)(const struct shim_rpc *, void *),
			void *arg);

/* ---- sock.c: one module-style socket ---- */

/** A Homa socket of the module's API. Shared by every descriptor dup'ed
 *  from it; freed when the last descriptor closes and no call is inside. */
struct shim_sock {
	pthread_mutex_t lock;
	pthread_cond_t cond;    /**< RPC tracked, item parked */
	int refs;               /**< descriptors + calls in progress (fdtab lock) */
	int nfds;               /**< descriptors (fdtab lock) */
	int family;             /**< AF_INET or AF_INET6 */
	int epfd;               /**< the socket's own copy of the epoll set */
	int evfd;               /**< readable while rpcs.shared is not empty */
	homa_socket *h;         /**< NULL until opened */
	int watched_fd;         /**< homa_fd(h) in the epoll set, or -1 */
	uint16_t port;          /**< port once opened or bound */
	bool server;            /**< accepts requests */
	bool nonblock;          /**< O_NONBLOCK on the descriptor */
	bool shut;              /**< shutdown() or close() */
	struct shim_pool pool;
	struct shim_rpcs rpcs;
	const char *error_msg;  /**< last error's text (static string) */
};

/**
 * shim_sock_new() - A socket of @family with its epoll set (@flags:
 * SOCK_NONBLOCK). The application's descriptors are duplicates of
 * s->epfd, which the socket keeps for itself. Return: the socket or
 * NULL (errno set).
 */
struct shim_sock *shim_sock_new(int family, int flags);
/** shim_sock_free() - Close the runtime socket and descriptors; free. */
void shim_sock_free(struct shim_sock *s);
/**
 * shim_sock_handle() - The runtime socket, opened now (ephemeral port)
 * if it was not yet. Call with s->lock held.
 * Return: the handle, or NULL with errno set (ESHUTDOWN, EADDRINUSE, ...).
 */
homa_socket *shim_sock_handle(struct shim_sock *s);
/**
 * shim_sock_reopen() - Open the runtime socket again on @port with the
 * current server flag (bind(), SO_HOMA_SERVER). RPCs in progress end.
 * Call with s->lock held. Return: 0 or an errno.
 */
int shim_sock_reopen(struct shim_sock *s, uint16_t port);
/** shim_sock_shutdown() - Close the runtime socket: waiters return ESHUTDOWN. */
void shim_sock_shutdown(struct shim_sock *s);
/** shim_sock_fail() - Record @msg as the last error and return -1 with errno @e. */
int shim_sock_fail(struct shim_sock *s, int e, const char *msg);
/** shim_sock_signal() - Keep s->evfd readable iff failures are queued. Lock held. */
void shim_sock_signal(struct shim_sock *s);
/** shim_sock_fill_name() - Write @peer to @name / @len in @s's family. */
void shim_sock_fill_name(const struct shim_sock *s, const struct sockaddr_storage *peer,
			 void *name, socklen_t *len);

/* ---- fdtab.c: descriptor -> socket ---- */

/** shim_fd_get() - The socket behind @fd with a reference, or NULL. */
struct shim_sock *shim_fd_get(int fd);
/** shim_fd_put() - Drop a reference from shim_fd_get(); frees at zero. */
void shim_fd_put(struct shim_sock *s);
/** shim_fd_is() - Cheap check without a reference: is @fd a shim socket? */
bool shim_fd_is(int fd);
/** shim_fd_attach() - Map @fd to @s (one more reference). Return: 0 or EMFILE. */
int shim_fd_attach(int fd, struct shim_sock *s);
/**
 * shim_fd_detach() - Unmap @fd; if it was the socket's last descriptor,
 * shut it down. Return: true if @fd was a shim socket.
 */
bool shim_fd_detach(int fd);

/* ---- the calls ---- */

int shim_bind(struct shim_sock *s, const struct sockaddr *a, socklen_t len);
int shim_setsockopt(struct shim_sock *s, int level, int name, const void *v, socklen_t len);
int shim_getsockopt(struct shim_sock *s, int level, int name, void *v, socklen_t *len);
int shim_getsockname(struct shim_sock *s, struct sockaddr *a, socklen_t *len);
ssize_t shim_sendmsg(struct shim_sock *s, const struct msghdr *m, int flags);
ssize_t shim_recvmsg(struct shim_sock *s, struct msghdr *m, int flags);
int shim_ioctl(struct shim_sock *s, unsigned long req, void *arg);
/**
 * shim_deliver() - Hand @r to the caller of recvmsg(): copy the message
 * into bpages, fill @args and @m's name. Frees @r.
 * Return: the message length, or -1 with errno (the RPC's error, ENOMEM).
 */
ssize_t shim_deliver(struct shim_sock *s, struct shim_ready *r, struct msghdr *m,
		     struct homa_recvmsg_args *args);

#endif /* HOMA_SHIM_H */
