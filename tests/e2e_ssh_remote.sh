#!/usr/bin/env bash
# SshRemote end to end (root; openssh-server; network namespaces on
# 10.77.62.0/24): two namespaces on a bridge, each running its own sshd on
# its node address (tests/lib_ssh.sh: own host key, a client key in a temp
# dir), then the hidden [.ssh-e2e] cases of harness_test drive SshRemote
# against them:
# Run (namespace, exit codes, stdout/stderr, quoting, stdin, timeout), a
# bounded session pool, Start + SIGSTOP/SIGCONT/SIGKILL + liveness, Upload/
# Download of 1 MiB of binary data, host key policies, Daemons over two SSH
# nodes, and a killed connection (an ssh error, then a new session). Nothing
# is left behind: sshd processes, namespaces, bridge, temp files. About 10 s
# (7 s of cases).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ssh.sh"
require_root
require_tool ip
HARNESS_TEST="${HARNESS_TEST:-$(dirname "$FAULTLINE_BIN")/harness/harness_test}"
[ -x "$HARNESS_TEST" ] || fail "no harness_test at $HARNESS_TEST (build the harness_test target)"

WORK="$(mktemp -d /tmp/faultline-ssh-e2e.XXXXXX)"
cleanup() {
  ssh_nodes_down
  rm -rf "$WORK" /tmp/faultline-ssh-e2e
}
trap cleanup EXIT

# Nodes fl-ssh1 and fl-ssh2 on 10.77.62.0/24 (tests/lib_ssh.sh).
ssh_nodes_up fl-ssh 10.77.62 2 "$WORK"

start=$(date +%s%N)
FAULTLINE_SSH_HOSTS="${SSH_NS[0]}=${SSH_ADDR[0]} ${SSH_NS[1]}=${SSH_ADDR[1]}" \
  FAULTLINE_SSH_KEY="$SSH_KEY" \
  FAULTLINE_SSH_KNOWN_HOSTS="$SSH_KNOWN_HOSTS" \
  "$HARNESS_TEST" "[.ssh-e2e]" --durations yes ||
  { tail -20 "$WORK"/fl-ssh*/sshd.log; fail "ssh e2e cases failed"; }
echo "ssh e2e cases took $((($(date +%s%N) - start) / 1000000)) ms"

cleanup
trap - EXIT
ssh_nodes_gone
echo "PASS: e2e_ssh_remote"
