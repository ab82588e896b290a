#!/usr/bin/env bash
# Instruction counts of the injector's fixed in-process workloads (injector/bench/workloads.cc:
# decode an AdmissionReview, the Linkerd and Istio webhooks' whole request handling, Istio
# injection alone, patch creation and application, answer serialization), under callgrind.
# Deterministic: they mean the same on a busy machine, where wall-clock figures do not; a 1%
# change is visible. Prints instructions per iteration (Ir) and, against the baseline, the change.
#
#   scripts/bench/callgrind.sh [--binary PATH] [--iterations N] [--baseline FILE]
#                              [--write-baseline] [--warn-percent P] [WORKLOAD...]
#
# --write-baseline records the counts in the baseline (injector/bench/callgrind_baseline.txt by
# default) after a change that makes the injector cheaper, or knowingly dearer. Counts above the
# baseline by more than --warn-percent (1) print a WARNING line; the exit code never depends on
# the counts (0, or 77 when valgrind is missing, 1 when a workload fails).
# Without --binary, builds build/default/injector/injector_workloads first.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
binary=""
iterations=10
baseline="$root/injector/bench/callgrind_baseline.txt"
write_baseline=0
warn_percent=1
workloads=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --iterations) iterations="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    --write-baseline) write_baseline=1; shift ;;
    --warn-percent) warn_percent="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "callgrind.sh: unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
if ! command -v valgrind >/dev/null; then
  echo "callgrind.sh: valgrind is not installed (apt-get install valgrind); no counts" >&2
  exit 77
fi
if [[ -z "$binary" ]]; then
  (cd "$root" && cmake --preset default >/dev/null &&
    cmake --build --preset default -j 2 --target injector_workloads | tail -1)
  binary="$root/build/default/injector/injector_workloads"
fi
if [[ ${#workloads[@]} -eq 0 ]]; then
  mapfile -t workloads < <("$binary" --list | awk '{print $1}')
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Counts need the symbols only. Debian 12's valgrind 3.19 gives up on the split DWARF the
# default preset builds with ("Possibly corrupted debuginfo file"): run a copy without it.
if objcopy --strip-debug "$binary" "$work/workloads" 2>/dev/null; then
  binary="$work/workloads"
fi

declare -A base
if [[ -f "$baseline" ]]; then
  while read -r name count _; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    base[$name]="$count"
  done <"$baseline"
fi

printf '%-28s %14s %14s %9s\n' workload "Ir/iteration" baseline change
declare -A counts
failed=0
for w in "${workloads[@]}"; do
  out="$work/$w.out"
  if ! valgrind --tool=callgrind --collect-atstart=no --toggle-collect=injector_workload_measure \
      --callgrind-out-file="$out" "$binary" "$w" --iterations "$iterations" \
      >"$work/$w.log" 2>&1; then
    echo "callgrind.sh: workload $w failed:" >&2
    tail -5 "$work/$w.log" >&2
    failed=1
    continue
  fi
  total="$(awk '/^(summary|totals):/ {print $2; exit}' "$out")"
  per=$((total / iterations))
  counts[$w]="$per"
  old="${base[$w]:-}"
  if [[ -n "$old" ]]; then
    change="$(awk -v a="$per" -v b="$old" 'BEGIN {printf "%+.2f%%", (a - b) * 100 / b}')"
    printf '%-28s %14d %14d %9s\n' "$w" "$per" "$old" "$change"
    if awk -v a="$per" -v b="$old" -v p="$warn_percent" 'BEGIN {exit !((a - b) * 100 / b > p)}'; then
      echo "WARNING: $w costs $change more instructions than the baseline ($baseline)"
    fi
  else
    printf '%-28s %14d %14s %9s\n' "$w" "$per" - -
  fi
done

if [[ "$write_baseline" == 1 ]]; then
  for w in "${!counts[@]}"; do base[$w]="${counts[$w]}"; done  # the others kept as they were
  {
    echo "# Instructions per iteration of injector/bench/workloads.cc under callgrind"
    echo "# (scripts/bench/callgrind.sh --write-baseline; $iterations iterations after one warm-up)."
    for w in $(printf '%s\n' "${!base[@]}" | sort); do echo "$w ${base[$w]}"; done
  } >"$baseline"
  echo "baseline written: $baseline"
fi
exit "$failed"
