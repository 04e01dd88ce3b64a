/* SPDX-License-Identifier: MIT */
/**
 * @file socket.c
 * Opening and closing sockets, and the calls that only read or set
 * socket-wide state (port, descriptor, settings, counters).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "rt.h"
#include "tp.h"

/** Largest Homa packet a UDP datagram can carry. */
#define MAX_MTU 65507

/** homa_open_opts_default() - See homa.h. */
void homa_open_opts_default(struct homa_open_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->version = HOMA_OPEN_OPTS_VERSION;
	o->driver = HOMA_DRIVER_UDP;
	o->mode = HOMA_MODE_THREADED;
	o->send_timeout_ns = -1;
	o->batch = 32;
	o->offload = true;
	o->spin_us = HOMA_SPIN_US_DEFAULT;
}

/**
 * bind_address() - The local sockaddr from @o (bind_sa, or bind_addr and
 * port). Return: 0 or HOMA_EINVAL.
 */
static int bind_address(const struct homa_open_opts *o,
			struct homa_driver_config *cfg)
{
	if (o->bind_sa) {
		socklen_t len = o->bind_sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
			: sizeof(struct sockaddr_in6);

		if (o->bind_sa->sa_family != AF_INET && o->bind_sa->sa_family != AF_INET6)
			return HOMA_EINVAL;
		memcpy(&cfg->bind, o->bind_sa, len);
		cfg->bind_len = len;
		return 0;
	}
	return homa_sockaddr_parse(o->bind_addr ? o->bind_addr : "0.0.0.0",
				   o->port, &cfg->bind, &cfg->bind_len);
}

/** check_opts() - Validate @o and @st. Return: 0 or HOMA_EINVAL. */
static int check_opts(const struct homa_open_opts *o, const struct homa_settings *st)
{
	if (o->version < 1 || o->version > HOMA_OPEN_OPTS_VERSION ||
	    (o->driver < HOMA_DRIVER_UDP || o->driver > HOMA_DRIVER_XDP) ||
	    (o->mode != HOMA_MODE_THREADED && o->mode != HOMA_MODE_POLLED) ||
	    o->batch < 1 || o->batch > HOMA_RT_MAX_BATCH || o->send_timeout_ns < -1 ||
	    (o->auto_tcp_min_bytes && o->transport != HOMA_TRANSPORT_AUTO) ||
	    (o->rcvbuf_bytes && (o->rcvbuf_bytes < 4096 || o->rcvbuf_bytes > (1u << 30))) ||
	    o->known_peers < -1 || o->known_peers > HOMA_KNOWN_PEERS_MAX ||
	    o->stranger_budget < -1 || o->stranger_budget > HOMA_STRANGER_BUDGET_MAX ||
	    o->stranger_cpu_us < -1 || o->stranger_cpu_us > HOMA_STRANGER_CPU_MAX ||
	    o->spin_us > HOMA_SPIN_US_MAX ||
	    o->rx_lend_slots < -1 || o->rx_lend_slots > HOMA_RX_LEND_SLOTS_MAX)
		return HOMA_EINVAL;
	if (homa_settings_validate(st, NULL) || st->mtu > MAX_MTU)
		return HOMA_EINVAL;
	return 0;
}

/** init_sync() - Mutexes and monotonic-clock condition variables. */
static void init_sync(struct homa_rt *rt)
{
	pthread_condattr_t ca;

	homa_rt_lock_init(rt);
	pthread_mutex_init(&rt->tx_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rt->space_cond, &ca);
	pthread_cond_init(&rt->standby_cond, &ca);
	pthread_cond_init(&rt->role_cond, &ca);
	pthread_condattr_destroy(&ca);
	rt->kick_fd = rt->ready_fd = rt->poll_epfd = rt->timer_fd = rt->wait_tfd = -1;
	rt->poll_tp_fd = -1;
	rt->wait_armed = UINT64_MAX;
}

