/* SPDX-License-Identifier: MIT */
/**
 * @file test_socket.c
 * Opening and closing sockets (src/runtime/socket.c): accurate errors for
 * addresses and timeouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "helpers.h"

/**
 * homa_open__address_not_local() - A well-formed address that is not one
 * of this host's gives HOMA_EADDRNOTAVAIL (not "address family not
 * available"); a send timeout below -1 is HOMA_EINVAL.
 */
static void homa_open__address_not_local(void **state)
{
	struct homa_open_opts o;
	homa_socket *s;

	(void)state;
	homa_open_opts_default(&o);
	o.bind_addr = "192.0.2.77";  /* TEST-NET-1: never local */
	assert_int_equal(homa_open(&s, &o), HOMA_EADDRNOTAVAIL);
	homa_open_opts_default(&o);
	o.send_timeout_ns = -2;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_open__address_not_local),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
