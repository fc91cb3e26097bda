#!/usr/bin/env bash
# The nightly campaign: every config of configs/nightly/ (long runs that must
# be valid) and the known-anomaly suite (configs/known/, each config's
# verdict against its `expect`), unattended. Installs and builds what it
# needs, leaves every run (junit.xml, results.json, report.html) and the
# store index in STORE, and exits non-zero when any run did not give its
# expected verdict.
#
# Environment: FAULTLINE_NIGHTLY_STORE (default ./nightly-store),
# FAULTLINE_NIGHTLY_RUNS (runs per nightly config, default 1),
# FAULTLINE_SUITE_RUNS (runs per known config, default 3; 0 skips the suite),
# FAULTLINE_NIGHTLY_TIME_LIMIT (seconds per run, overriding the configs; for
# a quick rehearsal of the whole job).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "$(id -u)" -ne 0 ]; then
  echo "nightly: run as root (network namespaces, iptables)" >&2
  exit 254
fi
store="${FAULTLINE_NIGHTLY_STORE:-$PWD/nightly-store}"
runs="${FAULTLINE_NIGHTLY_RUNS:-1}"
suite_runs="${FAULTLINE_SUITE_RUNS:-3}"
FAULTLINE_BUILD_TARGETS="faultline raftkv faultline-netdelay" \
  bash "$root/scripts/build.sh"
bin="${FAULTLINE_BUILD_DIR:-$root/build}/faultline"
mkdir -p "$store"
cd "$root"
limit=()
if [ -n "${FAULTLINE_NIGHTLY_TIME_LIMIT:-}" ]; then
  limit=(--time-limit "$FAULTLINE_NIGHTLY_TIME_LIMIT")
fi
status=0
"$bin" run configs/nightly/*.yaml --test-count "$runs" --store "$store" \
  "${limit[@]}" || status=1
if [ "$suite_runs" -gt 0 ]; then
  "$bin" suite configs/known --runs "$suite_runs" --store "$store" \
    --json "$store/suite.json" "${limit[@]}" || status=1
fi
"$bin" report --index "$store" || status=1
echo "nightly: store $store (open $store/index.html); exit $status"
exit "$status"
