//go:build linux

package jail

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Defaults for Config.
const (
	// DefaultUIDBase starts a range of uids (and gids of the same number)
	// that no account on a normal host has: each VM gets one to itself,
	// so even a VMM that escaped its namespaces owns no file and can
	// signal no process of any other VM or of the host.
	DefaultUIDBase  = 0x60000000
	DefaultUIDCount = 1 << 16
	// DefaultOverheadMiB is the VMM's own memory above the guest's RAM
	// (QEMU's heap, device buffers, TCG's translation cache), when the
	// driver does not say.
	DefaultOverheadMiB = 512
	// DefaultPids bounds the VMM's threads (QEMU starts a handful and a
	// worker pool that grows under I/O).
	DefaultPids = 256
)

// rootDirName is the empty directory inside a machine's state directory
// that its jail's root is built on (inside the jail's own mount
// namespace: on the host it stays empty, and goes with the directory).
const rootDirName = "jail-root"

// Config is the operator's side of the jail.
type Config struct {
	Helper      string // the airlock-jailer binary
	Instance    string // names this daemon's cgroup parent (airlock-<instance>)
	UIDBase     int    // default DefaultUIDBase
	UIDCount    int    // default DefaultUIDCount
	OverheadMiB int    // default DefaultOverheadMiB
	Pids        int    // default DefaultPids
}

// Jailer confines VMM processes. It is safe for concurrent use.
type Jailer struct {
	cfg Config     // immutable
	cg  *cgroups   // immutable
	kvm int        // gid of the kvm group, 0 if none; immutable
	mu  sync.Mutex // guards uids
	// uids in use by this process's jails (allocated or adopted).
	uids map[int]string
}

// New checks that this host can jail VMMs: root, the helper binary, and a
// cgroup hierarchy for memory, pids and cpu. Any failure is returned with
// what is missing, so the caller can refuse to start rather than run
// VMMs unconfined.
func New(cfg Config) (*Jailer, error) {
	j, err := check(cfg)
	if err != nil {
		return nil, err
	}
	if err := j.cg.setup(); err != nil {
		return nil, err
	}
	return j, nil
}

// Check is New without its side effects (no cgroup is made): what the
// jail would be on this host, or why there can be none.
func Check(cfg Config) (Report, error) {
	j, err := check(cfg)
	if err != nil {
		return Report{}, err
	}
	return j.Report(), nil
}

func check(cfg Config) (*Jailer, error) {
	if cfg.UIDBase == 0 {
		cfg.UIDBase = DefaultUIDBase
	}
	if cfg.UIDCount == 0 {
		cfg.UIDCount = DefaultUIDCount
	}
	if cfg.OverheadMiB == 0 {
		cfg.OverheadMiB = DefaultOverheadMiB
	}
	if cfg.Pids == 0 {
		cfg.Pids = DefaultPids
	}
	if cfg.Instance == "" {
		cfg.Instance = "default"
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("jailing VMMs needs root (namespaces, mounts, uid changes)")
	}
	if fi, err := os.Stat(cfg.Helper); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("jail helper %q: %v", cfg.Helper, err)
	}
	cg, err := detectCgroups(cfg.Instance)
	if err != nil {
		return nil, err
	}
	j := &Jailer{cfg: cfg, cg: cg, uids: map[int]string{}}
	if g, err := user.LookupGroup("kvm"); err == nil {
		j.kvm, _ = strconv.Atoi(g.Gid)
	}
	return j, nil
}

// Machine is what one VMM needs to see.
type Machine struct {
	ID       string
	StateDir string   // its own; becomes owned by the jail's uid
	ReadOnly []string // kernel, initramfs, root image
	Writable []string // a shared memory file (a bake); made the jail's
	KVM      bool     // bind /dev/kvm and keep the kvm group
	// MemoryMiB and VCPUs are the guest's; the cgroup adds the VMM's own,
	// OverheadMiB (default Config.OverheadMiB).
	MemoryMiB   int
	OverheadMiB int
	VCPUs       int
	// KeepFDs descriptors from 3 up are handed to the VMM.
	KeepFDs int
}

// Jail is one prepared (or adopted) machine's confinement.
type Jail struct {
	j       *Jailer
	id      string
	UID     int // also its gid
	cgroups []string
	spec    Spec
}

