// Package vmm defines what airlock needs from a virtual machine monitor
// (boot a guest, snapshot it, restore clones of it, destroy it without a
// trace) and chooses the acceleration a host can really use. The QEMU
// microvm driver lives in vmm/qemu; a Firecracker or Cloud Hypervisor
// driver would sit beside it behind the same interface.
//
// This package never talks to the guest agent and never sees document
// content: it owns processes, sockets and state directories.
package vmm
