#!/usr/bin/env bash
# Benchmarks offline `injector inject` on many objects: for each count, a multi-document YAML of
# 20 Namespaces (linkerd.io/inject: enabled), one ReplicaSet per 10 pods and the pods, each owned
# by its ReplicaSet (so every pod costs a namespace lookup and an owner lookup), injected with
# the Linkerd profile (and the Istio one with --istio). Prints wall and CPU seconds and peak RSS
# per run. With --compare OTHER_INJECTOR (say, a build of main), runs that binary on the same
# input right after, prints the CPU ratio, and checks that both outputs are byte-identical.
#   scripts/bench-inject.sh [--istio] [--compare OTHER_INJECTOR] [COUNT...]  (default: 2000 20000)
set -euo pipefail
profiles=(linkerd)
other=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --istio) profiles+=(istio); shift ;;
    --compare) other="$(realpath "$2")"; shift 2 ;;
    *) break ;;
  esac
done
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
cmake --preset default >/dev/null
cmake --build --preset default -j 2 --target injector | tail -1
injector=build/default/injector/injector
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

counts=("$@")
if [[ ${#counts[@]} -eq 0 ]]; then counts=(2000 20000); fi
for count in "${counts[@]}"; do
  input="$work/pods-$count.yaml"
  awk -v pods="$count" 'BEGIN {
    for (n = 0; n < 20; n++) {
      printf "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-%d\n", n
      printf "  annotations:\n    linkerd.io/inject: enabled\n---\n"
    }
    for (r = 0; r * 10 < pods; r++) {
      printf "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: app-%d-7b9c6f5d4\n", r
      printf "  namespace: team-%d\n  uid: rs-%d\n", r % 20, r
      printf "spec:\n  selector:\n    matchLabels: {app: app-%d}\n", r
      printf "  template:\n    metadata:\n      labels: {app: app-%d}\n", r
      printf "    spec:\n      containers:\n      - {name: app, image: ghcr.io/example/app:1}\n---\n"
    }
    for (p = 0; p < pods; p++) {
      r = int(p / 10)
      printf "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app-%d-7b9c6f5d4-%05d\n", r, p
      printf "  namespace: team-%d\n  labels: {app: app-%d}\n", r % 20, r
      printf "  ownerReferences:\n  - {apiVersion: apps/v1, kind: ReplicaSet, "
      printf "name: app-%d-7b9c6f5d4, uid: rs-%d, controller: true}\n", r, r
      printf "spec:\n  containers:\n  - name: app\n    image: ghcr.io/example/app:1.%d\n", p % 7
      printf "    ports:\n    - containerPort: 8080\n"
      printf "    env:\n    - {name: POD_INDEX, value: \"%d\"}\n---\n", p
    }
  }' >"$input"
  for profile in "${profiles[@]}"; do
    echo "== injector inject --profile $profile: $count pods ($(wc -c <"$input") bytes of YAML)"
    binaries=("$injector")
    if [[ -n "$other" ]]; then binaries+=("$other"); fi
    for i in "${!binaries[@]}"; do
      binary="${binaries[$i]}"
      out="$work/out-$i-$profile.yaml"
      /usr/bin/time -o "$work/time" -f "%e %U %S %M" \
        "$binary" inject --profile "$profile" "$input" >"$out"
      read -r wall user sys rss <"$work/time"
      printf '   %-40s %8s s wall, %8s s user, %6s s system, peak RSS %s KB\n' \
        "$binary" "$wall" "$user" "$sys" "$rss"
      echo "$user $sys" >"$work/cpu-$i"
    done
    if [[ "$profile" == linkerd ]]; then
      echo "   $(grep -c 'linkerd.io/proxy-version:' "$out" || true) pod templates injected"
    else
      echo "   $(grep -c 'name: istio-proxy$' "$out" || true) istio-proxy containers"
    fi
    if [[ -n "$other" ]]; then
      if cmp -s "$work/out-0-$profile.yaml" "$out"; then echo "   outputs identical"; else echo "   OUTPUTS DIFFER"; fi
      awk -v a="$(cat "$work/cpu-0")" -v b="$(cat "$work/cpu-1")" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        printf "   CPU (user+system): %.2f s against %.2f s, %.2fx less\n",
               x[1] + x[2], y[1] + y[2], (y[1] + y[2]) / (x[1] + x[2])
      }'
    fi
  done
done
