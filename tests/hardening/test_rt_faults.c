/* SPDX-License-Identifier: MIT */
/**
 * @file test_rt_faults.c
 * Fault injection on the real stack (runtime + UDP driver on loopback):
 * every datagram the process receives may be dropped, duplicated or
 * reordered (fault_wrap.c, linked with -Wl,--wrap=recvmmsg). At 1%, 5%
 * and 10% loss, plus 1% duplication and 2% reordering, RPCs of every size
 * from 8 B to 300 KB must each end exactly once: bit-exact, or with a
 * clear error; none may fail at 1%; each request runs at most once; and
 * the server frees every RPC afterwards.
 *
 * Usage: hardening_rt_faults [RPCS_AT_1PCT] (default 1100; 5% and 10%
 * runs use half and a third of it), or
 * hardening_rt_faults --external LOSS_PPM RPCS: one run with no injection
 * here, for loss applied outside the process (scripts/nft_loss.sh drops
 * packets with nftables numgen random in a private network namespace).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fault_wrap.h"
#include "rt_load.h"

static uint64_t base_rpcs = 1100;
static uint32_t external_ppm;  /**< --external: loss comes from outside */

/** wait_server_idle() - Wait up to @ns for the server to hold no RPC. Return: RPCs left. */
static uint64_t wait_server_idle(homa_socket *s, uint64_t ns)
{
	uint64_t end = rt_now() + ns;
	struct homa_stats st;

	for (;;) {
		homa_socket_stats(s, &st);
		if (st.active_rpcs == 0 || rt_now() > end)
			return st.active_rpcs;
		usleep(10000);
	}
}

/**
 * run_level() - @n RPCs with @loss_ppm loss (plus 1% duplicates and 2%
 * reordering) in both directions. Checks the invariants; reports figures.
 */
static void run_level(uint32_t loss_ppm, uint64_t n, bool none_may_fail)
{
	struct homa_settings st;
	struct rt_server sv;
	struct rt_result res;
	struct hd_fault_counts fc;
	homa_socket *c;
	uint64_t i, multi = 0, t0;

	rt_settings(&st, 3000); /* 3 s of silence: a loaded CI machine stalls for long */
	assert_int_equal(rt_server_start(&sv, 2, 0, &st), 0);
	assert_int_equal(rt_open(&c, false, 0, &st), 0);
	hd_faults_counts(&fc, 1);
	if (!external_ppm)
		hd_faults_set(loss_ppm, 10000, 20000, 42 + loss_ppm);
	t0 = rt_now();
	rt_load_run(c, sv.port, 0, n, 16, 30000000000ull, 0, &res);
	hd_faults_set(0, 0, 0, 0);
	hd_faults_counts(&fc, 1);
	for (i = 0; i < n; i++)
		if (atomic_load(&sv.executed[i]) > 1)
			multi++;
	print_message("%sloss %.1f%%: %llu RPCs in %.1f s: %llu ok, %llu failed (last error %s), "
		      "%llu corrupt, %llu twice, %llu hung; injected: %llu dropped, %llu duplicated, "
		      "%llu reordered of %llu datagrams\n",
		      external_ppm ? "external " : "", loss_ppm / 10000.0, (unsigned long long)res.sent, (rt_now() - t0) / 1e9,
		      (unsigned long long)res.ok, (unsigned long long)res.failed,
		      res.failed ? homa_strerror(-(int)res.last_error) : "-",
		      (unsigned long long)res.corrupt, (unsigned long long)res.twice,
		      (unsigned long long)res.hung, (unsigned long long)fc.dropped,
		      (unsigned long long)fc.duplicated, (unsigned long long)fc.reordered,
		      (unsigned long long)fc.seen);
	assert_int_equal(res.sent, n);
	assert_int_equal(res.ok + res.failed, n);
	assert_int_equal(res.corrupt, 0);
	assert_int_equal(res.twice, 0);
	assert_int_equal(res.hung, 0);
	assert_int_equal(multi, 0);
	assert_int_equal(atomic_load(&sv.bad), 0);
	if (!external_ppm)
		assert_true(fc.dropped > 0 && fc.duplicated > 0 && fc.reordered > 0);
	if (none_may_fail)
		assert_int_equal(res.failed, 0);
	if (res.failed)
		assert_int_equal(res.last_error, -HOMA_ETIMEDOUT);
	assert_int_equal(wait_server_idle(sv.s, 10000000000ull), 0);
	homa_close(c);
	rt_server_stop(&sv);
}

/** loss_1pct__every_rpc_completes_once: none may fail. */
static void loss_1pct__every_rpc_completes_once(void **state)
{
	run_level(10000, base_rpcs, true);
}

/** loss_5pct__every_rpc_ends_once: bit-exact or a clear error. */
static void loss_5pct__every_rpc_ends_once(void **state)
{
	run_level(50000, base_rpcs / 2, false);
}

/** loss_10pct__every_rpc_ends_once: bit-exact or a clear error. */
static void loss_10pct__every_rpc_ends_once(void **state)
{
	run_level(100000, base_rpcs / 3, false);
}

/** external_loss__every_rpc_ends_once: loss applied outside (nftables). */
static void external_loss__every_rpc_ends_once(void **state)
{
	run_level(external_ppm, base_rpcs, external_ppm <= 10000);
}

/** main() - Run the fault-injection tests. */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loss_1pct__every_rpc_completes_once),
		cmocka_unit_test(loss_5pct__every_rpc_ends_once),
		cmocka_unit_test(loss_10pct__every_rpc_ends_once),
	};

	const struct CMUnitTest external[] = {
		cmocka_unit_test(external_loss__every_rpc_ends_once),
	};

	if (argc == 4 && strcmp(argv[1], "--external") == 0) {
		external_ppm = (uint32_t)strtoul(argv[2], NULL, 10);
		base_rpcs = strtoull(argv[3], NULL, 10);
		return cmocka_run_group_tests(external, NULL, NULL);
	}
	if (argc > 1)
		base_rpcs = strtoull(argv[1], NULL, 10);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
