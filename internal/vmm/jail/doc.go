// Package jail confines each VMM process the way Firecracker's jailer
// does, so that a bug in QEMU's device models or TCG, exploited by a
// hostile guest, owns one unprivileged process with nothing to reach:
//
//   - its own uid and gid (one per VM, from a range no account uses), no
//     supplementary groups but kvm where KVM is used;
//   - new mount, pid, ipc, uts and network namespaces: the network one is
//     empty (QEMU only holds its tap's descriptor, opened in the sandbox's
//     namespace), so an escaped VMM reaches no host service, LAN or cloud
//     metadata endpoint;
//   - a root of its own (a tmpfs, pivot_root'ed into, then read-only)
//     holding only what the VM needs, each at its host path: /usr and the
//     loader's files read-only and nosuid, its kernel, initramfs and root
//     image read-only, its own state directory, a fresh /proc that shows
//     only itself, and /dev/null, zero, random, urandom (and kvm);
//   - every capability dropped (bounding set included), no_new_privs, no
//     environment, no descriptors but the ones it is handed;
//   - rlimits (open files, processes, file size; no core dumps) and a
//     cgroup of its own with memory, CPU and pids limits, on cgroup v1 or
//     v2, whichever hierarchy holds each controller on this host;
//   - not confinement but memory: no transparent huge pages, which QEMU
//     asks for its translation cache (see DisableHugePages).
//
// The host side (Jailer) allocates the uid, makes the cgroup, and builds
// the command that starts the helper binary (cmd/airlock-jailer) in the
// new namespaces; the helper (Run) builds the root, joins the cgroup,
// drops everything and execs QEMU, which then is PID 1 of its namespace.
// Nothing is mounted in the host's mount namespace, so a VM that dies
// leaves no mount behind: only its cgroup directory, which Release and
// Sweep remove.
//
// This package never starts a VMM without its jail once one is asked for:
// a step that fails ends the helper before QEMU runs.
package jail