/** release_held() - Free a message the application never released. */
static void release_held(uint64_t token, uint64_t msg, void *rt)
{
	(void)token;
	homa_engine_msg_release(((struct homa_rt *)rt)->engine, (homa_msg *)(uintptr_t)msg);
}

/** rt_free() - Free everything @rt owns (any part may be missing). */
static void rt_free(struct homa_rt *rt)
{
	homa_rt_obs_close(rt); /* first: a scrape reads the transport and PSP state */
	homa_tp_close(rt);
	homa_rt_enc_close(rt);
	if (rt->engine) {
		homa_rt_drop_queue(rt);
		homa_rt_idset_foreach(&rt->held, release_held, rt);
		homa_engine_free(rt->engine);
		homa_rt_zc_notify(homa_rt_zc_take(rt)); /* every zero-copy send ends here at the latest */
	}
	homa_rt_item_cache_free(rt);
	homa_rt_pool_drain(&rt->pool);
	homa_driver_close(rt->drv);
	if (rt->ready_exported) {
		/* readable since homa_close(): let a loop waiting on it wake */
		homa_rt_linger_close(rt->poll_epfd >= 0 ? rt->poll_epfd : rt->ready_fd);
		if (rt->poll_epfd >= 0)
			homa_rt_linger_close(rt->ready_fd);
		rt->poll_epfd = rt->ready_fd = -1;
	}
	int fds[] = {rt->kick_fd, rt->ready_fd, rt->poll_epfd, rt->timer_fd, rt->wait_tfd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(rt->tx_bufs);
	free(rt->tx_pkts);
	free(rt->tx_ext2);
	free(rt->tx_lent);
	free(rt->rx_order);
	free(rt->rx_copies);
	homa_rt_idset_free(&rt->ids);
	homa_rt_idset_free(&rt->held);
	pthread_cond_destroy(&rt->space_cond);
	pthread_cond_destroy(&rt->standby_cond);
	pthread_cond_destroy(&rt->role_cond);
	pthread_mutex_destroy(&rt->lock);
	pthread_mutex_destroy(&rt->tx_lock);
	pthread_mutex_destroy(&rt->pool.lock);
	free(rt);
}

/**
 * rt_setup() - Open the driver and the engine and allocate buffers.
 * Return: 0 or a homa error.
 */
static int rt_setup(struct homa_rt *rt, const struct homa_open_opts *o,
		    const struct homa_settings *st)
{
	struct homa_driver_config cfg = {.batch = o->batch, .max_packet = st->mtu,
					 .offload = o->offload, .ifname = o->ifname,
					 .queues = o->xdp_queues, .xdp_raw = o->xdp_raw,
					 .rcvbuf = o->rcvbuf_bytes,
					 .rx_fast_prio = homa_driver_fast_prio(st),
					 .known_peers = o->known_peers < 0 ? 0
							: o->known_peers ? (uint32_t)o->known_peers
									 : HOMA_KNOWN_PEERS_DEFAULT,
					 .stranger_budget = o->stranger_budget < 0 ? 0
							    : o->stranger_budget ? (uint32_t)o->stranger_budget
										 : HOMA_STRANGER_BUDGET_DEFAULT,
					 .stranger_cpu_ns = o->stranger_cpu_us < 0 ? 0
							    : 1000ull * (uint64_t)(o->stranger_cpu_us ? o->stranger_cpu_us
										      : HOMA_STRANGER_CPU_DEFAULT),
					 .lend_slots = o->rx_lend_slots < 0 ? 0
						       : o->rx_lend_slots ? (uint32_t)o->rx_lend_slots
									  : HOMA_RX_LEND_SLOTS_DEFAULT};
	int err = bind_address(o, &cfg);

	if (err)
		return err;
	if (o->encrypt && o->driver != HOMA_DRIVER_UDP)
		return HOMA_ENOTSUP; /* PSP rides the UDP driver only; say so before any opens */
	err = homa_driver_open(o->driver, &cfg, &rt->drv);
	if (err)
		return err;
	struct homa_settings eff;

	homa_driver_settings(rt->drv, st, &eff); /* compat default, IPv6 mtu */
	homa_rt_pool_init(&rt->pool, RT_POOL_MAX_BYTES, &rt->chunk_alloc);
	homa_rt_pool_set_outer(&rt->pool, &rt->lock);  /* the engine allocates under it */
	err = homa_engine_new(&rt->engine, &eff, &rt->drv->local, rt->drv->port,
			      &rt->chunk_alloc, homa_rt_now());
	if (err)
		return err;
	err = homa_rt_key_engine(rt->engine);
	if (err)
		return err;
	homa_engine_set_server(rt->engine, o->server);
	if (!o->encrypt) /* sealed packets go only to hosts of ours */
		homa_rt_ack_pool_attach(rt->engine);
	if (o->rx_alloc && homa_engine_set_rx_alloc(rt->engine, o->rx_alloc))
		return HOMA_EINVAL; /* hooks without alloc or free */
	rt->batch = o->batch;
	rt->pkt_cap = st->mtu;
	rt->tx_bufs = malloc((size_t)rt->batch * rt->pkt_cap);
	rt->tx_pkts = calloc(rt->batch, sizeof(*rt->tx_pkts));
	rt->tx_ext2 = calloc(rt->batch, sizeof(*rt->tx_ext2));
	rt->tx_lent = calloc(rt->batch, sizeof(*rt->tx_lent));
	rt->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rt->ready_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rt->wait_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!rt->tx_bufs || !rt->tx_pkts || !rt->tx_ext2 || !rt->tx_lent || homa_rt_input_init(rt))
		return HOMA_ENOMEM;
	if (rt->kick_fd < 0 || rt->ready_fd < 0 || rt->wait_tfd < 0)
		return HOMA_EIO;
	err = homa_rt_enc_open(rt, o, &cfg.bind, cfg.bind_len);
	return err ? err : homa_tp_open(rt, o);
}

