#!/usr/bin/env bash
# Runs the test suite RUNS times in a row (default 3) with a CPU hog on every
# core beside it, as a busy CI machine would be: the suite must not depend on
# wall-clock speed. Stops at the first failing run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-3}"
hogs=()
for _ in $(seq 1 "$(nproc)"); do
  yes >/dev/null &
  hogs+=("$!")
done
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
for run in $(seq 1 "$runs"); do
  echo "== run $run of $runs, with $(nproc) CPU hogs"
  start=$(date +%s)
  npm test
  echo "== run $run passed in $(( $(date +%s) - start )) s"
done
