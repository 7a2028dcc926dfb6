// Package sandbox owns the life of a guest: it assembles boot parts
// (kernel, initramfs, root image) for the VMM, boots or restores the VM,
// connects to its agent, pushes clock, entropy and identity before any job
// runs, and destroys it totally.
//
// It never stores or logs document content; it passes bytes between the
// caller and the guest.
package sandbox
