#!/usr/bin/env bash
# Runs CTest tests of a build directory again and again while a CPU hog keeps every core busy
# (scripts/cpu-hogs.sh), and reports how many runs passed: the check that a test does not fail
# under load, e.g. the tsan stage of CI (net's tests under ThreadSanitizer).
#   scripts/stress-ctest.sh -n 30 build/tsan -L '^net$'     # arguments after the dir go to ctest
#   scripts/stress-ctest.sh --no-hogs build/default -R Tls
# Each run is one `ctest -j 2` over the selected tests; the output of a failed run is kept in
# <dir>/stress-ctest/run-<n>.log. Exit status: 0 when every run passed, 1 when one failed, 2 on
# bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/cpu-hogs.sh

runs=30
hogs=1
while (($#)); do
  case "$1" in
    -n) runs="$2"; shift 2 ;;
    --no-hogs) hogs=0; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "stress-ctest.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [[ $# -lt 1 || ! "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: stress-ctest.sh [-n RUNS] [--no-hogs] BUILD_DIR [ctest arguments...]" >&2
  exit 2
fi
dir=$1
shift
if [[ ! -f "$dir/CTestTestfile.cmake" ]]; then
  echo "stress-ctest.sh: $dir has no tests (build it with scripts/build.sh)" >&2
  exit 2
fi
logs="$dir/stress-ctest"
mkdir -p "$logs"
trap stop_cpu_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if ((hogs)); then start_cpu_hogs; fi

passed=0
failed=0
started=$(date +%s)
for ((run = 1; run <= runs; ++run)); do
  run_started=$(date +%s)
  log="$logs/run-$run.log"
  status=0
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j 2 "$@") >"$log" 2>&1 || status=$?
  summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -1 || true)
  load=$(cut -d' ' -f1 /proc/loadavg)
  if ((status == 0)); then
    passed=$((passed + 1))
    echo "run $run: pass (${summary:-?}, $(($(date +%s) - run_started))s, load $load)"
    rm -f "$log"
  else
    failed=$((failed + 1))
    echo "run $run: FAIL exit $status (${summary:-?}, $(($(date +%s) - run_started))s, load $load; $log)"
    grep -E 'WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error|\(Failed\)|\(Timeout\)' \
      "$log" | head -5 || true
  fi
done
echo "stress-ctest.sh: $((passed + failed)) runs, $passed passed, $failed failed," \
  "$(($(date +%s) - started))s wall time ($([[ $hogs == 1 ]] && echo "with $(nproc) CPU hogs" || echo "no hogs"))"
((failed == 0))
