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
# rogue against rogue-ca.pem, and none expires within a day.
complete() {
	for f in $files; do [ -s "$1/$f" ] || return 1; done
	openssl verify -CAfile "$1/ca.pem" "$1/server.pem" "$1/client.pem" >/dev/null 2>&1 &&
	openssl verify -CAfile "$1/rogue-ca.pem" "$1/rogue.pem" >/dev/null 2>&1 || return 1
	for f in ca server client rogue-ca rogue; do
		openssl x509 -checkend 86400 -noout -in "$1/$f.pem" >/dev/null 2>&1 || return 1
	done
}

# generate TMP: a new set in the empty folder TMP (openssl's messages to TMP/log).
generate() {
	(
		cd "$1"
		key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
		for ca in ca rogue-ca; do
			key $ca.key
			openssl req -x509 -new -key $ca.key -subj "/CN=homa test $ca" -days 2 \
				-out $ca.pem -addext basicConstraints=critical,CA:TRUE
		done
		for pair in server:ca client:ca rogue:rogue-ca; do
			name=${pair%:*} ca=${pair#*:}
			key "$name.key"
			openssl req -new -key "$name.key" -subj "/CN=homa test $name" -out "$name.csr"
			openssl x509 -req -in "$name.csr" -CA $ca.pem -CAkey $ca.key -CAcreateserial \
				-days 2 -out "$name.pem"
		done
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
for f in $files; do mv -f "$tmp/$f" "$dir/$f"; done
