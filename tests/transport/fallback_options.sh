#!/bin/sh
# homa-fallback's options (getopt_long): --help exits 0 with the usage;
# --name=value and unambiguous prefixes work; an unknown option, a bad
# number, a missing value and a stray argument each exit 2 with a message.
#   fallback_options.sh PATH_OF_HOMA_FALLBACK
tool="${1:?path of homa-fallback}"
fail() { echo "fallback_options: $*"; exit 1; }
expect() { # expect STATUS ARGS...: run the tool, check its exit status
	want=$1; shift
	"$tool" "$@" >/tmp/fallback_options.$$ 2>&1
	rc=$?
	[ "$rc" -eq "$want" ] || { cat /tmp/fallback_options.$$; rm -f /tmp/fallback_options.$$;
		fail "'$*' exited $rc, expected $want"; }
}
expect 0 --help
grep -q "^usage: homa-fallback server" /tmp/fallback_options.$$ || fail "--help printed no usage"
expect 0 client --help
expect 0 client --servers=127.0.0.1:9 --sec=0.2 --fallback-ms 20
grep -q "^server 127.0.0.1:9: homa" /tmp/fallback_options.$$ || fail "no report line"
expect 2 client --servers 127.0.0.1:9 --no-such-option 1
grep -q "unknown option" /tmp/fallback_options.$$ || fail "no message for an unknown option"
expect 2 client --servers 127.0.0.1:9 --seconds abc
expect 2 client --servers
expect 2 client --servers 127.0.0.1:9 stray
expect 2 client
expect 2 bogus
rm -f /tmp/fallback_options.$$
echo "fallback_options: ok"
