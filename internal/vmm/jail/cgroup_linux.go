//go:build linux

package jail

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// controllers are the cgroup controllers every jail is limited by.
var controllers = []string{"memory", "pids", "cpu"}

// hierarchy is one mounted cgroup hierarchy holding some of controllers.
type hierarchy struct {
	v2    bool
	mount string   // where it is mounted, e.g. /sys/fs/cgroup/memory
	own   string   // this process's cgroup in it, e.g. /system.slice/airlock.service
	ctrls []string // which of controllers it holds
}

// cgroups is where each controller lives on this host. Hosts differ: pure
// v2 (/sys/fs/cgroup), pure v1, or hybrids with every controller on v1
// and an empty v2 mount beside them; each controller is used where it is.
type cgroups struct {
	instance string
	hs       []*hierarchy
}

// detectCgroups reads this process's mounts and cgroup membership.
func detectCgroups(instance string) (*cgroups, error) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	member, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	return parseCgroups(instance, string(mounts), string(member), func(p string) ([]byte, error) { return os.ReadFile(p) })
}

// parseCgroups is detectCgroups over given file contents (readFile reads
// a v2 hierarchy's cgroup.controllers).
func parseCgroups(instance, mountinfo, self string, readFile func(string) ([]byte, error)) (*cgroups, error) {
	own := map[string]string{} // v1 controller (or "" for v2) -> path
	for _, line := range strings.Split(strings.TrimSpace(self), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			own[""] = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			own[c] = f[2]
		}
	}
	cg := &cgroups{instance: instance}
	placed := map[string]bool{}
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		mnt, fstype, super := pf[4], qf[0], qf[2]
		switch fstype {
		case "cgroup2":
			b, err := readFile(filepath.Join(mnt, "cgroup.controllers"))
			if err != nil {
				continue
			}
			h := &hierarchy{v2: true, mount: mnt, own: own[""]}
			for _, c := range strings.Fields(string(b)) {
				if contains(controllers, c) && !placed[c] {
					h.ctrls = append(h.ctrls, c)
				}
			}
			if len(h.ctrls) > 0 {
				cg.hs = append(cg.hs, h)
				for _, c := range h.ctrls {
					placed[c] = true
				}
			}
		case "cgroup":
			h := &hierarchy{mount: mnt}
			for _, opt := range strings.Split(super, ",") {
				if contains(controllers, opt) && !placed[opt] {
					h.ctrls = append(h.ctrls, opt)
					h.own = own[opt]
				}
			}
			if len(h.ctrls) > 0 {
				cg.hs = append(cg.hs, h)
				for _, c := range h.ctrls {
					placed[c] = true
				}
			}
		}
	}
	var missing []string
	for _, c := range controllers {
		if !placed[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no cgroup hierarchy holds the %s controller(s)", strings.Join(missing, ", "))
	}
	return cg, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// parent is the directory that holds this instance's VM cgroups in h.
func (c *cgroups) parent(h *hierarchy) string {
	return filepath.Join(h.mount, h.own, "airlock-"+c.instance)
}

// Limits bound one VM's VMM process.
type Limits struct {
	MemoryBytes int64 // guest RAM plus the VMM's own
	CPUs        float64
	Pids        int
}

// setup makes sure each hierarchy's parent exists (and, on v2, that the
// controllers are enabled down to it).
func (c *cgroups) setup() error {
	for _, h := range c.hs {
		if err := c.setupOne(h); err != nil {
			return err
		}
	}
	return nil
}

// setupOne is setup for one hierarchy.
func (c *cgroups) setupOne(h *hierarchy) error {
	p := c.parent(h)
	if err := os.MkdirAll(p, 0o755); err != nil {
		return fmt.Errorf("cgroup %s: %w", p, err)
	}
	if h.v2 {
		return enableV2(filepath.Join(h.mount, h.own), p, h.ctrls)
	}
	return nil
}

// enableV2 turns ctrls on for the children of own and of parent. A
// non-root cgroup that holds processes cannot hand controllers to
// children (EBUSY): then this process moves into a leaf of its own first,
// as a daemon given a delegated cgroup must.
func enableV2(own, parent string, ctrls []string) error {
	line := "+" + strings.Join(ctrls, " +")
	write := func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(line), 0)
	}
	if err := write(own); err != nil {
		if !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("cgroup %s: enable %s: %w", own, line, err)
		}
		leaf := filepath.Join(own, "airlock-supervisor")
		if err := os.MkdirAll(leaf, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return fmt.Errorf("cgroup %s: move the daemon into a leaf: %w", leaf, err)
		}
		if err := write(own); err != nil {
			return fmt.Errorf("cgroup %s: enable %s: %w", own, line, err)
		}
	}
	if err := write(parent); err != nil {
		return fmt.Errorf("cgroup %s: enable %s: %w", parent, line, err)
	}
	return nil
}

