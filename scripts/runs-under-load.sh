#!/usr/bin/env bash
# Runs the whole suite N times in a row while two busy processes hold both
# cores, as issue 26 asks; stops at the first red run unless --keep-going.
# Usage: bash scripts/runs-under-load.sh N [--keep-going] [vitest args...]
set -u
runs=${1:?usage: runs-under-load.sh N [--keep-going] [vitest args...]}
shift
keep_going=0
if [ "${1:-}" = "--keep-going" ]; then keep_going=1; shift; fi
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null || exit 1
out=${RUNS_DIR:-/tmp/quorumlock-runs}
mkdir -p "$out"
busy=()
for _ in 1 2; do node -e 'for (;;) {}' & busy+=($!); done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT
green=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  if npx vitest run "$@" >"$out/run-$i.log" 2>&1; then
    result=green; green=$((green + 1))
  else
    result=red
  fi
  sed -i 's/\x1b\[[0-9;]*m//g' "$out/run-$i.log"
  summary=$(grep -E '^ +(Test Files|Tests|Duration) ' "$out/run-$i.log" | tr -s ' ' | tr '\n' ' ')
  echo "run $i: $result in $(( $(date +%s) - start )) s, load $(cut -d' ' -f1 /proc/loadavg): $summary"
  if [ "$result" = red ]; then
    grep -E '^ *(FAIL|×) ' "$out/run-$i.log" | head -20
    [ "$keep_going" = 1 ] || break
  fi
done
echo "$green of $runs runs green (logs in $out)"
[ "$green" = "$runs" ]
