/* SPDX-License-Identifier: MIT */
/* homa-bench command line. */
#include "opts.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective.h"
#include "homa/errors.h"
#include "homa/homa.h"

static const char usage[] =
"usage: homa-bench MODE [options]\n"
"\n"
"Measures Homa against kernel TCP (and plain UDP as a floor).\n"
"Options are --name VALUE or --name=VALUE; an unambiguous prefix of a name\n"
"will do (--dur 10). -h, --help: this text. A bad option or value exits 2.\n"
"\n"
"Modes:\n"
"  server      answer RPCs on --port until SIGINT/SIGTERM\n"
"  client      send RPCs to --servers and report latency, slowdown, goodput, CPU\n"
"  calibrate   measure the unloaded best time per size bucket; save it to --baseline\n"
"  compare     start both arms on loopback in this invocation and print ratios\n"
"  demo        what `make demo` runs: compare rtt and mixed, short table, plot\n"
"  device      one emulated accelerator of a collective run (docs/COLLECTIVE.md)\n"
"\n"
"Common options:\n"
"  --transport homa|tcp|udp  stack to use (default homa; udp = raw UDP ping-pong floor,\n"
"                            messages up to 65000 B)\n"
"  --driver udp|raw|xdp      Homa packet driver (default udp; raw needs CAP_NET_RAW;\n"
"                            xdp: AF_XDP on --ifname IF, docs/XDP.md)\n"
"  --homa-transport homa|tcp|auto|all\n"
"                            what carries the Homa arm's RPCs (homa_open_opts.transport;\n"
"                            default homa): tcp measures this API over kernel TCP; all\n"
"                            (compare) adds arms api-tcp and api-auto beside homa and tcp\n"
"  --threaded                Homa sockets in threaded mode (a runtime thread per socket\n"
"                            moves packets and wakes the application)\n"
"  --polled                  Homa sockets in polled mode (the default: the thread that\n"
"                            waits in homa_recv() moves the packets itself)\n"
"  --homa-mtu N              Homa packet size incl. headers (default: engine's, 1472;\n"
"                            both ends must agree); up to 65507 over UDP\n"
"  --homa-offload 0|1        UDP driver: UDP_SEGMENT / UDP_GRO batches when the kernel\n"
"                            has them (1, the default) or one datagram per packet (0)\n"
"  --homa-spin 0|1           1: wait for RPCs by calling homa_recv() with a zero timeout\n"
"                            in a loop (busy polling, with --polled) instead of sleeping\n"
"  --homa-spin-us US         with --homa-spin 1: poll at most US microseconds per wait,\n"
"                            then sleep in homa_recv() until a message (default 0:\n"
"                            poll without bound)\n"
"  --homa-recv-spin-us US    homa_open_opts.spin_us of every Homa socket: a thread\n"
"                            blocked in homa_recv() looks for packets this long before\n"
"                            it sleeps (default: the library's, HOMA_SPIN_US_DEFAULT)\n"
"  --homa-rx-lend-slots N    homa_open_opts.rx_lend_slots of every Homa socket: receive\n"
"                            buffers messages may hold (zero-copy receive, UDP driver);\n"
"                            -1: copy every payload (default 0: the library's,\n"
"                            HOMA_RX_LEND_SLOTS_DEFAULT)\n"
"  --homa-copy 0|1           1: the Homa arm sends requests and responses with the\n"
"                            copying calls (homa_send_request(), homa_reply_buf())\n"
"                            instead of zero copy (0, the default)\n"
"  --homa-more 0|1           1 (the default): the Homa arm sends with\n"
"                            HOMA_SEND_MORE and the TCP client writes the requests\n"
"                            it starts between two waits with one writev() per\n"
"                            connection, so both send a batch in one system call\n"
"                            (as the TCP server's one writev() per read); 0: the\n"
"                            Homa arm and the TCP client send each on its own\n"
"  --homa-rcvbuf B           UDP and raw drivers: the kernel receive buffer each Homa\n"
"                            socket asks for, homa_open_opts.rcvbuf_bytes (default 0:\n"
"                            the library's, 1 MiB)\n"
"  --homa-link-gbps G        rate of Homa's pacer (default: engine's, 25 Gbps)\n"
"  --homa-unsched-bytes N    Homa unscheduled bytes per message, also the granted-ahead\n"
"                            window (default: engine's, 40000)\n"
"  --homa-max-incoming N     Homa granted-but-unreceived bytes cap (default: engine's,\n"
"                            400000)\n"
"  --homa-short-window B     Homa grant_short_window: each long message's window for\n"
"                            one tick after a short message started arriving (default:\n"
"                            engine's, 0 = off)\n"
"  --homa-nic-queue-us U     most link time Homa's pacer queues in the NIC ahead of\n"
"                            the link (default: engine's, 5 us, never below four full\n"
"                            packets); the pacer refills the queue when one packet is\n"
"                            left, so on a slow link a longer queue means fewer,\n"
"                            larger sends, and a new message may wait behind it\n"
"  --homa-pacer-slack-us U   most slack Homa's pacer adds for late wake-ups (default:\n"
"                            engine's, 1000; 0 = none)\n"
"  --homa-tick-us U          Homa's timer tick (default: engine's, 1000); RESENDs and\n"
"                            timeouts are counted in ticks, so they scale with it\n"
"  --homa-grant-step B       least bytes a Homa GRANT adds (default: engine's, a third\n"
"                            of the unscheduled bytes, at least two packets)\n"
"  --homa-max-overcommit N   messages a Homa receiver grants to at once, 1-64\n"
"                            (default: engine's, 8)\n"
"  --homa-grant-silence-rtts N round trips without DATA before a message's granted\n"
"                            bytes stop holding Homa's budget (default: engine's, 4;\n"
"                            0 = never)\n"
"  --homa-resend-ticks N     silent ticks before Homa's receiver asks for missing data\n"
"                            again, and between such RESENDs (default: engine's, 5);\n"
"                            keep it above the longest switch queueing delay, or data\n"
"                            that is only queued is sent twice; the RPC timeout grows\n"
"                            with it (20 intervals, as the engine's 5 and 100 ticks)\n"
"                            compare and demo use loopback values instead where these\n"
"                            are not given: 65000 B packets, 400 Gbps, 600000 B,\n"
"                            400000 B\n"
"  --cc cubic|bbr            TCP congestion control (TCP_CONGESTION; default: kernel's)\n"
"  --seed N                  seed of sizes, destinations and arrivals (default 1)\n"
"  --quiet                   no progress line on stderr\n"
"  --encrypt                 encrypted arms: Homa seals every packet in PSP (AES-GCM-128,\n"
"                            keys from the TLS 1.3 key exchange), TCP carries TLS 1.3\n"
"                            (TLS_AES_128_GCM_SHA256, one handshake per connection);\n"
"                            both ends need it (docs/ENCRYPTION.md)\n"
"  --certs DIR               with --encrypt: ca.pem, server.pem/.key, client.pem/.key\n"
"                            (scripts/gen_certs.sh); default /tmp/homa-bench-certs,\n"
"                            generated when missing or older than 12 hours\n"
"  --psp-port N              with --encrypt: Homa sends every sealed packet to UDP port N\n"
"                            of the host, PSP's way (1000), where the kernel steers it\n"
"                            to the socket (root; else the host's PSP receiver;\n"
"                            docs/ENCRYPTION.md)\n"
"\n"
"Observability (server, client and calibrate; Homa only; docs/OBSERVABILITY.md):\n"
"  --pcap FILE               write every Homa packet the socket sends and receives,\n"
"                            with its priority, to FILE (pcap; open it with tshark -X\n"
"                            lua_script:tools/wireshark/homa.lua -r FILE)\n"
"  --metrics-port N          serve the socket's counters as Prometheus text on\n"
"                            http://127.0.0.1:N/metrics (read it with homa-stat -p N)\n"
"\n"
"Server (homa-bench server --transport T --port P [--driver D] [--threads N]):\n"
"  --port P                  data port (default 4000); Homa uses UDP port P\n"
"  --ctl-port C              TCP control port answering CPU queries (default P+1)\n"
"  --bind ADDR               local address (default 0.0.0.0)\n"
"  --threads N               server threads (default 1)\n"
"\n"
"Client and calibrate:\n"
"  --servers IP:PORT[,...]   servers; each RPC goes to one chosen uniformly at random\n"
"  --ctl-port C              the servers' control port (default each PORT+1; -1 = none)\n"
"  --workload W              request sizes: w1..w5 (workloads/wN.txt), SIZE (100, 500K,\n"
"                            8M), range:LO-HI (uniform), file:PATH (`length [weight]`\n"
"                            lines). Default 100. Requests are at least 8 bytes.\n"
"  --response SIZE           response size (default 100)\n"
"  --rate R                  open loop: Poisson arrivals at R RPCs/s\n"
"  --load-gbps G             open loop: Poisson arrivals offering G Gbps of request plus\n"
"                            response payload (rate = G / 8 / (mean request + response))\n"
"  --link-gbps L             link rate; load is then also reported as a share of L\n"
"  --outstanding N           closed loop: keep N RPCs in flight (default 1 when neither\n"
"                            --rate nor --load-gbps is given)\n"
"  --max-outstanding N       open loop: arrivals beyond N in flight are dropped and\n"
"                            counted (default 4096)\n"
"  --conns N                 TCP connections per server (default 1); RPCs go to the one\n"
"                            with the fewest in flight\n"
"  --duration S              seconds measured (default 5)\n"
"  --warmup S                seconds run before measuring (default min(0.5, S/10))\n"
"  --buckets N               size buckets of equal message counts (default 10)\n"
"  --baseline FILE           client: unloaded best times (from calibrate) for slowdown;\n"
"                            calibrate: where to write them\n"
"  --calib-count N           calibrate: RPCs per size (default 200)\n"
"  --json FILE               client/calibrate: write results as JSON (- = stdout)\n"
"  --plot FILE.png           client: P99 slowdown (or latency) per size bucket\n"
"\n"
"Compare and demo (both arms on loopback, same invocation):\n"
"  --scenario S              rtt | throughput | rate | mixed | all (default all),\n"
"                            or workload (not in all)\n"
"     rtt         100 B request and response, one outstanding; also the UDP floor\n"
"     throughput  500 KB requests, one stream, then 4 streams\n"
"     rate        100 B RPCs, 32 outstanding (TCP: 4 connections)\n"
"     mixed       100 B-1 KB lookups (one outstanding) while 2 bulk streams send\n"
"                 1-8 MB requests to the same server\n"
"     workload    --workload W at --load-gbps G (default 1) or --rate R (open loop)\n"
"                 or --outstanding N, with --response and --conns; both arms are\n"
"                 calibrated first; per-bucket P99 slowdown table and plot\n"
"  --duration S              seconds per measurement (default 3; demo 2)\n"
"  --rounds N                measure each arm N times, alternating the arms' order\n"
"                            (homa, tcp, tcp, homa, ...); figures pool all rounds\n"
"  --json                    print one JSON object on stdout (the table goes to stderr)\n"
"  --plot FILE.png           mixed, workload: P99 slowdown per message size, both arms\n"
"                            (demo default: homa-bench-demo.png)\n"
"  --port P                  first of the 6 loopback ports used (default from the pid;\n"
"                            collective: 4 x devices ports)\n"
"\n"
"Collective (compare --scenario collective, and device; docs/COLLECTIVE.md):\n"
"     collective  step-synchronous patterns (not in all): devices alternate a compute\n"
"                 phase with all-to-all, ring all-reduce or batched lookups; each\n"
"                 pattern alone and beside background bulk traffic; step time\n"
"                 P50/P99/max, communication time per step, idle fraction\n"
"  --devices N               compare: emulated devices (default 4, at most 64)\n"
"  --steps N                 measured steps per run (default 100)\n"
"  --warmup-steps N          steps run before them (default 5)\n"
"  --compute-us U            compute phase of every step (default 1000)\n"
"  --msg-bytes SIZE          all-to-all message and all-reduce chunk (default 64K)\n"
"  --lookups K               lookups per step and device (default 16)\n"
"  --background-gbps G       compare: background bulk traffic of 4 MB messages, open\n"
"                            loop, in two streams (default 1; 0 = none)\n"
"  --step-timeout S          a device gives up (and fails the run) when a step or a\n"
"                            barrier takes longer than S seconds (default 30); at the\n"
"                            start, a device waits 10 S for all devices to arrive\n"
"  device: --pattern alltoall|allreduce|lookups, --servers (every device's server,\n"
"          this one's too, in rank order), --rank R, --sync FILE (the step board,\n"
"          a file every device of the run maps; absent or empty at the start),\n"
"          --json FILE (rank 0 writes the figures), --start-file FILE (open the\n"
"          transport, then wait, within 10 step timeouts, until FILE exists before\n"
"          the first step: the testbed starts its background traffic meanwhile),\n"
"          --msg-log FILE (every message of every step: when it started and was\n"
"          through, from the end of the device's compute phase; the socket's counters),\n"
"          with Homa: --serve-port P (the device's socket is also its host's server\n"
"          on port P: one engine sends the host's messages, answers and background,\n"
"          as the Linux module is one transport per host), --bg-peer R --bg-gbps G\n"
"          [--bg-bytes SIZE] (background from the device's socket: SIZE messages,\n"
"          default 2M, open loop at G Gbit/s on average, to device R's server)\n"
"\n"
"Output: latency P50/P99/P99.9 in microseconds, per size bucket too; slowdown\n"
"(time / unloaded best time for that size); goodput in Gbps of payload; RPCs/s;\n"
"CPU microseconds per RPC for client and server (getrusage, servers via --ctl-port).\n";

