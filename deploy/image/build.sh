#!/usr/bin/env bash
# airlock's container images, built without a container engine:
#   airlock-api   `airlock api` and `airlock cluster migrate`: the static
#                 airlock binary, CA certificates and a passwd naming uid
#                 65532; no shell, no package manager
#   airlock-node  `airlock serve`: Debian 12 with QEMU, nftables, iproute2,
#                 e2fsprogs, mmdebstrap, busybox-static and apt, and airlock,
#                 airlock-agent, airlock-jailer, airlock-docs
# Both share the layer holding /usr/local/bin/airlock.
#
#   deploy/image/build.sh [--out DIR] [--tag TAG]
#
# writes DIR (default bin/image) /airlock-api.oci.tar and
# /airlock-node.oci.tar, each an oci-archive (an OCI image layout in a tar)
# whose one image is tagged TAG (default 0.1.0, what deploy/kubernetes
# pins), and /airlock-node.packages.txt (every Debian package and version
# in the node image). Push with skopeo (README, "Deploying").
#
# Needs root (mmdebstrap, file ownership in layers), mmdebstrap, umoci, Go.
# The node's Debian root is cached under $AIRLOCK_CACHE_DIR/image (default
# /var/cache/airlock/image) by a key of node-rootfs.sh, the mirrors and the
# tools' versions: minutes the first time, seconds after.
set -euo pipefail
umask 022   # the layers' directories are made here: 0755, whoever runs it
caller=$PWD
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

out=bin/image
tag=0.1.0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; out=$(cd "$caller" && realpath -m "$out"); shift 2 ;;
    --tag) tag=${2:?--tag needs a tag}; shift 2 ;;
    *) echo "usage: deploy/image/build.sh [--out DIR] [--tag TAG]" >&2; exit 2 ;;
  esac
done
# An OCI tag; base and build name the images on the way.
if ! [[ $tag =~ ^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$ ]] || [ "$tag" = base ] || [ "$tag" = build ]; then
  echo "image: --tag $tag: want [A-Za-z0-9_][A-Za-z0-9._-]*, at most 128 characters, not base or build" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "image: run as root (mmdebstrap, and root-owned files in the layers)" >&2
  exit 1
fi
for tool in mmdebstrap umoci go make git tar sha256sum flock; do
  command -v "$tool" >/dev/null || { echo "image: $tool is required (scripts/setup.sh --test installs it)" >&2; exit 1; }
done

say() { echo "image: $*" >&2; }
cache="${AIRLOCK_CACHE_DIR:-/var/cache/airlock}/image"
mkdir -p "$cache" "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=$(git describe --always --dirty)
commit=$(git rev-parse HEAD)
epoch=$(git log -1 --format=%ct HEAD)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

# Reproducible layer tars: sorted, root-owned, the commit's time.
pack() { # pack DIR TAR
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -C "$1" -cf "$2" .
}

# --- binaries: `make build`, static (the API image has no libc) ---
start=$SECONDS
CGO_ENABLED=0 make -s build BIN="$work/bin" VERSION="$version"
say "binaries $version built in $((SECONDS - start)) s"

# --- the node's Debian root, cached ---
# bootstrap_base DIR: node-rootfs.sh's tree as the one layer of an OCI
# layout DIR/oci (tag base), with its package list and CA bundle.
bootstrap_base() {
  deploy/image/node-rootfs.sh "$1"
  cp "$1/root/etc/ssl/certs/ca-certificates.crt" "$1/"
  tar --sort=name --numeric-owner --xattrs --xattrs-include='security.capability' \
    -C "$1/root" -cf "$1/rootfs.tar" .
  umoci init --layout "$1/oci"
  umoci new --image "$1/oci:base"
  umoci raw add-layer --image "$1/oci:base" --history.created_by "deploy/image/node-rootfs.sh" "$1/rootfs.tar"
  rm -rf "$1/root" "$1/rootfs.tar"
}
mirrors="${AIRLOCK_IMAGE_MIRROR:-} ${AIRLOCK_IMAGE_SECURITY_MIRROR:-}"
key=$( { cat deploy/image/node-rootfs.sh; declare -f bootstrap_base; echo "$mirrors"
         mmdebstrap --version; umoci --version; } | sha256sum | cut -c1-16)
base="$cache/node-base-$key"
exec 9>"$cache/node-base.lock"
flock 9
rm -rf "$cache"/.node-base-*   # what an interrupted build left (the lock is ours)
if [ ! -e "$base/done" ]; then
  say "bootstrapping the node's Debian root (key $key; a few minutes, once)"
  start=$SECONDS
  tmp="$cache/.node-base-$key.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  bootstrap_base "$tmp"
  echo "$((SECONDS - start))" >"$tmp/seconds"
  touch "$tmp/done"
  mv "$tmp" "$base"
  # Only the current key is kept.
  find "$cache" -maxdepth 1 -name 'node-base-*' ! -name "node-base-$key" -exec rm -rf {} +
  say "node root bootstrapped in $(cat "$base/seconds") s"
else
  say "node root from the cache ($base, bootstrapped in $(cat "$base/seconds") s)"
fi
exec 9>&-

