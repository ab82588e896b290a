#!/usr/bin/env bash
# The project's test command (README quick start, .ci/run): installs dependencies, builds the
# default preset and, when Go is present, the real control plane and kubectl
# (scripts/build-kube.sh), then runs every CTest test (labels unit, scenario, property,
# integration, e2e, real). Without Go the tests needing those binaries skip, each with one line.
#   scripts/test.sh                 # everything
#   scripts/test.sh -L unit         # extra arguments go to ctest
#   SANITIZE=1 scripts/test.sh      # the asan preset (AddressSanitizer + UBSan) instead
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
preset=default
if [[ "${SANITIZE:-0}" == "1" ]]; then preset=asan; fi
start=$(date +%s)
bash scripts/build.sh "$preset"
echo "test.sh: build took $(( $(date +%s) - start ))s"
bash scripts/build-kube.sh
cd "build/$preset"
ctest --output-on-failure -j 2 --timeout 600 "$@"
