package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/procstat"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// Options sizes a run.
type Options struct {
	Creates   int // restores measured per mode (default 30)
	Execs     int // exec round trips measured (default 100)
	ColdBoots int // cold boots measured (default 3)
	Forks     int // forks measured (default 3)
	Idle      int // sandboxes kept idle for the memory figure (default 10)
	Progress  func(format string, a ...any)
}

// sampleLimit bounds one measurement. Generous: on a loaded, emulated
// host a restore or a fork can take many seconds, and a bench that gives
// up early measures nothing; when the limit is hit the error says so.
const sampleLimit = 3 * time.Minute

// sample runs measure n times, each under its own sampleLimit, and
// summarises the durations it returns; the first error stops the run and
// names the step, the sample and, if it was the cause, the limit.
func sample(ctx context.Context, step string, n int, measure func(ctx context.Context) (time.Duration, error)) (Stats, error) {
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		sctx, cancel := context.WithTimeout(ctx, sampleLimit)
		d, err := measure(sctx)
		limitHit := sctx.Err() == context.DeadlineExceeded
		cancel()
		if err != nil {
			if limitHit {
				return Stats{}, errdefs.DeadlineExceeded("bench %s: sample %d of %d hit the %s limit: %v", step, i+1, n, sampleLimit, err)
			}
			return Stats{}, fmt.Errorf("bench %s: sample %d of %d: %w", step, i+1, n, err)
		}
		ds = append(ds, d)
	}
	return summarize(ds), nil
}

// Stats summarises a sample of durations.
type Stats struct {
	N                  int
	P50, P90, P99, Max time.Duration
}

func summarize(ds []time.Duration) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return Stats{N: len(s), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: s[len(s)-1]}
}

func (s Stats) String() string {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }
	return fmt.Sprintf("p50 %s ms  p90 %s ms  p99 %s ms  max %s ms  (n=%d)", ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Max), s.N)
}

// Report is one run's results.
type Report struct {
	Template     string
	Accel        string
	ColdBoot     Stats // process start to agent answering, cold kernel boot
	CreateWarm   Stats // create from the warm pool: identity push into a restored, idle clone
	CreatePaused Stats // create from a paused VMM: load state, resume, agent session, identity push
	CreateCold   Stats // create including the VMM process start
	Fork         Stats // running sandbox -> one child answering
	// ForkWritten is Fork again once the parent has written
	// ForkWrittenMiB into its RAM: what a fork costs per page a job wrote.
	ForkWritten    Stats
	ForkWrittenMiB int
	ExecRTT        Stats // `true` via exec, host to guest and back
	HealthRTT      Stats // smallest agent call
	IdlePSSKiB     int64 // mean PSS of an idle sandbox's VMM
	IdleRSSKiB     int64
	IdleSamples    int
	// IdleParts is the idle PSS and private memory by kind of mapping.
	IdleParts []MemoryPart `json:",omitempty"`
	// JailCost, when measured, is create including the VMM process start
	// with the jail and without it, sampled alternately in the same run.
	JailCost *JailCost `json:",omitempty"`
}

// JailCost is what the jail adds to starting and restoring a VMM.
type JailCost struct {
	Jailed, Unjailed Stats
}

// MeasureJailCost restores n clones of t through each host in turn (one
// jailed, one not) and reports both, so the jail's cost is measured
// against a baseline taken under the same load.
func MeasureJailCost(ctx context.Context, jailed, unjailed *vm.Host, t *template.Template, n int) (*JailCost, error) {
	one := func(h *vm.Host) func(context.Context) (time.Duration, error) {
		return func(ctx context.Context) (time.Duration, error) {
			start := time.Now()
			v, err := clone(ctx, h, t)
			if err != nil {
				return 0, err
			}
			d := time.Since(start)
			v.Destroy(context.WithoutCancel(ctx))
			return d, nil
		}
	}
	// Each host makes its sealed copy of the base once; not measured.
	for _, h := range []*vm.Host{jailed, unjailed} {
		if _, err := one(h)(ctx); err != nil {
			return nil, fmt.Errorf("bench jail cost: warm-up: %w", err)
		}
	}
	var js, us []time.Duration
	for i := 0; i < n; i++ {
		for _, side := range []struct {
			h   *vm.Host
			out *[]time.Duration
		}{{jailed, &js}, {unjailed, &us}} {
			sctx, cancel := context.WithTimeout(ctx, sampleLimit)
			d, err := one(side.h)(sctx)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("bench jail cost: sample %d: %w", i+1, err)
			}
			*side.out = append(*side.out, d)
		}
	}
	return &JailCost{Jailed: summarize(js), Unjailed: summarize(us)}, nil
}

