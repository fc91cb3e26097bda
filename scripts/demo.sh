#!/usr/bin/env bash
# The demo campaign: builds faultline if needed, then runs the demo config
# against a 5-node etcd cluster in network namespaces on this machine.
# Extra arguments go to `faultline run` (e.g. --time-limit 120 --seed 7).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$(id -u)" -ne 0 ]; then
  echo "demo: run as root (faultline creates network namespaces and iptables rules)" >&2
  exit 254
fi
bash "$root/scripts/build.sh"
cd "$root"
exec "$root/build/faultline" run configs/etcd-register.yaml "$@"