/**
 * full_opts() - @opts as a struct of the current version: an older
 * version's fields are copied into @full, which has the defaults for the
 * rest. Return: @opts or @full.
 */
static const struct homa_open_opts *full_opts(const struct homa_open_opts *opts,
					      struct homa_open_opts *full)
{
	if (opts->version < 1 || opts->version >= HOMA_OPEN_OPTS_VERSION)
		return opts;
	homa_open_opts_default(full);
	memcpy(full, opts, opts->version == 1   ? offsetof(struct homa_open_opts, transport)
			   : opts->version == 2 ? offsetof(struct homa_open_opts, rx_alloc)
			   : opts->version == 3 ? offsetof(struct homa_open_opts, auto_tcp_min_bytes)
			   : opts->version == 4 ? offsetof(struct homa_open_opts, rcvbuf_bytes)
			   : opts->version == 5 ? offsetof(struct homa_open_opts, known_peers)
			   : opts->version == 6 ? offsetof(struct homa_open_opts, stranger_budget)
			   : opts->version == 7 ? offsetof(struct homa_open_opts, stranger_cpu_us)
			   : opts->version == 8 ? offsetof(struct homa_open_opts, spin_us)
						: offsetof(struct homa_open_opts, rx_lend_slots));
	return full;
}

/** open_once() - homa_open() with checked @opts and @st. Return: as homa_open(). */
static int open_once(homa_socket **out, const struct homa_open_opts *opts,
		     const struct homa_settings *st)
{
	struct homa_rt *rt = calloc(1, sizeof(*rt));
	int err;

	if (!rt)
		return HOMA_ENOMEM;
	init_sync(rt);
	rt->mode = opts->mode;
	rt->server = opts->server;
	rt->send_timeout_ns = opts->send_timeout_ns;
	rt->max_message = st->max_message;
	rt->standby_ns = homa_rt_standby_after(st, opts->mode);
	rt->spin_ns = 1000ull * opts->spin_us;
	err = rt_setup(rt, opts, st);
	if (!err)
		err = homa_rt_obs_open(rt, opts);
	if (!err)
		err = homa_rt_register(rt, out);
	if (!err) {
		err = rt->mode == HOMA_MODE_THREADED ? homa_rt_thread_start(rt)
			: homa_rt_standby_start(rt);
		if (err) {
			homa_rt_unregister(*out);
			homa_rt_wait_unused(rt);
		}
	}
	if (err)
		rt_free(rt);
	return err;
}