// Prepare allocates the machine's uid, hands it its state directory and
// writable files, and makes its cgroup. Release undoes it.
func (j *Jailer) Prepare(m Machine) (_ *Jail, err error) {
	uid, err := j.allocUID(m.ID)
	if err != nil {
		return nil, err
	}
	jl := &Jail{j: j, id: m.ID, UID: uid}
	defer func() {
		if err != nil {
			jl.Release()
		}
	}()
	for _, p := range m.ReadOnly {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("jail: %w", err)
		}
		if fi.Mode().Perm()&0o004 == 0 {
			return nil, fmt.Errorf("jail: %s (mode %v) is not readable by the VMM's unprivileged uid", p, fi.Mode().Perm())
		}
	}
	root := filepath.Join(m.StateDir, rootDirName)
	if err := os.Mkdir(root, 0o700); err != nil {
		return nil, fmt.Errorf("jail root: %w", err)
	}
	for _, p := range append([]string{m.StateDir}, m.Writable...) {
		if err := os.Chown(p, uid, uid); err != nil {
			return nil, fmt.Errorf("jail: hand %s to uid %d: %w", p, uid, err)
		}
	}
	overhead := m.OverheadMiB
	if overhead == 0 {
		overhead = j.cfg.OverheadMiB
	}
	lim := Limits{MemoryBytes: int64(m.MemoryMiB+overhead) << 20, CPUs: float64(m.VCPUs) + 0.5, Pids: j.cfg.Pids}
	if jl.cgroups, err = j.cg.create(m.ID, lim); err != nil {
		return nil, err
	}
	spec := Spec{ID: m.ID, Root: root, UID: uid, GID: uid, Cgroups: jl.cgroups, KeepFDs: m.KeepFDs,
		Rlimits: Rlimits{NoFile: 1024, NProc: uint64(j.cfg.Pids), FSize: 256 << 20}}
	spec.Binds = append(spec.Binds, Bind{Path: m.StateDir, Writable: true})
	for _, p := range m.ReadOnly {
		spec.Binds = append(spec.Binds, Bind{Path: p})
	}
	for _, p := range m.Writable {
		spec.Binds = append(spec.Binds, Bind{Path: p, Writable: true})
	}
	if m.KVM {
		spec.Devices = append(spec.Devices, "/dev/kvm")
		if j.kvm > 0 {
			spec.Groups = []int{j.kvm}
		}
	}
	jl.spec = spec
	return jl, nil
}

// Command is the process that becomes the VMM inside the jail: the helper,
// started in new mount, pid, ipc, uts and network namespaces, which execs
// program with args once the jail is built.
func (jl *Jail) Command(program string, args []string) (*exec.Cmd, error) {
	s := jl.spec
	s.Program, s.Args = program, args
	arg, err := s.Encode()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(jl.j.cfg.Helper, arg)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A network namespace of its own too, empty: the guest's NIC is a tap
		// descriptor opened elsewhere, so the VMM needs no network at all,
		// and one that escaped its guest cannot reach the host's loopback,
		// its LAN or a cloud's metadata service.
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWNET,
		// Own process group: a terminal's ^C goes to airlock, which ends
		// its VMs in order.
		Setpgid: true,
	}
	return cmd, nil
}

// Adopt reconstructs the jail of a machine started by an earlier process
// (its uid is its state directory's owner), so Release can undo it.
func (j *Jailer) Adopt(id, stateDir string) *Jail {
	jl := &Jail{j: j, id: id, cgroups: j.cg.dirs(id)}
	var st syscall.Stat_t
	if err := syscall.Stat(stateDir, &st); err == nil && j.inRange(int(st.Uid)) {
		jl.UID = int(st.Uid)
		j.mu.Lock()
		j.uids[jl.UID] = id
		j.mu.Unlock()
	}
	return jl
}

// Release removes the jail's cgroups and frees its uid. The VMM must have
// exited.
func (jl *Jail) Release() error {
	err := jl.j.cg.remove(jl.cgroups)
	jl.j.mu.Lock()
	if jl.UID != 0 && jl.j.uids[jl.UID] == jl.id {
		delete(jl.j.uids, jl.UID)
	}
	jl.j.mu.Unlock()
	return err
}

// ReleaseOrphan removes what a dead VM's jail left (its cgroups, after
// killing anything still in them).
func (j *Jailer) ReleaseOrphan(id string) error {
	return j.cg.sweep(func(name string) bool { return name != id })
}

// Sweep removes the cgroups of this instance's VMs that live does not
// name: left behind by a daemon that died.
func (j *Jailer) Sweep(live func(id string) bool) error { return j.cg.sweep(live) }

