#!/usr/bin/env bash
# Installs every Debian package faultline needs to build, test and run.
# Idempotent: packages already present are skipped. Needs root (apt-get).
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build ccache pkg-config
  # libraries (design.md: Debian packages only, nothing vendored)
  libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libcurl4-openssl-dev catch2
  # runtime: namespaces, firewall, process tools
  iproute2 iptables procps psmisc libnetfilter-queue-dev
  # end-to-end tests read JSON with python3
  python3 python3-jsonschema chromium
  # e2e_cli_conventions: renders the man page (groff, man), runs on a
  # pseudo-terminal (script, in bsdutils), parses the zsh completion
  groff-base man-db bsdutils zsh
  # targets (redis-tools: redis-cli and redis-benchmark speak to raftkv)
  etcd-server etcd-client redis-tools
  # Redis target: redis-server and redis-sentinel (Redis 7)
  redis-server redis-sentinel
  # ZooKeeper target: the server (runs on Java 17), its C client library
  zookeeper libzookeeper-mt-dev openjdk-17-jre-headless
  # the clock fault preloads libfaketime into target processes
  libfaketime
  # SSH nodes: SshRemote links libssh; its e2e test runs sshd per namespace
  libssh-dev openssh-server
  # Docker nodes: the engine and its CLI (tests/e2e_docker.sh starts its own
  # dockerd; docs/docker.md)
  docker.io
  # e2e_ssh_run.sh logs in as a non-root user with passwordless sudo
  sudo
  # target: process examples: MariaDB with Galera and its Python exec client
  # (examples/galera), and Node.js for the JavaScript reference client
  mariadb-server galera-4 python3-pymysql nodejs
  # disk faults: the lazy file system (faultline-lazyfs) is a FUSE daemon;
  # bench/lazyfs_bench.sh measures it with fio
  fuse3 libfuse3-dev fio
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (apt-get needs it), or install them yourself" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts an etcd service on install; faultline runs its own members.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  systemctl stop etcd || true
fi
# ... and MariaDB's (the Galera runs start their own servers in namespaces).
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet mariadb 2>/dev/null; then
  systemctl stop mariadb || true
fi
# ... and the docker engine's service (it would manage the host firewall);
# tests/e2e_docker.sh starts a private engine of its own.
for unit in docker.service docker.socket; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$unit" 2>/dev/null; then
    systemctl stop "$unit" || true
  fi
done
# ... and Redis services; faultline runs its own redis-server and sentinels.
for svc in redis-server redis-sentinel; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" || true
  fi
done