void bench_usage(FILE *f)
{
	fputs(usage, f);
}

void bench_opts_default(struct bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->transport = BENCH_TR_HOMA;
	o->port = 4000;
	o->ctl_port = -2; /* -2: not given */
	o->bind = "0.0.0.0";
	o->driver = HOMA_DRIVER_UDP;
	o->polled = true;
	o->threads = 1;
	o->workload = "100";
	o->response = 100;
	o->max_outstanding = 4096;
	o->conns = 1;
	o->duration = -1;
	o->warmup = -1;
	o->seed = 1;
	o->buckets = 10;
	o->scenario = "all";
	o->calib_count = 200;
	o->rounds = 1;
	o->homa.slack_us = -1;
	o->homa.silence_rtts = -1;
	o->homa.recv_spin_us = -1;
	o->homa.short_window = -1;
	o->steps = 100;
	o->warmup_steps = 5;
	o->compute_us = 1000;
	o->msg_bytes = 65536;
	o->lookups = 16;
	o->bg_peer = -1;
	o->bg_bytes = 2u << 20;
	o->devices = 4;
	o->background_gbps = 1;
	o->step_timeout_s = 30;
}

/** num() - Parse a double in [lo, hi] for @flag. Return: 0 or HOMA_EINVAL. */
static int num(const char *flag, const char *v, double lo, double hi, double *out)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !(d >= lo && d <= hi)) {
		fprintf(stderr, "homa-bench: %s wants a number in [%g, %g], got '%s'\n", flag, lo,
			hi, v);
		return HOMA_EINVAL;
	}
	*out = d;
	return 0;
}

