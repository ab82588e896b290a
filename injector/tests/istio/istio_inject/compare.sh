#!/usr/bin/env bash
# CTest injector_istio_inject_oracle: Istio's own injection (main.go: pkg/kube/inject
# IntoResourceFile, as `istioctl kube-inject` runs it) against `injector inject --profile istio`,
# both with the ConfigMaps rendered from istio.io/istio@$version (../chart_render, the
# istio_upstream fixture). For each input: inject it with both and compare the outputs byte for
# byte, then inject each output again with its own injector and compare again. The inputs are
# testdata/idempotence/*.yaml; a `.sent.yaml` (an injected pod as kube-apiserver sends it) is
# only injected once. Builds main.go with GOPROXY=off: without Go, the module or the rendered
# ConfigMaps it skips (exit 77) with one line saying why.
#
#   compare.sh <work dir> <injector binary> <istio-upstream dir> <inputs dir>
set -u
if [ $# -ne 4 ]; then
  echo "usage: compare.sh <work dir> <injector binary> <istio-upstream dir> <inputs dir>" >&2
  exit 2
fi
work=$1 injector=$2 upstream=$3 inputs=$4
version=v0.0.0-20260827124520-eed52ebb66ad  # as go.mod requires
here=$(cd "$(dirname "$0")" && pwd)
rendered="$upstream/${version##*-}"
skip() { echo "SKIP: $1"; exit 77; }

command -v go >/dev/null 2>&1 ||
  skip "Go is not on PATH: install Go 1.26, then \`go mod download istio.io/istio@$version\`"
[ -f "$rendered/SKIP" ] && skip "$(cat "$rendered/SKIP")"
[ -f "$rendered/istio-sidecar-injector.yaml" ] ||
  skip "no ConfigMaps rendered in $rendered (the injector_istio_upstream_charts fixture)"
rm -rf "$work" && mkdir -p "$work"
bin="$upstream/istio_inject"
if [ ! -x "$bin" ] || [ "$here/main.go" -nt "$bin" ] || [ "$here/go.mod" -nt "$bin" ] ||
  [ "$here/go.sum" -nt "$bin" ]; then
  if ! (cd "$here" && GOPROXY=off GOFLAGS=-mod=readonly go build -trimpath -o "$bin.$$" .) \
    >"$work/build.log" 2>&1; then
    rm -f "$bin.$$"
    why="istio_inject does not build from the Go module cache ($work/build.log):"
    skip "$why \`(cd injector/tests/istio/istio_inject && go mod download)\` fetches its modules"
  fi
  mv "$bin.$$" "$bin"
fi

config="$rendered/istio-sidecar-injector.yaml" mesh="$rendered/istio.yaml"
istio() {  # istio <in> <out>
  "$bin" -config "$config" -mesh "$mesh" "$1" >"$2" 2>>"$work/istio.log"
}
ours() {  # ours <in> <out>
  "$injector" inject --profile istio --istio-config "$config" --istio-values "$config" \
    --istio-mesh "$mesh" "$1" >"$2" 2>>"$work/injector.log"
}
failed=0
same() {  # same <what> <istio's> <ours>
  if cmp -s "$2" "$3"; then
    echo "same as Istio: $1"
  else
    echo "DIFFERS from Istio: $1 (- Istio, + injector)"
    diff -u "$2" "$3"
    failed=1
  fi
}
count=0
for in in "$inputs"/*.yaml; do
  name=$(basename "$in" .yaml)
  count=$((count + 1))
  istio "$in" "$work/$name.istio.1" || { echo "Istio's injection failed on $in"; exit 1; }
  ours "$in" "$work/$name.ours.1" || { echo "injector inject failed on $in"; exit 1; }
  same "$name injected" "$work/$name.istio.1" "$work/$name.ours.1"
  case "$name" in *.sent) continue ;; esac
  istio "$work/$name.istio.1" "$work/$name.istio.2" ||
    { echo "Istio's injection failed on its own output for $in"; exit 1; }
  ours "$work/$name.ours.1" "$work/$name.ours.2" ||
    { echo "injector inject failed on its own output for $in"; exit 1; }
  same "$name injected twice" "$work/$name.istio.2" "$work/$name.ours.2"
  if cmp -s "$work/$name.istio.1" "$work/$name.istio.2"; then
    echo "  Istio's re-injection of $name leaves it as it is"
  else
    echo "  Istio's re-injection of $name changes it:"
    diff "$work/$name.istio.1" "$work/$name.istio.2" | sed 's/^/    /'
  fi
done
[ "$count" -gt 0 ] || { echo "no inputs in $inputs"; exit 1; }
exit $failed
