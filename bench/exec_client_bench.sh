#!/usr/bin/env bash
# What the exec client protocol costs: raftkv (3 nodes, no faults, rate 0 =
# as fast as the 10 clients go, ~10 s) once through the built-in target
# and client (bench/exec-builtin.yaml), then through target process with
# the Python reference exec client (bench/exec-python.yaml) and with the
# minimal C exec client bench/exec_raftkv_client.c (bench/exec-c.yaml);
# then the C client answering from its own memory (bench/exec-c-memory.yaml,
# `--memory`): what the protocol itself carries, raftkv left idle.
# Prints each run's ops/s as faultline's "workload done" line gives it
# (invocations over the whole workload phase), the same over the time after
# the first operation (the exec clients take a moment to start), and each
# exec variant's ratio to the built-in one. Prints figures; asserts nothing.
#
# Usage: sudo bench/exec_client_bench.sh [-n ROUNDS] [-b FAULTLINE]
#   -n ROUNDS     repeat the three runs this many times (default 1)
#   -b FAULTLINE  the faultline binary (default: build/faultline); raftkv
#                 is taken from next to it
# Needs root (network namespaces), python3 and a C compiler (cc). The
# runs are stored in a temporary directory, removed at the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
faultline="$repo/build/faultline"
rounds=1
while getopts "n:b:" opt; do
  case "$opt" in
    n) rounds="$OPTARG" ;;
    b) faultline="$OPTARG" ;;
    *) sed -n 2,17p "$0" >&2; exit 2 ;;
  esac
done
[[ -x "$faultline" ]] || { echo "no faultline at $faultline (-b)" >&2; exit 2; }

# exec-c.yaml names this path.
client_dir=/tmp/faultline-exec-bench
mkdir -p "$client_dir"
cc -O2 -o "$client_dir/exec_raftkv_client" "$here/exec_raftkv_client.c"

store="$(mktemp -d /tmp/faultline-exec-bench-store.XXXXXX)"
trap 'rm -rf "$store"' EXIT

# Runs one config; prints "OPS_PER_S OPS_PER_S_AFTER_FIRST_OP INVOCATIONS".
run_one() {
  local config="$1" name="$2"
  "$faultline" -q run "$config" --seed 1 --store "$store" >/dev/null 2>&1 || true
  local log="$store/$name/latest/faultline.log"
  # "workload done: N invocations (...) in T s, X ops/s; first operation
  # F s after start; ..."
  sed -n 's/.*workload done: \([0-9]*\) invocations .* in \([0-9.]*\) s, \([0-9.]*\) ops\/s; first operation \([0-9.]*\) s after start.*/\1 \2 \3 \4/p' \
    "$log" 2>/dev/null | tail -1 |
    awk '{ after = ($2 > $4) ? $1 / ($2 - $4) : 0; seen = 1;
           printf "%.0f %.0f %d\n", $3, after, $1 }
         END { if (!seen) print "0 0 0" }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f %%", 100 * a / b; else print "n/a" }'; }

printf "%-6s %-8s %10s %16s %12s %10s %14s\n" round variant "ops/s" \
  "ops/s after 1st" invocations "vs built" "vs built (1st)"
for ((r = 1; r <= rounds; r++)); do
  read -r b_ops b_after b_n < <(run_one "$here/exec-builtin.yaml" bench-exec-builtin)
  printf "%-6s %-8s %10s %16s %12s %10s %14s\n" "$r" built-in "$b_ops" "$b_after" "$b_n" "" ""
  for v in python c c-memory; do
    read -r ops after n < <(run_one "$here/exec-$v.yaml" "bench-exec-$v")
    printf "%-6s %-8s %10s %16s %12s %10s %14s\n" "$r" "exec-$v" "$ops" "$after" "$n" \
      "$(ratio "$ops" "$b_ops")" "$(ratio "$after" "$b_after")"
  done
done
