#!/usr/bin/env bash
# The CLI's conventions against the real binary: bare `faultline` prints
# the help and exits 0; `list` describes every model and checker in one line
# each, and `list --json`, `validate --json` and `run --json` print JSON
# with the expected fields and the usual exit codes; `check` picks the
# reader from the extension or the first line and, when a reader fails,
# names the --format that works; the generated man page renders and the
# bash and zsh completions complete subcommands, options and choices (zsh
# through a pty); on short raftkv runs (3 nodes in namespaces on 10.77.131.0/24,
# 3 s each) --quiet prints no info line and no status line, -v prints debug
# lines, colour appears on a terminal and NO_COLOR removes it.
# Needs root, python3, script (bsdutils), groff, man, zsh. About 25 s.
source "$(dirname "$0")/lib.sh"
require_root
for tool in script groff man zsh timeout; do require_tool "$tool"; done
setup_workdir
F="$FAULTLINE_BIN"
BUILD="$(dirname "$FAULTLINE_BIN")"
TD="$FAULTLINE_SOURCE_DIR/checkers/testdata/porcupine"

# rc CMD...: runs CMD with stdout in $WORK/o and stderr in $WORK/e; sets RC.
rc() {
  set +e
  "$@" >"$WORK/o" 2>"$WORK/e"
  RC=$?
  set -e
}
show() { echo "--- stdout"; cat "$WORK/o"; echo "--- stderr"; cat "$WORK/e"; }

# --- bare faultline: the help, exit 0 ----------------------------------------
rc "$F"
[ "$RC" -eq 0 ] || { show; fail "bare faultline exited $RC, expected 0"; }
grep -q "^Usage: faultline" "$WORK/o" || { show; fail "bare faultline printed no usage"; }
for sub in run check validate list heal analyze report suite; do
  grep -qE "^  $sub " "$WORK/o" || fail "bare faultline's help does not list $sub"
done
[ ! -s "$WORK/e" ] || { show; fail "bare faultline wrote to stderr"; }

# --- list: one line per model and checker; --json -----------------------------
rc "$F" list --json
[ "$RC" -eq 0 ] || fail "list --json exited $RC"
"$PY" - "$WORK/o" <<'PY' || fail "list --json lacks what it should hold"
import json, sys
j = json.load(open(sys.argv[1]))
for k in ["targets", "workloads", "faults", "partition_shapes",
          "node_selectors", "checkers", "models"]:
    assert j[k], k
    for item in j[k]:
        assert item["name"] and item["description"], item
        assert "\n" not in item["description"], item
models = [m["name"] for m in j["models"]]
assert models == ["cas-register", "kv", "mutex", "register", "mutex-fencing",
                  "leader-per-term", "list-append", "rw-register", "set",
                  "bank", "counter"], models
assert [c["name"] for c in j["checkers"]] == [
    "linearizable", "stats", "mutex-fencing", "leader-per-term",
    "list-append", "rw-register", "set", "bank", "counter"]
assert "raftkv" in [t["name"] for t in j["targets"]]
assert all("min_nodes" in f for f in j["faults"])
PY
cp "$WORK/o" "$WORK/list.json"
rc "$F" list
[ "$RC" -eq 0 ] || fail "list exited $RC"
# Every model and checker is one line: "  NAME  DESCRIPTION".
"$PY" - "$WORK/list.json" "$WORK/o" <<'PY' || fail "list does not describe every model and checker in one line"
import json, sys
j = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()
for group in ["models", "checkers"]:
    for m in j[group]:
        want = "  " + m["name"] + " "
        hits = [l for l in lines if l.startswith(want) and l.endswith(m["description"])]
        assert hits, (group, m["name"])
PY

