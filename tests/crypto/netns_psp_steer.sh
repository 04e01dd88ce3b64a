#!/bin/sh
# PSP port steering between two hosts: network namespaces psp10a-PID
# (10.79.0.1) and psp10b-PID (10.79.0.2) joined by a veth pair. Every
# endpoint sends its sealed packets to UDP port 1000 (PSP's) of the other
# host, where the kernel steers each to the socket its clear header names
# (SK_REUSEPORT program, src/runtime/psp_steer.c). Two homa-bench server
# processes in B share B's program (one /dev/shm record named after B's
# network namespace); the client in A has its own (A's record). Checked:
# both servers answer every RPC of the client (1000 B requests and
# responses, over both); each server's /metrics (read with homa-stat)
# says path "steered", packets opened, none forwarded by a receiver, no
# PSP port drops; the two namespaces' records exist under different names
# and name different programs. That the two B processes share B's
# program shows in both being reached through port 1000 with no "no_port"
# drop: a process with a program of its own would replace the group's,
# and the other's socket would no longer be found.
#   netns_psp_steer.sh BUILD_DIR GEN_CERTS
# Exit 77 (skipped, with the reason) without root, ip or bpf support. The
# namespaces and their /dev/shm records are removed on exit, also after
# a failure.
set -u
build=${1:?build dir}; gen=${2:?gen_certs.sh}
skip() { echo "netns_psp_steer: skipped: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, CAP_BPF)"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
a="psp10a-$$"; b="psp10b-$$"; pids=""; dir=$(mktemp -d); recs=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for n in "$a" "$b"; do ip netns del "$n" 2>/dev/null; done
	for r in $recs; do rm -f "$r"; done
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() {
	echo "netns_psp_steer: $*"
	for f in "$dir"/*.log; do echo "== $f"; cat "$f"; done
	exit 1
}
# rec NS: the /dev/shm record of PSP port 1000 in namespace NS
rec() { echo "/dev/shm/homa-psp-steer-$(ip netns exec "$1" stat -L -c %i /proc/self/ns/net)-1000"; }
set -e
"$gen" "$dir/certs" >/dev/null
for n in "$a" "$b"; do ip netns add "$n"; ip -n "$n" link set lo up; done
ip link add "p10a$$" netns "$a" type veth peer name "p10b$$" netns "$b"
ip -n "$a" addr add 10.79.0.1/24 dev "p10a$$"
ip -n "$b" addr add 10.79.0.2/24 dev "p10b$$"
ip -n "$a" link set "p10a$$" up
ip -n "$b" link set "p10b$$" up
recs="$(rec "$a") $(rec "$b")"
set +e
enc="--encrypt --certs $dir/certs --psp-port 1000"
# RPC timeout 2 s, not the engine's 100 ms (20 RESEND intervals of 100
# ticks, not 5): on a loaded machine a server process went unscheduled
# for longer than 100 ms while the client ran, and the client's RPCs to it
# timed out (HOMA_ETIMEDOUT, then HOMA_EPEERDEAD for new ones) although
# steering worked. RPCs to a port steering cannot reach still fail (2 s).
tmo="--homa-resend-ticks 100"
for p in 4712 4722; do
	ip netns exec "$b" "$build/homa-bench" server --port $p --bind 10.79.0.2 $enc $tmo \
		--metrics-port $((p + 5)) >"$dir/server$p.log" 2>&1 &
	pids="$pids $!"
done
for p in 4712 4722; do  # up when the key exchange (TCP P) listens
	i=0
	until ip netns exec "$b" ss -ltn 2>/dev/null | grep -q ":$p "; do
		i=$((i + 1)); [ $i -lt 150 ] || fail "server $p did not start"
		sleep 0.1
	done
done
ip netns exec "$a" timeout 60 "$build/homa-bench" client \
	--servers 10.79.0.2:4712,10.79.0.2:4722 $enc $tmo --workload 1000 --response 1000 \
	--outstanding 4 --duration 2 --quiet >"$dir/client.log" 2>&1 || fail "client failed"
cat "$dir/client.log"
grep -Eq ' [1-9][0-9]* RPCs \(0 failed, 0 unfinished\)' "$dir/client.log" ||
	fail "the client's RPCs did not all complete"
for p in 4712 4722; do
	out=$(ip netns exec "$b" "$build/homa-stat" -p $((p + 5)) --all -s "$dir/st$p" -f psp_) ||
		fail "homa-stat of server $p: $out"
	echo "$out" > "$dir/metrics$p.log"
	val() { echo "$out" | awk -v k="$1" 'index($1, k) == 1 { print $2; exit }'; }
	ep="{endpoint=\"$p\""
	[ "$(val "homa_psp_path$ep,path=\"steered\"}")" = 1 ] || fail "server $p: not steered"
	[ "$(val "homa_psp_port_forwarded_packets_total$ep}")" = 0 ] ||
		fail "server $p: a receiver forwarded packets"
	opened=$(val "homa_psp_opened_packets_total$ep}")
	[ "${opened:-0}" -gt 0 ] || fail "server $p: no packet opened"
	for r in not_psp truncated no_port; do
		[ "$(val "homa_psp_port_drops_total$ep,reason=\"$r\"}")" = 0 ] ||
			fail "server $p: PSP port drops ($r)"
	done
	echo "server $p: steered, $opened packets opened"
done
set -- $recs
[ "$1" != "$2" ] || fail "both namespaces use the record $1"
for r in $recs; do [ -s "$r" ] || fail "no record $r"; done
# one program per namespace: A's record and B's name different programs
ida=$(od -An -tu4 -N4 "$1" | tr -d ' '); idb=$(od -An -tu4 -N4 "$2" | tr -d ' ')
[ -n "$ida" ] && [ -n "$idb" ] && [ "$ida" != "$idb" ] ||
	fail "records $1 ($ida) and $2 ($idb): not one program each"
kill -0 $pids || fail "a server died"
echo "ok: PSP steering between namespaces (programs $ida, $idb), two processes on one"
