//go:build linux

package agent

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Every process a job starts lives under one cgroup, jobsDir, whose limits
// keep the guest answering the host whatever the job does:
//
//   - pids.max bounds a fork bomb (the host's exec timeout then ends it),
//     at half the kernel's threads-max (which a small guest derives from
//     its RAM: 2048 for 256 MiB), so the agent can always start threads;
//   - memory.max leaves the agent jobReserve of the guest's RAM, so a
//     memory hog is OOM-killed inside jobsDir and the agent lives on;
//   - cpu.weight is low against the agent (in the root cgroup), so a job
//     that spins every core still lets the agent answer stat and exec.
//
// Each exec is a child cgroup of jobsDir (execCgroup).
const (
	jobsPidsMax = 2048
	jobReserve  = 48 << 20
	jobsWeight  = 10
)

var (
	jobsOnce sync.Once
	jobsDir  = cgroupDir // where exec cgroups go: jobsDir once set up
)

// setupJobs makes jobsDir with its limits, once; without cgroup v2 (or its
// controllers) exec cgroups stay directly under the root, unlimited.
func setupJobs() {
	jobsOnce.Do(func() {
		if err := os.WriteFile(filepath.Join(cgroupDir, "cgroup.subtree_control"), []byte("+pids +memory +cpu"), 0); err != nil {
			fmt.Fprintf(os.Stderr, "airlock-agent: job limits: enable controllers: %v\n", err)
			return
		}
		d := filepath.Join(cgroupDir, "jobs")
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			fmt.Fprintf(os.Stderr, "airlock-agent: job limits: %v\n", err)
			return
		}
		pids := jobsPidsMax
		if tm := threadsMax(); tm > 0 {
			pids = min(pids, tm/2)
		}
		limits := [][2]string{
			{"cgroup.subtree_control", "+pids +memory +cpu"},
			{"pids.max", strconv.Itoa(pids)},
			{"cpu.weight", strconv.Itoa(jobsWeight)},
		}
		if total := memTotal(); total > 2*jobReserve {
			limits = append(limits, [2]string{"memory.max", strconv.FormatInt(total-jobReserve, 10)},
				[2]string{"memory.oom.group", "0"})
		}
		for _, l := range limits {
			if err := os.WriteFile(filepath.Join(d, l[0]), []byte(l[1]), 0); err != nil {
				fmt.Fprintf(os.Stderr, "airlock-agent: job limits: %s: %v\n", l[0], err)
				return
			}
		}
		jobsDir = d
	})
}

// threadsMax is the kernel's limit on threads, 0 if unknown.
func threadsMax() int {
	b, err := os.ReadFile("/proc/sys/kernel/threads-max")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// memTotal is the guest's RAM in bytes, 0 if unknown.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// populated reports whether a cgroup still holds processes.
func populated(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) == "1"
		}
	}
	return false
}

// killAtDeadline ends what an exec left running in its cgroup (processes
// it put in the background) when the exec's deadline comes: a timeout
// covers everything the command started, not only the command.
// The cgroup stays in activeCgroups (never swept) until then.
func (c *execCgroup) killAtDeadline(deadline time.Time) {
	go func() {
		time.Sleep(time.Until(deadline))
		c.kill()
		for i := 0; i < 100 && populated(c.path); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		cgMu.Lock()
		delete(activeCgroups, c.path)
		os.Remove(c.path)
		cgMu.Unlock()
	}()
}
