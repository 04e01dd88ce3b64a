#!/bin/sh
# Where the CPU goes, Homa against kernel TCP on loopback: runs a
# homa-bench server and closed-loop client of each arm under `perf record
# -g` (one arm after the other, with compare's loopback settings for
# Homa) and prints tools/bench/profile_split.py's table for both arms.
#
#   tools/bench/profile.sh BUILD SCENARIO [SECONDS] [--encrypt]
#
# rtt also profiles the raw UDP ping-pong floor (homa-bench --transport udp)
# as a third arm, the floor a UDP-carried stack cannot go below.
#
# --encrypt: the encrypted arms (Homa with PSP, TCP with TLS 1.3), as
# `homa-bench compare --encrypt` runs them (certificates generated in
# /tmp/homa-bench-certs).
#
# SCENARIO: throughput (500 KB requests, one in flight), rtt (100 B RPCs,
# one in flight) or rate (100 B RPCs, 32 in flight; TCP 4 connections). Needs perf and root (or a low
# perf_event_paranoid). Leaves its recordings in a temporary directory it
# removes on exit.
set -eu
build=$1
scen=$2
secs=${3:-3}
enc=
if [ "${4:-}" = --encrypt ]; then enc=--encrypt
elif [ -n "${4:-}" ]; then echo "the fourth argument can only be --encrypt" >&2; exit 2; fi
here=$(dirname "$0")
bench=$build/homa-bench
case $scen in
  throughput) load="--workload 500K --outstanding 1"; tcp_extra="" ;;
  rtt) load="--workload 100 --outstanding 1"; tcp_extra="" ;;
  rate) load="--workload 100 --outstanding 32"; tcp_extra="--conns 4" ;;
  *) echo "scenario must be throughput, rtt or rate" >&2; exit 2 ;;
esac
homa_lo="--homa-mtu 65000 --homa-link-gbps 400 --homa-unsched-bytes 600000 --homa-max-incoming 400000"
dir=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill -INT $srv 2>/dev/null; rm -rf "$dir"' EXIT
args=
arms="homa tcp"
[ "$scen" = rtt ] && [ -z "$enc" ] && arms="homa tcp udp"
for arm in $arms; do
  port=$(( 20000 + $$ % 5000 ))
  [ $arm = tcp ] && port=$((port + 2))
  [ "$arm" = udp ] && port=$((port + 4))
  extra=$homa_lo
  [ "$arm" != homa ] && extra=$tcp_extra
  # shellcheck disable=SC2086
  perf record -q -g -o "$dir/srv-$arm.data" -- "$bench" server --transport $arm --port $port \
    $extra $enc > /dev/null 2>&1 &
  srv=$!
  sleep 1
  # shellcheck disable=SC2086
  perf record -q -g -o "$dir/cli-$arm.data" -- "$bench" client --transport $arm \
    --servers 127.0.0.1:$port $load $extra $enc --duration "$secs" --warmup 0 \
    --json "$dir/$arm.json" > /dev/null 2>&1
  kill -INT $srv
  wait $srv || true
  srv=
  # RPCs the client completed over its whole life (the window, no warm-up)
  rpcs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rpcs'])" "$dir/$arm.json")
  echo "$arm: $rpcs RPCs in ${secs} s"
  args="$args $arm:$rpcs:$dir/cli-$arm.data,$dir/srv-$arm.data"
done
# shellcheck disable=SC2086
python3 "$here/profile_split.py" $args
