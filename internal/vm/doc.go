// Package vm is one guest as the host sees it: a VMM machine plus a
// connected agent client. It assembles boot parts (kernel, initramfs, root
// image) for the VMM, cold-boots or restores guests, pushes clock, entropy
// and identity before any job runs, takes snapshots, and destroys guests
// totally.
//
// It knows nothing of tenants, TTLs or templates' specs (package sandbox
// and package template build on it), and it never stores or logs document
// content.
package vm
