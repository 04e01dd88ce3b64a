#!/bin/sh
# Generates the certificates the encryption tests and examples use, in DIR
# (never committed): a CA, "server" and "client" certificates signed by it,
# and a "rogue" certificate signed by another CA the others do not trust.
#   gen_certs.sh DIR
set -e
dir=$1
[ -n "$dir" ] || { echo "usage: gen_certs.sh DIR" >&2; exit 2; }
mkdir -p "$dir"
cd "$dir"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
for ca in ca rogue-ca; do
	key $ca.key
	openssl req -x509 -new -key $ca.key -subj "/CN=homa test $ca" -days 2 -out $ca.pem \
		-addext basicConstraints=critical,CA:TRUE 2>/dev/null
done
sign() {  # name ca
	key $1.key
	openssl req -new -key $1.key -subj "/CN=homa test $1" -out $1.csr 2>/dev/null
	openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -CAcreateserial -days 2 \
		-out $1.pem 2>/dev/null
	rm -f $1.csr
}
sign server ca
sign client ca
sign rogue rogue-ca
