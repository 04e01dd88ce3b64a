/* SPDX-License-Identifier: MIT */
/**
 * @file test_tools_obs.c
 * The observability flags of the programs (issue 7): homa-bench server and
 * client and every example take --metrics-port N and --pcap FILE. Each
 * program is run on loopback: while it runs, its /metrics must answer and
 * pass the strict exposition checker with the counters of its own socket;
 * afterwards its capture must be a pcap file that tshark with the Lua
 * dissector reads completely, every frame Homa and well formed, with
 * packets in both directions.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/obs.h"
#include "http_get.h"
#include "pcap_read.h"
#include "prom_check.h"
#include "tmpdir.h"


/** free_port() - A port of @type (SOCK_STREAM/SOCK_DGRAM) free on 0.0.0.0 right now. */
static uint16_t free_port(int type)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, type, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

/** path_of() - @name inside the temporary directory (malloc'd; caller frees). */
static char *path_of(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", tmpdir, name) > 0);
	return p;
}

/**
 * spawn() - Start @argv (NULL-terminated) with stdout and stderr in @log.
 * The child dies with the test process: a test that fails while its
 * server waits for more requests leaves nothing running. Return: pid.
 */
static pid_t spawn(char *const argv[], const char *log)
{
	pid_t parent = getpid(), pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)  /* the test process died before prctl() */
			_exit(127);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/** show_log() - Print @log (on failure, for the reader of the test output). */
static void show_log(const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");

	while (f && fgets(line, sizeof(line), f))
		print_message("  | %s", line);
	if (f)
		fclose(f);
}

/** wait_exit() - Wait for @pid; its exit status must be 0. */
static void wait_exit(pid_t pid, const char *log)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		show_log(log);
		fail_msg("%s: exit status 0x%x", log, st);
	}
}

/**
 * wait_client() - Wait for client @pid (log @log) of server @srv (log
 * @slog); its exit status must be 0. On failure the server's state and log
 * are printed too: a client that found nothing serving needs both.
 */
static void wait_client(pid_t pid, const char *log, pid_t srv, const char *slog)
{
	int st, sst = 0;
	pid_t gone;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	show_log(log);
	gone = waitpid(srv, &sst, WNOHANG);
	print_message("server %d: %s (status 0x%x); its log:\n", (int)srv,
		      gone == srv ? "exited" : "still running", sst);
	show_log(slog);
	fail_msg("%s: exit status 0x%x", log, st);
}

/**
 * scrape() - GET /metrics on @port, retrying for up to 5 s while the
 * program starts. The body must pass the strict checker and hold the
 * series @name{endpoint="@endpoint"} (any endpoint if 0), whose value is
 * returned.
 */
static double scrape(uint16_t port, const char *name, uint16_t endpoint)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\n\r\n";
	char err[256], labels[64];
	double v = -1;

	for (int tries = 0; tries < 500; tries++) {
		char *r = http_exchange(port, req, sizeof(req) - 1);

		if (!r) {
			usleep(10000);
			continue;
		}
		assert_int_equal(http_status(r), 200);
		if (prom_check(http_body(r), err, sizeof(err)))
			fail_msg("port %u: invalid exposition: %s", port, err);
		snprintf(labels, sizeof(labels), "{endpoint=\"%u\"}", endpoint);
		if (endpoint ? prom_value(http_body(r), name, labels, &v)
			     : !strstr(http_body(r), name))
			fail_msg("port %u: no %s%s", port, name, endpoint ? labels : "");
		free(r);
		return v;
	}
	fail_msg("nothing answered on metrics port %u", port);
	return v;
}

/**
 * check_pcap() - @path is a pcap file with at least @min records, and
 * tshark with the dissector decodes each as well-formed Homa (one pass);
 * unless @port is 0, some were sent to and some from @port (the program's
 * Homa port).
 */
