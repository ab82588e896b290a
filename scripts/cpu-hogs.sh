# Sourced by the stress scripts (stress-scenarios.sh, stress-ctest.sh): a CPU hog on every core
# (`yes > /dev/null`, pinned with taskset when present), as a shared CI runner's other jobs load
# the machine. start_cpu_hogs starts them, stop_cpu_hogs stops them (call it from an EXIT trap).
cpu_hog_pids=()
start_cpu_hogs() {
  local cpu cores
  cores=$(nproc)
  for ((cpu = 0; cpu < cores; ++cpu)); do
    if command -v taskset >/dev/null; then
      taskset -c "$cpu" yes >/dev/null &
    else
      yes >/dev/null &
    fi
    cpu_hog_pids+=("$!")
  done
  echo "$(basename "$0"): ${#cpu_hog_pids[@]} CPU hogs on $cores cores (pids ${cpu_hog_pids[*]})"
}
stop_cpu_hogs() {
  local pid
  for pid in "${cpu_hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${cpu_hog_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  cpu_hog_pids=()
}