/** homa_open() - See homa.h. */
int homa_open(homa_socket **out, const struct homa_open_opts *opts)
{
	struct homa_open_opts def, full;
	struct homa_settings st_def;
	int err;

	if (!out)
		return HOMA_EINVAL;
	if (!opts) {
		homa_open_opts_default(&def);
		opts = &def;
	}
	opts = full_opts(opts, &full);
	homa_rt_linger_reap();
	homa_settings_default(&st_def);
	if (opts->settings && homa_settings_import(&st_def, opts->settings))
		return HOMA_EINVAL; /* size out of range */
	err = check_opts(opts, &st_def);
	/* a TCP listener at a port number the kernel picked for UDP may find it taken: pick again */
	for (int tries = 0; !err; tries++) {
		err = open_once(out, opts, &st_def);
		if (err != HOMA_EADDRINUSE || opts->transport == HOMA_TRANSPORT_HOMA ||
		    opts->port || opts->bind_sa || tries == 15)
			break;
		err = 0;
	}
	return err;
}

/** homa_close() - See homa.h. */
int homa_close(homa_socket *s)
{
	struct homa_rt *rt;

	if (!s)
		return HOMA_EINVAL;
	rt = homa_rt_unregister(s);
	if (!rt)
		return HOMA_ESHUTDOWN;
	homa_rt_lock(rt);
	rt->closing = true;
	homa_engine_shutdown(rt->engine, homa_rt_now());
	homa_rt_collect(rt);
	homa_rt_wake_all(rt);
	homa_rt_unlock(rt);
	homa_rt_flush(rt);
	homa_rt_kick(rt);
	homa_rt_thread_stop(rt);
	homa_rt_wait_unused(rt);
	rt_free(rt);
	return 0;
}

/** homa_close_wait() - See homa.h. */
int homa_close_wait(homa_socket *s, int64_t timeout_ns)
{
	struct homa_rt *rt;
	int err;

	if (!s)
		return HOMA_EINVAL;
	if (timeout_ns < -1)
		return HOMA_EINVAL;
	rt = homa_rt_get(s);
	if (!rt)
		return HOMA_ESHUTDOWN;
	homa_rt_lock(rt);
	homa_engine_set_server(rt->engine, false);
	err = homa_rt_wait_replies(rt, homa_rt_deadline(timeout_ns));
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	if (homa_close(s))
		return HOMA_ESHUTDOWN;
	return err;
}

/** homa_local_port() - See homa.h. */
int homa_local_port(homa_socket *s)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	int port;

	if (!s)
		return HOMA_EINVAL;
	if (!rt)
		return HOMA_ESHUTDOWN;
	port = rt->drv->port;
	homa_rt_put(rt);
	return port;
}

/**
 * polled_fd() - Polled mode: create (once) the epoll set of the driver
 * socket, the ready eventfd and a timerfd at the engine's deadline, and
 * tell the driver that its fd is watched (homa_driver.fd_watched).
 * Called with rt->lock held. Return: the epoll fd or HOMA_EIO (nothing
 * kept: neither descriptor stays open).
 */
