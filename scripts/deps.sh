#!/bin/sh
# Installs every Debian package the build, the tests and the tools need.
# Idempotent: does nothing (and needs no network) when all are present.
set -e
PKGS="build-essential cmake pkg-config libcmocka-dev valgrind gnuplot-nox \
  tshark clang libclang-rt-14-dev iproute2 nftables jq python3 ethtool \
  scdoc man-db prometheus dpkg-dev libssl-dev openssl python3-cryptography \
  python3-dev python3-cffi python3-pytest python3-setuptools python3-pip \
  libxdp-dev libbpf-dev llvm strace"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
    || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing packages:$missing (run as root to install)" >&2
  exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
