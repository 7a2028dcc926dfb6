#!/usr/bin/env bash
# The node image's root filesystem: Debian 12 (bookworm) with what
# `airlock serve` runs on the host side, bootstrapped by mmdebstrap (the
# tool templates are built with) into DIR/root, with DIR/packages.txt
# (every package and version) and DIR/suites.txt (each suite's Release
# date: when the archive was taken). DIR/root must not exist.
#   deploy/image/node-rootfs.sh DIR
# build.sh caches the result under a key of this file's content, the
# mirrors and mmdebstrap's version: change anything here and the next
# build bootstraps again. Run as root.
#
# Pinning: deb.debian.org serves only the current bookworm, so the exact
# package versions are recorded instead (build.sh writes them into the
# image's labels and next to the archive). For a fully pinned rebuild,
# point the mirrors at a Debian snapshot, e.g.
#   AIRLOCK_IMAGE_MIRROR=http://snapshot.debian.org/archive/debian/20261201T000000Z
#   AIRLOCK_IMAGE_SECURITY_MIRROR=http://snapshot.debian.org/archive/debian-security/20261201T000000Z
set -euo pipefail
out=${1:?usage: node-rootfs.sh DIR}
dir=$out/root
mirror=${AIRLOCK_IMAGE_MIRROR:-http://deb.debian.org/debian}
security=${AIRLOCK_IMAGE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

packages=(
  qemu-system-x86     # the VMM; its Depends bring the firmware (qemu-system-data, seabios)
  e2fsprogs           # mkfs.ext4: template root filesystems
  mmdebstrap          # `airlock template build` on the node
  busybox-static      # /bin/busybox: the root of `airlock run` without a template
  nftables iproute2   # sandbox networking (nft, ip)
  ca-certificates     # TLS to blob stores and the egress proxy's upstreams
)
# Recommends stay out (mmdebstrap's default): no GUI, no UEFI firmware.
# The guest kernel is not in the image: the daemon fetches it with
# `apt-get download` into its cache (a host directory in the DaemonSet),
# resolving it from the package lists kept below.
mmdebstrap --variant=apt --mode=root --format=directory --quiet \
  --include="$(IFS=,; echo "${packages[*]}")" \
  --aptopt='Acquire::Languages "none"' \
  --aptopt='Acquire::GzipIndexes "true"' \
  --aptopt='Acquire::CompressionTypes::Order:: "gz"' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --skip=cleanup/apt/lists \
  bookworm "$dir" \
  "deb $mirror bookworm main" \
  "deb $mirror bookworm-updates main" \
  "deb $security bookworm-security main"

# The package lists stay (gzip-compressed, GzipIndexes above): the daemon
# resolves the guest kernel with apt-cache on a cold cache. apt's caches
# of .debs and its binary caches are rebuilt when needed.
rm -rf "$dir"/var/cache/apt/*.bin "$dir"/var/cache/apt/archives/*.deb
# The runtime mounts /dev, /proc, /sys and the network files itself.
find "$dir/dev" -mindepth 1 -delete
rm -f "$dir/etc/resolv.conf" "$dir/etc/hostname"

dpkg-query --admindir="$dir/var/lib/dpkg" -W -f '${Package}=${Version}\n' | sort >"$out/packages.txt"
for f in "$dir"/var/lib/apt/lists/*_InRelease; do
  printf '%s=%s\n' "$(sed -n 's/^Codename: //p' "$f")" "$(date -u -d "$(sed -n 's/^Date: //p' "$f")" +%Y-%m-%dT%H:%M:%SZ)"
done | sort >"$out/suites.txt"