/** set_enum() - Parse the string-valued flags. Return: 1 handled, 0 not, <0 error. */
static int set_enum(struct bench_opts *o, const char *f, const char *v)
{
	if (!strcmp(f, "--transport")) {
		if (!strcmp(v, "homa")) o->transport = BENCH_TR_HOMA;
		else if (!strcmp(v, "tcp")) o->transport = BENCH_TR_TCP;
		else if (!strcmp(v, "udp")) o->transport = BENCH_TR_UDP;
		else return HOMA_EINVAL;
	} else if (!strcmp(f, "--homa-transport")) {
		if (!strcmp(v, "homa")) o->homa_transport = HOMA_TRANSPORT_HOMA;
		else if (!strcmp(v, "tcp")) o->homa_transport = HOMA_TRANSPORT_TCP;
		else if (!strcmp(v, "auto")) o->homa_transport = HOMA_TRANSPORT_AUTO;
		else if (!strcmp(v, "all")) o->homa_transport_all = true;
		else return HOMA_EINVAL;
	} else if (!strcmp(f, "--driver")) {
		if (!strcmp(v, "udp")) o->driver = HOMA_DRIVER_UDP;
		else if (!strcmp(v, "raw")) o->driver = HOMA_DRIVER_RAW;
		else if (!strcmp(v, "xdp")) o->driver = HOMA_DRIVER_XDP;
		else return HOMA_EINVAL;
	} else if (!strcmp(f, "--cc")) {
		if (strcmp(v, "cubic") && strcmp(v, "bbr") && strcmp(v, "reno"))
			return HOMA_EINVAL;
		o->cc = v;
	} else if (!strcmp(f, "--scenario")) {
		const char *ok[] = { "rtt", "throughput", "rate", "mixed", "all", "workload",
				     "collective" };
		int found = 0;
		for (int i = 0; i < 7; i++)
			found |= !strcmp(v, ok[i]);
		if (!found)
			return HOMA_EINVAL;
		o->scenario = v;
	} else if (!strcmp(f, "--pattern")) {
		if (coll_pattern_parse(v) < 0)
			return HOMA_EINVAL;
		o->pattern = v;
	} else if (!strcmp(f, "--sync")) o->sync = v;
	else if (!strcmp(f, "--start-file")) o->start_file = v;
	else if (!strcmp(f, "--msg-log")) o->msg_log = v;
	else if (!strcmp(f, "--bind")) o->bind = v;
	else if (!strcmp(f, "--servers")) o->servers = v;
	else if (!strcmp(f, "--workload")) o->workload = v;
	else if (!strcmp(f, "--json")) o->json = v;
	else if (!strcmp(f, "--plot")) o->plot = v;
	else if (!strcmp(f, "--baseline")) o->baseline = v;
	else if (!strcmp(f, "--pcap")) o->pcap = v;
	else if (!strcmp(f, "--ifname")) o->ifname = v;
	else if (!strcmp(f, "--certs")) o->certs = v;
	else return 0;
	return 1;
}

