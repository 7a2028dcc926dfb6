package template

import (
	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/vm"
)

// HostClass names the hosts a bake restores on: a hash of its host parts
// (kernel, initramfs, QEMU version, accelerator, CPU model) and the bake
// format. Two hosts of one class restore each other's bakes; a cluster
// places a build only on nodes of its class.
func HostClass(hp HostParts) string {
	hp = hp.normal()
	return "hc-" + image.KeyOf(bakeFormat, hp.Kernel, hp.Initramfs, hp.QEMUVersion, hp.Accel, hp.CPU)
}

// HostClassOf is the class of the bakes host h makes and restores.
func HostClassOf(h *vm.Host) string { return HostClass(hostParts(h)) }

// HostClass is the class of hosts t restores on.
func (t *Template) HostClass() string { return HostClass(t.Host) }
