#!/usr/bin/env bash
# Builds the fuzz targets (the `fuzz` preset: the asan preset's build directory, clang-16,
# libFuzzer, ASan + UBSan) and fuzzes each target of fuzz/ for FUZZ_SECONDS (default 10) seconds,
# one after the other.
#   scripts/fuzz.sh                       # every target
#   scripts/fuzz.sh yaml json_patch       # some targets
#   FUZZ_SECONDS=600 scripts/fuzz.sh yaml # a longer run
# Each run starts from the seeds in fuzz/corpus/<target>/ (read, never written) and from what
# earlier runs found in build/asan/corpus/<target>/, where new inputs go. A crash, sanitizer
# report, failed property, timeout (FUZZ_TIMEOUT, default 10 s for one input) or out-of-memory
# leaves the input in build/asan/artifacts/. Prints per target the executions, executions per
# second and the corpus (entries and bytes) at the end; exit status 1 when any target failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds="${FUZZ_SECONDS:-10}"

# -max_len per target: a little above the largest real input of its kind among the seeds (longer
# inputs only slow the search; libFuzzer's default would be the largest seed).
declare -A max_len=(
  [admission_review]=4096 [json_patch]=2048 [strategic_merge]=2048 [yaml]=4096
  [label_selector]=512 [gotemplate]=4096 [scenario]=8192 [rest_request]=2048 [yaml_readers]=4096
)
targets=("$@")
# yaml_readers (libfyaml against yaml-cpp) is run by name: it finds a new libfyaml quirk in
# minutes, not in the seconds of a CI run; its seeds are replayed by CTest like every target's.
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(admission_review json_patch strategic_merge yaml label_selector gotemplate scenario
           rest_request)
fi

build_targets=()
for t in "${targets[@]}"; do
  if [[ -z "${max_len[$t]:-}" ]]; then
    echo "fuzz.sh: unknown target $t (known: ${!max_len[*]})" >&2
    exit 2
  fi
  build_targets+=("${t}_fuzz")
done
start=$(date +%s)
bash scripts/build.sh fuzz --target "${build_targets[@]}"
echo "fuzz.sh: build took $(( $(date +%s) - start ))s"

out="$root/build/asan"
# Readable stack traces in reports (llvm-16 ships the symbolizer under its own name).
if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" && -x /usr/bin/llvm-symbolizer-16 ]]; then
  export ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-16
fi
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
mkdir -p "$out/artifacts" "$out/logs"
summary=()
failed=()
for t in "${targets[@]}"; do
  mkdir -p "$out/corpus/$t"
  log="$out/logs/$t.log"
  status=0
  "$out/fuzz/${t}_fuzz" -max_total_time="$seconds" -max_len="${max_len[$t]}" \
    -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t-" "$out/corpus/$t" "$root/fuzz/corpus/$t" \
    >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(grep -oE 'corp: [0-9]+/[0-9]+[bKM]*b?' "$log" | tail -1 | sed 's/corp: //')
  if [[ $status -ne 0 ]]; then
    failed+=("$t")
    echo "fuzz.sh: $t FAILED (exit $status); the report:" >&2
    grep -E -A40 '^==[0-9]+==ERROR|property violated|deadly signal|ALARM|out-of-memory' "$log" | head -80 >&2 || tail -40 "$log" >&2
    ls -1 "$out/artifacts/$t-"* 2>/dev/null >&2 || true
  fi
  summary+=("$(printf '%-17s %10s runs %8s exec/s  corpus %-12s %s' "$t" "${runs:-?}" "${per_second:-?}" "${corpus:-?}" "$([[ $status -eq 0 ]] && echo ok || echo FAILED)")")
done
echo "fuzz.sh: ${seconds}s per target, max_len per target: $(for t in "${targets[@]}"; do printf '%s=%s ' "$t" "${max_len[$t]}"; done)"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: failed: ${failed[*]} (inputs in $out/artifacts, logs in $out/logs)" >&2
  exit 1
fi