/** set_num() - Parse the numeric flags. Return: 1 handled, 0 not, <0 error. */
static int set_num(struct bench_opts *o, const char *f, const char *v)
{
	double d;
	uint32_t sz;

	if (!strcmp(f, "--response")) {
		if (homa_parse_size(v, &sz) || sz > BENCH_MAX_MSG) {
			fprintf(stderr, "homa-bench: --response wants a size up to 64 MiB\n");
			return HOMA_EINVAL;
		}
		o->response = sz < BENCH_MIN_MSG ? BENCH_MIN_MSG : sz;
		return 1;
	}
	if (!strcmp(f, "--bg-bytes")) {
		if (homa_parse_size(v, &sz) || sz < BENCH_MIN_MSG || sz > BENCH_MAX_MSG) {
			fprintf(stderr, "homa-bench: --bg-bytes wants a size from 8 B to 64 MiB\n");
			return HOMA_EINVAL;
		}
		o->bg_bytes = sz;
		return 1;
	}
	if (!strcmp(f, "--msg-bytes")) {
		if (homa_parse_size(v, &sz) || sz < BENCH_MIN_MSG || sz > BENCH_MAX_MSG) {
			fprintf(stderr, "homa-bench: --msg-bytes wants a size from 8 B to 64 MiB\n");
			return HOMA_EINVAL;
		}
		o->msg_bytes = sz;
		return 1;
	}
	static const struct { const char *f; double lo, hi; } t[] = {
		{ "--port", 1, 65535 }, { "--ctl-port", -1, 65535 }, { "--threads", 1, 64 },
		{ "--rate", 1e-3, 1e9 }, { "--load-gbps", 1e-6, 1e4 }, { "--link-gbps", 1e-3, 1e4 },
		{ "--outstanding", 1, 100000 }, { "--max-outstanding", 1, 1000000 },
		{ "--conns", 1, 1024 }, { "--duration", 0.05, 86400 }, { "--warmup", 0, 3600 },
		{ "--seed", 0, 1e18 }, { "--buckets", 1, HOMA_BUCKETS_MAX },
		{ "--calib-count", 1, 1e7 }, { "--homa-mtu", 100, 65507 },
		{ "--homa-link-gbps", 0.001, 10000 }, { "--rounds", 1, 100 },
		{ "--homa-unsched-bytes", 1, 1e9 }, { "--homa-max-incoming", 1, 1e9 },
		{ "--metrics-port", 1, 65535 }, { "--homa-nic-queue-us", 0.001, 1e6 },
		{ "--homa-pacer-slack-us", 0, 4e6 }, { "--homa-tick-us", 1, 1e6 },
		{ "--homa-grant-step", 1, 1e9 }, { "--homa-grant-silence-rtts", 0, 1e6 },
		{ "--homa-resend-ticks", 1, 1000 }, { "--rank", 0, COLL_MAX_DEVICES - 1 },
		{ "--steps", 1, COLL_MAX_STEPS / 2 }, { "--warmup-steps", 0, COLL_MAX_STEPS / 2 },
		{ "--compute-us", 0, 1e7 }, { "--lookups", 1, 10000 },
		{ "--devices", 2, COLL_MAX_DEVICES }, { "--background-gbps", 0, 1e4 },
		{ "--step-timeout", 0.1, 3600 }, { "--psp-port", 1, 65535 },
		{ "--homa-offload", 0, 1 }, { "--homa-spin", 0, 1 },
		{ "--homa-rcvbuf", 0, 1073741824 }, { "--homa-max-overcommit", 1, 64 },
		{ "--homa-short-window", 0, 1e9 },
		{ "--homa-copy", 0, 1 }, { "--serve-port", 1, 65535 },
		{ "--bg-peer", 0, COLL_MAX_DEVICES - 1 }, { "--homa-more", 0, 1 },
		{ "--bg-gbps", 1e-6, 1e4 }, { "--homa-spin-us", 0, 1e7 },
		{ "--homa-recv-spin-us", 0, HOMA_SPIN_US_MAX },
		{ "--homa-rx-lend-slots", -1, HOMA_RX_LEND_SLOTS_MAX },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(f, t[i].f))
			continue;
		if (num(f, v, t[i].lo, t[i].hi, &d))
			return HOMA_EINVAL;
		switch (i) {
		case 0: o->port = (uint16_t)d; o->port_set = true; break;
		case 1: o->ctl_port = (int)d; break;
		case 2: o->threads = (int)d; break;
		case 3: o->rate = d; break;
		case 4: o->load_gbps = d; break;
		case 5: o->link_gbps = d; break;
		case 6: o->outstanding = (int)d; break;
		case 7: o->max_outstanding = (int)d; break;
		case 8: o->conns = (int)d; break;
		case 9: o->duration = d; break;
		case 10: o->warmup = d; break;
		case 11: o->seed = (uint64_t)d; break;
		case 12: o->buckets = (int)d; break;
		case 13: o->calib_count = (int)d; break;
		case 14: o->homa.mtu = (uint32_t)d; break;
		case 15: o->homa.link_gbps = d; break;
		case 16: o->rounds = (int)d; break;
		case 17: o->homa.unsched = (uint32_t)d; break;
		case 18: o->homa.incoming = (uint32_t)d; break;
		case 19: o->metrics_port = (uint16_t)d; break;
		case 20: o->homa.nicq_us = d; break;
		case 21: o->homa.slack_us = d; break;
		case 22: o->homa.tick_us = d; break;
		case 23: o->homa.grant_step = (uint32_t)d; break;
		case 24: o->homa.silence_rtts = (int)d; break;
		case 25: o->homa.resend_ticks = (uint32_t)d; break;
		case 26: o->rank = (int)d; break;
		case 27: o->steps = (uint32_t)d; break;
		case 28: o->warmup_steps = (uint32_t)d; break;
		case 29: o->compute_us = d; break;
		case 30: o->lookups = (uint32_t)d; break;
		case 31: o->devices = (int)d; break;
		case 32: o->background_gbps = d; break;
		case 33: o->step_timeout_s = d; break;
		case 34: o->psp_port = (uint16_t)d; break;
		case 35: o->homa.no_offload = d < 0.5; break;
		case 36: o->homa.spin = d > 0.5; break;
		case 37: o->homa.rcvbuf = (uint32_t)d; break;
		case 38: o->homa.overcommit = (uint32_t)d; break;
		case 39: o->homa.short_window = (int64_t)d; break;
		case 40: o->homa.copy = d > 0.5; break;
		case 41: o->serve_port = (uint16_t)d; break;
		case 42: o->bg_peer = (int)d; break;
		case 43: o->homa.no_more = d < 0.5; break;
		case 44: o->bg_gbps = d; break;
		case 45: o->homa.spin_ns = (uint64_t)(d * 1000); break;
		case 46: o->homa.recv_spin_us = (int64_t)d; break;
		default: o->homa.rx_lend_slots = (int32_t)d; break;
		}
		return 1;
	}
	return 0;
}

