# shellcheck shell=sh
# Sourced by the homa-bench end-to-end tests: start a `homa-bench server`
# on a port nobody holds. A test's port comes from its pid, and tests run
# in parallel beside other programs, so the port (or the control port
# PORT+1) may be taken; a server that cannot bind exits, and a test that
# then talked to whatever holds the port failed for a reason that was
# not its own. Here a port in use means: try another.
#
#   bench_server_start LOG ARGS...   starts "$bench" server ARGS --port $port,
#                                    stderr to LOG; on success sets srv (its
#                                    pid) and port; exits the test with the
#                                    log when the server fails otherwise.
#                                    If bench_before_try names a function,
#                                    it runs before each start on $port
#                                    (e.g. to take PORT+1 for a stand-in)
#                                    and returns 1 when a port it needs is
#                                    taken: then the next candidate is tried
#   bench_port_ok PORT               whether PORT and PORT+1 lie below the
#                                    kernel's ephemeral range
#   bench_next_port N                sets port to candidate N (N >= 1), below
#                                    the ephemeral range, from the pid
#
# The caller sets bench (the binary) and port (the first candidate).
# shellcheck disable=SC2154

# The first of the kernel's ephemeral ports, which it hands to every
# outgoing connection.
bench_ephemeral_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)

# bench_port_ok PORT: 0 when PORT..PORT+1 are below the ephemeral ports,
# 1 otherwise.
bench_port_ok() {
	[ "$1" -ge 1024 ] && [ $(($1 + 1)) -lt "$bench_ephemeral_lo" ]
}

# bench_next_port N: candidate N, an even port from 10000 up to the
# ephemeral range's start, spread by the pid and N.
bench_next_port() {
	_span=$(((bench_ephemeral_lo - 10002) / 2))
	[ "$_span" -gt 0 ] || _span=1000
	port=$((10000 + 2 * (($$ * 7 + $1 * 3571) % _span)))
}

# bench_server_try LOG ARGS...: one start on $port. Returns 0 once the
# server says it is ready on $port, 1 if it exited because a port was in
# use (srv cleared), 2 if it exited for another reason or never became
# ready within 10 s (the log says why).
bench_server_try() {
	_log=$1
	shift
	"$bench" server "$@" --port "$port" 2> "$_log" &
	srv=$!
	_i=0
	while [ $_i -lt 100 ]; do
		grep -qs "^homa-bench server: ready on port $port\$" "$_log" && return 0
		if ! kill -0 "$srv" 2> /dev/null; then
			wait "$srv" 2> /dev/null || true
			srv=
			grep -qs "in use" "$_log" && return 1
			return 2
		fi
		_i=$((_i + 1))
		sleep 0.1
	done
	return 2
}

# bench_server_start LOG ARGS...: bench_server_try on $port (moved below
# the ephemeral range first if it is not there), then on up to 9 other
# candidates while a port is in use; bench_before_try, when set, runs
# before each try and a 1 from it counts as a port in use.
bench_server_start() {
	_n=0
	bench_port_ok "$port" || { _n=1; bench_next_port $_n; }
	while :; do
		_rc=0
		if [ -n "${bench_before_try:-}" ] && ! "$bench_before_try"; then
			_rc=1
		else
			bench_server_try "$@" || _rc=$?
		fi
		[ $_rc -eq 0 ] && return 0
		if [ $_rc -eq 2 ] || [ $_n -ge 10 ]; then
			echo "homa-bench server did not start on port $port:"
			cat "$1"
			exit 1
		fi
		_n=$((_n + 1))
		bench_next_port $_n
	done
}
