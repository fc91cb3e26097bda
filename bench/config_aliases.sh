#!/usr/bin/env bash
# How long `faultline validate` takes on a config whose nemesis.faults lists
# one YAML alias N times, and how many lines it prints. Needs no root and
# starts nothing.
#
#   bench/config_aliases.sh [N ...]        (default 100000)
#
# FAULTLINE_BIN (default build/faultline) is the binary measured. Three
# shapes, each a config error per alias:
#   plain:    [{fault: kill}, &a pause, *a, *a, ...]   pause listed N times
#   together: [{together: [&a {fault: clock}, *a, ...]}]  clock N+1 times
#   mapping:  [&a {fault: pause, duration: -1}, *a, ...]  N+1 bad durations
# Before the duplicate checks became linear, plain and together compared
# every entry with every earlier one and reported each pair (N^2/2 errors:
# 14 s and 16 million lines at N = 4000). Printed errors are capped at
# kMaxPrintedErrors (harness/config/config.h): 50 errors (with their hints:
# 101 lines for plain and together, 51 for mapping), then
# "... and M more errors".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${FAULTLINE_BIN:-$root/build/faultline}"
[ -x "$bin" ] || { echo "config_aliases: $bin missing; build faultline or set FAULTLINE_BIN" >&2; exit 1; }
[ "$#" -gt 0 ] || set -- 100000
work="$(mktemp -d /tmp/faultline-bench-aliases.XXXXXX)"
trap 'rm -rf "$work"' EXIT

config() {  # config SHAPE N > file
  local shape="$1" n="$2" target=etcd open close
  case "$shape" in
    plain) open='[{fault: kill}, &a pause'; close=']' ;;
    together) open='[{together: [&a {fault: clock}'; close=']}]'; target=raftkv ;;
    mapping) open='[&a {fault: pause, duration: -1}'; close=']' ;;
  esac
  printf 'name: aliases\ncluster:\n  nodes: 3\ntarget:\n  name: %s\n' "$target"
  printf 'workload:\n  name: register\nnemesis:\n  faults: %s' "$open"
  # N copies of ", *a" without a loop in bash.
  head -c "$((n * 4))" /dev/zero | tr '\0' 'x' | sed 's/xxxx/, *a/g'
  printf '%s\n' "$close"
}

printf '%-9s %8s %9s %8s %s\n' shape aliases seconds lines "exit"
for n in "$@"; do
  for shape in plain together mapping; do
    config "$shape" "$n" >"$work/c.yaml"
    start=$(date +%s.%N)
    set +e
    "$bin" validate "$work/c.yaml" >"$work/out" 2>&1
    rc=$?
    set -e
    end=$(date +%s.%N)
    printf '%-9s %8d %9.3f %8d %s\n' "$shape" "$n" \
      "$(echo "$end - $start" | bc)" "$(wc -l <"$work/out")" "$rc"
  done
done
