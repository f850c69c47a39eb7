#!/usr/bin/env bash
# Prepare this machine for `npm run bench:systems` and `npm run test:systems`:
# the servers the other systems' locks run on, from Debian's packages.
#  - etcd-server (3.4): etcd and etcdctl
#  - zookeeper (3.8, with a JRE): the jars under /usr/share/zookeeper
#  - postgresql (15): initdb and postgres under /usr/lib/postgresql/<v>/bin
#  - strace (optional): counts the servers' fsyncs per acquire; without it that column is empty
# Debian starts a system service for each on install; the bench runs its own
# processes on free loopback ports in a temporary folder, so those are stopped.
# Idempotent; safe to run again. Runs scripts/setup.sh first (redis-server, node_modules).
set -euo pipefail

cd "$(dirname "$0")/.."
bash scripts/setup.sh

log() { printf 'setup-systems: %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

missing=()
have etcd || missing+=(etcd-server)
[ -f /usr/share/java/zookeeper.jar ] || missing+=(zookeeper)
have strace || missing+=(strace)
have java || missing+=(default-jre-headless)
[ -n "$(pg_bin)" ] || missing+=(postgresql)

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && have apt-get; then
    log "installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    # policy-rc.d = 101: the packages' own services are not started on install.
    policy=/usr/sbin/policy-rc.d
    own_policy=0
    if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1; fi
    if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
      :
    else
      log "apt-get failed"
    fi
    [ "$own_policy" -eq 1 ] && rm -f "$policy"
  fi
fi

fail=0
have etcd || { log "etcd is missing: install it, e.g. 'sudo apt-get install etcd-server' (Debian/Ubuntu, 3.4) or 'brew install etcd'."; fail=1; }
ls /usr/share/java/zookeeper*.jar >/dev/null 2>&1 || { log "ZooKeeper is missing: install it, e.g. 'sudo apt-get install zookeeper' (Debian/Ubuntu, 3.8; the bench reads its jars from /usr/share/java)."; fail=1; }
have java || { log "java is missing: install a JRE, e.g. 'sudo apt-get install default-jre-headless'."; fail=1; }
[ -n "$(pg_bin)" ] || { log "PostgreSQL is missing: install it, e.g. 'sudo apt-get install postgresql' (Debian/Ubuntu, 15)."; fail=1; }
[ "$fail" -eq 0 ] || exit 1

log "$(etcd --version | head -n 1)"
log "zookeeper $(ls /usr/share/java/zookeeper-3*.jar 2>/dev/null | head -n 1 | sed 's/.*zookeeper-//; s/\.jar$//')"
log "$("$(pg_bin)/postgres" --version)"
have strace || log "note: strace is not installed: the bench leaves its fsyncs-per-acquire column empty."