/**
 * check_obs() - --pcap and --metrics-port open one Homa socket's capture
 * and listener: they need --transport homa and a mode with one socket
 * (not compare/demo, @multi). Return: 0 or HOMA_EINVAL (message on stderr).
 */
static int check_obs(const struct bench_opts *o, bool multi)
{
	if (!o->pcap && !o->metrics_port)
		return 0;
	if (multi) {
		fprintf(stderr, "homa-bench: --pcap and --metrics-port are for server, client "
			"and calibrate\n");
		return HOMA_EINVAL;
	}
	if (o->transport != BENCH_TR_HOMA) {
		fprintf(stderr, "homa-bench: --pcap and --metrics-port need --transport homa\n");
		return HOMA_EINVAL;
	}
	if (o->pcap && !*o->pcap) {
		fprintf(stderr, "homa-bench: --pcap wants a file name\n");
		return HOMA_EINVAL;
	}
	return 0;
}

/** The options that take a value (set_enum(), set_num()). */
static const char *const valued[] = {
	"transport", "driver", "cc", "scenario", "pattern", "sync", "bind", "servers",
	"workload", "json", "plot", "baseline", "pcap", "ifname", "response", "msg-bytes",
	"port", "ctl-port", "threads", "rate", "load-gbps", "link-gbps", "outstanding",
	"max-outstanding", "conns", "duration", "warmup", "seed", "buckets", "calib-count",
	"homa-mtu", "homa-link-gbps", "rounds", "homa-unsched-bytes", "homa-max-incoming",
	"metrics-port", "homa-nic-queue-us", "homa-pacer-slack-us", "homa-tick-us",
	"homa-grant-step", "homa-grant-silence-rtts", "homa-resend-ticks", "rank", "steps",
	"warmup-steps", "compute-us", "lookups", "devices", "background-gbps", "step-timeout",
	"certs", "homa-transport", "start-file", "psp-port", "homa-offload",
	"homa-spin", "homa-rcvbuf", "msg-log", "homa-max-overcommit", "homa-short-window",
	"homa-copy", "serve-port", "bg-peer", "bg-gbps", "bg-bytes", "homa-more",
	"homa-spin-us", "homa-recv-spin-us", "homa-rx-lend-slots",
};

