# Shared helpers for tests that reach netns nodes over SSH (sourced after
# lib.sh, not run). Each node is a network namespace on a private bridge
# running its own sshd on the node's address (own host key and pid file,
# `UsePAM no`, `StrictModes no` because keys live under /tmp, /run/sshd
# created when missing). With a NODE_FS directory, every sshd also gets its
# own mount namespace with a private tmpfs on NODE_FS, so files a test's
# controller writes under NODE_FS are not seen on the nodes and the other
# way round: the nodes behave like separate hosts for their scratch files.
#
#   ssh_nodes_up PREFIX NET N WORK [NODE_FS]
#     PREFIX  names: bridge ${PREFIX}br, namespaces ${PREFIX}1..N
#     NET     the first three octets of a /24 (bridge .1, node i .(i+1))
#     WORK    a directory for keys, configs and logs (the caller removes it)
#   Sets SSH_NS, SSH_ADDR, SSH_SSHD_PIDS (arrays), SSH_KEY (a fresh client
#   key whose public half is in WORK/authorized_keys, valid for every user),
#   SSH_KNOWN_HOSTS (empty file) and SSH_BRIDGE_ADDR.
#   ssh_nodes_down: stops the sshds, removes namespaces and the bridge.
#   ssh_nodes_gone: after ssh_nodes_down, fails if a namespace, the bridge
#     or an sshd is left behind.
#   node_sh I CMD...: runs CMD in node I's (0-based) network and mount
#     namespaces, as that node's processes see the machine.

SSH_NS=()
SSH_ADDR=()
SSH_SSHD_PIDS=()
SSH_STOPPED_PIDS=()
SSH_BRIDGE=""

ssh_nodes_up() {
  local prefix="$1" net="$2" n="$3" work="$4" nodefs="${5:-}"
  [ -x /usr/sbin/sshd ] || fail "this test needs /usr/sbin/sshd (openssh-server; run scripts/install-deps.sh)"
  require_tool ssh-keygen
  require_tool unshare
  require_tool nsenter
  SSH_BRIDGE="${prefix}br"
  SSH_BRIDGE_ADDR="$net.1"
  local i ns
  for i in $(seq 1 "$n"); do
    ns="${prefix}$i"
    grep -qw "$ns" <<<"$(ip netns list)" && fail "namespace $ns exists already (a previous run?)"
  done
  # sshd's privilege-separation directory (the package's service unit makes
  # it at boot). Created when missing and never removed: another test's
  # sshds may be running, and each new connection needs it.
  mkdir -p -m 0755 /run/sshd
  ip link add "$SSH_BRIDGE" type bridge
  ip addr add "$net.1/24" dev "$SSH_BRIDGE"
  ip link set "$SSH_BRIDGE" up
  SSH_KEY="$work/id_ed25519"
  SSH_KNOWN_HOSTS="$work/known_hosts"
  ssh-keygen -q -t ed25519 -N '' -f "$SSH_KEY"
  cp "$SSH_KEY.pub" "$work/authorized_keys"
  # sshd reads authorized_keys as the user logging in: a non-root user must
  # be able to reach it (the private key stays 0600).
  chmod 711 "$work"
  chmod 644 "$work/authorized_keys"
  : >"$SSH_KNOWN_HOSTS"
  for i in $(seq 1 "$n"); do
    ns="${prefix}$i"
    local addr="$net.$((i + 1))"
    SSH_NS+=("$ns")
    SSH_ADDR+=("$addr")
    ip netns add "$ns"
    ip link add "${prefix}v$i" type veth peer name eth0 netns "$ns"
    ip link set "${prefix}v$i" master "$SSH_BRIDGE" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    mkdir -p "$work/$ns"
    ssh-keygen -q -t ed25519 -N '' -f "$work/$ns/ssh_host_ed25519_key"
    # SetEnv SHLVL=1: bash then counts itself as a nested shell and skips
    # root's ~/.bashrc, which costs ~0.6 s per command here (pyenv).
    cat >"$work/$ns/sshd_config" <<CFG
Port 22
ListenAddress $addr
HostKey $work/$ns/ssh_host_ed25519_key
PidFile $work/$ns/sshd.pid
AuthorizedKeysFile $work/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 20
MaxStartups 100
SetEnv SHLVL=1
CFG
    /usr/sbin/sshd -t -f "$work/$ns/sshd_config" || fail "sshd rejects $work/$ns/sshd_config"
    # ip netns exec and unshare exec (no fork), so $! is sshd's own pid.
    if [ -n "$nodefs" ]; then
      mkdir -p "$nodefs"
      ip netns exec "$ns" unshare -m --propagation private \
        sh -c 'mount -t tmpfs -o size=512m,mode=1777 tmpfs "$1" && exec /usr/sbin/sshd -D -e -f "$2"' \
        sh "$nodefs" "$work/$ns/sshd_config" 2>"$work/$ns/sshd.log" &
    else
      ip netns exec "$ns" /usr/sbin/sshd -D -e -f "$work/$ns/sshd_config" \
        2>"$work/$ns/sshd.log" &
    fi
    SSH_SSHD_PIDS+=($!)
  done
  # Wait until every sshd listens (about 0.1 s; bounded).
  for i in $(seq 0 $((n - 1))); do
    local up=0
    for _ in $(seq 100); do
      if ip netns exec "${SSH_NS[$i]}" ss -Hltn "sport = :22" | grep -q .; then
        up=1
        break
      fi
      sleep 0.05
    done
    [ "$up" = 1 ] || { cat "$work/${SSH_NS[$i]}/sshd.log"; fail "sshd in ${SSH_NS[$i]} does not listen"; }
  done
}

node_sh() {
  local i="$1"
  shift
  nsenter -t "${SSH_SSHD_PIDS[$i]}" -n -m -- "$@"
}

# ssh_kill_in_nodes COMM: SIGKILLs every process in the nodes' namespaces
# whose name (/proc/PID/comm) matches the basic regular expression COMM as a
# whole line, e.g. 'raftkv\|faultline-clock': what a failed test's runs
# left, for its EXIT trap before ssh_nodes_down.
ssh_kill_in_nodes() {
  local ns p
  for ns in "${SSH_NS[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do
      grep -qx "$1" "/proc/$p/comm" 2>/dev/null && kill -9 "$p" 2>/dev/null
    done
  done
  return 0
}

ssh_nodes_down() {
  local pid ns
  for pid in "${SSH_SSHD_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${SSH_SSHD_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for ns in "${SSH_NS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  [ -n "$SSH_BRIDGE" ] && ip link del "$SSH_BRIDGE" 2>/dev/null || true
  SSH_STOPPED_PIDS+=("${SSH_SSHD_PIDS[@]}")
  SSH_SSHD_PIDS=()
  return 0
}

ssh_nodes_gone() {
  local ns pid
  for ns in "${SSH_NS[@]}"; do
    grep -qw "$ns" <<<"$(ip netns list)" && fail "namespace $ns left behind"
  done
  if [ -n "$SSH_BRIDGE" ] && ip link show "$SSH_BRIDGE" >/dev/null 2>&1; then
    fail "bridge $SSH_BRIDGE left behind"
  fi
  for pid in "${SSH_STOPPED_PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null && fail "sshd $pid still runs"
  done
  return 0
}