# --- validate --json ----------------------------------------------------------
rc "$F" validate --json "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml"
[ "$RC" -eq 0 ] || { show; fail "validate --json of a good config exited $RC"; }
[ "$(json_get "$WORK/o" "(j['ok'], j['configs'][0]['name'], j['configs'][0]['nodes'])")" = "(True, 'raftkv-quick', 3)" ] \
  || { show; fail "validate --json of a good config"; }
printf 'name: typo\ncluster:\n  nodes: 3\n  nodez: 5\n' >"$WORK/typo.yaml"
rc "$F" validate "$WORK/typo.yaml" --json  # the flag after the file, too
[ "$RC" -eq 254 ] || { show; fail "validate --json of a bad config exited $RC, expected 254"; }
[ ! -s "$WORK/e" ] || { show; fail "validate --json wrote to stderr"; }
got=$(json_get "$WORK/o" "(j['ok'], [(e['file'].endswith('typo.yaml'), e['line'], e['column'], 'nodez' in e['message'], 'nodes' in e['hint']) for e in j['configs'][0]['errors']])")
[ "$got" = "(False, [(True, 4, 3, True, True)])" ] || { show; fail "validate --json errors: $got"; }
# --quiet, before or after the subcommand: nothing printed for a good config.
for args in "-q validate" "validate --quiet"; do
  # shellcheck disable=SC2086
  rc "$F" $args "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml"
  [ "$RC" -eq 0 ] && [ ! -s "$WORK/o" ] || { show; fail "'faultline $args' printed something or exited $RC"; }
done

# --- check: the reader from the extension or the first line --------------------
expect_check() {  # expect_check CODE ARGS...: exit CODE, and not a read error
  local want="$1"; shift
  rc "$F" check "$@"
  [ "$RC" -eq "$want" ] || { show; fail "check $* exited $RC, expected $want"; }
}
expect_check 0 -m cas-register "$TD/etcd_000_head.log"   # .log: porcupine
expect_check 0 -m kv "$TD/kv_c01_ok_head.txt"            # .txt + EDN maps
expect_check 1 -m kv "$TD/kv_c01_bad.txt"
cp "$TD/etcd_000_head.log" "$WORK/etcd-noext"             # a jepsen.util line
expect_check 0 -m cas-register "$WORK/etcd-noext"
cat >"$WORK/h.edn" <<'EDN'
{:type :invoke, :f :write, :process 0, :value 1}
{:type :ok, :f :write, :process 0, :value 1}
{:type :invoke, :f :read, :process 1, :value nil}
{:type :ok, :f :read, :process 1, :value 1}
EDN
expect_check 0 -m register "$WORK/h.edn"                 # .edn
cp "$WORK/h.edn" "$WORK/h-edn"                            # {: first line
expect_check 0 -m register "$WORK/h-edn"
printf '{"index":0,"process":0,"type":"invoke","f":"write","value":1}\n{"index":1,"process":0,"type":"ok","f":"write","value":1}\n' >"$WORK/h.txt"
expect_check 0 -m register "$WORK/h.txt"                 # .txt with JSON lines
rc "$F" -v check -m register "$WORK/h.txt"
grep -q "reading .*h.txt as jsonl (from its first line" "$WORK/e" || { show; fail "-v check does not say which reader it chose"; }
# An explicit --format wins over the extension.
cp "$TD/kv_c01_ok_head.txt" "$WORK/kv.jsonl"
expect_check 0 -m kv --format porcupine "$WORK/kv.jsonl"
# A failed read names the --format that reads the file.
rc "$F" check -m cas-register --format jsonl "$TD/etcd_000_head.log"
[ "$RC" -eq 254 ] || { show; fail "a porcupine log read as jsonl exited $RC"; }
grep -q "etcd_000_head.log:1:1: error" "$WORK/e" && grep -q "try --format porcupine" "$WORK/e" \
  || { show; fail "no located error with the --format porcupine suggestion"; }
