#!/usr/bin/env bash
# The project's test command (README quick start, .ci/run): installs dependencies, builds the
# default preset and, when Go is present, the real control plane and kubectl
# (scripts/build-kube.sh), then runs every CTest test (labels unit, scenario, property,
# integration, e2e, real). Without Go the tests needing those binaries skip, each with one line.
#   scripts/test.sh                 # everything
#   scripts/test.sh -L unit         # extra arguments go to ctest
#   SANITIZE=1 scripts/test.sh      # the asan preset (AddressSanitizer + UBSan) instead
#   CI=true scripts/test.sh         # (.ci/run) then the sanitizer and fuzz stages below as well
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
preset=default
if [[ "${SANITIZE:-0}" == "1" ]]; then preset=asan; fi
start=$(date +%s)
bash scripts/build.sh "$preset"
echo "test.sh: build took $(( $(date +%s) - start ))s"
bash scripts/build-kube.sh
root=$(pwd)
# ASan's Debug frames are several times larger than the default build's: handling JSON nested
# 10,000 deep (Go's encoding/json limit, which the chain and the patch code accept) recurses
# deeper than 8 MiB of stack there. 64 MiB for the asan tests (threads get it as their default).
asanStack() { ulimit -s 65536 2>/dev/null || ulimit -s unlimited 2>/dev/null || true; }
cd "build/$preset"
(if [[ "$preset" == "asan" ]]; then asanStack; fi
 ctest --output-on-failure -j 2 --timeout 600 "$@")

# --- CI only: sanitizers and fuzzing (each stage prints its build and run times) ---------------
# 1. the asan preset (ASan + UBSan, gcc): unit, scenario and integration tests (property tests
#    and e2e run in the default build only);
# 2. the tsan preset (ThreadSanitizer, gcc): the net library's tests only (label net);
# 3. the fuzz preset (clang, libFuzzer): every target of fuzz/ for FUZZ_SECONDS each, starting
#    from its seed corpus (scripts/fuzz.sh).
# HARNESS_CI_STAGES chooses them (e.g. HARNESS_CI_STAGES="asan tsan fuzz", or "" for none). The
# default is fuzz alone. The asan stage passes (every test of its labels; the descriptor-exhaustion
# test skips there, as UBSan's vptr check needs free descriptors) but costs a cold build of about
# 70 min and 17 min of tests on a loaded 2-core machine. The tsan stage passed 51 of 51 once and
# failed once on a race TSan reports inside OpenSSL's libcrypto (not instrumented) during a TLS
# handshake: it needs a suppression for that library, checked over many runs, before it can be on.
ci_stages="${HARNESS_CI_STAGES-fuzz}"
if [[ "${CI:-}" == "true" && "$preset" == "default" && -n "$ci_stages" ]]; then
  cd "$root"
  stage() {
    local name=$1 build=$2
    shift 2
    local t0 t1
    t0=$(date +%s)
    bash scripts/build.sh "$build"
    t1=$(date +%s)
    (if [[ "$build" == "asan" ]]; then asanStack; fi
     cd "build/$build" && UBSAN_OPTIONS="print_stacktrace=1" \
       ctest --output-on-failure --no-tests=error -j 2 --timeout 900 "$@")
    echo "test.sh: $name: build $((t1 - t0))s, tests $(( $(date +%s) - t1 ))s"
  }
  for s in $ci_stages; do
    case "$s" in
      asan) stage "ASan+UBSan" asan -L 'unit|scenario|integration' -LE 'property|e2e|real' ;;
      tsan) stage "TSan (net)" tsan -L '^net$' ;;
      fuzz)
        t0=$(date +%s)
        FUZZ_SECONDS="${FUZZ_SECONDS:-10}" bash scripts/fuzz.sh
        echo "test.sh: fuzz: $(( $(date +%s) - t0 ))s" ;;
      *) echo "test.sh: unknown stage '$s' in HARNESS_CI_STAGES (asan, tsan, fuzz)" >&2; exit 2 ;;
    esac
  done
fi
