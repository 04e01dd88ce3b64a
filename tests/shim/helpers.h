/* SPDX-License-Identifier: MIT */
/**
 * @file helpers.h
 * Helpers of the shim's tests, written against the Linux module's API
 * only (homa_linux.h and libc): sockets with a receive region, and
 * sendmsg/recvmsg with their control blocks filled in.
 */
#ifndef HOMA_SHIM_TEST_HELPERS_H
#define HOMA_SHIM_TEST_HELPERS_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "homa_linux.h"

/** A socket and its receive region. */
struct hs {
	int fd;
	char *region;
	size_t region_len;
};

/** hs_open() - Homa socket of @family with a @bpages-bpage region (0: none). */
void hs_open(struct hs *s, int family, unsigned bpages);
/** hs_close() - close() the socket and unmap the region. */
void hs_close(struct hs *s);
/** hs_min_bpages() - Smallest region the module accepts, in bpages. */
unsigned hs_min_bpages(void);
/** hs_serve() - bind() @s to a free port below 0x8000. Return: the port. */
uint16_t hs_serve(struct hs *s);
/** hs_addr() - 127.0.0.1 (or ::1 for AF_INET6) at @port. */
struct sockaddr_storage hs_addr(int family, uint16_t port);
/**
 * hs_send() - sendmsg() a request (@id 0; *@out_id receives the new id)
 * or a reply (@id != 0). Return: sendmsg()'s result.
 */
int hs_send(struct hs *s, const struct sockaddr_storage *to, uint64_t id, uint64_t cookie,
	    uint32_t flags, const void *buf, size_t len, uint64_t *out_id);
/**
 * hs_recv() - recvmsg() for @id (0: any) with @flags; gives back the
 * bpages listed in @ra first. @from may be NULL. Return: its result.
 */
ssize_t hs_recv(struct hs *s, struct homa_recvmsg_args *ra, uint64_t id, int flags,
		struct sockaddr_storage *from);
/**
 * hs_recv_wait() - hs_recv() bounded by a deadline @ms from now: polls the
 * descriptor until it is readable, then recvmsg() with MSG_DONTWAIT, until
 * a message (or failed RPC) comes or the deadline passes. For one thread
 * on the socket (a response another thread parks never makes it readable).
 * Return: recvmsg()'s result; -1 with errno ETIME when nothing came in
 * time; -1 with errno EPROTO when poll() timed out although recvmsg() then
 * had a message (a lost wake-up; it is reported on stderr).
 */
ssize_t hs_recv_wait(struct hs *s, struct homa_recvmsg_args *ra, uint64_t id,
		     struct sockaddr_storage *from, int ms);
/** hs_gather() - Copy a received message of @len bytes out of its bpages. */
void hs_gather(const struct hs *s, const struct homa_recvmsg_args *ra, size_t len,
	       void *out);
/** hs_fill() - Pattern bytes for message @seed. */
void hs_fill(void *buf, size_t len, unsigned seed);
/** hs_avail() - HOMAIOCINFO's bpool_avail_bytes (-1 on error). */
int64_t hs_avail(struct hs *s);

#endif
