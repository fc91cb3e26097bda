#!/usr/bin/env bash
# Builds the node image of one target, or of all four, from this machine's
# own files (docker/build-base-image.sh host): no registry, no network.
#
#   docker/build-images.sh [--docker-host H] [--build DIR] [--prefix P] TARGET...
#
# TARGET is raftkv, etcd, redis, zookeeper or all. Each image is tagged
# P/TARGET:host (default prefix faultline) and carries the host image's
# tools (sh, coreutils, setsid, kill, pgrep, iptables), this build's raftkv
# and faultline-netdelay (so every image runs the raftkv target and the
# delay fault: a run copies the controller's own binaries in, the image
# brings the libraries they load), libfaketime (clock faults) and, when DIR
# holds faultline-lazyfs, it with libfuse3, umount and tar (disk faults; the
# containers also need --device /dev/fuse --cap-add SYS_ADMIN), plus:
#
#   raftkv     Debian's python3 with its standard library (status and ready
#              commands of `target: process` configs, such as
#              examples/raftkv/status.py, run in the container)
#   etcd       /usr/bin/etcd (Debian's etcd-server) and python3 as raftkv's
#   redis      /usr/bin/redis-server and /usr/bin/redis-sentinel (copies of
#              the one Redis executable, which picks sentinel mode by name)
#   zookeeper  the files of the package openjdk-17-jre-headless with
#              /usr/bin/java linked to its bin/java, and the ZooKeeper jars
#              the target's class path names (targets/zookeeper/zk_config.h)
#              with every jar their manifests' Class-Path lists, closed
#              transitively
#
# The programs must be installed here (scripts/install-deps.sh) and DIR
# (default $FAULTLINE_BUILD_DIR, else build/) must hold raftkv and
# faultline-netdelay. Prints one line per image: its tag, the seconds the
# build took and the image's size. Exits 1 when a build fails, 2 on bad
# usage.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
docker_args=()
build="${FAULTLINE_BUILD_DIR:-$root/build}"
prefix=faultline
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --docker-host) docker_args=(--docker-host "$2"); shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    all) targets+=(raftkv etcd redis zookeeper); shift ;;
    raftkv|etcd|redis|zookeeper) targets+=("$1"); shift ;;
    *) echo "build-images: unknown target or option '$1' (raftkv, etcd, redis, zookeeper, all)" >&2; exit 2 ;;
  esac
done
if [ "${#targets[@]}" -eq 0 ]; then
  echo "usage: $0 [--docker-host H] [--build DIR] [--prefix P] raftkv|etcd|redis|zookeeper|all..." >&2
  exit 2
fi
for b in raftkv faultline-netdelay; do
  if [ ! -x "$build/$b" ]; then
    echo "build-images: no $b in $build (build the '$b' target, or pass --build DIR)" >&2
    exit 1
  fi
done
faketime_dir=/usr/lib/x86_64-linux-gnu/faketime
common=("$build/raftkv=/usr/local/bin/raftkv"
        "$build/faultline-netdelay=/usr/local/bin/faultline-netdelay")
# The disk faults (docs/disk-faults.md): a run copies its faultline-lazyfs
# into the containers; the image brings libfuse3 (loaded by this build's
# copy), umount for the heal and tar for keeping the disks. Left out when
# this build has no faultline-lazyfs (no libfuse3-dev).
if [ -x "$build/faultline-lazyfs" ]; then
  common+=("$build/faultline-lazyfs=/usr/local/bin/faultline-lazyfs")
  for b in umount tar; do
    path="$(PATH=/usr/sbin:/usr/bin:/sbin:/bin type -P "$b" || true)"
    [ -n "$path" ] || { echo "build-images: no $b on this machine" >&2; exit 1; }
    common+=("$path=/usr/bin/$b")
  done
fi
for f in "$faketime_dir"/libfaketime.so.1 "$faketime_dir"/libfaketimeMT.so.1; do
  if [ ! -r "$f" ]; then
    echo "build-images: no $f (apt-get install libfaketime)" >&2
    exit 1
  fi
  common+=("$f=$f")
done
# Debian's python3 (not a pyenv or venv one): the interpreter, its standard
# library and the libraries its extension modules load.
python=(--package python3.11-minimal --package libpython3.11-minimal
        --package libpython3.11-stdlib --link /usr/bin/python3=python3.11)

# The jars of ZooKeeper's class path and, transitively, of their manifests'
# Class-Path entries (absolute paths, as Debian writes them) that exist here,
# one per line.
zookeeper_jars() {
  python3 - "$@" <<'PY'
import os, sys, zipfile
todo, seen = list(sys.argv[1:]), []
while todo:
    jar = todo.pop()
    if jar in seen:
        continue
    seen.append(jar)
    if jar not in sys.argv[1:] and not os.path.exists(jar):
        # An optional dependency Debian does not install (e.g. jline):
        # the JVM skips a missing Class-Path entry too.
        seen.pop()
        continue
    try:
        text = zipfile.ZipFile(jar).read("META-INF/MANIFEST.MF").decode()
    except (OSError, KeyError, zipfile.BadZipFile) as e:
        sys.exit("build-images: cannot read %s: %s" % (jar, e))
    # Manifest lines wrap at 72 bytes; a continuation starts with a space.
    text = text.replace("\r\n", "\n").replace("\n ", "")
    for line in text.split("\n"):
        if line.startswith("Class-Path:"):
            todo += [p for p in line[len("Class-Path:"):].split() if p.startswith("/")]
print("\n".join(seen))
PY
}

status=0
for t in "${targets[@]}"; do
  args=()
  case "$t" in
    raftkv) args=("${python[@]}") ;;
    etcd) args=("${python[@]}" /usr/bin/etcd=/usr/bin/etcd) ;;
    redis) args=(/usr/bin/redis-server=/usr/bin/redis-server
                 /usr/bin/redis-sentinel=/usr/bin/redis-sentinel) ;;
    zookeeper)
      java="$(readlink -f "$(command -v java || echo /usr/bin/java)")"
      if [ ! -x "$java" ]; then
        echo "build-images: no java here (apt-get install openjdk-17-jre-headless)" >&2
        status=1
        continue
      fi
      # The class path of targets/zookeeper/zk_config.h (kDefaultClasspath).
      jars="$(zookeeper_jars /usr/share/java/zookeeper.jar \
        /usr/share/java/slf4j-simple.jar /usr/share/java/servlet-api.jar)" ||
        { status=1; continue; }
      args=(--package openjdk-17-jre-headless --link "/usr/bin/java=$java")
      while IFS= read -r j; do args+=("$j=$j"); done <<<"$jars"
      ;;
  esac
  tag="$prefix/$t:host"
  start=$(date +%s.%N)
  if ! "$here/build-base-image.sh" ${docker_args[@]+"${docker_args[@]}"} --tag "$tag" \
      host "${args[@]}" "${common[@]}" >/dev/null; then
    echo "build-images: building $tag failed" >&2
    status=1
    continue
  fi
  end=$(date +%s.%N)
  host_args=()
  [ "${#docker_args[@]}" -eq 0 ] || host_args=(--host "${docker_args[1]}")
  size=$(docker ${host_args[@]+"${host_args[@]}"} image inspect --format '{{.Size}}' "$tag")
  awk -v t="$tag" -v s="$start" -v e="$end" -v b="$size" \
    'BEGIN {printf "%s %.1f s %.0f MB\n", t, e - s, b / 1e6}'
done
exit "$status"
