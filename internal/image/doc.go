// Package image builds and caches the parts a guest boots from: the guest
// kernel and its modules (from Debian's cloud kernel package), the
// initramfs (airlock-agent as /init plus the modules it loads), and root
// filesystem images (read-only ext4, packed with mkfs.ext4 -d, no mounts).
//
// Everything is cached by content under a cache directory outside any
// source checkout, written under a temporary name and renamed into place,
// so a crash never leaves a half-built entry that looks complete. It never
// installs anything into the host's own system.
package image
