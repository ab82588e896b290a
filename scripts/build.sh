#!/usr/bin/env bash
# Configures and builds with a CMake preset (default: "default"), two jobs.
#   scripts/build.sh [preset] [extra cmake --build args...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
shift || true
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j 2 "$@"
