#!/bin/sh
# xdp.sh LINUX_ECHO: programs of the Linux module's API on the shim's XDP
# driver (HOMA_LINUX_DRIVER=xdp, homa-linux(7)). Two network namespaces
# joined by a veth pair; linux_echo serves in one and its client sends
# 1 B to 300 kB echoes from the other, each end on AF_XDP on its veth;
# then the same over IPv6 (AF_INET6 sockets) with a second server.
# Also: without HOMA_LINUX_IFNAME a socket does not open, with a message.
# Exit 77 (skipped, with the reason) without root or AF_XDP; the
# namespaces are removed on exit, also after a failure.
set -u
echo_prog=${1:?linux_echo}
skip() { echo "shim_xdp: skipped: $*"; exit 77; }
fail() { echo "shim_xdp: FAIL: $*"; [ -f "$log" ] && cat "$log"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root (CAP_NET_ADMIN, CAP_BPF, namespaces)"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
python3 -c 'import socket; socket.socket(44, socket.SOCK_RAW)' 2>/dev/null \
	|| skip "this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)"
a="hsxa-$$"; b="hsxb-$$"; spid=""; spid6=""; log=$(mktemp /tmp/shim_xdp.XXXXXX)
cleanup() {
	for p in $spid $spid6; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for n in "$a" "$b"; do ip netns del "$n" 2>/dev/null; done
	rm -f "$log"
}
trap cleanup EXIT INT TERM

# No interface: the socket's first call fails (EINVAL) and says why.
out=$(HOMA_LINUX_DRIVER=xdp HOMA_LINUX_IFNAME= "$echo_prog" server 4100 1 2>&1) \
	&& fail "linux_echo served on xdp without an interface"
echo "$out" | grep -q "needs HOMA_LINUX_IFNAME" || fail "no message without an interface: $out"

set -e
for n in "$a" "$b"; do ip netns add "$n"; ip -n "$n" link set lo up; done
ip link add va0 netns "$a" type veth peer name vb0 netns "$b"
ip -n "$a" addr add 10.233.0.1/24 dev va0
ip -n "$b" addr add 10.233.0.2/24 dev vb0
ip -n "$a" -6 addr add fd33::1/64 dev va0 nodad
ip -n "$b" -6 addr add fd33::2/64 dev vb0 nodad
ip -n "$a" link set va0 up
ip -n "$b" link set vb0 up
set +e
export HOMA_LINUX_DRIVER=xdp
HOMA_LINUX_IFNAME=vb0 HOMA_LINUX_ADDR4=10.233.0.2 HOMA_LINUX_VERBOSE=1 HOMA_LINUX_TIMEOUT_MS=5000 \
	ip netns exec "$b" "$echo_prog" server 4100 >"$log" 2>&1 &
spid=$!
i=0
while ! grep -q serving "$log"; do
	kill -0 "$spid" 2>/dev/null || fail "the server did not start"
	i=$((i + 1)); [ $i -gt 200 ] && fail "the server did not start in 20 s"
	sleep 0.1
done
grep -q "AF_XDP driver" "$log" || fail "the server is not on the XDP driver"
# A loaded machine can stall a process past the RPC timeout: the client
# allows 5 s of silence, and each size is tried up to 3 times.
for size in 1 1400 300000; do
	ok=0
	for try in 1 2 3; do
		HOMA_LINUX_IFNAME=va0 HOMA_LINUX_ADDR4=10.233.0.1 HOMA_LINUX_TIMEOUT_MS=5000 \
			ip netns exec "$a" timeout 30 "$echo_prog" client 4100 "$size" 10 10.233.0.2 \
			&& { ok=1; break; }
		echo "shim_xdp: retry $try: $size bytes"
	done
	[ $ok = 1 ] || fail "echoes of $size bytes over AF_XDP"
done
kill -0 "$spid" || fail "the server died"
echo "shim_xdp: echoes over AF_XDP ok"

# IPv6: an AF_INET6 server on the same interface (a second process there)
log6=$log.6
HOMA_LINUX_IFNAME=vb0 HOMA_LINUX_ADDR6=fd33::2 HOMA_LINUX_TIMEOUT_MS=5000 \
	ip netns exec "$b" "$echo_prog" server6 4101 >"$log6" 2>&1 &
spid6=$!
i=0
while ! grep -q serving "$log6"; do
	kill -0 "$spid6" 2>/dev/null || { cat "$log6"; rm -f "$log6"; fail "the IPv6 server did not start"; }
	i=$((i + 1)); [ $i -gt 200 ] && { rm -f "$log6"; fail "the IPv6 server did not start in 20 s"; }
	sleep 0.1
done
rm -f "$log6"
for size in 1 1400 300000; do
	ok=0
	for try in 1 2 3; do
		HOMA_LINUX_IFNAME=va0 HOMA_LINUX_ADDR6=fd33::1 HOMA_LINUX_TIMEOUT_MS=5000 \
			ip netns exec "$a" timeout 30 "$echo_prog" client 4101 "$size" 10 fd33::2 \
			&& { ok=1; break; }
		echo "shim_xdp: retry $try: $size bytes over IPv6"
	done
	[ $ok = 1 ] || fail "echoes of $size bytes over AF_XDP and IPv6"
done
echo "shim_xdp: echoes over AF_XDP and IPv6 ok"