#define N_VALUED (sizeof(valued) / sizeof(valued[0]))

/**
 * long_options() - getopt_long()'s table for a mode: every valued option,
 * the flags, and --help. --json is a flag in compare and demo (@multi)
 * and takes a file elsewhere. @lo has room for N_VALUED + 6 entries.
 */
static void long_options(struct option *lo, bool multi)
{
	static const char *const flags[] = { "polled", "threaded", "quiet", "encrypt" };
	size_t n = 0;

	for (size_t i = 0; i < N_VALUED; i++) {
		bool flag = multi && !strcmp(valued[i], "json");

		lo[n++] = (struct option){ valued[i], flag ? no_argument : required_argument,
					   NULL, 0 };
	}
	for (size_t i = 0; i < 4; i++)
		lo[n++] = (struct option){ flags[i], no_argument, NULL, 0 };
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
}

/**
 * set_flag() - A flag without value: --polled, --threaded, --quiet,
 * --encrypt, --json (compare).
 */
static void set_flag(struct bench_opts *o, const char *name)
{
	if (!strcmp(name, "encrypt"))
		o->encrypt = true;
	else if (!strcmp(name, "polled"))
		o->polled = true;
	else if (!strcmp(name, "threaded"))
		o->polled = false;
	else if (!strcmp(name, "quiet"))
		o->quiet = true;
	else
		o->json_stdout = true;
}

