#!/usr/bin/env bash
# The whole test suite: installs and builds what it needs, then runs every
# unit and end-to-end test with ctest and prints ctest's summary.
# Options: --unit (unit tests only), --e2e (end-to-end only).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$(id -u)" -ne 0 ]; then
  echo "test: run as root (end-to-end tests create network namespaces)" >&2
  exit 254
fi
bash "$root/scripts/build.sh"
label=()
case "${1:-}" in
  --unit) label=(-L unit) ;;
  --e2e) label=(-L e2e) ;;
  "") ;;
  *) echo "test: unknown option $1 (use --unit or --e2e)" >&2; exit 254 ;;
esac
cd "${FAULTLINE_BUILD_DIR:-$root/build}"
ctest --output-on-failure "${label[@]}" -j 2
