#!/usr/bin/env bash
# Configures and builds with a CMake preset (default: "default"), two jobs.
#   scripts/build.sh [preset] [extra cmake --build args...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
shift || true
# ccache hits across clones of the repository (CI builds in a fresh clone each time). 12 GiB
# holds the default, tsan and asan builds together (about 3 GB, 1 GB and 4 GB).
export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-12G}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j 2 "$@"