static int polled_fd(struct homa_rt *rt)
{
	struct epoll_event ev = {.events = EPOLLIN};

	if (rt->poll_epfd >= 0)
		return rt->poll_epfd;
	rt->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	rt->poll_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (rt->timer_fd < 0 || rt->poll_epfd < 0 ||
	    epoll_ctl(rt->poll_epfd, EPOLL_CTL_ADD, rt->drv->fd, &ev) ||
	    (rt->drv->rx_fd2 >= 0 && epoll_ctl(rt->poll_epfd, EPOLL_CTL_ADD, rt->drv->rx_fd2, &ev)) ||
	    epoll_ctl(rt->poll_epfd, EPOLL_CTL_ADD, rt->ready_fd, &ev) ||
	    epoll_ctl(rt->poll_epfd, EPOLL_CTL_ADD, rt->timer_fd, &ev)) {
		/* keep nothing half made: the next call starts again */
		if (rt->timer_fd >= 0)
			close(rt->timer_fd);
		if (rt->poll_epfd >= 0)
			close(rt->poll_epfd);
		rt->timer_fd = rt->poll_epfd = -1;
		return HOMA_EIO;
	}
	rt->timer_armed = 0;
	atomic_store(&rt->timer_on, true);  /* after timer_fd: unlocked readers see it made */
	atomic_store(&rt->drv->fd_watched, true);  /* the driver keeps fd's readiness exact */
	return rt->poll_epfd;
}

/** homa_fd() - See homa.h. */
int homa_fd(homa_socket *s)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	int fd;

	if (!s)
		return HOMA_EINVAL;
	if (!rt)
		return HOMA_ESHUTDOWN;
	homa_rt_lock(rt);
	fd = rt->mode == HOMA_MODE_THREADED ? rt->ready_fd : polled_fd(rt);
	if (fd >= 0)
		homa_rt_export_ready(rt);
	homa_rt_unlock(rt);
	if (fd >= 0 && rt->mode == HOMA_MODE_POLLED)
		homa_rt_arm_timer(rt);
	homa_rt_put(rt);
	return fd;
}

/**
 * acquire() - Validate @s and a required pointer argument @arg, and take a
 * reference on the socket (drop it with homa_rt_put()).
 * Return: 0 with *@rtp set; HOMA_EINVAL if @s or @arg is NULL;
 * HOMA_ESHUTDOWN if the socket is closed.
 */
static int acquire(homa_socket *s, const void *arg, struct homa_rt **rtp)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;

	if (!s || !arg) {
		if (rt)
			homa_rt_put(rt);
		return HOMA_EINVAL;
	}
	if (!rt)
		return HOMA_ESHUTDOWN;
	*rtp = rt;
	return 0;
}

/** homa_set_settings() - See homa.h. */
int homa_set_settings(homa_socket *s, const struct homa_settings *st)
{
	struct homa_settings full, eff;
	struct homa_rt *rt;
	int err = acquire(s, st, &rt);

	if (err)
		return err;
	if (homa_settings_import(&full, st)) {
		homa_rt_put(rt);
		return HOMA_EINVAL;
	}
	homa_driver_settings(rt->drv, &full, &eff);
	homa_rt_lock(rt);
	err = eff.mtu > rt->pkt_cap ? HOMA_EINVAL : homa_engine_set_settings(rt->engine, &eff);
	if (!err) {
		atomic_store(&rt->max_message, eff.max_message);
		rt->standby_ns = homa_rt_standby_after(&eff, rt->mode);
	}
	homa_rt_unlock(rt);
	if (!err && rt->drv->ops->steer && homa_driver_fast_prio(&eff))
		rt->drv->ops->steer(rt->drv, homa_driver_fast_prio(&eff)); /* new levels */
	homa_rt_put(rt);
	return err;
}

/** homa_socket_stats() - See homa.h. */
int homa_socket_stats(homa_socket *s, struct homa_stats *out)
{
	struct homa_rt *rt;
	int err = acquire(s, out, &rt);

	if (err)
		return err;
	homa_rt_lock(rt);
	homa_engine_stats(rt->engine, out);
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return 0;
}

