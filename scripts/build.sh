#!/usr/bin/env bash
# Configures and builds with a CMake preset (default: "default"), two jobs.
#   scripts/build.sh [preset] [extra cmake --build args...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
shift || true
# ccache hits across clones of the repository (CI builds in a fresh clone each time). 12 GiB
# holds the default, tsan and asan builds together (about 3 GB, 1 GB and 4 GB).
# The size goes into ccache's own configuration too: a ccache call outside this script (a build
# started with cmake directly, another project) would otherwise trim the cache to ccache's 5 GB
# default and evict the asan objects, leaving CI's asan stage a cold build of about 37 minutes.
export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-12G}"
if command -v ccache >/dev/null 2>&1; then ccache --max-size "$CCACHE_MAXSIZE" >/dev/null; fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j 2 "$@"