// allocUID picks a free uid for id: the same one each time for the same
// id while it is free (so a machine's files stay recognisable), else the
// next free one in the range.
func (j *Jailer) allocUID(id string) (int, error) {
	h := fnv.New32a()
	h.Write([]byte(id))
	start := int(h.Sum32() % uint32(j.cfg.UIDCount))
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := 0; i < j.cfg.UIDCount; i++ {
		uid := j.cfg.UIDBase + (start+i)%j.cfg.UIDCount
		if _, used := j.uids[uid]; !used {
			j.uids[uid] = id
			return uid, nil
		}
	}
	return 0, fmt.Errorf("jail: all %d uids are in use", j.cfg.UIDCount)
}

func (j *Jailer) inRange(uid int) bool {
	return uid >= j.cfg.UIDBase && uid < j.cfg.UIDBase+j.cfg.UIDCount
}

// Report says what confines each VMM, for doctor and sandbox records.
type Report struct {
	Jailed     bool              `json:"jailed"`
	Reason     string            `json:"reason,omitempty"` // why not, when not
	UIDs       string            `json:"uids,omitempty"`   // the range each VM's uid comes from
	Namespaces []string          `json:"namespaces,omitempty"`
	Root       string            `json:"root,omitempty"`
	Privileges string            `json:"privileges,omitempty"`
	Cgroups    map[string]string `json:"cgroups,omitempty"` // controller -> "v1|v2 <parent dir>"
	Limits     string            `json:"limits,omitempty"`
	Seccomp    string            `json:"seccomp"`
}

// Seccomp is the QEMU sandbox option every VMM runs with, jailed or not.
const Seccomp = "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"

// Report implements the jailed case.
func (j *Jailer) Report() Report {
	return Report{Jailed: true,
		UIDs:       fmt.Sprintf("%d-%d (one per VM, gid the same)", j.cfg.UIDBase, j.cfg.UIDBase+j.cfg.UIDCount-1),
		Namespaces: []string{"mount", "pid", "ipc", "uts", "net (empty: the guest's NIC is a tap descriptor)"},
		Root:       "pivot_root into a read-only tmpfs: /usr (ro, nosuid), the VM's kernel, initramfs, image (ro) and state directory, its own /proc, null/zero/random/urandom (and kvm)",
		Privileges: "all capabilities dropped (bounding set too), no_new_privs, no environment, no inherited descriptors",
		Cgroups:    j.cg.describe(),
		Limits: fmt.Sprintf("memory = guest RAM + the VMM's own (512 MiB under TCG, whose translation cache is capped at 256 MiB; 256 MiB under KVM), no swap; cpu = vCPUs + 0.5; pids %d; rlimits nofile 1024, nproc %d, fsize 256 MiB, core 0",
			j.cfg.Pids, j.cfg.Pids),
		Seccomp: Seccomp}
}

// Unjailed is the report when the operator turned the jail off.
func Unjailed(reason string) Report {
	return Report{Jailed: false, Reason: reason, Seccomp: Seccomp}
}

// Close releases nothing shared: the instance's cgroup parents stay. They
// are shared by every airlock process on the same run directory (a daemon
// and a `template build` or `run` beside it), and one process cannot know
// that no other is about to make a VM's cgroup in them: removing an empty
// parent on exit broke every later create of a live daemon. An empty
// directory in the cgroup tree costs nothing; RemoveInstance removes an
// instance that is gone for good.
func (j *Jailer) Close() error { return nil }

// RemoveInstance kills whatever is left in another instance's jails and
// removes its cgroups: for test processes that died without cleaning up.
func RemoveInstance(instance string) error {
	cg, err := detectCgroups(instance)
	if err != nil {
		return err
	}
	if err := cg.sweep(func(string) bool { return false }); err != nil {
		return err
	}
	return cg.removeParents()
}

// Instances lists the instances that have jail cgroups on this host.
func Instances() ([]string, error) {
	cg, err := detectCgroups("")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, h := range cg.hs {
		entries, _ := os.ReadDir(filepath.Join(h.mount, h.own))
		for _, e := range entries {
			if name, ok := strings.CutPrefix(e.Name(), "airlock-"); ok && e.IsDir() && name != "supervisor" && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// Count is how many VM cgroup directories this instance has, across its
// hierarchies (a leak check: it returns to its level when VMs end).
func (j *Jailer) Count() int {
	n := 0
	for _, h := range j.cg.hs {
		entries, _ := os.ReadDir(j.cg.parent(h))
		for _, e := range entries {
			if e.IsDir() {
				n++
			}
		}
	}
	return n
}

// CountInstance is how many VM cgroup directories instance has on this
// host, whichever process made them (a leak check for tests).
func CountInstance(instance string) (int, error) {
	cg, err := detectCgroups(instance)
	if err != nil {
		return 0, err
	}
	return (&Jailer{cg: cg}).Count(), nil
}