/** xdp_stats() - Copy the XDP driver's counters @c (zero with other drivers) to @out. */
static void xdp_stats(const struct homa_io_counters *c, struct homa_io_stats *out)
{
	out->xdp_zerocopy = homa_io_counter(&c->xdp_zerocopy);
	out->xdp_fill_empty = homa_io_counter(&c->xdp_fill_empty);
	out->xdp_rx_dropped = homa_io_counter(&c->xdp_rx_dropped);
	out->xdp_invalid_descs = homa_io_counter(&c->xdp_invalid_descs);
	out->xdp_tx_ring_full = homa_io_counter(&c->xdp_tx_ring_full);
	out->xdp_rx_invalid = homa_io_counter(&c->xdp_rx_invalid);
	out->xdp_unresolved = homa_io_counter(&c->xdp_unresolved);
	out->xdp_rx_lent = homa_io_counter(&c->xdp_rx_lent);
	out->xdp_reclaimed = homa_io_counter(&c->xdp_reclaimed);
	out->rx_queues = homa_io_counter(&c->rx_queues);
	out->rx_fast_packets = homa_io_counter(&c->rx_fast_packets);
	out->rx_known_peers = homa_io_counter(&c->rx_known_peers);
	out->rx_gate_closed = homa_io_counter(&c->rx_gate_closed);
	out->rx_lent_slots = homa_io_counter(&c->rx_lent_slots);
	out->rx_known_packets = homa_io_counter(&c->rx_known_packets);
	out->rx_known_refused = homa_io_counter(&c->rx_known_refused);
}

/**
 * add_copies() - Fill @out's payload copy counters: the runtime's own
 * (messages built by sends) and the engine's (read under rt->lock).
 */
static void add_copies(struct homa_rt *rt, struct homa_io_stats *out)
{
	struct homa_stats st;

	homa_rt_lock(rt);
	homa_engine_stats(rt->engine, &st);
	homa_rt_unlock(rt);
	out->tx_copied_bytes = atomic_load_explicit(&rt->built_bytes, memory_order_relaxed) +
			       st.payload_copied_out + homa_io_counter(&rt->drv->c.xdp_tx_copied);
	out->rx_copied_bytes = st.payload_copied_in;
	out->rx_lent_bytes = st.payload_lent_in;
}

/**
 * homa_io_stats() - See homa.h. The counters are read without a lock, each
 * with an atomic load (homa_io_counter()), while the I/O thread keeps
 * adding to them: each is exact at some moment during the call.
 */
int homa_io_stats(homa_socket *s, struct homa_io_stats *out)
{
	struct homa_rt *rt;
	int err = acquire(s, out, &rt);

	if (err)
		return err;
	const struct homa_io_counters *c = &rt->drv->c;

	homa_driver_refresh(rt->drv);
	*out = (struct homa_io_stats){
		.tx_packets = homa_io_counter(&c->tx_packets),
		.tx_bytes = homa_io_counter(&c->tx_bytes),
		.tx_calls = homa_io_counter(&c->tx_calls),
		.tx_gso_batches = homa_io_counter(&c->tx_gso_batches),
		.tx_errors = homa_io_counter(&c->tx_errors),
		.rx_packets = homa_io_counter(&c->rx_packets),
		.rx_bytes = homa_io_counter(&c->rx_bytes),
		.rx_calls = homa_io_counter(&c->rx_calls),
		.rx_gro_batches = homa_io_counter(&c->rx_gro_batches),
		.rx_filtered = homa_io_counter(&c->rx_filtered),
		.wakeups = rt->wakeups, .send_waits = rt->send_waits, /* _Atomic */
		.tx_seal_yields = rt->seal_yields,
		.tx_full = homa_io_counter(&c->tx_full), .tx_deferred = rt->tx_deferred};
	for (int p = 0; p < HOMA_MAX_PRIORITIES; p++)
		out->rx_packets_prio[p] = homa_io_counter(&c->rx_prio[p]);
	add_copies(rt, out);
	xdp_stats(c, out);
	homa_rt_put(rt);
	return 0;
}