// clone restores t into a freshly started VMM and prepares it.
func clone(ctx context.Context, h *vm.Host, t *template.Template) (*vm.VM, error) {
	opts := t.BootOptions()
	opts.ID = vm.NewID("bench-")
	p, err := h.StartPending(ctx, opts)
	if err != nil {
		return nil, err
	}
	return p.RestorePrepared(ctx, t.StatePath(), true, opts.ID)
}

// Run measures everything for one template.
func Run(ctx context.Context, h *vm.Host, t *template.Template, o Options) (*Report, error) {
	o = o.withDefaults()
	say := o.Progress
	r := &Report{Template: t.Name, Accel: string(h.Accel.Accel)}
	b := bencher{h: h, t: t}
	var err error
	say("cold boots (%d)", o.ColdBoots)
	if r.ColdBoot, err = sample(ctx, "cold boot", o.ColdBoots, b.coldBoot); err != nil {
		return nil, err
	}
	say("creates from a warm pool (%d)", o.Creates)
	if r.CreateWarm, err = sample(ctx, "create from warm pool", o.Creates, b.createWarm); err != nil {
		return nil, err
	}
	say("creates from a paused VMM (%d)", o.Creates)
	if r.CreatePaused, err = sample(ctx, "create from paused VMM", o.Creates, b.createPaused); err != nil {
		return nil, err
	}
	say("creates with process start (%d)", o.Creates)
	if r.CreateCold, err = sample(ctx, "create with process start", o.Creates, b.createCold); err != nil {
		return nil, err
	}
	say("exec round trips (%d)", o.Execs)
	v, err := clone(ctx, h, t)
	if err != nil {
		return nil, err
	}
	defer v.Destroy(context.WithoutCancel(ctx))
	if r.ExecRTT, err = sample(ctx, "exec round trip", o.Execs, b.execRTT(v)); err != nil {
		return nil, err
	}
	if r.HealthRTT, err = sample(ctx, "agent call round trip", o.Execs, b.healthRTT(v)); err != nil {
		return nil, err
	}
	say("forks (%d)", o.Forks)
	if r.Fork, err = sample(ctx, "fork", o.Forks, b.fork(v)); err != nil {
		return nil, err
	}
	r.ForkWrittenMiB = forkWrittenMiB
	if err := writeGuestRAM(ctx, v, forkWrittenMiB); err != nil {
		return nil, err
	}
	if r.ForkWritten, err = sample(ctx, "fork after writes", o.Forks, b.fork(v)); err != nil {
		return nil, err
	}
	say("idle memory (%d sandboxes)", o.Idle)
	if r.IdleSamples, r.IdlePSSKiB, r.IdleRSSKiB, r.IdleParts, err = b.idleMemory(ctx, o.Idle); err != nil {
		return nil, err
	}
	return r, nil
}

