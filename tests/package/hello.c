/* SPDX-License-Identifier: MIT */
/*
 * A complete program against an installed libhoma (tests/package builds it
 * outside the tree with pkg-config and with find_package): a server and a
 * client socket on loopback, one RPC, "ping" answered by "pong".
 * Prints "hello: pong" and exits 0, or names the call that failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <homa/homa.h>

/** check() - Exit with a message if @err (a HOMA_E* code) is not 0. */
static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "hello: %s: %s\n", what, homa_strerror(err));
		exit(1);
	}
}

int main(void)
{
	struct homa_open_opts o;
	struct sockaddr_storage addr;
	socklen_t len;
	homa_socket *server, *client;
	struct homa_message req, resp;
	char text[5] = "";
	uint64_t id;

	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.server = true;                                   /* accepts requests */
	check(homa_open(&server, &o), "homa_open server");
	o.server = false;
	check(homa_open(&client, &o), "homa_open client");
	check(homa_sockaddr_parse("127.0.0.1", (uint16_t)homa_local_port(server), &addr, &len),
	      "homa_sockaddr_parse");
	check(homa_send(client, (struct sockaddr *)&addr, "ping", 4, 0, &id), "homa_send");
	check(homa_recv(server, HOMA_RECV_REQUEST, 0, 10000000000LL, &req), "homa_recv request");
	check(homa_reply_buf(server, req.id, "pong", 4), "homa_reply_buf");
	homa_message_release(&req);
	check(homa_recv(client, HOMA_RECV_RESPONSE, id, 10000000000LL, &resp), "homa_recv response");
	homa_message_copy(&resp, 0, text, 4);
	homa_message_release(&resp);
	printf("hello: %s\n", text);
	homa_close(client);
	homa_close(server);
	return strcmp(text, "pong") != 0;
}
