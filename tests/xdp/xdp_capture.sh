#!/bin/sh
# The XDP driver puts the same bytes on the wire as the UDP driver
# (docs/XDP.md): the same RPCs run once with both ends on the UDP driver
# and once on the XDP driver, between two hosts in network namespaces
# joined through a router namespace, whose interface toward the client is
# captured with dumpcap (the hosts' own interfaces cannot show bypassed
# packets). tshark decodes both captures with tools/wireshark/homa.lua;
# the DATA packets of the two runs (first transmissions) must be the same
# set of IP and UDP headers and Homa bytes, except for what differs by
# design: RPC ids (clock-seeded), the acks a packet carries (timing), its
# cutoff version (timing), the retransmissions (timing), the IP id and
# the checksum values (they cover the ids). IP ids must follow Linux's
# rule for both drivers: no id repeats between the packets of one source and destination (both
# drivers: a counter per destination). The XDP driver's IP and UDP
# checksums must be valid; the UDP driver's cannot be checked here (veth
# leaves them to offload).
# With FAMILY 6 the hosts and the router speak IPv6 only: the same
# comparison with traffic class, hop limit, next header and payload
# length in place of the IPv4 fields; the flow label differs by design
# (a keyed hash per flow, as the IP id), but both drivers' labels must be
# set (not 0) and constant per flow.
#   xdp_capture.sh BUILD_DIR SOURCE_DIR [FAMILY]
# Exit 77 (skipped, with the reason) without root, dumpcap, tshark or
# AF_XDP. The namespaces (prefix $NS_PREFIX, "hc" by default) are
# removed on exit, also after a failure.
set -u
build=${1:?build dir}; src=${2:?source dir}; fam=${3:-4}
peer="$build/xdp_peer"
. "$(dirname "$0")/require.sh"
xdp_require xdp_capture ip dumpcap tshark python3
pre=${NS_PREFIX:-hc}$fam
a="${pre}a-$$"; r="${pre}r-$$"; b="${pre}b-$$"; spid=""; cpid=""
tmp=$(mktemp -d /tmp/xdp_capture.XXXXXX)
cleanup() {
	for p in $spid $cpid; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for n in "$a" "$r" "$b"; do ip netns del "$n" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
set -e
. "$(dirname "$0")/routed.sh"
if [ "$fam" = 6 ]; then
	routed_hosts6 "$a" "$r" "$b" c fd32
	ca=fd32:1::2; sa=fd32:2::2
else
	routed_hosts "$a" "$r" "$b" c 10.232 1
	ca=10.232.1.2; sa=10.232.2.2
fi
# unscheduled messages only: their packets do not depend on grant timing
sizes=1,100,1400,3000,9000
set +e

# run DRIVER_A DRIVER_B OUT [CLIENT_BIND SERVER]: the RPCs with the
# server on DRIVER_B's name ("udp" or its interface) and the client on
# DRIVER_A's, captured at cra0; the client binds CLIENT_BIND (its own
# address by default) and calls SERVER (the server's address by default)
run() {
	ip netns exec "$r" dumpcap -q -P -i cra0 -f "udp port 4000" -w "$3" 2>"$tmp/dumpcap.log" &
	cpid=$!
	i=0
	while ! grep -q "File:" "$tmp/dumpcap.log" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	ip netns exec "$b" "$peer" server "$2" "$sa" 4000 4001 >"$tmp/server.out" &
	spid=$!
	i=0
	while ! grep -q ready "$tmp/server.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	ip netns exec "$a" timeout 60 "$peer" echo "$1" "${4:-$ca}" "${5:-$sa}" 4000 "$sizes" 2 \
		4002 >"$tmp/client-$1.out" 2>&1 || { echo "xdp_capture: $1 echoes failed"; return 1; }
	sleep 0.5
	kill "$spid"; wait "$spid" 2>/dev/null; spid=""
	kill "$cpid"; wait "$cpid" 2>/dev/null; cpid=""
	echo "xdp_capture: $1 client: $(tail -1 "$tmp/client-$1.out")"
	return 0
}

# fields CAPTURE: one line per Homa DATA packet (tshark with homa.lua):
# IP addresses and id, then the fields records() compares; IPv6: the
# addresses and flow label, then traffic class, Ethernet type (in the
# place of the IPv4 flags), hop limit, next header, payload length and
# version (in the place of the IPv4 header checksum's status)
fields() {
	if [ "$fam" = 6 ]; then
		set -- "$1" -e ipv6.src -e ipv6.dst -e ipv6.flow -e ipv6.tclass -e eth.type \
			-e ipv6.hlim -e ipv6.nxt -e ipv6.plen -e ipv6.version
	else
		set -- "$1" -e ip.src -e ip.dst -e ip.id -e ip.dsfield -e ip.flags -e ip.ttl \
			-e ip.proto -e ip.len -e ip.checksum.status
	fi
	fcap=$1; shift
	tshark -n -r "$fcap" -X lua_script:"$src/tools/wireshark/homa.lua" \
		-o homa.udp_ports:4000-4002 -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE \
		-Y "homa.type == 0x10" -T fields -E separator=' ' "$@" \
		-e udp.srcport -e udp.dstport -e udp.length \
		-e udp.checksum.status -e udp.payload 2>/dev/null
}

# records FIELDS: the first transmissions' headers and Homa bytes, without
# what differs by design, then "R" and the Homa bytes of each
# retransmission; each line ends with the IP and UDP checksum statuses;
# sorted and unique
records() {
	python3 -c '
import sys
for line in open(sys.argv[1]):
    f = line.split()[3:]
    p = bytearray.fromhex(f[-1])
    if len(p) < 56:
        print("short DATA packet", line, file=sys.stderr)
        sys.exit(1)
    p[20:28] = bytes(8)   # sender RPC id
    p[36:46] = bytes(10)  # the ack it carries (which RPC: timing)
    p[46:48] = bytes(2)   # its cutoff version (whether the CUTOFFS of
                          # the server had come: timing; a request restarted
                          # after they came is otherwise a new record)
    if p[48]:
        p[48] = 0             # a retransmission: its Homa bytes only
        print("R", p.hex(), f[5], f[9])
        continue
    # dsfield flags ttl proto len srcport dstport udplen, the Homa bytes,
    # then the IP and UDP checksum statuses (checked apart)
    print(" ".join(f[0:5] + f[6:9]), p.hex(), f[5], f[9])
' "$1" | sort -u
}

# the UDP run first: the kernel resolves the hosts' neighbours, so no
# first XDP packet is dropped while its next hop is resolved
# IPv4: both clients bind "::" (dual-stack; the XDP driver's IPv4 frames
# lie behind the room of IPv6 headers in its send frames) and call the
# server's IPv4-mapped address; both servers bind their IPv4 address
if [ "$fam" = 4 ]; then
	run udp udp "$tmp/udp.pcap" :: "::ffff:$sa" || exit 1
	run ca0 cb0 "$tmp/xdp.pcap" :: "::ffff:$sa" || exit 1
else
	run udp udp "$tmp/udp.pcap" || exit 1
	run ca0 cb0 "$tmp/xdp.pcap" || exit 1
fi
for f in udp xdp; do
	fields "$tmp/$f.pcap" >"$tmp/$f.fields"
	records "$tmp/$f.fields" >"$tmp/$f.txt" || exit 1
done
n=$(grep -vc '^R' "$tmp/udp.txt")
echo "xdp_capture: $n distinct DATA packets with the UDP driver, $(grep -vc '^R' "$tmp/xdp.txt") with XDP"
# the sizes' packets both ways (1 + 1 + 1 + 3 + 7 per message; the two
# RPCs of a size differ in payload)
[ "$n" -ge 40 ] || { echo "xdp_capture: too few DATA packets captured"; exit 1; }
# checksums: status 1 is "good" (tshark's PROTO_CHECKSUM_E_GOOD); IPv6
# has no header checksum (the field holds the version, 6)
ipok=1; [ "$fam" = 6 ] && ipok=6
if awk -v ipok=$ipok '$(NF - 1) != ipok || $NF != 1 { bad = 1 } END { exit !bad }' \
	"$tmp/xdp.txt"; then
	echo "xdp_capture: bad IP or UDP checksums from the XDP driver"; exit 1
fi
if [ "$fam" = 6 ]; then
	# flow labels: set, one label per flow, both drivers
	for f in udp xdp; do
		python3 - "$tmp/$f.fields" "$f" <<'PY' || exit 1
import sys
flows = {}
for line in open(sys.argv[1]):
    f = line.split()
    label = int(f[2], 16)
    if not label:
        print("xdp_capture: %s: a packet without flow label" % sys.argv[2])
        sys.exit(1)
    flows.setdefault((f[0], f[1], f[9], f[10]), set()).add(label)
bad = [k for k, v in flows.items() if len(v) != 1]
if bad or not flows:
    print("xdp_capture: %s: flows without one flow label: %s" % (sys.argv[2], bad[:3]))
    sys.exit(1)
print("xdp_capture: %s: %d flows, one flow label each" % (sys.argv[2], len(flows)))
PY
	done
fi
for f in udp xdp; do
	[ "$fam" = 6 ] && break  # the flow label repeats by design
	cut -d' ' -f1-3 "$tmp/$f.fields" | sort | uniq -d >"$tmp/$f.dup"
	[ -s "$tmp/$f.dup" ] || continue
	echo "xdp_capture: $f: IP ids repeat between the same addresses:"
	head -5 "$tmp/$f.dup"; exit 1
done
# the first transmissions of the two runs must be the same set; one that
# is missing from a capture is excused only when that capture holds its
# retransmission (the first was lost on the way, e.g. a full backlog of
# the loaded machine; which packets are lost is timing, not format)
python3 - "$tmp/udp.txt" "$tmp/xdp.txt" <<'PY'
import sys
def load(path):
    first, resent = set(), set()
    for line in open(path):
        f = line.split()
        if f[0] == "R":
            resent.add(f[1])
        else:
            first.add(" ".join(f[:-2]))
    return first, resent
def nearest(rec, others):
    """The byte offsets where the closest of @others (same headers and
    Homa length) differs from @rec's Homa bytes, or None."""
    a = bytes.fromhex(rec.split()[-1])
    best = None
    for o in others:
        b = bytes.fromhex(o.split()[-1])
        if o.split()[:-1] != rec.split()[:-1] or len(b) != len(a):
            continue
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if best is None or len(diff) < len(best):
            best = diff
    return best
(uf, ur), (xf, xr) = load(sys.argv[1]), load(sys.argv[2])
bad = excused = 0
for mine, theirs, resent, who in ((uf, xf, ur, "XDP"), (xf, uf, xr, "UDP")):
    for rec in sorted(theirs - mine):
        if rec.split()[-1] in resent:
            excused += 1
            continue
        bad += 1
        print("xdp_capture: only the %s driver sent %s" % (who, rec))
        near = nearest(rec, mine)
        if near:
            print("xdp_capture:   nearest of the other run differs at Homa bytes %s"
                  % near)
same = len(uf & xf)
print("xdp_capture: %d first transmissions the same, %d only resent in one run, %d differ"
      % (same, excused, bad))
sys.exit(1 if bad or same < 40 else 0)
PY
[ $? -eq 0 ] || { echo "xdp_capture: the drivers' packets differ"; exit 1; }
echo "xdp_capture: the same bytes"
exit 0
