#!/usr/bin/env bash
# Porcupine's own test corpus through faultline and through Porcupine, side
# by side, one process per file (docs/porcupine-comparison.md).
#
# Usage:
#   PORCUPINE_DATA=/tmp/porcupine-data PORCUPINE_DRIVER=/tmp/porcupine-driver \
#   FAULTLINE_BIN=build/faultline bash bench/porcupine_corpus.sh
#
# PORCUPINE_DATA holds Porcupine's test_data/kv/*.txt under kv/ and
# test_data/jepsen/*.log under jepsen/ (third-party data: keep it outside
# the repository). PORCUPINE_DRIVER is bench/porcupine built as its README
# says. Optional: TIME_LIMIT (seconds per file and checker, default 600),
# REPS (repetitions of kv/c50-ok, default 3), OUT (a directory for the raw
# outputs, default a temporary one). PORCUPINE_DRIVER=none measures faultline
# alone (e.g. another build of it against the same corpus).
#
# Prints one row per file: the verdict porcupine_test.go expects, then for
# each checker its verdict, wall seconds and peak RSS (MB, from
# /usr/bin/time), and "DISAGREE" when a verdict is not the expected one;
# then the totals over the corpus and kv/c50-ok alone (REPS runs each,
# min-max). Exit status 1 when some verdict disagrees, 254 on bad setup.
set -uo pipefail

die() { echo "porcupine_corpus: $*" >&2; exit 254; }
: "${PORCUPINE_DATA:?set PORCUPINE_DATA (a copy of Porcupine test_data)}"
: "${PORCUPINE_DRIVER:?set PORCUPINE_DRIVER (bench/porcupine binary)}"
FAULTLINE_BIN=${FAULTLINE_BIN:-build/faultline}
TIME_LIMIT=${TIME_LIMIT:-600}
REPS=${REPS:-3}
[[ -x $FAULTLINE_BIN ]] || die "no faultline binary at $FAULTLINE_BIN"
[[ $PORCUPINE_DRIVER == none || -x $PORCUPINE_DRIVER ]] ||
  die "no Porcupine driver at $PORCUPINE_DRIVER"
[[ -x /usr/bin/time ]] || die "needs /usr/bin/time (Debian package time)"
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"

# porcupine_test.go: the Jepsen etcd logs it expects to be linearizable
# (every other numbered log is expected not to be; there is no 095); kv
# files named *-ok are linearizable, *-bad are not.
ETCD_OK=" 002 005 007 018 025 031 038 045 048 049 051 053 056 067 075 076 080 087 092 098 100 101 102 "

expected() {  # file -> valid|invalid
  local base=${1##*/}
  case $1 in
    */kv/*-ok.txt) echo valid ;;
    */kv/*-bad.txt) echo invalid ;;
    */jepsen/etcd_*.log)
      local n=${base#etcd_}; n=${n%.log}
      if [[ $ETCD_OK == *" $n "* ]]; then echo valid; else echo invalid; fi ;;
  esac
}

# run NAME CMD...: runs CMD under /usr/bin/time with the time limit; sets
# RC, WALL (s) and PEAK (MB).
run() {
  local name=$1; shift
  if [[ $1 == none ]]; then RC=skip WALL=0 PEAK=0; return; fi
  /usr/bin/time -f "%e %M" -o "$OUT/$name.time" \
    timeout --kill-after=5 "$TIME_LIMIT" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  RC=$?
  read -r WALL PEAK_KB <"$OUT/$name.time" 2>/dev/null || { WALL=0; PEAK_KB=0; }
  # A killed child makes time print "Command terminated ..." first.
  if ! [[ $WALL =~ ^[0-9.]+$ ]]; then
    read -r WALL PEAK_KB < <(tail -n 1 "$OUT/$name.time")
  fi
  PEAK=$(( ${PEAK_KB:-0} / 1024 ))
}

verdict_of() {  # exit code -> verdict (both tools: 0 valid, 1 invalid, 2 unknown)
  case $1 in
    skip) echo - ;;
    0) echo valid ;; 1) echo invalid ;; 2) echo unknown ;;
    124|137) echo timeout ;; *) echo "error($1)" ;;
  esac
}

