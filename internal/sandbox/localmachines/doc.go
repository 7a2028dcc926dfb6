// Package localmachines is a machine layer for the sandbox manager
// (sandbox.Machines, sandbox.TemplateSource) whose machines are a
// directory and a process tree on this host instead of a VM. It exists so
// that the manager's lifecycle logic (capacity, TTLs, kills racing calls,
// recovery after a restart, fork, audit) is tested in `go test -short`,
// in process, against real machines: files really are written and read
// back, commands really run and can be killed mid-call, a machine's
// stand-in VMM is a real process whose death is noticed, and a second
// Manager in the same process adopts, fails or reaps what the first left
// exactly as a restarted daemon does.
//
// A machine is:
//   - a state directory <run>/<id> holding pid (its VMM's) and identity
//     (what Prepare set), and root, the guest's filesystem: guest path /p
//     is <run>/<id>/root/p;
//   - a stand-in VMM, a `sleep` process in a process group of its own;
//     the machine has exited when it has;
//   - the commands Exec runs: host processes with the guest root as their
//     working directory (a guest Cwd is mapped under it), each in its own
//     process group, all killed by Destroy.
//
// A template is a directory whose root is copied into each clone; a fork
// copies the parent's root into the children, so parent and children
// never see each other's later writes. Machines have no network: every
// egress self-check attempt fails locally.
//
// It gives no isolation at all: commands run as the test process's user
// on the host. It must never run anything untrusted, and nothing but
// tests uses it.
package localmachines
