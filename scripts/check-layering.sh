#!/usr/bin/env bash
# Checks that every #include "folder/..." between faultline's libraries points
# the way docs/architecture.md allows, and prints each include that does not
# as file:line. Exit 0 when all hold, 1 otherwise. Runs in ctest (the
# "layering" unit test) and needs only bash and grep.
#
# The rule table: a folder may include itself and the folders listed for it.
# cli/ is the application and may include everything; nothing includes cli/.
set -euo pipefail
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"

declare -A allowed=(
  [checkers]=""
  [reports]="checkers"
  [harness]="checkers"
  [nemesis]="harness checkers"
  [targets]="harness checkers"
  [workloads]="harness checkers"
  [bench]="checkers targets"
  [fuzz]="checkers"
)
libraries="checkers harness nemesis targets workloads reports cli bench fuzz"

bad=0
for folder in "${!allowed[@]}"; do
  [ -d "$root/$folder" ] || continue
  ok=" $folder ${allowed[$folder]} "
  while IFS= read -r hit; do
    # hit: path:line:#include "dep/..."
    dep="${hit#*#include \"}"
    dep="${dep%%/*}"
    case " $libraries " in *" $dep "*) ;; *) continue ;; esac
    case "$ok" in
      *" $dep "*) ;;
      *)
        echo "${hit%%:#include*}: $folder/ must not include $dep/ (allowed: ${allowed[$folder]:-nothing of ours})"
        bad=1
        ;;
    esac
  done < <(cd "$root" && grep -rnE --include='*.h' --include='*.cpp' --include='*.c' \
             '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' "$folder" || true)
done
if [ "$bad" -ne 0 ]; then
  echo "check-layering: includes that point the wrong way (see docs/architecture.md)" >&2
  exit 1
fi
echo "check-layering: every include points the way docs/architecture.md allows"