faultline_cmd() {  # file -> command line
  case $1 in
    */kv/*) echo "$FAULTLINE_BIN check --model kv --format porcupine --time-limit $TIME_LIMIT $1" ;;
    *) echo "$FAULTLINE_BIN check --model cas-register --format porcupine --time-limit $TIME_LIMIT $1" ;;
  esac
}

porcupine_cmd() {
  case $1 in
    */kv/*) echo "$PORCUPINE_DRIVER -format kv -timeout ${TIME_LIMIT}s $1" ;;
    *) echo "$PORCUPINE_DRIVER -format etcd -timeout ${TIME_LIMIT}s $1" ;;
  esac
}

shopt -s nullglob
files=("$PORCUPINE_DATA"/kv/*.txt "$PORCUPINE_DATA"/jepsen/*.log)
(( ${#files[@]} > 0 )) || die "no kv/*.txt or jepsen/*.log under $PORCUPINE_DATA"

printf '%-22s %-8s | %-8s %7s %6s | %-8s %7s %6s | %s\n' \
  file expected faultline wall_s MB porcupine wall_s MB agree
disagree=0
f_total=0 p_total=0 f_peak=0 p_peak=0
for f in "${files[@]}"; do
  rel=${f#"$PORCUPINE_DATA"/}
  tag=${rel//\//_}
  want=$(expected "$f")
  # shellcheck disable=SC2046
  run "fl_$tag" $(faultline_cmd "$f")
  fv=$(verdict_of $RC) fw=$WALL fm=$PEAK
  # shellcheck disable=SC2046
  run "po_$tag" $(porcupine_cmd "$f")
  pv=$(verdict_of $RC) pw=$WALL pm=$PEAK
  mark=ok
  if [[ $fv != "$want" || ($pv != - && $pv != "$want") ]]; then
    mark=DISAGREE disagree=1
  fi
  printf '%-22s %-8s | %-8s %7.2f %6d | %-8s %7.2f %6d | %s\n' \
    "$rel" "$want" "$fv" "$fw" "$fm" "$pv" "$pw" "$pm" "$mark"
  f_total=$(awk -v a="$f_total" -v b="$fw" 'BEGIN { print a + b }')
  p_total=$(awk -v a="$p_total" -v b="$pw" 'BEGIN { print a + b }')
  (( fm > f_peak )) && f_peak=$fm
  (( pm > p_peak )) && p_peak=$pm
done
echo
printf 'corpus (%d files, a process each): faultline %.2f s (max %d MB), Porcupine %.2f s (max %d MB)\n' \
  "${#files[@]}" "$f_total" "$f_peak" "$p_total" "$p_peak"

c50="$PORCUPINE_DATA/kv/c50-ok.txt"
if [[ -f $c50 ]]; then
  fs=() ps=()
  for ((i = 0; i < REPS; i++)); do
    # shellcheck disable=SC2046
    run "fl_c50_$i" $(faultline_cmd "$c50")
    [[ $(verdict_of $RC) == valid ]] || { echo "kv/c50-ok: faultline said $(verdict_of $RC)"; disagree=1; }
    fs+=("$WALL")
    # shellcheck disable=SC2046
    run "po_c50_$i" $(porcupine_cmd "$c50")
    [[ $(verdict_of $RC) == valid || $RC == skip ]] ||
      { echo "kv/c50-ok: Porcupine said $(verdict_of $RC)"; disagree=1; }
    ps+=("$WALL")
  done
  read -r fmin fmax < <(printf '%s\n' "${fs[@]}" | sort -g | sed -n '1p;$p' | tr '\n' ' ')
  read -r pmin pmax < <(printf '%s\n' "${ps[@]}" | sort -g | sed -n '1p;$p' | tr '\n' ' ')
  printf 'kv/c50-ok, %d runs: faultline %s-%s s, Porcupine %s-%s s\n' \
    "$REPS" "$fmin" "${fmax:-$fmin}" "$pmin" "${pmax:-$pmin}"
fi
echo "raw outputs: $OUT"
exit $disagree