// create makes the VM's cgroup in every hierarchy with lim applied and
// returns their directories (to join, and to remove later).
func (c *cgroups) create(id string, lim Limits) (dirs []string, err error) {
	defer func() {
		if err != nil {
			c.remove(dirs)
			dirs = nil
		}
	}()
	for _, h := range c.hs {
		d := filepath.Join(c.parent(h), id)
		if err := c.mkdir(h, d); err != nil {
			return dirs, fmt.Errorf("cgroup %s: %w", d, err)
		}
		dirs = append(dirs, d)
		for _, ctrl := range h.ctrls {
			for _, kv := range limitFiles(h.v2, ctrl, lim) {
				err := os.WriteFile(filepath.Join(d, kv[0]), []byte(kv[1]), 0)
				if err != nil && kv[2] == "required" {
					return dirs, fmt.Errorf("cgroup %s: %s = %s: %w", d, kv[0], kv[1], err)
				}
			}
		}
	}
	return dirs, nil
}

// mkdir makes a VM's cgroup directory d under h's parent. The parent is
// shared by every airlock process of this instance (a daemon and the
// one-shot commands run beside it on the same run directory); none of
// them removes it on exit any more, but an operator or an older airlock
// may have, so a missing parent is made again (controllers enabled)
// rather than failing every create until the daemon restarts.
func (c *cgroups) mkdir(h *hierarchy, d string) error {
	err := os.Mkdir(d, 0o755)
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := c.setupOne(h); err != nil {
		return err
	}
	return os.Mkdir(d, 0o755)
}

// limitFiles are the files (name, value, required|optional) that apply
// lim for one controller.
func limitFiles(v2 bool, ctrl string, lim Limits) [][3]string {
	const period = 100000
	quota := strconv.Itoa(int(lim.CPUs * period))
	mem := strconv.FormatInt(lim.MemoryBytes, 10)
	switch {
	case ctrl == "memory" && v2:
		// No swap: a VMM's pages are a guest's memory, i.e. documents.
		return [][3]string{{"memory.max", mem, "required"}, {"memory.swap.max", "0", "optional"}}
	case ctrl == "memory":
		return [][3]string{{"memory.limit_in_bytes", mem, "required"},
			{"memory.memsw.limit_in_bytes", mem, "optional"}, {"memory.swappiness", "0", "optional"}}
	case ctrl == "pids":
		return [][3]string{{"pids.max", strconv.Itoa(lim.Pids), "required"}}
	case ctrl == "cpu" && v2:
		return [][3]string{{"cpu.max", quota + " " + strconv.Itoa(period), "required"}}
	case ctrl == "cpu":
		return [][3]string{{"cpu.cfs_period_us", strconv.Itoa(period), "required"}, {"cpu.cfs_quota_us", quota, "required"}}
	}
	return nil
}

// dirs are the VM's cgroup directories, made or not.
func (c *cgroups) dirs(id string) []string {
	var out []string
	for _, h := range c.hs {
		out = append(out, filepath.Join(c.parent(h), id))
	}
	return out
}

// remove deletes cgroup directories whose processes have exited. A
// process that has just been reaped may still be counted for a moment.
func (c *cgroups) remove(dirs []string) error {
	var errs []error
	for _, d := range dirs {
		var err error
		for try := 0; try < 100; try++ {
			if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				err = nil
				break
			}
			if !errors.Is(err, syscall.EBUSY) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// sweep kills what is left in, and removes, every VM cgroup of this
// instance whose id keep does not accept: left by a daemon that died.
func (c *cgroups) sweep(keep func(id string) bool) error {
	var errs []error
	for _, h := range c.hs {
		p := c.parent(h)
		entries, err := os.ReadDir(p)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || keep(e.Name()) {
				continue
			}
			d := filepath.Join(p, e.Name())
			for _, pid := range procs(d) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			errs = append(errs, c.remove([]string{d}))
		}
	}
	return errors.Join(errs...)
}

// removeParents removes this instance's parent directories if empty.
func (c *cgroups) removeParents() error {
	var errs []error
	for _, h := range c.hs {
		err := syscall.Rmdir(c.parent(h))
		if err != nil && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EBUSY) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// procs lists the processes in a cgroup directory.
func procs(dir string) []int {
	f, err := os.Open(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// describe is what doctor shows: controller -> "v1 <dir>" or "v2 <dir>".
func (c *cgroups) describe() map[string]string {
	out := map[string]string{}
	for _, h := range c.hs {
		v := "v1"
		if h.v2 {
			v = "v2"
		}
		for _, ctrl := range h.ctrls {
			out[ctrl] = v + " " + c.parent(h)
		}
	}
	return out
}