static void check_pcap(const char *path, int min, uint16_t port)
{
	int n, ok = 0, to = 0, from = 0;
	struct pcap_file pf;
	char cmd[1024], line[256];
	FILE *p;

	if (pcap_read(path, &pf))
		fail_msg("%s: not a readable pcap file", path);
	n = pf.n;
	pcap_free(&pf);
	if (n < min)
		fail_msg("%s: %d packets, expected at least %d", path, n, min);
	snprintf(cmd, sizeof(cmd), "%s -n -r %s -X lua_script:%s -o udp.try_heuristic_first:TRUE "
		 "-Y 'homa && !homa.malformed' "
		 "-T fields -e homa.sport -e homa.dport 2>/dev/null", HOMA_TSHARK, path, HOMA_LUA);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned sport = 0, dport = 0;

		ok++;
		if (sscanf(line, "%u\t%u", &sport, &dport) == 2) {
			from += sport == port;
			to += dport == port;
		}
	}
	assert_int_equal(pclose(p), 0);
	if (ok != n)
		fail_msg("%s: %d packets, %d decoded as well-formed Homa", path, n, ok);
	if (port && (!to || !from))
		fail_msg("%s: %d packets to port %u, %d from it", path, to, port, from);
}

/** num() - @v as text in a static buffer slot. */
static char *num(unsigned v, int slot)
{
	static char buf[8][16];

	snprintf(buf[slot], sizeof(buf[slot]), "%u", v);
	return buf[slot];
}

/** The log and capture files of a server and its client. */
struct pair_files {
	char *slog, *clog, *sp, *cp;
};

/** pair_files() - <prog>_server.log, <prog>_client.log and their .pcap files. */
static struct pair_files pair_files(const char *prog)
{
	char name[64];
	struct pair_files f;

	snprintf(name, sizeof(name), "%s_server.log", prog);
	f.slog = path_of(name);
	snprintf(name, sizeof(name), "%s_client.log", prog);
	f.clog = path_of(name);
	snprintf(name, sizeof(name), "%s_server.pcap", prog);
	f.sp = path_of(name);
	snprintf(name, sizeof(name), "%s_client.pcap", prog);
	f.cp = path_of(name);
	return f;
}

/**
 * finish_pair() - Stop the server @srv (SIGTERM unless it stops by itself)
 * and check both captures (at least @min packets; the server's to and
 * from @port); free @f.
 */
static void finish_pair(pid_t srv, bool term, struct pair_files *f, uint16_t port, int min)
{
	if (term)
		kill(srv, SIGTERM);
	wait_exit(srv, f->slog);
	check_pcap(f->sp, min, port);
	check_pcap(f->cp, min, 0);
	free(f->slog);
	free(f->clog);
	free(f->sp);
	free(f->cp);
}

/**
 * tools_obs__bench_server_and_client() - homa-bench server and client
 * with --metrics-port and --pcap: both serve /metrics while they run (the
 * server's counts the requests it answered), both captures decode.
 */
static void tools_obs__bench_server_and_client(void **state)
{
	uint16_t port = free_port(SOCK_DGRAM), ms = free_port(SOCK_STREAM);
	uint16_t mc = free_port(SOCK_STREAM);
	struct pair_files f = pair_files("bench");
	char servers[32];
	char *sargv[] = {HOMA_BENCH, "server", "--port", num(port, 0), "--ctl-port", "-1",
			 "--metrics-port", num(ms, 1), "--pcap", f.sp, NULL};
	char *cargv[] = {HOMA_BENCH, "client", "--servers", servers, "--ctl-port", "-1",
			 "--workload", "5000", "--rate", "100", "--duration", "1",
			 "--warmup", "0", "--quiet", "--metrics-port", num(mc, 2), "--pcap", f.cp, NULL};
	pid_t srv = spawn(sargv, f.slog), cli;

	snprintf(servers, sizeof(servers), "127.0.0.1:%u", port);
	assert_true(scrape(ms, "homa_server_requests_received_total", port) == 0);
	cli = spawn(cargv, f.clog);
	scrape(mc, "homa_client_rpcs_started_total", 0);
	wait_client(cli, f.clog, srv, f.slog);
	assert_true(scrape(ms, "homa_server_requests_received_total", port) > 0);
	scrape(ms, "homa_packets_received_by_priority_total", 0);
	finish_pair(srv, true, &f, port, 4);
}

