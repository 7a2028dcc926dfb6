// Package qemu is the vmm.Driver for QEMU's microvm machine, driven over
// QMP (github.com/digitalocean/go-qemu/qmp).
//
// Each machine owns one state directory (QMP socket, agent socket, pid
// file, QEMU and console logs) that is created at boot and removed on
// destroy. The guest talks to the host only through one virtio-serial
// port whose QEMU end is a unix socket in that directory; there is no
// vsock on hosts without vhost.
package qemu
