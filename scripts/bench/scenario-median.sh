#!/usr/bin/env bash
# The scenario library's median scenario, two ways, several rounds each:
# - in one process (issue 19's figure): `apiserver-sim run -o json` over all the files, each
#   scenario's own time (its environment's servers and certificates, its steps, its teardown) as
#   the report gives it; the median over scenarios of each scenario's median over rounds;
# - as its own process: each file run as `apiserver-sim run FILE` (process start, kube-cel's
#   start, loading, the scenario), timed from outside.
# Prints both with the load average around the run, and with --callgrind the instruction count of
# the median file's whole process under callgrind (deterministic where wall time is not; compare
# it with scenario_callgrind_baseline.txt beside this script, warn only).
#
#   scripts/bench/scenario-median.sh [--binary PATH] [--rounds N] [--callgrind]
#                                    [--write-baseline] [FILE_OR_DIR...]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
binary="$root/build/default/apiserver-sim/apiserver-sim"
rounds=5
use_callgrind=0
write_baseline=0
baseline="$root/scripts/bench/scenario_callgrind_baseline.txt"
paths=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --callgrind) use_callgrind=1; shift ;;
    --write-baseline) use_callgrind=1; write_baseline=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "scenario-median.sh: unknown option $1" >&2; exit 2 ;;
    *) paths+=("$1"); shift ;;
  esac
done
[[ ${#paths[@]} -eq 0 ]] && paths=("$root/scenarios")
if [[ ! -x "$binary" ]]; then
  echo "scenario-median.sh: $binary is missing (scripts/build.sh default)" >&2
  exit 2
fi
mapfile -t files < <(for p in "${paths[@]}"; do
  if [[ -d "$p" ]]; then grep -rl --include='*.yaml' '^kind: Scenario$' "$p"; else echo "$p"; fi
done | sort)
work="$(mktemp -d /tmp/scenario-median-XXXXXX)"
trap 'rm -rf "$work"' EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
for ((round = 1; round <= rounds; ++round)); do
  if ! "$binary" run -o json "${files[@]}" >"$work/library-$round.json" 2>"$work/out"; then
    echo "scenario-median.sh: the library run failed:" >&2
    tail -5 "$work/out" >&2
    exit 1
  fi
done
python3 - "$work" "$rounds" "$root" <<'PY'
import json, statistics, sys
work, rounds, root = sys.argv[1], int(sys.argv[2]), sys.argv[3] + "/"
per = {}
for r in range(1, rounds + 1):
    for scenario in json.load(open(f"{work}/library-{r}.json"))["scenarios"]:
        per.setdefault(scenario["file"], []).append(scenario["durationSeconds"] * 1000)
medians = sorted((statistics.median(v), k) for k, v in per.items())
mid = medians[(len(medians) - 1) // 2]
print(f"in one process: {len(medians)} scenarios, {rounds} rounds; median scenario "
      f"{mid[0]:.1f} ms ({mid[1].replace(root, '')}), fastest {medians[0][0]:.1f} ms, "
      f"slowest {medians[-1][0]:.1f} ms", file=sys.stderr)
PY
: >"$work/times"
for ((round = 1; round <= rounds; ++round)); do
  for f in "${files[@]}"; do
    start=$(date +%s%N)
    if ! "$binary" run "$f" >"$work/out" 2>&1; then
      echo "scenario-median.sh: $f failed:" >&2
      tail -5 "$work/out" >&2
      exit 1
    fi
    end=$(date +%s%N)
    echo "$f $(((end - start) / 1000))" >>"$work/times"
  done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
median_file="$(python3 - "$work/times" "$root" <<'PY'
import statistics, sys
per = {}
for line in open(sys.argv[1]):
    name, micros = line.rsplit(" ", 1)
    per.setdefault(name, []).append(int(micros) / 1000)
medians = sorted((statistics.median(v), k) for k, v in per.items())
mid = medians[(len(medians) - 1) // 2]
root = sys.argv[2] + "/"
print(f"{len(medians)} scenario files, {len(next(iter(per.values())))} rounds", file=sys.stderr)
print(f"fastest {medians[0][0]:.1f} ms, slowest {medians[-1][0]:.1f} ms "
      f"({medians[-1][1].replace(root, '')})", file=sys.stderr)
print(f"as separate processes: median scenario wall time {mid[0]:.1f} ms "
      f"({mid[1].replace(root, '')}), process and kube-cel start included",
      file=sys.stderr)
print(mid[1])
PY
)"
[[ "$use_callgrind" == 1 ]] || exit 0
if ! command -v valgrind >/dev/null; then
  echo "scenario-median.sh: valgrind is not installed; no instruction count" >&2
  exit 77
fi
# The median file of this run, unless the baseline names one (so that counts compare).
counted="$median_file"
old=""
if [[ -f "$baseline" && "$write_baseline" == 0 ]]; then
  read -r name old < <(grep -v '^#' "$baseline" | head -1)
  counted="$root/$name"
fi
# Valgrind 3.19 cannot read the split DWARF of the default preset: a copy without it (the
# count needs no debug information).
if objcopy --strip-debug "$binary" "$work/apiserver-sim" 2>/dev/null; then
  binary="$work/apiserver-sim"
fi
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$binary" run "$counted" \
  >"$work/out" 2>&1 || { tail -5 "$work/out" >&2; exit 1; }
total="$(awk '/^(summary|totals):/ {print $2; exit}' "$work/callgrind.out")"
relative="${counted#"$root"/}"
echo "instructions of \`apiserver-sim run $relative\`: $total"
if [[ -n "$old" ]]; then
  change="$(awk -v a="$total" -v b="$old" 'BEGIN {printf "%+.2f%%", (a - b) * 100 / b}')"
  echo "baseline $old ($change)"
  if awk -v a="$total" -v b="$old" 'BEGIN {exit !((a - b) * 100 / b > 2)}'; then
    echo "WARNING: $relative costs $change more instructions than the baseline ($baseline)"
  fi
fi
if [[ "$write_baseline" == 1 ]]; then
  {
    echo "# Instructions of one \`apiserver-sim run FILE\` process under callgrind, the median"
    echo "# scenario (scripts/bench/scenario-median.sh --write-baseline)."
    echo "$relative $total"
  } >"$baseline"
  echo "baseline written: $baseline"
fi
