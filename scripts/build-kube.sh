#!/usr/bin/env bash
# Builds the real Kubernetes control plane from its Go modules (kube/, pinned in kube/go.mod):
# one multi-call binary build/kube/bin/kube and links named after its components
# (kube-apiserver, kube-controller-manager, kubectl, etcd). Idempotent: the Go build cache
# (GOCACHE) and module cache (GOMODCACHE) make a second run take seconds.
#   scripts/build-kube.sh            # build; without Go: one "skipped" line, exit 0
#   scripts/build-kube.sh --require  # without Go: exit 3 instead
# Exit status: 0 built (or skipped without Go), 1 the build failed (one line and the log's
# tail), 3 Go missing or too old with --require.
# Environment: GO (the go command, default go), HARNESS_KUBE_OUT (default build/kube: bin/ and
# build.log go there).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
require=0
for arg in "$@"; do
  case "$arg" in
    --require) require=1 ;;
    *) echo "usage: scripts/build-kube.sh [--require]" >&2; exit 2 ;;
  esac
done
go="${GO:-go}"
out="${HARNESS_KUBE_OUT:-$root/build/kube}/bin"
log="${HARNESS_KUBE_OUT:-$root/build/kube}/build.log"
skip() {
  echo "build-kube: skipped: $1 (the real control plane and kubectl are not built; their tests skip)"
  if [[ $require == 1 ]]; then exit 3; fi
  exit 0
}
command -v "$go" >/dev/null 2>&1 || skip "no Go toolchain ($go not found; Go 1.26 or newer is needed)"
# kube/go.mod says go 1.26.0; a local toolchain is used, never a downloaded one.
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:--buildvcs=false}"
version=$("$go" env GOVERSION 2>/dev/null || true)
if ! [[ $version =~ ^go1\.([0-9]+) ]] || (( BASH_REMATCH[1] < 26 )); then
  skip "${version:-$go} is older than go1.26, which kube/go.mod needs"
fi
mkdir -p "$out"
start=$(date +%s)
# The version the binaries report (/version, kubectl version), stamped as Kubernetes' own build
# does (hack/lib/version.sh: kube::version::ldflags) from the version pinned in go.mod.
kube_version=$(sed -n 's/^\(require\)\{0,1\}[[:space:]]*k8s.io\/kubernetes \(v[0-9][^ ]*\)$/\2/p' kube/go.mod)
ldflags=""
if [[ $kube_version =~ ^v([0-9]+)\.([0-9]+)\. ]]; then
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=${BASH_REMATCH[1]}"
    ldflags+=" -X $pkg.gitMinor=${BASH_REMATCH[2]} -X $pkg.gitTreeState=clean"
  done
fi
if ! (cd kube && "$go" build -p 2 -trimpath -ldflags="$ldflags" -o "$out/kube" ./cmd/kube) > "$log" 2>&1; then
  echo "build-kube: the Go build failed after $(( $(date +%s) - start ))s (full log: $log):"
  tail -n 20 "$log"
  exit 1
fi
# kube-cel: Kubernetes' CEL for the simulator (a helper process; apiserver-sim/include/harness/sim/cel.h).
if ! (cd kube && "$go" build -p 2 -trimpath -ldflags="$ldflags" -o "$out/kube-cel" ./cmd/kube-cel) >> "$log" 2>&1; then
  echo "build-kube: the Go build of kube-cel failed after $(( $(date +%s) - start ))s (full log: $log):"
  tail -n 20 "$log"
  exit 1
fi
for name in kube-apiserver kube-controller-manager kubectl etcd; do
  ln -sfn kube "$out/$name"
done
echo "build-kube: built $out/{kube-apiserver,kube-controller-manager,kubectl,etcd,kube-cel} in $(( $(date +%s) - start ))s ($version)"