// withDefaults fills in the sample counts (and a silent Progress) Run
// uses when o leaves them zero.
func (o Options) withDefaults() Options {
	if o.Creates == 0 {
		o.Creates = 30
	}
	if o.Execs == 0 {
		o.Execs = 100
	}
	if o.ColdBoots == 0 {
		o.ColdBoots = 3
	}
	if o.Forks == 0 {
		o.Forks = 3
	}
	if o.Idle == 0 {
		o.Idle = 10
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	return o
}

// bencher takes Run's samples, one method per measurement.
type bencher struct {
	h *vm.Host
	t *template.Template
}

// coldBoot boots the template's machine from scratch (no snapshot).
func (b bencher) coldBoot(ctx context.Context) (time.Duration, error) {
	opts := b.t.BootOptions()
	opts.MemoryFile, opts.MemoryPrivate = "", false
	start := time.Now()
	v, err := b.h.Boot(ctx, opts)
	if err != nil {
		return 0, fmt.Errorf("cold boot: %w", err)
	}
	d := time.Since(start)
	v.Destroy(context.WithoutCancel(ctx))
	return d, nil
}

// createWarm is what the daemon's pool holds: a clone restored and
// warmed ahead of time. The create is the identity push.
func (b bencher) createWarm(ctx context.Context) (time.Duration, error) {
	v, err := clone(ctx, b.h, b.t)
	if err != nil {
		return 0, err
	}
	defer v.Destroy(context.WithoutCancel(ctx))
	if _, err := v.Agent.Exec(ctx, guest.ExecOptions{Argv: []string{"true"}}, io.Discard, io.Discard); err != nil {
		return 0, err
	}
	start := time.Now()
	err = v.Prepare(ctx, v.ID)
	return time.Since(start), err
}

// createPaused restores into a VMM started (paused) ahead of time.
func (b bencher) createPaused(ctx context.Context) (time.Duration, error) {
	opts := b.t.BootOptions()
	opts.ID = vm.NewID("bench-")
	p, err := b.h.StartPending(ctx, opts)
	if err != nil {
		return 0, err
	}
	time.Sleep(50 * time.Millisecond) // let the paused VMM settle
	start := time.Now()
	v, err := p.RestorePrepared(ctx, b.t.StatePath(), true, opts.ID)
	if err != nil {
		return 0, err
	}
	d := time.Since(start)
	v.Destroy(context.WithoutCancel(ctx))
	return d, nil
}

// createCold starts a VMM and restores into it.
func (b bencher) createCold(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	v, err := clone(ctx, b.h, b.t)
	if err != nil {
		return 0, err
	}
	d := time.Since(start)
	v.Destroy(context.WithoutCancel(ctx))
	return d, nil
}

// execRTT runs `true` in v.
func (b bencher) execRTT(v *vm.VM) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		res, err := v.Agent.Exec(ctx, guest.ExecOptions{Argv: []string{"true"}}, io.Discard, io.Discard)
		if err != nil || res.ExitCode != 0 {
			return 0, fmt.Errorf("exec true: %v (exit %d)", err, res.ExitCode)
		}
		return time.Since(start), nil
	}
}

// healthRTT is one agent call that starts no process.
func (b bencher) healthRTT(v *vm.VM) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		_, err := v.Agent.Health(ctx)
		return time.Since(start), err
	}
}

// forkWrittenMiB is how much the parent of the second fork series writes
// first.
const forkWrittenMiB = 64

// writeGuestRAM has v write mib MiB of random data into its RAM (the
// guest's /job is a tmpfs).
func writeGuestRAM(ctx context.Context, v *vm.VM, mib int) error {
	res, err := v.Agent.Exec(ctx, guest.ExecOptions{Shell: fmt.Sprintf("head -c %d /dev/urandom > /job/bench-written", mib<<20)}, io.Discard, io.Discard)
	if err != nil {
		return fmt.Errorf("bench: write guest RAM: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("bench: write guest RAM: exit %d", res.ExitCode)
	}
	return nil
}

// fork snapshots v for a fork and restores one child from it.
func (b bencher) fork(v *vm.VM) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		dir, err := os.MkdirTemp(b.h.RunDir, "forkdata-")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		start := time.Now()
		files, err := b.h.SnapshotForFork(ctx, v, b.t.BootOptions(), dir)
		if err != nil {
			return 0, err
		}
		defer files.Mem.Close()
		copts := files.ChildOptions(b.t.BootOptions(), vm.NewID("bench-"))
		cp, err := b.h.StartPending(ctx, copts)
		if err != nil {
			return 0, err
		}
		child, err := cp.RestorePrepared(ctx, files.State, true, copts.ID)
		if err != nil {
			return 0, err
		}
		d := time.Since(start)
		child.Destroy(context.WithoutCancel(ctx))
		return d, nil
	}
}

