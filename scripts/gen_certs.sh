#!/bin/sh
# Generates the certificates the encryption tests and examples use, in DIR
# (never committed): a CA, "server" and "client" certificates signed by it,
# and a "rogue" certificate signed by another CA the others do not trust.
#   gen_certs.sh DIR
# Safe to run several times at once on one DIR: runs take turns (flock on
# DIR/.lock); a run that finds a complete set, signed by DIR's CA and valid
# for at least one more day, keeps it. A new set is made in a temporary
# folder, checked, then renamed into DIR with ca.pem last, so a reader that
# sees ca.pem sees the whole set. On failure, exits 1 with openssl's
# messages on stderr and leaves DIR's earlier files as they were.
set -e
dir=$1
[ -n "$dir" ] || { echo "usage: gen_certs.sh DIR" >&2; exit 2; }
files="rogue-ca.pem rogue.key rogue.pem ca.key server.key server.pem client.key client.pem ca.pem"

# complete: DIR holds every file, server and client verify against ca.pem,
# rogue against rogue-ca.pem, now and a day from now (so none expires
# within a day). Four openssl runs: each costs a process start, which is
# most of this script's time on a loaded machine.
complete() {
	for f in $files; do [ -s "$1/$f" ] || return 1; done
	day=$(($(date +%s) + 86400))
	for at in "" "-attime $day"; do
		# shellcheck disable=SC2086
		openssl verify $at -CAfile "$1/ca.pem" "$1/server.pem" "$1/client.pem" \
			>/dev/null 2>&1 &&
		openssl verify $at -CAfile "$1/rogue-ca.pem" "$1/rogue.pem" >/dev/null 2>&1 ||
			return 1
	done
}

# generate TMP: a new set in the empty folder TMP (openssl's messages to
# TMP/log), one openssl run per certificate: its key (EC P-256) and the
# certificate, self-signed for a CA (CA:TRUE), signed by its CA otherwise
# (CA:FALSE).
generate() {
	(
		cd "$1"
		cert() {
			name=$1 bc=$2
			shift 2
			openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
				-keyout "$name.key" -subj "/CN=homa test $name" -days 2 \
				-addext "basicConstraints=critical,$bc" -out "$name.pem" "$@"
		}
		cert ca CA:TRUE
		cert rogue-ca CA:TRUE
		cert server CA:FALSE -CA ca.pem -CAkey ca.key
		cert client CA:FALSE -CA ca.pem -CAkey ca.key
		cert rogue CA:FALSE -CA rogue-ca.pem -CAkey rogue-ca.key
	) >"$1/log" 2>&1
}

mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
complete "$dir" && exit 0
tmp=$(mktemp -d "$dir/.new.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! generate "$tmp" || ! complete "$tmp"; then
	echo "gen_certs.sh: cannot generate certificates in $dir:" >&2
	cat "$tmp/log" >&2
	exit 1
fi
rm -f "$dir/ca.pem"  # readers wait for it: the set is complete once it is back
set --
for f in ${files% ca.pem}; do set -- "$@" "$tmp/$f"; done
mv -f "$@" "$dir/"  # one process for the eight, then ca.pem
mv -f "$tmp/ca.pem" "$dir/ca.pem"
