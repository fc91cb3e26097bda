#!/usr/bin/env bash
# Installs what faultline needs (first use only) and builds it into build/.
# Idempotent: a second call only rebuilds what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/install-deps.sh"
build="${FAULTLINE_BUILD_DIR:-$root/build}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    ${FAULTLINE_CMAKE_ARGS:-} >/dev/null
fi
# FAULTLINE_BUILD_TARGETS: build only these targets (the demo needs just
# the binaries, not the tests and benchmarks).
targets=()
for t in ${FAULTLINE_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