rc "$F" check -m register "$WORK/kv.jsonl"                # EDN named .jsonl
[ "$RC" -eq 254 ] && grep -q "try --format edn" "$WORK/e" || { show; fail "EDN in a .jsonl file: no --format edn suggestion"; }
rc "$F" check -m register --format edn "$WORK/h.txt"
[ "$RC" -eq 254 ] && grep -q "try --format jsonl" "$WORK/e" || { show; fail "JSONL read as edn: no --format jsonl suggestion"; }

# --- man page and completion --------------------------------------------------
MAN="$BUILD/man/faultline.1"
[ -s "$MAN" ] || fail "no man page at $MAN (built with the faultline target)"
warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
[ -z "$warn" ] || fail "groff warns on the man page: $warn"
MANWIDTH=100 man -l "$MAN" >"$WORK/man.txt" 2>/dev/null || fail "man -l cannot render $MAN"
for word in "faultline run" "faultline check" "--quiet" "--json" "NO_COLOR" "EXIT STATUS" "254"; do
  grep -qF -- "$word" "$WORK/man.txt" || fail "the rendered man page lacks '$word'"
done
BASHC="$BUILD/completion/faultline.bash"
[ -s "$BASHC" ] || fail "no bash completion at $BASHC"
complete_words() {  # complete_words WORD...: the completions of the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _faultline; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$BASHC" "$@"
}
[ "$(complete_words faultline ru)" = "run" ] || fail "'faultline ru<TAB>' gave '$(complete_words faultline ru)', expected run"
[ "$(complete_words faultline -q ru)" = "run" ] || fail "'faultline -q ru<TAB>' did not give run"
words=$(complete_words faultline run --)
for w in --time-limit --seed --test-count --json --quiet --verbose --color --help; do
  grep -qx -- "$w" <<<"$words" || fail "'faultline run --<TAB>' lacks $w: $words"
done
grep -qx -- "--model" <<<"$words" && fail "'faultline run --<TAB>' offers check's --model"
[ "$(complete_words faultline check --format "" | tr '\n' ' ')" = "jsonl edn porcupine " ] \
  || fail "'faultline check --format <TAB>' did not give jsonl edn porcupine"
complete_words faultline check -m cas | grep -qx cas-register || fail "'check -m cas<TAB>' did not give cas-register"
ZSHC="$BUILD/completion/_faultline"
head -1 "$ZSHC" | grep -qx "#compdef faultline" || fail "$ZSHC is not a zsh completion function"
zsh -n "$ZSHC" || fail "$ZSHC does not parse in zsh"
# The zsh function in a real interactive zsh on a pty (zsh/zpty): type a
# line and TAB, wait (at most 20 s) until the expected completion shows.
mkdir -p "$WORK/zfunc" && cp "$ZSHC" "$WORK/zfunc/"
cat >"$WORK/ztab.zsh" <<'ZSH'
zmodload zsh/zpty
zpty -b z zsh -f -i
zpty -w z "PS1='> '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; compdef _faultline faultline"
zpty -n -w z "$2"$'\t'
zpty -r -m z out "$3"
zpty -d z
ZSH
zsh_tab() {  # zsh_tab LINE PATTERN: TAB after LINE shows PATTERN
  timeout 20 zsh -f "$WORK/ztab.zsh" "$WORK/zfunc" "$1" "$2" \
    || fail "zsh: '$1<TAB>' did not show $2"
}
zsh_tab "faultline run --te" "*--test-count*"
zsh_tab "faultline check --format " "*jsonl*porcupine*"

# --- runs: --quiet, -v, colour, NO_COLOR, --json ------------------------------
E2E_SUBNET=10.77.131.0/24
cfg=$(local_copy "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml" 3 \
  "s#^recovery: .*#recovery: 1#" "s#^name: .*#name: cli-conventions#")
