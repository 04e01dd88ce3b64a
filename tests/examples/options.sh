#!/bin/sh
# options.sh BINDIR: the five examples' command lines (getopt_long): -h and
# --help print the usage and exit 0; an unknown option, a bad value, a
# missing value or a stray argument prints why and exits 2; --name=value
# and unambiguous prefixes work (echo_server and echo_client run a few
# RPCs on loopback that way).
set -u
bin=${1:?directory of the example programs}
fails=0
fail() { echo "examples_options: FAIL: $*"; fails=$((fails + 1)); }
out=$(mktemp /tmp/ex_opts.XXXXXX); err=$(mktemp /tmp/ex_opts.XXXXXX); spid=""
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	rm -f "$out" "$err" "$out.srv"
}
trap cleanup EXIT INT TERM

# expect CODE TEXT PROG ARGS...: PROG ARGS exits CODE within 20 s (a
# program that ignores a bad option would run on) and TEXT is in what it
# printed (stdout for 0, stderr otherwise).
expect() {
	code=$1 text=$2 prog=$3
	shift 3
	timeout 20 "$bin/$prog" "$@" >"$out" 2>"$err" </dev/null
	rc=$?
	[ "$rc" = "$code" ] || { fail "$prog $*: exit $rc, wanted $code"; return; }
	where=$err
	[ "$code" = 0 ] && where=$out
	grep -q -- "$text" "$where" || fail "$prog $*: no '$text' in: $(cat "$where")"
}

for p in echo_server echo_client kv_server kv_client rtt_compare; do
	expect 0 "usage: $p" $p --help
	expect 0 "usage: $p" $p -h
	expect 0 "usage: $p" $p --he            # a prefix of --help
	expect 2 "no-such-option" $p --no-such-option
	expect 2 "usage: $p" $p --no-such-option
	expect 2 "usage: $p" $p -x
	expect 2 "metrics-port" $p --metrics-port=0
	expect 2 "metrics-port" $p --metrics-port 70000
	expect 2 "metrics-port" $p --metrics-port=abc
	expect 2 "driver" $p --driver=tcp
	expect 2 "transport" $p --transport=udp
	expect 2 "requires an argument" $p --pcap
	expect 2 "unexpected argument 'extra'" $p extra
done
expect 2 "port" echo_client --port=0
expect 2 "size" echo_client --size=1x
expect 2 "count" echo_server --count=-1
expect 2 "server" echo_client --server=not-an-address
expect 2 "threads" kv_server --threads=17
expect 2 "lookups" kv_client --lookups=0
expect 2 "seconds" kv_client --seconds=0
expect 2 "size" rtt_compare --size=1
expect 2 "count" rtt_compare --count 9
# a server that is not there: echo_client says which RPC failed and exits 1
# (an ASan build also checks it frees what it holds on that path)
expect 1 "echo_client: RPC 0:" echo_client --port=1 --count=3

# --name=value and a prefix (--cou) end to end: a server (--transport=auto)
# for 4 requests, a client sending 3 over Homa, then 1 over TCP; a port another test holds makes the server exit,
# then the next port is tried.
started=""
for attempt in 1 2 3 4 5; do
	port=$((20000 + ($$ * 7 + attempt * 3571) % 10000))
	"$bin/echo_server" --port="$port" --cou=4 --transport=auto >"$out.srv" 2>&1 &
	spid=$!
	i=0
	while ! grep -q listening "$out.srv" && kill -0 "$spid" 2>/dev/null && [ $i -lt 200 ]; do
		i=$((i + 1)); sleep 0.1
	done
	grep -q listening "$out.srv" && { started=1; break; }
	kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=""
done
if [ -z "$started" ]; then
	fail "echo_server --port=P did not start: $(cat "$out.srv")"
else
	grep -q "listening on port $port " "$out.srv" || fail "echo_server ignored --port=$port"
	timeout 30 "$bin/echo_client" --server=127.0.0.1 --port="$port" --size=300 --count=3 \
		>"$out" 2>&1 || fail "echo_client --port=$port --count=3: $(cat "$out")"
	grep -q "3 RPCs of 300 bytes, 0 bad" "$out" || fail "echo_client's result: $(cat "$out")"
	# the same server (--transport=auto) answers over TCP too
	timeout 30 "$bin/echo_client" --server=127.0.0.1 --port="$port" --size=300 --count=1 \
		--transport=tcp >"$out" 2>&1 || fail "echo_client --transport=tcp: $(cat "$out")"
	grep -q "1 RPCs of 300 bytes, 0 bad" "$out" || fail "echo_client --transport=tcp: $(cat "$out")"
	wait "$spid" 2>/dev/null || fail "echo_server --cou=4 did not end well: $(cat "$out.srv")"
	spid=""
fi
[ $fails = 0 ] || exit 1
echo "examples_options: ok"
