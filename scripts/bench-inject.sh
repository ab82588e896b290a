#!/usr/bin/env bash
# Benchmarks offline `injector inject` on many objects: for each count, a multi-document YAML of
# 20 Namespaces (linkerd.io/inject: enabled), one ReplicaSet per 10 pods and the pods, each owned
# by its ReplicaSet (so every pod costs a namespace lookup and an owner lookup), injected with
# the Linkerd profile. Prints wall and CPU seconds and peak RSS per run.
#   scripts/bench-inject.sh [COUNT...]      (default: 2000 20000)
set -euo pipefail
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
  echo "== injector inject: $count pods ($(wc -c <"$input") bytes of YAML)"
  /usr/bin/time -f "   %e s wall, %U s user, %S s system, peak RSS %M KB" \
    "$injector" inject "$input" >"$work/out.yaml"
  echo "   $(grep -c 'linkerd.io/proxy-version:' "$work/out.yaml" || true) pod templates injected"
done
