#!/usr/bin/env bash
# Runs the scenario library again and again while a CPU hog keeps every core busy, and reports how
# many runs passed: the check that no scenario outcome depends on machine load (a shared CI
# runner). The hogs (`yes > /dev/null`, one pinned to each core with taskset) are stopped on exit,
# also on Ctrl-C or an error.
#   scripts/stress-scenarios.sh                    # 50 runs of scenarios/ with build/default
#   scripts/stress-scenarios.sh -n 5 --time-limit 600
#   scripts/stress-scenarios.sh --simulator PATH --injector PATH --no-hogs
# Exit status: 0 when every run made passed, 1 when a run failed, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/cpu-hogs.sh

runs=50
simulator=build/default/apiserver-sim/apiserver-sim
injector=build/default/injector/injector
scenarios=()  # default: scenarios/
time_limit=0  # seconds; 0 = none. Runs not started by then are reported as not run.
hogs=1
keep=""

usage() {
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  echo "options: -n RUNS, --simulator PATH, --injector PATH, --scenarios PATH (repeatable),"
  echo "         --time-limit SECONDS,"
  echo "         --no-hogs, --keep-reports DIR"
}

while (($#)); do
  case "$1" in
    -n) runs="$2"; shift 2 ;;
    --simulator) simulator="$2"; shift 2 ;;
    --injector) injector="$2"; shift 2 ;;
    --scenarios) scenarios+=("$2"); shift 2 ;;
    --time-limit) time_limit="$2"; shift 2 ;;
    --no-hogs) hogs=0; shift ;;
    --keep-reports) keep="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "stress-scenarios.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
if ! [[ "$runs" =~ ^[1-9][0-9]*$ && "$time_limit" =~ ^[0-9]+$ ]]; then
  echo "stress-scenarios.sh: -n needs a positive integer, --time-limit a number of seconds" >&2
  exit 2
fi
((${#scenarios[@]})) || scenarios=(scenarios)
for binary in "$simulator" "$injector"; do
  if [[ ! -x "$binary" ]]; then
    echo "stress-scenarios.sh: $binary is not an executable (build with scripts/build.sh)" >&2
    exit 2
  fi
done

reports=$(mktemp -d "${TMPDIR:-/tmp}/stress-scenarios.XXXXXX")
cleanup() {
  stop_cpu_hogs
  if [[ -n "$keep" ]]; then
    mkdir -p "$keep" && cp -r "$reports"/. "$keep"/
  fi
  rm -rf "$reports"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cores=$(nproc)
if ((hogs)); then start_cpu_hogs; fi

passed=0
failed=0
started=$(date +%s)
for ((run = 1; run <= runs; ++run)); do
  if ((time_limit > 0 && $(date +%s) - started >= time_limit)); then
    echo "stress-scenarios.sh: time limit of ${time_limit}s reached before run $run"
    break
  fi
  report="$reports/run-$run.json"
  run_started=$(date +%s)
  status=0
  "$simulator" run "${scenarios[@]}" --injector "$injector" -o json \
    >"$report" 2>"$reports/run-$run.err" || status=$?
  summary=$(jq -r '.summary | "\(.scenarios) scenarios, \(.failed) failed, \(.errors) errors"' \
    "$report" 2>/dev/null || echo "no report")
  if ((status == 0)); then
    passed=$((passed + 1))
    echo "run $run: pass ($summary, $(($(date +%s) - run_started))s)"
  else
    failed=$((failed + 1))
    echo "run $run: FAIL exit $status ($summary, $(($(date +%s) - run_started))s)"
    jq -r '.scenarios[] | select(.result != "passed") | "  \(.name): \(.error // "") " +
        ([.steps[] | select(.result == "failed") | "\(.name): " +
          ([.failures[] | .message] | join("; "))] | join(" | "))' "$report" 2>/dev/null || true
  fi
done
elapsed=$(($(date +%s) - started))
echo "stress-scenarios.sh: $((passed + failed)) runs, $passed passed, $failed failed," \
  "${elapsed}s wall time ($([[ $hogs == 1 ]] && echo "with $cores CPU hogs" || echo "no hogs"))"
((failed == 0 && passed > 0))
