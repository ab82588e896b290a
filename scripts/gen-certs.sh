#!/usr/bin/env bash
# Generates a CA and a serving certificate with the OpenSSL command line (no step CLI needed).
#
#   scripts/gen-certs.sh --out DIR [--cn NAME] [--dns NAME]... [--ip ADDR]... [--days N]
#                        [--ca-cert FILE --ca-key FILE] [--client]
#
# Writes DIR/ca.crt and DIR/ca.key (unless an existing CA is given), DIR/tls.crt and DIR/tls.key.
# For an in-cluster webhook give the service names, e.g.
#   --dns linkerd-proxy-injector.linkerd.svc --dns linkerd-proxy-injector.linkerd.svc.cluster.local
# and --ip 127.0.0.1 to serve on loopback. Keys are ECDSA P-256. --client makes a client
# certificate (extendedKeyUsage clientAuth) instead of a serving one.
set -euo pipefail

out="" cn="" days=365 ca_cert="" ca_key="" client=0
dns=() ips=()
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --cn) cn="$2"; shift 2 ;;
    --dns) dns+=("$2"); shift 2 ;;
    --ip) ips+=("$2"); shift 2 ;;
    --days) days="$2"; shift 2 ;;
    --ca-cert) ca_cert="$2"; shift 2 ;;
    --ca-key) ca_key="$2"; shift 2 ;;
    --client) client=1; shift ;;
    -h|--help) usage ;;
    *) echo "gen-certs.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ -n "$out" ]] || { echo "gen-certs.sh: --out DIR is required" >&2; exit 2; }
command -v openssl >/dev/null || { echo "gen-certs.sh: openssl not found (apt-get install openssl)" >&2; exit 1; }
if [[ ${#dns[@]} -eq 0 && ${#ips[@]} -eq 0 && $client -eq 0 ]]; then ips=(127.0.0.1); dns=(localhost); fi
[[ -n "$cn" ]] || cn="${dns[0]:-${ips[0]:-client}}"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ -z "$ca_cert" ]]; then
  ca_cert="$out/ca.crt" ca_key="$out/ca.key"
  openssl ecparam -name prime256v1 -genkey -noout -out "$ca_key" 2>/dev/null
  openssl req -x509 -new -key "$ca_key" -sha256 -days "$days" -subj "/CN=sidecar-harness-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$ca_cert" 2>/dev/null
elif [[ -z "$ca_key" ]]; then
  echo "gen-certs.sh: --ca-cert needs --ca-key" >&2; exit 2
fi

san=""
for d in "${dns[@]}"; do san+="${san:+,}DNS:$d"; done
for i in "${ips[@]}"; do san+="${san:+,}IP:$i"; done
{
  echo "basicConstraints=critical,CA:FALSE"
  echo "keyUsage=critical,digitalSignature,keyEncipherment"
  if [[ $client -eq 1 ]]; then echo "extendedKeyUsage=clientAuth"; else echo "extendedKeyUsage=serverAuth"; fi
  [[ -n "$san" ]] && echo "subjectAltName=$san"
} > "$tmp/ext.cnf"

openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/tls.key" 2>/dev/null
openssl req -new -key "$tmp/tls.key" -subj "/CN=$cn" -out "$tmp/tls.csr" 2>/dev/null
openssl x509 -req -in "$tmp/tls.csr" -CA "$ca_cert" -CAkey "$ca_key" -CAcreateserial \
  -CAserial "$tmp/ca.srl" -days "$days" -sha256 -extfile "$tmp/ext.cnf" -out "$tmp/tls.crt" 2>/dev/null
# Replace atomically so a server watching the files never reads half a pair.
mv "$tmp/tls.key" "$out/tls.key.new" && mv "$tmp/tls.crt" "$out/tls.crt.new"
mv "$out/tls.key.new" "$out/tls.key" && mv "$out/tls.crt.new" "$out/tls.crt"
echo "gen-certs.sh: wrote $out/tls.crt (SAN ${san:-none}), CA $ca_cert"