// idleMemory restores n clones, lets them settle and returns their mean
// PSS and RSS, and the mean by kind of mapping.
func (b bencher) idleMemory(ctx context.Context, n int) (samples int, pssKiB, rssKiB int64, parts []MemoryPart, err error) {
	var idle []*vm.VM
	defer func() {
		for _, x := range idle {
			x.Destroy(context.WithoutCancel(ctx))
		}
	}()
	for i := 0; i < n; i++ {
		x, err := clone(ctx, b.h, b.t)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		idle = append(idle, x)
	}
	time.Sleep(3 * time.Second)
	var pss, rss int64
	sums := map[string]*MemoryPart{}
	for _, x := range idle {
		u, err := procstat.Read(x.Machine.PID())
		if err != nil {
			return 0, 0, 0, nil, err
		}
		pss += u.PSS >> 10
		rss += u.RSS >> 10
		if err := memoryBreakdown(x.Machine.PID(), sums); err != nil {
			return 0, 0, 0, nil, err
		}
	}
	k := int64(len(idle))
	return len(idle), pss / k, rss / k, meanParts(sums, len(idle)), nil
}

// Print writes the report as a small table with the ratios that matter.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "template %s, accel %s\n", r.Template, r.Accel)
	fmt.Fprintf(w, "  cold boot to agent ready     %s\n", r.ColdBoot)
	fmt.Fprintf(w, "  create (warm pool)           %s\n", r.CreateWarm)
	fmt.Fprintf(w, "  create (paused VMM)          %s\n", r.CreatePaused)
	fmt.Fprintf(w, "  create (incl. process start) %s\n", r.CreateCold)
	fmt.Fprintf(w, "  fork (to 1 child answering)  %s\n", r.Fork)
	if r.ForkWrittenMiB > 0 {
		fmt.Fprintf(w, "  fork, parent wrote %3d MiB   %s\n", r.ForkWrittenMiB, r.ForkWritten)
	}
	fmt.Fprintf(w, "  exec round trip (`true`)     %s\n", r.ExecRTT)
	fmt.Fprintf(w, "  agent call round trip        %s\n", r.HealthRTT)
	fmt.Fprintf(w, "  idle sandbox memory          PSS %.1f MiB, RSS %.1f MiB (mean of %d)\n", float64(r.IdlePSSKiB)/1024, float64(r.IdleRSSKiB)/1024, r.IdleSamples)
	for _, p := range r.IdleParts {
		fmt.Fprintf(w, "    %-41s PSS %6.1f MiB, private %6.1f MiB\n", p.Part, float64(p.PSSKiB)/1024, float64(p.PrivateKiB)/1024)
	}
	if c := r.JailCost; c != nil {
		fmt.Fprintf(w, "  create, jailed               %s\n", c.Jailed)
		fmt.Fprintf(w, "  create, unjailed (baseline)  %s\n", c.Unjailed)
		if c.Unjailed.P50 > 0 {
			fmt.Fprintf(w, "  jail cost                    %.2fx p50, +%.1f ms p50 (same run, alternating)\n",
				float64(c.Jailed.P50)/float64(c.Unjailed.P50), float64(c.Jailed.P50-c.Unjailed.P50)/1e6)
		}
	}
	if r.CreateWarm.P50 > 0 {
		fmt.Fprintf(w, "  ratio cold boot / create     %.0fx warm pool, %.1fx paused VMM, %.1fx with process start (p50/p50)\n",
			float64(r.ColdBoot.P50)/float64(r.CreateWarm.P50), float64(r.ColdBoot.P50)/float64(r.CreatePaused.P50), float64(r.ColdBoot.P50)/float64(r.CreateCold.P50))
	}
}