RUNARGS=(--store "$STORE" --index-dir "$INDEX" --seed 11)
# on_tty OUT CMD...: CMD on a pseudo-terminal (script), its output in OUT.
on_tty() {
  local out="$1"; shift
  local cmd; printf -v cmd '%q ' "$@"
  set +e
  script -qefc "$cmd" /dev/null >"$out" 2>&1 </dev/null
  RC=$?
  set -e
}
ESC=$'\x1b'
plain() { sed "s/${ESC}\[[0-9;]*[A-Za-z]//g; s/\r//g" "$1"; }  # without escapes
# A terminal, no NO_COLOR: coloured log levels and the live status line.
on_tty "$WORK/tty.txt" env -u NO_COLOR "$F" run "$cfg" "${RUNARGS[@]}"
[ "$RC" -eq 0 ] || { cat "$WORK/tty.txt"; fail "run on a terminal exited $RC"; }
grep -q "${ESC}\[32m" "$WORK/tty.txt" || { cat -v "$WORK/tty.txt"; fail "no colour on a terminal"; }
grep -q "^[0-9:]\{8\} I faultline .*run .* of cli-conventions" <(plain "$WORK/tty.txt") || fail "no info line on a terminal"
# NO_COLOR and -v (after the config): debug lines, no colour codes.
on_tty "$WORK/nocolor.txt" env NO_COLOR=1 "$F" run "$cfg" "${RUNARGS[@]}" -v
[ "$RC" -eq 0 ] || { cat "$WORK/nocolor.txt"; fail "NO_COLOR -v run exited $RC"; }
grep -q "${ESC}\[[0-9;]*m" "$WORK/nocolor.txt" && { cat -v "$WORK/nocolor.txt"; fail "colour codes despite NO_COLOR"; }
grep -qE "^[0-9:]{8} D " "$WORK/nocolor.txt" || { cat -v "$WORK/nocolor.txt"; fail "-v printed no debug line"; }
grep -q "colour off" "$WORK/nocolor.txt" || fail "-v's debug line does not say colour is off"
# --quiet on a terminal: no info lines, no status line; the verdict stays.
on_tty "$WORK/quiet.txt" env -u NO_COLOR "$F" -q run "$cfg" "${RUNARGS[@]}"
[ "$RC" -eq 0 ] || { cat "$WORK/quiet.txt"; fail "quiet run exited $RC"; }
grep -qE "^[0-9:]{8} [ID] " <(plain "$WORK/quiet.txt") && { cat -v "$WORK/quiet.txt"; fail "--quiet printed info or debug lines"; }
grep -q "${ESC}\[K" "$WORK/quiet.txt" && { cat -v "$WORK/quiet.txt"; fail "--quiet drew the status line"; }
grep -q "cli-conventions: valid" "$WORK/quiet.txt" || { cat -v "$WORK/quiet.txt"; fail "--quiet hid the verdict"; }
q_run=$(readlink -f "$STORE/cli-conventions/latest")
grep -q " info .*workload done" "$q_run/faultline.log" || fail "--quiet also emptied faultline.log (it keeps info)"
# --json: one document on stdout, logs on stderr, the same exit code.
rc "$F" run "$cfg" "${RUNARGS[@]}" --json
[ "$RC" -eq 0 ] || { show; fail "run --json exited $RC"; }
validate_results "$WORK/o"
got=$(json_get "$WORK/o" "(j['valid'], j['run_dir'] == '$(readlink -f "$STORE/cli-conventions/latest")', sorted(c['checker'] for c in j['checkers']))")
[ "$got" = "('valid', True, ['linearizable', 'stats'])" ] || { show; fail "run --json document: $got"; }
grep -q " I faultline .*run " "$WORK/e" || { show; fail "run --json: no logs on stderr"; }
grep -q "stored in" "$WORK/o" "$WORK/e" && fail "run --json printed the text summary"
echo "PASS: bare help exits 0; list, validate and run --json hold their fields; check detects jsonl/edn/porcupine and suggests --format; man page renders; bash and zsh completion work; --quiet, -v, colour and NO_COLOR behave"
