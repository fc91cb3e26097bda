#!/usr/bin/env bash
# Builds a faultline node image locally, without any image registry.
#
#   docker/build-base-image.sh [OPTION...] MODE [FILE=PATH...]
#
# MODE
#   debian   a minimal Debian root file system made with debootstrap
#            (needs the debootstrap package and the Debian mirror), imported
#            as T (default faultline/debian:bookworm). The per-target
#            Dockerfiles in docker/ start FROM it and apt-get their system.
#   host     a small root file system assembled from this machine's own
#            binaries and the shared libraries they load (sh, coreutils,
#            util-linux's setsid, procps' kill and pgrep, iptables with its
#            modules): no network, a few seconds. Default tag
#            faultline/node:host. Each FILE=PATH copies the host file FILE
#            (and its libraries) to PATH in the image, e.g.
#            build/raftkv=/usr/local/bin/raftkv. Meant for machines whose
#            binaries the containers can run (the same kernel; the e2e test
#            and docker/build-images.sh use it).
#
# OPTION (anywhere before the FILE=PATH list)
#   --docker-host H    the engine, as `docker --host H`
#   --tag T            the image's name
#   --package NAME     (host) every file of the installed Debian package
#                      NAME, at its own path (symlinks kept as links, the
#                      libraries of every ELF file added; documentation,
#                      man pages and debug files left out); repeatable
#   --link LINK=TARGET (host) a symbolic link LINK -> TARGET in the image,
#                      e.g. /usr/bin/java to the JRE's bin/java (the JVM
#                      finds its home from its real path); repeatable
#
# The image is imported with `docker import`; nothing is pulled or pushed.
# Prints the tag on success; exits 1 when a tool, package or file is
# missing on this machine, 2 on bad usage.
set -euo pipefail

docker_args=()
tag=""
packages=()
links=()
mode=""
specs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --docker-host) docker_args=(--host "$2"); shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --package) packages+=("$2"); shift 2 ;;
    --link) links+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    -*) echo "build-base-image: unknown option $1" >&2; exit 2 ;;
    *) if [ -z "$mode" ]; then mode="$1"; else specs+=("$1"); fi; shift ;;
  esac
done
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
    if [ "${#specs[@]}" -gt 0 ] || [ "${#packages[@]}" -gt 0 ] || [ "${#links[@]}" -gt 0 ]; then
      echo "build-base-image: FILE=PATH, --package and --link are for the host mode" >&2
      exit 2
    fi
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
    # Files whose libraries the image needs; resolved at the end with one
    # ldd call (ldd prints the whole closure; a call per file costs seconds
    # on a loaded machine).
    elf=()
    libs() {
      local lib
      [ "$#" -gt 0 ] || return 0
      # ldd prints "\tname => /path (addr)" and "\t/lib64/ld-linux... (addr)"
      # under a "FILE:" line per file; non-ELF files get "not a dynamic
      # executable".
      for lib in $(ldd "$@" 2>/dev/null |
                   awk '/^\t/ {for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i}' |
                   sort -u); do
        if [ -e "$lib" ] && [ ! -e "$root$lib" ]; then
          mkdir -p "$root$(dirname "$lib")"
          cp -L "$lib" "$root$lib"
        fi
      done
    }
    # copy FILE DEST: the file and every library it loads, at their paths.
    copy() {
      local src="$1" dst="$2"
      if [ ! -f "$src" ]; then
        echo "build-base-image: no file $src on this machine" >&2
        exit 1
      fi
      mkdir -p "$root$(dirname "$dst")"
      cp -L "$src" "$root$dst"
      elf+=("$src")
    }
    # package NAME: the files of an installed Debian package.
    package() {
      local f
      if ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; then
        echo "build-base-image: the package $1 is not installed here (apt-get install $1)" >&2
        exit 1
      fi
      while IFS= read -r f; do
        case "$f" in
          /.|/usr/share/doc/*|/usr/share/man/*|/usr/share/lintian/*|/usr/lib/debug/*|/usr/share/gdb/*) continue ;;
        esac
        if [ -L "$f" ]; then
          mkdir -p "$root$(dirname "$f")"
          [ -e "$root$f" ] || [ -L "$root$f" ] || cp -P "$f" "$root$f"
        elif [ -d "$f" ]; then
          mkdir -p "$root$f"
        elif [ -f "$f" ]; then
          mkdir -p "$root$(dirname "$f")"
          cp "$f" "$root$f"
          # Only programs and shared objects load libraries.
          if [ -x "$f" ]; then elf+=("$f"); else case "$f" in *.so|*.so.*) elf+=("$f") ;; esac; fi
        fi
      done < <(dpkg -L "$1")
    }
    for tool in sh cat mkdir rm rmdir dirname basename kill setsid timeout \
                sleep ls env true false mv cp ln chmod echo ps head tail \
                grep sed date iptables iptables-save iptables-restore ip \
                tee stat test cut tr wc pgrep; do
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
      mkdir -p "$root$xt"
      cp -L "$xt"/*.so "$root$xt/"
      elf+=("$xt"/*.so)
    fi
    for p in ${packages[@]+"${packages[@]}"}; do
      package "$p"
    done
    for spec in ${specs[@]+"${specs[@]}"}; do
      copy "${spec%%=*}" "${spec#*=}"
    done
    libs "${elf[@]}"
    for spec in ${links[@]+"${links[@]}"}; do
      mkdir -p "$root$(dirname "${spec%%=*}")"
      ln -sfn "${spec#*=}" "$root${spec%%=*}"
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
    echo "usage: $0 [--docker-host H] [--tag T] [--package NAME] [--link L=T] debian|host [FILE=PATH...]" >&2
    exit 2
    ;;
esac

tar -C "$root" -c . | "$docker_cli" "${docker_args[@]}" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["sleep", "infinity"]' - "$tag" >/dev/null
echo "$tag"
