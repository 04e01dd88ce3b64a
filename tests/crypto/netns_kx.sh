#!/bin/sh
# Encryption between two hosts: network namespaces A (10.78.0.1) and B
# (10.78.0.2) joined by a veth pair, certificates generated for the run
# (scripts/gen_certs.sh). echo_server --encrypt in B; from A an encrypted
# echo_client completes 100 RPCs of 5000 B with the TLS 1.3 key exchange
# and no bad echo; a clear-text client gets no answer (its packets are
# dropped); a client that trusts another CA is refused with the
# certificate error.
#   netns_kx.sh BUILD_DIR GEN_CERTS
# Exit 77 (skipped, with the reason) without root or ip. The namespaces
# are removed on exit, also after a failure.
set -u
build=${1:?build dir}; gen=${2:?gen_certs.sh}
skip() { echo "netns_kx: skipped: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
a="hka-$$"; b="hkb-$$"; spid=""; dir=$(mktemp -d)
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	for n in "$a" "$b"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() { echo "netns_kx: $*"; echo "server log:"; cat "$dir/server.log"; exit 1; }
set -e
"$gen" "$dir/certs"
# a client that trusts only the rogue CA (and shows the rogue certificate)
mkdir "$dir/rogue"
cp "$dir/certs/rogue-ca.pem" "$dir/rogue/ca.pem"
cp "$dir/certs/rogue.pem" "$dir/rogue/client.pem"
cp "$dir/certs/rogue.key" "$dir/rogue/client.key"
for n in "$a" "$b"; do ip netns add "$n"; ip -n "$n" link set lo up; done
ip link add hk0 netns "$a" type veth peer name hk1 netns "$b"
ip -n "$a" addr add 10.78.0.1/24 dev hk0
ip -n "$b" addr add 10.78.0.2/24 dev hk1
ip -n "$a" link set hk0 up
ip -n "$b" link set hk1 up
set +e
ip netns exec "$b" "$build/echo_server" --port 4712 --encrypt --certs "$dir/certs" \
	>"$dir/server.log" 2>&1 &
spid=$!
# the server is up when its key-exchange service (TCP 4712) listens
i=0
until ip netns exec "$b" ss -ltn 2>/dev/null | grep -q ':4712 '; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "the server did not start"
	sleep 0.1
done
out=$(ip netns exec "$a" timeout 60 "$build/echo_client" --server 10.78.0.2 --port 4712 \
	--encrypt --certs "$dir/certs" --count 100 --size 5000 2>&1)
echo "$out"
echo "$out" | grep -q '100 RPCs of 5000 bytes, 0 bad echoes' || fail "encrypted client failed"
out=$(ip netns exec "$a" timeout 60 "$build/echo_client" --server 10.78.0.2 --port 4712 \
	--count 1 2>&1) && fail "a clear-text client got an answer: $out"
echo "clear text: $out"
echo "$out" | grep -q 'RPC 0' || fail "clear-text client: unexpected failure: $out"
out=$(ip netns exec "$a" timeout 60 "$build/echo_client" --server 10.78.0.2 --port 4712 \
	--encrypt --certs "$dir/rogue" --count 1 2>&1) && fail "a rogue client got an answer"
echo "rogue CA: $out"
echo "$out" | grep -q 'certificate' || fail "rogue client: not a certificate error: $out"
kill -0 "$spid" || fail "the server died"
echo "ok: netns key exchange"
