#!/bin/sh
# scripts/gen_certs.sh under the conditions of the testbed, where several
# processes asked for one folder at once: four concurrent runs on a new
# folder all succeed and leave one verifiable set; a reader that sees
# ca.pem sees every file of the set; a complete set is kept by a later
# run; a damaged set (a certificate of the wrong CA) is replaced; a folder
# that cannot be made gives exit 1 and a message.
#   gen_certs.sh GEN_CERTS
set -u
gen=${1:?gen_certs.sh}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "gen_certs: $*"; exit 1; }
verify() {
	openssl verify -CAfile "$1/ca.pem" "$1/server.pem" "$1/client.pem" >/dev/null 2>&1 &&
	openssl verify -CAfile "$1/rogue-ca.pem" "$1/rogue.pem" >/dev/null 2>&1 &&
	! openssl verify -CAfile "$1/ca.pem" "$1/rogue.pem" >/dev/null 2>&1
}
set_files="ca.pem ca.key server.pem server.key client.pem client.key rogue-ca.pem rogue.pem rogue.key"

# 1. four at once on one new folder
pids=""
for i in 1 2 3 4; do "$gen" "$dir/a" 2>"$dir/err$i" & pids="$pids $!"; done
for p in $pids; do wait "$p" || fail "a concurrent run failed: $(cat "$dir"/err*)"; done
verify "$dir/a" || fail "the concurrent runs left a set that does not verify"

# 2. once ca.pem is there, so is the rest (polls every 10 ms, 6000 times at most)
"$gen" "$dir/b" 2>"$dir/errb" & pid=$!
polls=0
while [ ! -s "$dir/b/ca.pem" ] && kill -0 "$pid" 2>/dev/null; do
	polls=$((polls + 1))
	[ "$polls" -lt 6000 ] || fail "no ca.pem within 6000 polls (60 s or more)"
	sleep 0.01
done
for f in $set_files; do
	[ -s "$dir/b/$f" ] || fail "ca.pem appeared before $f"
done
wait "$pid" || fail "run b failed: $(cat "$dir/errb")"
verify "$dir/b" || fail "set b does not verify"

# 3. a complete set is kept
sum=$(cat "$dir/a/ca.pem" "$dir/a/server.pem" | cksum)
"$gen" "$dir/a" || fail "a rerun failed"
[ "$(cat "$dir/a/ca.pem" "$dir/a/server.pem" | cksum)" = "$sum" ] || fail "a complete set was replaced"

# 4. a damaged set is replaced
cp "$dir/a/rogue.pem" "$dir/a/server.pem"
"$gen" "$dir/a" || fail "the run over a damaged set failed"
verify "$dir/a" || fail "a damaged set was kept"

# 5. a folder that cannot be made
touch "$dir/file"
if "$gen" "$dir/file/c" 2>"$dir/errc"; then fail "a folder under a file succeeded"; fi
[ -s "$dir/errc" ] || fail "no message for a folder under a file"
echo "gen_certs: ok"
