package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/vm"
)

// SoakOptions size a soak run.
type SoakOptions struct {
	Template string
	Clients  int           // concurrent clients (default 2)
	Duration time.Duration // how long cycles are started (default 30s)
	Payload  int           // bytes written and read back per cycle (default 64 KiB)
	Progress func(format string, a ...any)
}

// SoakReport is what a soak did and what it left behind.
type SoakReport struct {
	Clients      int
	Duration     time.Duration
	Cycles       int
	Errors       int
	ErrorSamples []string `json:",omitempty"` // the first few, with their step
	CyclesPerSec float64
	Cycle        Stats // create + write + exec + read + kill
	// Each step of the cycle.
	Create, Write, Exec, Read, Kill Stats
	// Before and After are the host's resources around the run (the warm
	// pool full both times); Leaked is what the run left: any non-zero
	// count is a leak.
	Before, After Resources
	Leaked        Resources
	NewFDs        []string `json:",omitempty"` // what the extra descriptors point at
	PeakRSSKiB    int64    // this process's high-water mark
}

// Resources are the host objects a sandbox uses and must give back.
type Resources struct {
	VMMs    int // VMM processes serving this host's run directory
	RunDirs int // entries in the run directory
	FDs     int // this process's open descriptors, but the store's pool

	Goroutines int            // this process's goroutines
	Cgroups    int            // jail cgroup directories of this host's instance
	RSSKiB     int64          `json:",omitempty"` // this process's resident memory (not a leak count)
	fds        map[string]int // what the descriptors point at, for a leak report
}

func (a Resources) minus(b Resources) Resources {
	return Resources{VMMs: a.VMMs - b.VMMs, RunDirs: a.RunDirs - b.RunDirs, FDs: a.FDs - b.FDs,
		Goroutines: a.Goroutines - b.Goroutines, Cgroups: a.Cgroups - b.Cgroups}
}

// Clean reports whether nothing leaked. Goroutines are reported, not
// judged: gRPC winds connections down in the background.
func (r Resources) Clean() bool {
	return r.VMMs <= 0 && r.RunDirs <= 0 && r.FDs <= 0 && r.Cgroups <= 0
}

// Soak runs Clients concurrent create/write/exec/read/kill cycles against m
// for Duration, then counts what is left on the host.
func Soak(ctx context.Context, m *sandbox.Manager, h *vm.Host, o SoakOptions) (*SoakReport, error) {
	o = o.withDefaults()
	if err := m.Prewarm(ctx, o.Template); err != nil {
		return nil, err
	}
	if err := soakWarmUp(ctx, m, o); err != nil {
		return nil, err
	}
	before := settle(ctx, m, h, o.Template)
	r := &SoakReport{Clients: o.Clients, Before: before}
	o.Progress("soak: %d clients for %s", o.Clients, o.Duration)
	began := time.Now()
	cycles := soakRun(ctx, m, o, r, began.Add(o.Duration))
	r.Duration = time.Since(began)
	r.Cycles = len(cycles)
	r.CyclesPerSec = float64(r.Cycles) / r.Duration.Seconds()
	r.summarizeCycles(cycles)
	r.After = settle(ctx, m, h, o.Template)
	r.Leaked = r.After.minus(r.Before)
	for target, n := range r.After.fds {
		if extra := n - r.Before.fds[target]; extra > 0 {
			r.NewFDs = append(r.NewFDs, fmt.Sprintf("%d x %s", extra, target))
		}
	}
	r.PeakRSSKiB = statusKiB("VmHWM")
	return r, nil
}

