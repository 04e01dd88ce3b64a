/* SPDX-License-Identifier: MIT */
/** @file test_trace.c Tests of sim/trace.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_agent.h"
#include "homa/wire.h"
#include "sim/net.h"
#include "sim/trace.h"

static const struct homa_sim_link_cfg link25 = {25000, 1000, 0};
static struct fake_agent agents[2];

/** A DATA and a GRANT render as a readable log, with and without options. */
static void trace_render__data_and_grant(void **state)
{
	struct homa_sim_net *net;
	struct homa_sim_trace t = {0};
	char *s;

	(void)state;
	assert_int_equal(homa_sim_net_new(&net, NULL), 0);
	fake_add(net, &agents[0]);
	fake_add(net, &agents[1]);
	homa_sim_star(net, &link25);
	homa_sim_trace_attach(&t, net, 0);
	fake_script(&agents[0], 0, 1, 4, HOMA_PKT_DATA, 1400, 2800, 2);
	fake_script(&agents[1], 10000, 0, 3, HOMA_PKT_GRANT, 0, 10000, 3);
	homa_sim_host_kick(net, 0);
	homa_sim_host_kick(net, 1);
	homa_sim_run_until(net, 100000);

	s = homa_sim_trace_render(&t, HOMA_SIM_TRACE_MASK(HOMA_SIM_EMIT), 0);
	assert_string_equal(s, "h0->h1 DATA 1400@2800 p4; h1->h0 GRANT 10000 gp3 p3");
	free(s);
	s = homa_sim_trace_render(&t, 0, HOMA_SIM_TRACE_UID | HOMA_SIM_TRACE_TIME |
				  HOMA_SIM_TRACE_ID);
	assert_string_equal(s,
		"#0 @0 h0->h1 DATA id2 1400@2800 p4; "
		"#0 @2932 h0->h1 DATA id2 1400@2800 p4 [deliver]; "
		"#1 @10000 h1->h0 GRANT id3 10000 gp3 p3; "
		"#1 @12022 h1->h0 GRANT id3 10000 gp3 p3 [deliver]");
	free(s);
	homa_sim_trace_clear(&t);
	assert_int_equal(t.len, 0);
	homa_sim_set_observer(net, NULL, NULL);
	homa_sim_trace_free(&t);
	homa_sim_net_free(net);
}

/** rec_of() - A record made from @pkt encoded and decoded again. */
static struct homa_sim_trace_rec rec_of(const struct homa_pkt *pkt)
{
	struct homa_sim_trace_rec r;
	uint8_t buf[128];
	int n = homa_wire_encode(pkt, buf, sizeof(buf));

	memset(&r, 0, sizeof(r));
	r.src = 1;
	r.dst = 2;
	r.prio = 7;
	r.len = (uint32_t)n;
	r.decode_err = homa_wire_decode(buf, (size_t)n, &r.pkt);
	return r;
}

/** Every control type has its own compact form. */
static void trace_format__control_types(void **state)
{
	struct homa_pkt p;
	struct homa_sim_trace_rec r;
	char buf[128];

	(void)state;
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_RESEND;
	p.u.resend.offset = 1400;
	p.u.resend.length = HOMA_RESEND_ALL;
	r = rec_of(&p);
	homa_sim_trace_format(&r, 0, buf, sizeof(buf));
	assert_string_equal(buf, "h1->h2 RESEND 1400+all p7");
	p.u.resend.length = 2800;
	r = rec_of(&p);
	homa_sim_trace_format(&r, 0, buf, sizeof(buf));
	assert_string_equal(buf, "h1->h2 RESEND 1400+2800 p7");
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_CUTOFFS;
	p.u.cutoffs.version = 3;
	r = rec_of(&p);
	homa_sim_trace_format(&r, 0, buf, sizeof(buf));
	assert_string_equal(buf, "h1->h2 CUTOFFS v3 p7");
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_ACK;
	p.u.ack.num_acks = 2;
	r = rec_of(&p);
	homa_sim_trace_format(&r, 0, buf, sizeof(buf));
	assert_string_equal(buf, "h1->h2 ACK n=2 p7");
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_START_MSG;
	p.u.start.message_length = 1000000;
	r = rec_of(&p);
	homa_sim_trace_format(&r, 0, buf, sizeof(buf));
	assert_string_equal(buf, "h1->h2 START_MSG 1000000 p7");
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_BUSY;
	r = rec_of(&p);
	r.copy = 1;
	r.what = HOMA_SIM_DROP_QUEUE;
	homa_sim_trace_format(&r, 0, buf, sizeof(buf));
	assert_string_equal(buf, "h1->h2 BUSY p7 dup1 [drop_queue]");
}

/** Undecodable packets say so; short buffers truncate but report the full length. */
static void trace_format__bad_and_short_buffer(void **state)
{
	struct homa_sim_trace_rec r;
	char buf[8];
	char big[64];
	int n;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.len = 12;
	r.decode_err = -1;
	n = homa_sim_trace_format(&r, 0, big, sizeof(big));
	assert_string_equal(big, "h0->h0 BAD(-1) len 12 p0");
	assert_int_equal(n, (int)strlen(big));
	assert_int_equal(homa_sim_trace_format(&r, 0, buf, sizeof(buf)), n);
	assert_int_equal(strlen(buf), 7);
	assert_int_equal(homa_sim_trace_format(&r, 0, NULL, 0), n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trace_render__data_and_grant),
		cmocka_unit_test(trace_format__control_types),
		cmocka_unit_test(trace_format__bad_and_short_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
