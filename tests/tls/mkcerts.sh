#!/bin/sh
# mkcerts.sh DIR [CLIENT...] - throwaway certificates for the mTLS tests.
#
#   DIR/ca.pem ca.key                 the test CA
#   DIR/server.pem server.key         CN coordinator, SAN DNS:localhost, IP:127.0.0.1
#   DIR/client-NAME.pem client-NAME.key   one per CLIENT, signed by the test CA
#   DIR/other-ca.pem other-ca.key     a second, unrelated CA
#   DIR/other-client.pem other-client.key  CN node-01, signed by the other CA
#   DIR/expired-client.pem .key       CN node-01, test CA, expired a day ago
#   DIR/expired-server.pem .key       like server.pem, expired a day ago
#   DIR/wrongname-server.pem .key     test CA, SAN DNS:elsewhere.example only
#
# CLIENT is NAME or NAME=DNS1,DNS2,...: the certificate's CN is NAME and its
# DNS SANs are the names after '='. Default clients: node-01 (SANs
# node-01.cluster.local and ip-10-0-0-1.ec2.internal), node-02, admin.
# P-256 keys, valid for two days (the expired ones: -days -1, so notAfter is
# a day before notBefore, which is now: no fake clock needed); everything in
# DIR is replaced.
set -eu

[ $# -ge 1 ] || { echo "usage: mkcerts.sh DIR [NAME[=DNS,...]...]" >&2; exit 2; }
dir="$1"
shift
[ $# -gt 0 ] || set -- "node-01=node-01.cluster.local,ip-10-0-0-1.ec2.internal" node-02 admin
command -v openssl >/dev/null || { echo "mkcerts.sh: openssl not found" >&2; exit 1; }

umask 077
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.mkcerts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ca NAME CN: a self-signed CA certificate and key.
ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-keyout "$tmp/$1.key" -out "$tmp/$1.pem" -subj "/CN=$2" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}

# leaf FILE CA CN USAGE SAN [DAYS]: a key and a certificate signed by CA.
leaf() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$tmp/$1.key" -out "$tmp/$1.csr" -subj "/CN=$3" 2>/dev/null
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature"
		echo "extendedKeyUsage=$4"
		[ -z "$5" ] || echo "subjectAltName=$5"
	} >"$tmp/$1.ext"
	openssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/$2.pem" -CAkey "$tmp/$2.key" \
		-set_serial "0x$(openssl rand -hex 8)" -days "${6:-2}" -extfile "$tmp/$1.ext" \
		-out "$tmp/$1.pem" 2>/dev/null
	rm -f "$tmp/$1.csr" "$tmp/$1.ext"
}

# "a,b" -> "DNS:a,DNS:b"
dns_sans() {
	printf '%s' "$1" | awk -F, '{ for (i = 1; i <= NF; i++) printf "%sDNS:%s", (i > 1 ? "," : ""), $i }'
}

ca ca dratopo-test-ca
leaf server ca coordinator serverAuth "DNS:localhost,IP:127.0.0.1"
for spec in "$@"; do
	name=${spec%%=*}
	sans=""
	[ "$name" = "$spec" ] || sans=$(dns_sans "${spec#*=}")
	leaf "client-$name" ca "$name" clientAuth "$sans"
done
ca other-ca dratopo-other-ca
leaf other-client other-ca node-01 clientAuth "DNS:node-01"
leaf expired-client ca node-01 clientAuth "DNS:node-01" -1
leaf expired-server ca coordinator serverAuth "DNS:localhost,IP:127.0.0.1" -1
leaf wrongname-server ca coordinator serverAuth "DNS:elsewhere.example"

chmod 644 "$tmp"/*.pem
mv -f "$tmp"/*.pem "$tmp"/*.key "$dir"/
echo "mkcerts.sh: certificates in $dir"
