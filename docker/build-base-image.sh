#!/usr/bin/env bash
# Builds a faultline node image locally, without any image registry.
#
#   docker/build-base-image.sh [--docker-host H] [--tag T] MODE [FILE=PATH...]
#
# MODE
#   debian   a minimal Debian root file system made with debootstrap
#            (needs the debootstrap package and the Debian mirror), imported
#            as T (default faultline/debian:bookworm). The per-target
#            Dockerfiles in docker/ start FROM it and apt-get their system.
#   host     a tiny root file system assembled from this machine's own
#            binaries and the shared libraries they load (sh, coreutils,
#            util-linux's setsid, procps' kill, iptables with its modules):
#            no network, a few seconds. Default tag faultline/node:host.
#            Each FILE=PATH copies the host file FILE (and its libraries) to
#            PATH in the image, e.g. build/raftkv=/usr/local/bin/raftkv.
#            Meant for machines whose binaries the containers can run (the
#            same kernel; the e2e test uses it).
#
# The image is imported with `docker import`; nothing is pulled or pushed.
set -euo pipefail

docker_args=()
tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --docker-host) docker_args=(--host "$2"); shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
mode="${1:-}"
[ $# -gt 0 ] && shift
docker_cli="${DOCKER:-docker}"
if ! command -v "$docker_cli" >/dev/null 2>&1; then
  echo "build-base-image: the docker CLI is missing (apt-get install docker.io)" >&2
  exit 1
fi

root="$(mktemp -d /tmp/faultline-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT

case "$mode" in
  debian)
    tag="${tag:-faultline/debian:bookworm}"
    if ! command -v debootstrap >/dev/null 2>&1; then
      echo "build-base-image: debootstrap is missing (apt-get install debootstrap)" >&2
      exit 1
    fi
    debootstrap --variant=minbase bookworm "$root" \
      "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/dev/null
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    ;;
  host)
    tag="${tag:-faultline/node:host}"
    # Merged /usr, as on Debian 12: /lib/x/libc.so and /usr/lib/x/libc.so
    # are one file, and iptables finds its modules at its built-in path.
    mkdir -p "$root"/usr/{bin,sbin,lib,lib64}
    for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
    # copy FILE DEST: the file and every library it loads, at their paths.
    copy() {
      local src="$1" dst="$2"
      mkdir -p "$root$(dirname "$dst")"
      cp -L "$src" "$root$dst"
      local lib
      # ldd prints "name => /path (addr)" and "/lib64/ld-linux... (addr)".
      for lib in $(ldd "$src" 2>/dev/null | grep -o '/[^ ]*' || true); do
        if [ -e "$lib" ] && [ ! -e "$root$lib" ]; then
          mkdir -p "$root$(dirname "$lib")"
          cp -L "$lib" "$root$lib"
        fi
      done
    }
    for tool in sh cat mkdir rm rmdir dirname basename kill setsid timeout \
                sleep ls env true false mv cp ln chmod echo ps head tail \
                grep sed date iptables iptables-save iptables-restore ip; do
      path="$(PATH=/usr/sbin:/usr/bin:/sbin:/bin type -P "$tool" || true)"
      if [ -z "$path" ]; then
        echo "build-base-image: $tool is missing on this machine" >&2
        exit 1
      fi
      copy "$path" "/usr/bin/$tool"
    done
    # iptables: one multi-call binary that loads its match/target modules.
    xt="$(dirname "$(ldd "$(PATH=/usr/sbin:/usr/bin:/sbin:/bin type -P iptables)" | grep -o '/[^ ]*libxtables[^ ]*' | head -1)")/xtables"
    if [ -d "$xt" ]; then
      for m in "$xt"/*.so; do copy "$m" "$m"; done
    fi
    for spec in "$@"; do
      copy "${spec%%=*}" "${spec#*=}"
    done
    mkdir -p "$root"/{etc,tmp,run,proc,sys,dev,root,var/log}
    chmod 1777 "$root/tmp"
    printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
    printf 'root:x:0:\n' >"$root/etc/group"
    for f in /etc/protocols /etc/services /etc/ethertypes; do
      [ -e "$f" ] && cp "$f" "$root$f"
    done
    ;;
  *)
    echo "usage: $0 [--docker-host H] [--tag T] debian|host [FILE=PATH...]" >&2
    exit 2
    ;;
esac

tar -C "$root" -c . | "$docker_cli" "${docker_args[@]}" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["sleep", "infinity"]' - "$tag" >/dev/null
echo "$tag"
