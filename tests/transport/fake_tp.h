/* SPDX-License-Identifier: MIT */
/**
 * @file fake_tp.h
 * A TCP-transport server (and client) written out by hand for the tests:
 * plain TCP sockets that speak the transport's wire format
 * (src/transport/tp.h), so a test decides on which connection, when and
 * in how many parts each response (or request) leaves, and sees on which
 * connection each request came.
 * Every function fails the running cmocka test on an unexpected result.
 */
#ifndef HOMA_TEST_FAKE_TP_H
#define HOMA_TEST_FAKE_TP_H

#include <stddef.h>
#include <stdint.h>

/** A listener on 127.0.0.1. */
struct fake_tp {
	int lfd;
	uint16_t port;
};

/** fake_tp_listen() - Listen on 127.0.0.1, an ephemeral port. */
void fake_tp_listen(struct fake_tp *f);

/** fake_tp_close() - Close the listener (connections are the caller's). */
void fake_tp_close(struct fake_tp *f);

/**
 * fake_tp_ready() - Whether @fd is readable within @ms ms (a listener:
 * a connection waits to be accepted).
 */
int fake_tp_ready(int fd, int ms);

/**
 * fake_tp_accept() - Accept a client's connection and read its preface.
 * Return: the connection (the caller closes it).
 */
int fake_tp_accept(struct fake_tp *f);

/**
 * fake_tp_request() - Read one request frame from @fd (its payload is
 * read and dropped). Return: the client's RPC id.
 */
uint64_t fake_tp_request(int fd);

/** fake_tp_byte() - Byte @i of every response fake_tp_respond() sends. */
uint8_t fake_tp_byte(size_t i);

/**
 * fake_tp_respond() - On @fd, send bytes [@from, @to) of a response of
 * @len bytes to RPC @id, preceded by its frame header when @from is 0.
 */
void fake_tp_respond(int fd, uint64_t id, uint32_t len, size_t from, size_t to);

/**
 * fake_tp_connect() - A client's connection to the TCP-transport server
 * at 127.0.0.1:@port, its preface sent. Return: the connection.
 */
int fake_tp_connect(uint16_t port);

/**
 * fake_tp_send_request() - On @fd, send bytes [@from, @to) (fake_tp_byte())
 * of a request of @len bytes from client RPC @id, preceded by its frame
 * header when @from is 0.
 */
void fake_tp_send_request(int fd, uint64_t id, uint32_t len, size_t from, size_t to);

/**
 * fake_tp_response() - Read one response frame from @fd (its payload is
 * read and dropped; its length in *@len). Return: the client's RPC id.
 */
uint64_t fake_tp_response(int fd, uint32_t *len);

#endif /* HOMA_TEST_FAKE_TP_H */