/**
 * set_valued() - Option --@name=@v. Return: 0 or HOMA_EINVAL (message on
 * stderr).
 */
static int set_valued(struct bench_opts *o, const char *name, const char *v)
{
	char f[64];
	int rc;

	snprintf(f, sizeof(f), "--%s", name);
	rc = set_enum(o, f, v);
	if (rc == 0)
		rc = set_num(o, f, v);
	if (rc <= 0) {
		fprintf(stderr, "homa-bench: bad value '%s' for %s (try --help)\n", v, f);
		return HOMA_EINVAL;
	}
	return 0;
}

/**
 * parse_args() - The options after the mode, with getopt_long(): --name
 * value, --name=value, unambiguous prefixes of names, -h. Return: 0, 1
 * (help printed) or HOMA_EINVAL (message on stderr).
 */
static int parse_args(int argc, char **argv, struct bench_opts *o, bool multi)
{
	struct option lo[N_VALUED + 6];
	int c, idx;

	long_options(lo, multi);
	optind = 0; /* a fresh scan (bench_opts_parse() may be called again) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", lo, &idx)) != -1) {
		if (c == 'h') {
			bench_usage(stdout);
			return 1;
		}
		if (c == ':') {
			fprintf(stderr, "homa-bench: %s needs a value (try --help)\n",
				argv[optind - 1]);
			return HOMA_EINVAL;
		}
		if (c == '?') {
			fprintf(stderr, "homa-bench: unknown or ambiguous option '%s' (try --help)\n",
				argv[optind - 1]);
			return HOMA_EINVAL;
		}
		if (lo[idx].has_arg == no_argument)
			set_flag(o, lo[idx].name);
		else if (set_valued(o, lo[idx].name, optarg))
			return HOMA_EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "homa-bench: unexpected argument '%s' (try --help)\n", argv[optind]);
		return HOMA_EINVAL;
	}
	return 0;
}

int bench_opts_parse(int argc, char **argv, struct bench_opts *o)
{
	static const char *modes[] = { "server", "client", "calibrate", "compare", "demo",
				       "device" };

	bench_opts_default(o);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		bench_usage(stdout);
		return 1;
	}
	for (size_t i = 0; i < 6 && !o->mode; i++)
		if (!strcmp(argv[1], modes[i]))
			o->mode = modes[i];
	if (!o->mode) {
		fprintf(stderr, "homa-bench: unknown mode '%s' (try --help)\n", argv[1]);
		return HOMA_EINVAL;
	}
	bool multi = !strcmp(o->mode, "compare") || !strcmp(o->mode, "demo");
	int rc = parse_args(argc - 1, argv + 1, o, multi);

	if (rc)
		return rc;
	if (o->duration < 0)
		o->duration = !strcmp(o->mode, "demo") ? 2 : !strcmp(o->mode, "compare") ? 3 : 5;
	if ((o->rate > 0) + (o->load_gbps > 0) + (o->outstanding > 0) > 1) {
		fprintf(stderr, "homa-bench: give only one of --rate, --load-gbps, --outstanding\n");
		return HOMA_EINVAL;
	}
	if (o->homa_transport_all && (strcmp(o->mode, "compare") || o->encrypt ||
				      !strcmp(o->scenario, "collective"))) {
		fprintf(stderr, "homa-bench: --homa-transport all is for compare, unencrypted, "
			"not the collective scenario\n");
		return HOMA_EINVAL;
	}
	if ((o->certs || o->psp_port) && !o->encrypt) {
		fprintf(stderr, "homa-bench: --certs and --psp-port go with --encrypt\n");
		return HOMA_EINVAL;
	}
	if (o->encrypt && o->driver != HOMA_DRIVER_UDP) {
		fprintf(stderr, "homa-bench: --encrypt needs --driver udp (PSP is not supported on "
			"the other drivers)\n");
		return HOMA_EINVAL;
	}
	if (o->driver == HOMA_DRIVER_XDP && (!o->ifname || !*o->ifname)) {
		fprintf(stderr, "homa-bench: --driver xdp needs --ifname IF\n");
		return HOMA_EINVAL;
	}
	return check_obs(o, multi);
}
