#!/usr/bin/env bash
# Prepare this machine for the test suite. Idempotent; safe to run again.
#  - redis-server (required: tests start their own processes on free loopback ports)
#  - faketime (optional, for the docs only: it does not work with Debian's
#    redis-server; the chaos suite emulates clock skew with test/support/skewNemesis.ts)
#  - node_modules via `npm ci`, when missing or older than package-lock.json
set -euo pipefail

cd "$(dirname "$0")/.."

log() { printf 'setup: %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }

redis_bin="${QUORUMLOCK_REDIS_SERVER:-redis-server}"
missing=()
have "$redis_bin" || missing+=(redis-server)
have faketime || missing+=(faketime)

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && have apt-get; then
    log "installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
      :
    else
      log "apt-get failed"
    fi
    # Debian may start a system redis on 6379; the tests use their own ports, so stop it.
    if [[ " ${missing[*]} " == *" redis-server "* ]] && have service; then
      service redis-server stop >/dev/null 2>&1 || true
    fi
  fi
  if ! have "$redis_bin"; then
    log "redis-server is missing and could not be installed (that needs root and apt-get)."
    log "Install it, e.g. 'sudo apt-get install redis-server' (Debian/Ubuntu) or 'brew install redis' (macOS),"
    log "or set QUORUMLOCK_REDIS_SERVER to the path of a redis-server binary."
    exit 1
  fi
  have faketime || log "note: faketime is not installed (optional; the tests do not use it)."
fi

log "$("$redis_bin" --version)"

# npm writes node_modules/.package-lock.json on every install; older than the lock file = stale.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "npm ci"
  if ! npm ci --no-audit --no-fund; then
    # A registry mirror that serves only this platform's optional packages
    # (e.g. @rollup/rollup-<os>-<cpu>) makes npm ci reject any lock file as
    # "out of sync". Install from the same lock without rewriting it instead.
    log "npm ci failed; falling back to npm install --no-save (package-lock.json is left as it is)"
    npm install --no-audit --no-fund --no-save
  fi
fi
