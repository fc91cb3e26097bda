#!/usr/bin/env bash
# SshRemote end to end (root; openssh-server; network namespaces on
# 10.77.62.0/24): two namespaces on a bridge, each running its own sshd on
# its node address (own host key, a client key in a temp dir), then the
# hidden [.ssh-e2e] cases of harness_test drive SshRemote against them:
# Run (namespace, exit codes, stdout/stderr, quoting, stdin, timeout), a
# bounded session pool, Start + SIGSTOP/SIGCONT/SIGKILL + liveness, Upload/
# Download of 1 MiB of binary data, host key policies, Daemons over two SSH
# nodes, and a killed connection (an ssh error, then a new session). Nothing
# is left behind: sshd processes, namespaces, bridge, temp files. About 10 s
# (7 s of cases).
source "$(dirname "$0")/lib.sh"
require_root
require_tool ip
[ -x /usr/sbin/sshd ] || fail "this test needs /usr/sbin/sshd (openssh-server; run scripts/install-deps.sh)"
HARNESS_TEST="${HARNESS_TEST:-$(dirname "$FAULTLINE_BIN")/harness/harness_test}"
[ -x "$HARNESS_TEST" ] || fail "no harness_test at $HARNESS_TEST (build the harness_test target)"

NS=(fl-ssh1 fl-ssh2)
ADDR=(10.77.62.2 10.77.62.3)
BR=flssh0
WORK="$(mktemp -d /tmp/faultline-ssh-e2e.XXXXXX)"
SSHD_PIDS=()

cleanup() {
  local pid
  for pid in "${SSHD_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${SSHD_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for ns in "${NS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  ip link del "$BR" 2>/dev/null || true
  rm -rf "$WORK" /tmp/faultline-ssh-e2e
}
trap cleanup EXIT

for ns in "${NS[@]}"; do
  ip netns list | grep -qw "$ns" && fail "namespace $ns exists already (a previous run?)"
done
# sshd's privilege-separation directory: made when missing, never removed
# (other tests' sshds may need it; see tests/lib_ssh.sh).
mkdir -p -m 0755 /run/sshd

ip link add "$BR" type bridge
ip addr add 10.77.62.1/24 dev "$BR"
ip link set "$BR" up
ssh-keygen -q -t ed25519 -N '' -f "$WORK/id_ed25519"
cp "$WORK/id_ed25519.pub" "$WORK/authorized_keys"
: >"$WORK/known_hosts"
for i in 0 1; do
  ns=${NS[$i]}
  ip netns add "$ns"
  ip link add "fl-ssh$i-h" type veth peer name eth0 netns "$ns"
  ip link set "fl-ssh$i-h" master "$BR" up
  ip -n "$ns" addr add "${ADDR[$i]}/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  mkdir -p "$WORK/$ns"
  ssh-keygen -q -t ed25519 -N '' -f "$WORK/$ns/ssh_host_ed25519_key"
  # SetEnv SHLVL=1: bash then counts itself as a nested shell and skips
  # root's ~/.bashrc, which costs ~0.6 s per command here (pyenv).
  cat >"$WORK/$ns/sshd_config" <<EOF
Port 22
ListenAddress ${ADDR[$i]}
HostKey $WORK/$ns/ssh_host_ed25519_key
PidFile $WORK/$ns/sshd.pid
AuthorizedKeysFile $WORK/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 20
SetEnv SHLVL=1
EOF
  /usr/sbin/sshd -t -f "$WORK/$ns/sshd_config" || fail "sshd rejects $WORK/$ns/sshd_config"
  ip netns exec "$ns" /usr/sbin/sshd -D -e -f "$WORK/$ns/sshd_config" \
    2>"$WORK/$ns/sshd.log" &
  SSHD_PIDS+=($!)
done

# Wait until both sshd listen (about 0.1 s; bounded).
for i in 0 1; do
  for _ in $(seq 100); do
    ip netns exec "${NS[$i]}" ss -Hltn "sport = :22" | grep -q . && break
    sleep 0.05
  done
  ip netns exec "${NS[$i]}" ss -Hltn "sport = :22" | grep -q . ||
    { cat "$WORK/${NS[$i]}/sshd.log"; fail "sshd in ${NS[$i]} does not listen"; }
done

start=$(date +%s%N)
FAULTLINE_SSH_HOSTS="${NS[0]}=${ADDR[0]} ${NS[1]}=${ADDR[1]}" \
  FAULTLINE_SSH_KEY="$WORK/id_ed25519" \
  FAULTLINE_SSH_KNOWN_HOSTS="$WORK/known_hosts" \
  "$HARNESS_TEST" "[.ssh-e2e]" --durations yes ||
  { tail -20 "$WORK"/fl-ssh*/sshd.log; fail "ssh e2e cases failed"; }
echo "ssh e2e cases took $((($(date +%s%N) - start) / 1000000)) ms"

cleanup
trap - EXIT
for ns in "${NS[@]}"; do
  ip netns list | grep -qw "$ns" && fail "namespace $ns left behind"
done
ip link show "$BR" >/dev/null 2>&1 && fail "bridge $BR left behind"
for pid in "${SSHD_PIDS[@]}"; do
  kill -0 "$pid" 2>/dev/null && fail "sshd $pid still runs"
done
echo "PASS: e2e_ssh_remote"