// withDefaults fills in what o leaves zero (and a silent Progress).
func (o SoakOptions) withDefaults() SoakOptions {
	if o.Clients <= 0 {
		o.Clients = 2
	}
	if o.Duration <= 0 {
		o.Duration = 30 * time.Second
	}
	if o.Payload <= 0 {
		o.Payload = 64 << 10
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	return o
}

// soakTimes are one cycle's step durations.
type soakTimes = struct{ create, write, exec, read, kill, total time.Duration }

// soakWarmUp runs one cycle per client, not counted: connection pools
// (the store's, gRPC's) grow to their working size, which is not a leak.
func soakWarmUp(ctx context.Context, m *sandbox.Manager, o SoakOptions) error {
	var warm sync.WaitGroup
	var warmErr error
	var warmMu sync.Mutex
	for c := 0; c < o.Clients; c++ {
		warm.Add(1)
		go func() {
			defer warm.Done()
			if _, step, err := soakCycle(ctx, m, o); err != nil {
				warmMu.Lock()
				warmErr = fmt.Errorf("soak warm-up: %s: %w", step, err)
				warmMu.Unlock()
			}
		}()
	}
	warm.Wait()
	return warmErr
}

// soakRun runs the clients' cycles until stop and returns the cycles that
// succeeded; failures are counted (with the first few samples) in r.
func soakRun(ctx context.Context, m *sandbox.Manager, o SoakOptions, r *SoakReport, stop time.Time) []soakTimes {
	var (
		mu     sync.Mutex
		cycles []soakTimes
	)
	fail := func(step string, err error) {
		mu.Lock()
		defer mu.Unlock()
		r.Errors++
		if len(r.ErrorSamples) < 5 {
			r.ErrorSamples = append(r.ErrorSamples, step+": "+err.Error())
		}
	}
	var wg sync.WaitGroup
	for c := 0; c < o.Clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) && ctx.Err() == nil {
				cy, step, err := soakCycle(ctx, m, o)
				if err != nil {
					fail(step, err)
					continue
				}
				mu.Lock()
				cycles = append(cycles, cy)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return cycles
}

// summarizeCycles fills in the per-step statistics.
func (r *SoakReport) summarizeCycles(cycles []soakTimes) {
	pick := func(f func(soakTimes) time.Duration) Stats {
		ds := make([]time.Duration, len(cycles))
		for i, c := range cycles {
			ds[i] = f(c)
		}
		return summarize(ds)
	}
	r.Cycle = pick(func(c soakTimes) time.Duration { return c.total })
	r.Create = pick(func(c soakTimes) time.Duration { return c.create })
	r.Write = pick(func(c soakTimes) time.Duration { return c.write })
	r.Exec = pick(func(c soakTimes) time.Duration { return c.exec })
	r.Read = pick(func(c soakTimes) time.Duration { return c.read })
	r.Kill = pick(func(c soakTimes) time.Duration { return c.kill })
}

// soakCycle is one client's cycle; it names the step that failed.
func soakCycle(ctx context.Context, m *sandbox.Manager, o SoakOptions) (c soakTimes, step string, err error) {
	const tenant = "soak"
	payload := make([]byte, o.Payload)
	rand.Read(payload)
	t0 := time.Now()
	info, err := m.Create(ctx, sandbox.CreateRequest{Tenant: tenant, Template: o.Template, TTL: 5 * time.Minute,
		Metadata: map[string]string{"bench": "soak"}})
	if err != nil {
		return c, "create", err
	}
	killed := false
	defer func() {
		if !killed {
			m.Kill(context.WithoutCancel(ctx), tenant, info.ID)
		}
	}()
	t1 := time.Now()
	if _, err := m.WriteFile(ctx, tenant, info.ID, "/job/in", bytes.NewReader(payload), 0o644); err != nil {
		return c, "write", err
	}
	t2 := time.Now()
	res, err := m.Exec(ctx, tenant, info.ID, guest.ExecOptions{Shell: "cat /job/in > /job/out", Timeout: time.Minute}, io.Discard, io.Discard)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d", res.ExitCode)
	}
	if err != nil {
		return c, "exec", err
	}
	t3 := time.Now()
	var out bytes.Buffer
	if _, err := m.ReadFile(ctx, tenant, info.ID, "/job/out", &out, int64(o.Payload)+1); err != nil {
		return c, "read", err
	}
	if !bytes.Equal(out.Bytes(), payload) {
		return c, "read", errors.New("read back different bytes than were written")
	}
	t4 := time.Now()
	killed = true
	if err := m.Kill(ctx, tenant, info.ID); err != nil {
		return c, "kill", err
	}
	t5 := time.Now()
	c.create, c.write, c.exec, c.read, c.kill, c.total = t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3), t5.Sub(t4), t5.Sub(t0)
	return c, "", nil
}

