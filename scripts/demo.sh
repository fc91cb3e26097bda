#!/usr/bin/env bash
# The demo campaign: builds faultline and raftkv if needed, then runs the
# demo config against a 5-node raftkv cluster (this repository's own Raft
# key-value server) in network namespaces on this machine.
# Extra arguments go to `faultline run` (e.g. --time-limit 120 --seed 7).
# FAULTLINE_DEMO_CONFIG picks another config (e.g. configs/etcd-register.yaml).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$(id -u)" -ne 0 ]; then
  echo "demo: run as root (faultline creates network namespaces and iptables rules)" >&2
  exit 254
fi
FAULTLINE_BUILD_TARGETS="faultline raftkv faultline-netdelay" \
  bash "$root/scripts/build.sh"
build="${FAULTLINE_BUILD_DIR:-$root/build}"
for bin in faultline raftkv; do
  if [ ! -x "$build/$bin" ]; then
    echo "demo: $build/$bin was not built" >&2
    exit 255
  fi
done
cd "$root"
exec "$build/faultline" run "${FAULTLINE_DEMO_CONFIG:-configs/raftkv-register.yaml}" "$@"