# --- layers of our own ---
start=$SECONDS
l="$work/layers"
install -D -m 0755 "$work/bin/airlock" "$l/airlock/usr/local/bin/airlock"
for b in airlock-agent airlock-jailer airlock-docs; do
  install -D -m 0755 "$work/bin/$b" "$l/node/usr/local/bin/$b"
done
# Mount points of node.yaml's volumes.
install -d -m 0755 "$l/node/var/lib/airlock" "$l/node/var/cache/airlock" "$l/node/run/airlock" \
  "$l/node/run/netns" "$l/node/etc/airlock/cluster"
# The API image's whole system: who uid 65532 is, CA roots for
# PostgreSQL's TLS (sslmode=verify-full), /tmp (an emptyDir in api.yaml)
# and the mount points a runtime needs.
a="$l/api-base"
install -d -m 0755 "$a/etc/ssl/certs" "$a/etc/airlock/cluster" "$a/usr/local/bin" "$a/proc" "$a/sys" "$a/dev"
install -d -m 1777 "$a/tmp"
install -m 0644 "$base/ca-certificates.crt" "$a/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nairlock:x:65532:65532:airlock:/nonexistent:/sbin/nologin\n' >"$a/etc/passwd"
printf 'root:x:0:\nairlock:x:65532:\n' >"$a/etc/group"
chmod 0644 "$a/etc/passwd" "$a/etc/group"
for d in airlock node api-base; do pack "$l/$d" "$work/$d.tar"; done

# --- the two images ---
labels() { # labels ROLE TITLE DESCRIPTION
  local args=()
  for kv in "org.opencontainers.image.title=$2" "org.opencontainers.image.description=$3" \
      "org.opencontainers.image.version=$version" "org.opencontainers.image.revision=$commit" \
      "org.opencontainers.image.created=$created" "org.opencontainers.image.ref.name=$tag" \
      "org.opencontainers.image.source=https://github.com/airlock-dev/airlock" "dev.airlock.image.role=$1"; do
    args+=(--config.label "$kv" --manifest.annotation "$kv")
  done
  printf '%s\n' "${args[@]}"
}
common=(--created "$created" --history.created "$created" --history.created_by "deploy/image/build.sh"
  --config.entrypoint /usr/local/bin/airlock
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

node="$work/oci-node"
cp -a "$base/oci" "$node"
umoci raw add-layer --image "$node:base" --tag build --history.created "$created" \
  --history.created_by "/usr/local/bin/airlock ($version)" "$work/airlock.tar"
umoci raw add-layer --image "$node:build" --history.created "$created" \
  --history.created_by "airlock-agent, airlock-jailer, airlock-docs; node.yaml's mount points" "$work/node.tar"
pkgs=$(grep -E '^(qemu-system-x86|nftables|iproute2|e2fsprogs|mmdebstrap|busybox-static|apt|ca-certificates)=' "$base/packages.txt" | paste -sd' ')
mapfile -t nl < <(labels node airlock-node "airlock node daemon: airlock serve, QEMU microVMs")
umoci config --image "$node:build" --tag "$tag" "${common[@]}" "${nl[@]}" \
  --config.cmd serve --config.user 0:0 --config.workingdir /var/lib/airlock \
  --config.exposedports 7443/tcp \
  --config.volume /var/lib/airlock --config.volume /var/cache/airlock --config.volume /run/airlock \
  --config.label "org.opencontainers.image.base.name=debian:bookworm" \
  --config.label "dev.airlock.debian.suites=$(paste -sd' ' "$base/suites.txt")" \
  --config.label "dev.airlock.debian.packages=$pkgs" \
  --config.label "dev.airlock.debian.packages.sha256=$(sha256sum <"$base/packages.txt" | cut -d' ' -f1)"

api="$work/oci-api"
umoci init --layout "$api"
umoci new --image "$api:build"
umoci raw add-layer --image "$api:build" --history.created "$created" \
  --history.created_by "passwd (uid 65532), CA certificates, /tmp" "$work/api-base.tar"
umoci raw add-layer --image "$api:build" --history.created "$created" \
  --history.created_by "/usr/local/bin/airlock ($version)" "$work/airlock.tar"
mapfile -t al < <(labels api airlock-api "airlock API tier: airlock api, airlock cluster migrate")
umoci config --image "$api:build" --tag "$tag" "${common[@]}" "${al[@]}" \
  --config.cmd api --config.user 65532:65532 --config.workingdir /tmp \
  --config.exposedports 8080/tcp --config.exposedports 8443/tcp

for img in node api; do
  layout="$work/oci-$img"
  for t in $(umoci ls --layout "$layout"); do
    [ "$t" = "$tag" ] || umoci rm --image "$layout:$t"
  done
  umoci gc --layout "$layout"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -C "$layout" -cf "$out/.airlock-$img.oci.tar.$$" oci-layout index.json blobs
  mv "$out/.airlock-$img.oci.tar.$$" "$out/airlock-$img.oci.tar"
done
cp "$base/packages.txt" "$out/airlock-node.packages.txt"
say "assembled in $((SECONDS - start)) s"
for img in api node; do
  say "$out/airlock-$img.oci.tar: $(du -m "$out/airlock-$img.oci.tar" | cut -f1) MiB, tag $tag, version $version"
done