// settle waits for the warm pool to be full again and the count of VMMs to
// stop moving, then counts resources.
func settle(ctx context.Context, m *sandbox.Manager, h *vm.Host, template string) Resources {
	m.Prewarm(ctx, template)
	var last Resources
	for i := 0; i < 50; i++ {
		runtime.GC()
		cur := countResources(h)
		if i > 0 && cur.VMMs == last.VMMs && cur.RunDirs == last.RunDirs && cur.FDs == last.FDs {
			return cur
		}
		last = cur
		time.Sleep(200 * time.Millisecond)
	}
	return last
}

func countResources(h *vm.Host) Resources {
	var r Resources
	if entries, err := os.ReadDir(h.RunDir); err == nil {
		r.RunDirs = len(entries)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		r.fds = map[string]int{}
		for _, fd := range fds {
			t, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
			if i := strings.IndexByte(t, '['); i > 0 {
				t = t[:i] // socket:[123] -> socket:
			}
			r.fds[t]++
			// The store's files: its connection pool grows to its working
			// size (at most 8 connections) under load, which is not a
			// leak.
			if !strings.HasSuffix(t, ".db") && !strings.HasSuffix(t, ".db-wal") && !strings.HasSuffix(t, ".db-shm") {
				r.FDs++
			}
		}
	}
	r.Goroutines = runtime.NumGoroutine()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte("qemu-system")) && bytes.Contains(cmd, []byte(h.RunDir+"/")) {
			r.VMMs++
		}
	}
	r.Cgroups = h.Driver.JailCgroups()
	r.RSSKiB = statusKiB("VmRSS")
	return r
}

// statusKiB reads a "kB" field of /proc/self/status.
func statusKiB(field string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// Print writes the report for a terminal.
func (r *SoakReport) Print(w io.Writer) {
	fmt.Fprintf(w, "soak: %d clients for %s: %d cycles (%.2f/s), %d errors\n", r.Clients, r.Duration.Round(time.Millisecond), r.Cycles, r.CyclesPerSec, r.Errors)
	for _, e := range r.ErrorSamples {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
	fmt.Fprintf(w, "  cycle   %s\n  create  %s\n  write   %s\n  exec    %s\n  read    %s\n  kill    %s\n", r.Cycle, r.Create, r.Write, r.Exec, r.Read, r.Kill)
	fmt.Fprintf(w, "  before  %d VMMs, %d run dir entries, %d fds, %d goroutines, %d jail cgroups, RSS %d MiB\n",
		r.Before.VMMs, r.Before.RunDirs, r.Before.FDs, r.Before.Goroutines, r.Before.Cgroups, r.Before.RSSKiB>>10)
	fmt.Fprintf(w, "  after   %d VMMs, %d run dir entries, %d fds, %d goroutines, %d jail cgroups, RSS %d MiB (peak %d MiB)\n",
		r.After.VMMs, r.After.RunDirs, r.After.FDs, r.After.Goroutines, r.After.Cgroups, r.After.RSSKiB>>10, r.PeakRSSKiB>>10)
	verdict := "nothing leaked"
	if !r.Leaked.Clean() {
		verdict = fmt.Sprintf("LEAKED: %+v %v", r.Leaked, r.NewFDs)
	}
	fmt.Fprintf(w, "  %s\n", verdict)
}
