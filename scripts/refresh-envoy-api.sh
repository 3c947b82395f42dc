#!/bin/sh
# Rebuilds third_party/envoy-api from checkouts of its upstream repositories (no download here:
# give the paths). Each file is copied verbatim; afterwards, write the commits into
# third_party/envoy-api/README.md's table (the schema cache keys on that file), then
# `npm run build` and `npm test`.
#
#   scripts/refresh-envoy-api.sh <data-plane-api> <cncf-xds> <protoc-gen-validate> \
#       <opentelemetry-proto> <prometheus-client_model> <cel-spec> <googleapis>
set -eu
if [ "$#" -ne 7 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
api=$1 xds=$2 pgv=$3 otel=$4 prom=$5 cel=$6 google=$7
dest=$(cd "$(dirname "$0")/.." && pwd)/third_party/envoy-api
new=$(mktemp -d)
trap 'rm -rf "$new"' EXIT
copy() { # <from dir> <subtree> : every .proto under <from>/<subtree>, same relative path
  (cd "$1" && find "$2" -name '*.proto' -print) | while read -r f; do
    mkdir -p "$new/$(dirname "$f")"
    cp "$1/$f" "$new/$f"
  done
}
copy "$api" envoy
copy "$api" contrib
copy "$xds" xds
copy "$xds" udpa
copy "$pgv" validate
copy "$otel" opentelemetry
copy "$prom" io
copy "$cel/proto" cel
copy "$google" google/api
copy "$google" google/rpc
cp "$api/LICENSE" "$new/LICENSE.envoy"
cp "$xds/LICENSE" "$new/LICENSE.xds"
cp "$pgv/LICENSE" "$new/LICENSE.protoc-gen-validate"
cp "$otel/LICENSE" "$new/LICENSE.opentelemetry"
cp "$prom/LICENSE" "$new/LICENSE.prometheus"
cp "$cel/LICENSE" "$new/LICENSE.cel-spec"
cp "$dest/README.md" "$new/README.md"
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
cp -r "$new" "$dest"
echo "third_party/envoy-api refreshed: now update the versions in its README.md"
