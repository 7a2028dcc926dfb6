// Package sandbox is the lifecycle manager: create (restore from a
// template), exec, background processes (process.go: each holds its own
// guest Exec stream; records and bounded output live with the sandbox),
// files, fork, egress, kill, and the TTL reaper, with
// every operation persisted and audited through the store and scoped to a
// tenant.
//
// With Config.Net every sandbox (warm-pool clones included) holds a
// netpool slot whose tap is QEMU's NIC backend, its egress policy is in
// force in the slot's nftables and in the egress proxy before Create
// returns, and the egress self-check (Probe, CreateRequest.Probe) fails
// closed; see net.go. Without it the NIC is on an empty hub: deny-all.
//
// Machines are reached only through the interfaces in machines.go
// (Machines, Machine, TemplateSource): VMs on a vm.Host from a template
// registry in production; package localmachines in the -short tests of the
// lifecycle logic. Every resource a create or fork makes is undone through
// a cleanup stack until the sandbox is registered, and every audit record
// is built by auditRecord (audit.go) from the sandbox's info.
//
// It never stores or logs document content; audit records carry ids,
// metadata, sizes and durations only.
package sandbox
