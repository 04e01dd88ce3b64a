# Sourced by the XDP driver's tests: what a test needs before it starts,
# and waiting for a program's output.

# xdp_skip NAME REASON: say that test NAME is skipped and why; exit 77
# (CTest's skip code).
xdp_skip() {
	echo "$1: skipped: $2"
	exit 77
}

# xdp_require NAME TOOL...: return if this runs as root, every TOOL is on
# PATH and the kernel has AF_XDP sockets; otherwise skip test NAME (exit
# 77) saying which one is missing.
xdp_require() {
	name=$1; shift
	[ "$(id -u)" -eq 0 ] || xdp_skip "$name" "needs root (namespaces, CAP_NET_ADMIN, CAP_BPF)"
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || xdp_skip "$name" "needs $t (scripts/deps.sh installs it)"
	done
	python3 -c 'import socket; socket.socket(44, socket.SOCK_RAW)' 2>/dev/null \
		|| xdp_skip "$name" "this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)"
}

# wait_line FILE PATTERN: wait up to 30 s for a line matching PATTERN in
# FILE. Returns 1 if none came.
wait_line() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1)); [ "$i" -gt 300 ] && return 1
		sleep 0.1
	done
}
