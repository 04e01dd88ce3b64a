#!/bin/sh
# Debian packages of homa (package/CMakeLists.txt, CPack):
#   scripts/deb.sh build [DIR]  configure DIR (default build-deb) for /usr,
#                               build the library, tools and man pages, and
#                               write libhoma1, libhoma-dev and homa-tools
#                               .deb files into DIR
#   scripts/deb.sh test [DIR]   build, install the three packages on this
#                               machine (apt, needs root), check them as a user
#                               meets them (tests/package/check_installed.sh:
#                               programs built by pkg-config and find_package,
#                               man pages), run the tools, then purge them
set -eu
cd "$(dirname "$0")/.."
cmd=${1:-build}
dir=${2:-build-deb}
parts="src/core;src/util;src/sim;src/obs;src/io;src/crypto;src/runtime;tools/bench;tools/sim;tools/stat;package"

build() {
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
		-DHOMA_WERROR=OFF "-DHOMA_ONLY=$parts" >/dev/null
	cmake --build "$dir" -j "$(nproc)" >"$dir/build.log" 2>&1 ||
		{ tail -30 "$dir/build.log" >&2; echo "deb.sh: build failed" >&2; exit 1; }
	rm -f "$dir"/*.deb
	(cd "$dir" && cpack -G DEB >cpack.log 2>&1) ||
		{ tail -30 "$dir/cpack.log" >&2; echo "deb.sh: cpack failed" >&2; exit 1; }
	for d in "$dir"/*.deb; do
		echo "deb.sh: $d"
		dpkg-deb --info "$d" | sed -n 's/^ \(Package\|Version\|Depends\):/    \1:/p'
	done
}

test_debs() {
	pkgs="libhoma1 libhoma-dev homa-tools"
	if dpkg-query -W $pkgs >/dev/null 2>&1; then
		echo "deb.sh: a homa package is already installed; remove it first" >&2
		exit 1
	fi
	trap 'apt-get purge -y -qq $pkgs >/dev/null 2>&1; dpkg --purge $pkgs >/dev/null 2>&1 || true' EXIT
	apt-get install -y -qq "$PWD/$dir"/*.deb >/dev/null
	dpkg -L libhoma1 libhoma-dev homa-tools | grep -E "\.so\.|\.pc$|Config\.cmake$|/bin/" 
	sh tests/package/check_installed.sh /usr cc "" README.md
	homa-bench --help >/dev/null
	homa-sim --workload w4 --messages 200 --hosts 16 --racks 2 --spines 2 --no-timing \
		>/dev/null || { echo "deb.sh: installed homa-sim failed" >&2; exit 1; }
	[ -f /usr/share/homa/ops/prometheus/homa-alerts.yml ] ||
		{ echo "deb.sh: alert rules not installed" >&2; exit 1; }
	echo "deb.sh: PASS (installed, checked, purged)"
}

case "$cmd" in
build) build ;;
test) build; test_debs ;;
*) echo "usage: scripts/deb.sh build|test [DIR]" >&2; exit 2 ;;
esac
