#!/usr/bin/env bash
# Runs CI as a new machine would, N times: each run clones the repository into
# a new folder (so no node_modules, no dist/, no vitest cache), puts the
# project's shared contract beside it as ../shared when there is one (CI has
# it there), runs .ci/run, and deletes the folder afterwards. Prints each
# run's outcome and wall time, then how many were green; exits non-zero
# unless all were.
#
#   scripts/fresh-clone-loop.sh [runs=10] [repository=this one] [branch=its current one]
#
# Environment:
#   QUORUMLOCK_SHARED      the folder to place as ../shared (default: ../shared of
#                          this repository, if it exists)
#   FRESH_CLONE_COLD_NPM=1 a new npm cache per run too (every package downloaded
#                          again, as on a machine that never ran npm)
#   FRESH_CLONE_KEEP_LOGS  folder for the runs' logs (default: a new temporary one)
set -uo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-10}"
repository="${2:-$here}"
branch="${3:-$(git -C "$repository" rev-parse --abbrev-ref HEAD)}"
shared="${QUORUMLOCK_SHARED:-$here/../shared}"
logs="${FRESH_CLONE_KEEP_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/quorumlock-fresh-logs.XXXXXX")}"
mkdir -p "$logs"

commit="$(git -C "$repository" rev-parse "$branch")"
echo "fresh-clone loop: $runs run(s) of .ci/run on $branch ($commit) from $repository; logs in $logs"

green=0
for run in $(seq 1 "$runs"); do
  parent="$(mktemp -d "${TMPDIR:-/tmp}/quorumlock-fresh.XXXXXX")"
  clone="$parent/quorumlock"
  if [ -d "$shared" ]; then cp -r "$shared" "$parent/shared"; fi
  log="$logs/run-$run.log"
  started=$(date +%s)
  if ! git clone --quiet --no-hardlinks --branch "$branch" "$repository" "$clone" >"$log" 2>&1; then
    echo "run $run: clone failed (see $log)"
    rm -rf "$parent"
    continue
  fi
  env_extra=()
  if [ "${FRESH_CLONE_COLD_NPM:-}" = 1 ]; then env_extra=(npm_config_cache="$parent/npm-cache"); fi
  if (cd "$clone" && env "${env_extra[@]}" .ci/run) >>"$log" 2>&1; then
    outcome=green
    green=$((green + 1))
  else
    outcome="red (see $log)"
  fi
  seconds=$(($(date +%s) - started))
  printf 'run %d: %s in %dm%02ds\n' "$run" "$outcome" $((seconds / 60)) $((seconds % 60))
  # The next run installs and builds from nothing again.
  rm -rf "$clone/node_modules" "$clone/dist" "$parent"
done

echo "$green of $runs green"
[ "$green" -eq "$runs" ]
