#!/usr/bin/env bash
# The CTest fixture of the tests against Istio's own TestInjection (../upstream_support.h): for
# each istio.io/istio module version given, renders that tree's istio-sidecar-injector and istio
# ConfigMaps (main.go) into <out>/<commit>/, with a file `source` naming the tree in the Go module
# cache whose pkg/kube/inject/testdata/inject the tests read. Nothing of Istio is committed.
# A version that cannot be rendered gets <out>/<commit>/SKIP, one line saying why and which
# command fetches what is missing; the tests of that version skip with it. Never downloads:
# GOPROXY=off.
#
#   render.sh <out> <istio.io/istio version>...
# Exit status: 0 (rendered or skipped), 1 a present tree failed to render, 2 usage.
set -u
if [ $# -lt 2 ]; then
  echo "usage: render.sh <out> <istio.io/istio version>..." >&2
  exit 2
fi
out=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"

skip() {  # skip <version> <reason>
  local dir="$out/${1##*-}"
  rm -rf "$dir" && mkdir -p "$dir" && printf '%s\n' "$2" >"$dir/SKIP"
  echo "render.sh: istio.io/istio@$1: skipped: $2"
}

if ! command -v go >/dev/null 2>&1; then
  for v in "$@"; do
    skip "$v" "Go is not on PATH: install Go 1.26, then \`go mod download istio.io/istio@$v\`"
  done
  exit 0
fi
modcache=$(go env GOMODCACHE)
bin="$out/chart_render"
if [ ! -x "$bin" ] || [ "$here/main.go" -nt "$bin" ] || [ "$here/go.mod" -nt "$bin" ] ||
  [ "$here/go.sum" -nt "$bin" ]; then
  log="$out/chart_render.build.log"
  if ! (cd "$here" && GOPROXY=off GOFLAGS=-mod=readonly go build -trimpath -o "$bin.tmp" .) \
    >"$log" 2>&1; then
    for v in "$@"; do
      skip "$v" "the renderer does not build from the Go module cache ($log): \`(cd injector/tests/istio/chart_render && go mod download)\` fetches its modules"
    done
    exit 0
  fi
  mv "$bin.tmp" "$bin"
fi

status=0
for v in "$@"; do
  src="$modcache/istio.io/istio@$v"
  if [ ! -d "$src/manifests" ] || [ ! -d "$src/pkg/kube/inject/testdata/inject" ]; then
    skip "$v" "istio.io/istio@$v is not in the Go module cache ($modcache): \`go mod download istio.io/istio@$v\` fetches it"
    continue
  fi
  dir="$out/${v##*-}"
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  if ! "$bin" -source "$src" -out "$dir.tmp"; then
    echo "render.sh: istio.io/istio@$v: the chart of $src did not render" >&2
    status=1
    continue
  fi
  printf '%s\n' "$src" >"$dir.tmp/source"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
  echo "render.sh: istio.io/istio@$v: rendered into $dir"
done
exit $status