/**
 * tools_obs__echo_examples() - echo_server serves /metrics and captures;
 * echo_client's capture holds its 20 requests and their echoes.
 */
static void tools_obs__echo_examples(void **state)
{
	uint16_t port = free_port(SOCK_DGRAM), ms = free_port(SOCK_STREAM);
	uint16_t mc = free_port(SOCK_STREAM);
	struct pair_files f = pair_files("echo");
	char *sargv[] = {ECHO_SERVER, "--port", num(port, 0), "--count", "20",
			 "--metrics-port", num(ms, 1), "--pcap", f.sp, NULL};
	char *cargv[] = {ECHO_CLIENT, "--port", num(port, 0), "--count", "20", "--size", "3000",
			 "--metrics-port", num(mc, 2), "--pcap", f.cp, NULL};
	pid_t srv = spawn(sargv, f.slog);

	assert_true(scrape(ms, "homa_server_requests_received_total", port) == 0);
	wait_client(spawn(cargv, f.clog), f.clog, srv, f.slog);
	finish_pair(srv, false, &f, port, 40);  /* --count 20: it stops by itself */
}

/**
 * tools_obs__echo_zero_copy() - Without a capture (which reads packets
 * whole), echo_server echoes 19 requests of 30000 bytes from the
 * requests' own buffers: its engine takes every byte once on receive,
 * copied or left in place in the UDP driver's lent receive buffers
 * (a 30000-byte datagram fills enough of one to be lent), and copies
 * none on send (the copying reply it used before copied all of them).
 * echo_client checks each echo through views and exits 0.
 */
static void tools_obs__echo_zero_copy(void **state)
{
	uint16_t port = free_port(SOCK_DGRAM), ms = free_port(SOCK_STREAM);
	char *slog = path_of("zc_server.log"), *clog = path_of("zc_client.log");
	char *sargv[] = {ECHO_SERVER, "--port", num(port, 0), "--count", "20",
			 "--metrics-port", num(ms, 1), NULL};
	char *cargv[] = {ECHO_CLIENT, "--port", num(port, 0), "--count", "19", "--size", "30000",
			 NULL};
	char *last[] = {ECHO_CLIENT, "--port", num(port, 0), "--count", "1", NULL};
	pid_t srv = spawn(sargv, slog);

	assert_true(scrape(ms, "homa_server_requests_received_total", port) == 0);
	wait_client(spawn(cargv, clog), clog, srv, slog);
	assert_true(scrape(ms, "homa_payload_copied_in_bytes_total", port) +
		    scrape(ms, "homa_payload_lent_in_bytes_total", port) == 19 * 30000.0);
	assert_true(scrape(ms, "homa_payload_lent_in_bytes_total", port) > 0);
	assert_true(scrape(ms, "homa_payload_copied_out_bytes_total", port) == 0);
	wait_client(spawn(last, clog), clog, srv, slog);  /* the 20th request: the server stops */
	wait_exit(srv, slog);
	free(slog);
	free(clog);
}

/**
 * tools_obs__kv_examples() - kv_server and kv_client (one lookup thread
 * for 0.3 s: a capture tshark reads in a few seconds) both serve /metrics
 * while running; both captures decode.
 */
static void tools_obs__kv_examples(void **state)
{
	uint16_t port = free_port(SOCK_DGRAM), ms = free_port(SOCK_STREAM);
	uint16_t mc = free_port(SOCK_STREAM);
	struct pair_files f = pair_files("kv");
	char *sargv[] = {KV_SERVER, "--port", num(port, 0), "--metrics-port", num(ms, 1),
			 "--pcap", f.sp, NULL};
	char *cargv[] = {KV_CLIENT, "--port", num(port, 0), "--lookups", "1", "--pushers", "0",
			 "--seconds", "0.3", "--metrics-port", num(mc, 2), "--pcap", f.cp, NULL};
	pid_t srv = spawn(sargv, f.slog), cli;

	scrape(ms, "homa_server_requests_received_total", port);
	cli = spawn(cargv, f.clog);
	scrape(mc, "homa_client_rpcs_started_total", 0);
	wait_client(cli, f.clog, srv, f.slog);
	assert_true(scrape(ms, "homa_server_requests_received_total", port) > 0);
	finish_pair(srv, true, &f, port, 4);
}

