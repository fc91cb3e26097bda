# Headless Chromium for the report tests (sourced after lib.sh, not run).
# Sets CHROMIUM or fails saying how to install it; `chrome ARGS...` runs it
# with a fresh profile, no network (every host resolves to nothing) and
# file access, its stderr appended to $WORK/chromium.err.
CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
[ -n "$CHROMIUM" ] || fail "this test needs chromium (apt-get install -y chromium, or scripts/install-deps.sh)"

chrome() {
  local profile
  profile="$(mktemp -d "$WORK/profile.XXXXXX")"
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --host-resolver-rules="MAP * ~NOTFOUND" \
    --allow-file-access-from-files "$@" 2>>"$WORK/chromium.err"
}
