/* SPDX-License-Identifier: MIT */
/* Signal handling and the server mode's top level. */
#include <signal.h>
#include <string.h>

#include "bench.h"
#include "ctl.h"
#include "usage.h"

/** on_signal() - SIGINT/SIGTERM: ask every loop to stop. */
static void on_signal(int sig)
{
	bench_stop = 1;
}

void bench_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int bench_serve(const struct bench_opts *o)
{
	int rc = 0;

	bench_usage_init(); /* before any thread; without it syscalls are unknown */
	if (o->ctl_port != -1)
		rc = bench_ctl_start(o);
	if (rc)
		return rc;
	rc = o->transport == BENCH_TR_HOMA ? bench_homa_server(o)
	     : o->transport == BENCH_TR_TCP ? bench_tcp_server(o) : bench_udp_server(o);
	bench_stop = 1;
	bench_ctl_join();
	return rc;
}