/**
 * tools_obs__rtt_compare() - rtt_compare with both flags: the UDP-driver
 * Homa arms each leave a capture FILE.udp-threaded / FILE.udp-polled.
 */
static void tools_obs__rtt_compare(void **state)
{
	uint16_t ms = free_port(SOCK_STREAM);
	char *log = path_of("rtt.log"), *stem = path_of("rtt.pcap");
	char *argv[] = {RTT_COMPARE, "--count", "20", "--no-raw", "--metrics-port", num(ms, 0),
			"--pcap", stem, NULL};
	char file[256];

	wait_exit(spawn(argv, log), log);
	snprintf(file, sizeof(file), "%s.udp-threaded", stem);
	check_pcap(file, 40, 0);
	snprintf(file, sizeof(file), "%s.udp-polled", stem);
	check_pcap(file, 40, 0);
	free(log);
	free(stem);
}

/**
 * readme_command() - The one-line tshark command that README.md shows
 * (the first line starting "tshark -X lua_script:"), into @out.
 */
static void readme_command(char *out, size_t cap)
{
	char line[512];
	FILE *f = fopen(HOMA_SOURCE_DIR "/README.md", "r");

	assert_non_null(f);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "tshark -X lua_script:", 21)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, cap, "%s", line);
			break;
		}
	fclose(f);
	if (!out[0])
		fail_msg("README.md shows no 'tshark -X lua_script:...' line");
}

/**
 * tools_obs__readme_tshark_line() - The README's one-line command, run as
 * written from the source tree (its file name replaced by a capture of
 * one GRANT), decodes the packet.
 */
static void tools_obs__readme_tshark_line(void **state)
{
	struct homa_pkt g = {.sport = 4000, .dport = 5000, .type = HOMA_PKT_GRANT,
			     .sender_id = 42, .u.grant = {.offset = 30000, .priority = 3}};
	struct homa_pcap_pkt p = {.priority = 7, .transport = HOMA_PCAP_UDP, .dir = HOMA_PCAP_TX};
	char cmd[512], out[1024], *file, *pcap = path_of("readme.pcap");
	uint8_t buf[64];
	homa_pcap *pc;
	FILE *f;

	readme_command(cmd, sizeof(cmd));
	file = strstr(cmd, " -r ");
	assert_non_null(file);
	p.src = homa_addr_ipv4(0x7f000001);
	p.dst = homa_addr_ipv4(0x7f000001);
	p.data = buf;
	p.len = (size_t)homa_wire_encode(&g, buf, sizeof(buf));
	assert_int_equal(homa_pcap_open(pcap, NULL, &pc), 0);
	assert_int_equal(homa_pcap_write(pc, &p), 1);
	assert_int_equal(homa_pcap_close(pc), 0);
	snprintf(file + 4, sizeof(cmd) - (size_t)(file + 4 - cmd), "%s", pcap);
	free(pcap);
	assert_int_equal(strncmp(cmd, "tshark ", 7), 0);
	snprintf(out, sizeof(out), "cd %s && %s%s 2>/dev/null", HOMA_SOURCE_DIR, HOMA_TSHARK,
		 cmd + 6);
	f = popen(out, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, sizeof(out), f));
	pclose(f);
	if (!strstr(out, "HOMA") || !strstr(out, "GRANT id 42 4000 > 5000 offset 30000 prio 3"))
		fail_msg("README command printed: %s", out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tools_obs__bench_server_and_client),
		cmocka_unit_test(tools_obs__echo_examples),
		cmocka_unit_test(tools_obs__echo_zero_copy),
		cmocka_unit_test(tools_obs__kv_examples),
		cmocka_unit_test(tools_obs__rtt_compare),
		cmocka_unit_test(tools_obs__readme_tshark_line),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
