package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/internal/egress"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// Config configures a Manager; zero values take the documented defaults.
type Config struct {
	Host      *vm.Host           // required unless Machines is set
	Templates *template.Registry // required unless TemplateSource is set
	// Machines and TemplateSource replace Host and Templates: the machine
	// layer and the bakes sandboxes are created from (see machines.go).
	// nil: VMs on Host, from the bakes in Templates. Tests of the
	// lifecycle logic set them to run it without VMs.
	Machines       Machines
	TemplateSource TemplateSource
	Store          *store.Store     // required
	Metrics        *metrics.Metrics // optional
	// MetricsPerSandbox adds one usage series per running sandbox to
	// Metrics (by template only otherwise): see metrics.WatchSandboxUsage.
	MetricsPerSandbox bool
	Logger            *slog.Logger // optional
	// MaxTTL caps every sandbox's lifetime (default 24h).
	MaxTTL time.Duration
	// MaxSandboxes caps concurrently running sandboxes (default 64).
	MaxSandboxes int
	// WarmPool is how many restored, idle clones to keep ready per
	// template in use, so a create is only the identity push (default 2;
	// negative disables the pool).
	WarmPool int
	// WarmPoolMax is the most clones a pool keeps ready while creates
	// arrive faster than it refills: every create that finds the pool empty
	// raises its size by one up to this, and every 30 s without one lowers
	// it back towards WarmPool (default 4 x WarmPool). Each idle clone
	// costs its PSS (see airlock bench), so this is the pool's memory
	// budget in clones.
	WarmPoolMax int
	// ReapInterval is how often deadlines are checked (default 250ms).
	ReapInterval time.Duration
	// Net gives every sandbox its own network namespace and egress policy
	// (see net.go). nil: sandboxes have a NIC that reaches nothing, which is
	// deny-all, and policies that allow anything are refused.
	Net *netpool.Pool
	// Credentials are the credential routes of each tenant (host
	// configuration; the values are secrets and are never stored, audited
	// or logged). A sandbox uses a route only when its policy has a domain
	// rule naming the route's host. Needs Net with a proxy.
	Credentials map[string][]egress.CredentialRoute
	// MaxMemoryMiB and MaxVCPUs cap the machine a sandbox may have (a
	// template's size is its sandboxes' size: a snapshot restores only into
	// the machine it was taken of). 0: no cap.
	MaxMemoryMiB int
	MaxVCPUs     int
	// Failpoint, for fault-injection tests only, names a step at which the
	// process kills itself (see failpoint.go). Empty in production.
	Failpoint string
	// PauseDir is where paused sandboxes are saved (pause.go), one
	// directory each: on disk, not in memory, since a paused sandbox is
	// to hold no memory on the host. "": Pause is refused.
	PauseDir string
}

// Limits on caller input.
const (
	maxMetadataPairs = 64
	maxMetadataKey   = 63
	maxMetadataValue = 1024
)

// MaxForkCount bounds the children of one fork.
const MaxForkCount = 16

var metaKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,63}$`)

// Manager runs sandboxes. It is safe for concurrent use.
//
// Locking: mu guards the sandboxes map and the reservation count; each
// live's info is guarded by its own mu (never held across a guest call);
// live.ops orders calls into a guest against fork (see live). No lock is
// held while waiting on a VM.
//
// Goroutines: the reaper, one watcher per running sandbox (ends it when its
// VMM exits), the ends the reaper starts, and re-attachments after a
// restart, and one per background process holding its guest call
// (processes.go). All are counted in wg and stop or finish before Close
// returns.
type Manager struct {
	cfg       Config         // immutable after New
	log       *slog.Logger   // immutable
	pools     *warmPools     // immutable
	machines  Machines       // immutable: cfg.Machines, or VMs on cfg.Host
	templates TemplateSource // immutable: cfg.TemplateSource, or cfg.Templates for cfg.Host

	mu        sync.Mutex
	sandboxes map[string]*live // guarded by mu; registered sandboxes until they end
	reserved  int              // guarded by mu; creates and fork children counted against MaxSandboxes but not registered yet
	paused    int              // guarded by mu; registered sandboxes that are paused, which MaxSandboxes does not count

	egMu        sync.RWMutex
	egressBySrc map[netip.Addr]egress.Sandbox // guarded by egMu; by slot NsIP, sandboxes holding a slot
	enforcer    atomic.Pointer[enforcerRef]   // the egress proxy, once connected (SetEgressEnforcer)

	stop     chan struct{} // closed by Close
	stopOnce sync.Once
	// procCtx bounds every background process's guest call; Close
	// cancels it (the guest then kills the processes: they do not outlive
	// the daemon that holds their streams).
	procCtx    context.Context
	procCancel context.CancelFunc
	wg         sync.WaitGroup // every goroutine the Manager starts
}

// New starts a Manager: it recovers what an earlier daemon left (adopting
// live sandboxes, expiring overdue ones, removing orphans) and starts the
// TTL reaper.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if (cfg.Host == nil && cfg.Machines == nil) || (cfg.Templates == nil && cfg.TemplateSource == nil) || cfg.Store == nil {
		return nil, errdefs.InvalidArgument("sandbox manager needs a host, a template registry and a store")
	}
	if cfg.Machines == nil {
		cfg.Machines = vmMachines{cfg.Host}
	}
	if cfg.TemplateSource == nil {
		cfg.TemplateSource = registryTemplates{reg: cfg.Templates, host: cfg.Host}
	}
	if cfg.MaxTTL == 0 {
		cfg.MaxTTL = 24 * time.Hour
	}
	if cfg.MaxSandboxes == 0 {
		cfg.MaxSandboxes = 64
	}
	if cfg.WarmPool == 0 {
		cfg.WarmPool = 2
	}
	if cfg.ReapInterval == 0 {
		cfg.ReapInterval = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, sandboxes: map[string]*live{}, stop: make(chan struct{}),
		egressBySrc: map[netip.Addr]egress.Sandbox{}, machines: cfg.Machines, templates: cfg.TemplateSource}
	if cfg.WarmPoolMax == 0 {
		cfg.WarmPoolMax = 4 * cfg.WarmPool
	}
	m.pools = newWarmPools(cfg.Machines, cfg.Net, cfg.WarmPool, cfg.WarmPoolMax, cfg.Logger)
	m.procCtx, m.procCancel = context.WithCancel(context.Background())
	if err := m.recover(ctx); err != nil {
		m.procCancel()
		return nil, fmt.Errorf("recover sandboxes: %w", err)
	}
	cfg.Metrics.WatchSandboxUsage(m.metricsUsages, cfg.MetricsPerSandbox)
	m.wg.Add(1)
	go m.reaper()
	return m, nil
}

// Close stops the reaper, the watchers and the warm pools, and waits for
// every goroutine the Manager started. Running sandboxes keep running: a
// restarted daemon adopts them (or kills them at their deadline).
func (m *Manager) Close() {
	m.stopOnce.Do(func() { close(m.stop) })
	m.procCancel()
	for _, l := range m.all() {
		if l.cancelAttach != nil {
			l.cancelAttach()
		}
	}
	m.wg.Wait()
	m.pools.close()
}

// Shutdown kills every running sandbox, then closes the manager.
func (m *Manager) Shutdown(ctx context.Context) {
	for _, l := range m.all() {
		m.end(ctx, l, store.StateKilled, store.EventKill, reasonShutdown)
	}
	m.Close()
}

// all returns the registered sandboxes.
func (m *Manager) all() []*live {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*live, 0, len(m.sandboxes))
	for _, l := range m.sandboxes {
		out = append(out, l)
	}
	return out
}

// goWatch starts the watcher of a registered sandbox: the moment its VMM
// exits for any reason (the guest killed its PID 1 and the kernel
// panicked, an OOM kill, a crash, a kill -9 from outside), the sandbox is
// ended as failed, its slot and quota released and the end audited.
func (m *Manager) goWatch(l *live) {
	m.wg.Add(1)
	watched := l.current()
	go func() {
		defer m.wg.Done()
		select {
		case <-m.stop:
		case <-watched.Exited():
			if l.ending.Load() || l.current() != watched {
				return // ended on purpose: end destroyed it, or a pause saved it
			}
			m.log.Warn("sandbox VM exited", "sandbox", l.id, "err", watched.ExitError())
			m.end(context.Background(), l, store.StateFailed, store.EventFail, reasonVMExited)
		}
	}()
}

// Reasons a sandbox ended, for metrics and the audit record's detail.
const (
	reasonKilled       = "killed"
	reasonExpired      = "expired"
	reasonShutdown     = "shutdown"
	reasonFailed       = "failed"
	reasonVMExited     = "vm_exited"
	reasonAttachFailed = "reattach_failed"
	reasonNetworkLost  = "network_lost"
	reasonProbeFailed  = "probe_failed"
)

func validateMetadata(md map[string]string) error {
	if len(md) > maxMetadataPairs {
		return errdefs.InvalidArgument("metadata has %d pairs; at most %d", len(md), maxMetadataPairs)
	}
	for k, v := range md {
		if !metaKeyRE.MatchString(k) {
			return errdefs.InvalidArgument("metadata key %q: want 1-63 of A-Z a-z 0-9 _ . -", k)
		}
		if len(v) > maxMetadataValue || strings.ContainsRune(v, 0) {
			return errdefs.InvalidArgument("metadata %q: value longer than %d bytes or contains NUL", k, maxMetadataValue)
		}
	}
	return nil
}

// reserve counts a sandbox against MaxSandboxes before it exists; register
// turns the reservation into the sandbox, release gives it back.
func (m *Manager) reserve() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sandboxes)-m.paused+m.reserved >= m.cfg.MaxSandboxes {
		return errdefs.ResourceExhausted("this host runs its maximum of %d sandboxes", m.cfg.MaxSandboxes)
	}
	m.reserved++
	return nil
}

func (m *Manager) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reserved--
}

// register persists a new running sandbox, makes it visible and starts its
// watcher. It uses up one reservation.
func (m *Manager) register(ctx context.Context, info Info, v Machine, slot *netpool.Slot, exec execDefaults) (*live, error) {
	eg, _ := json.Marshal(info.Egress)
	netSlot := store.NoNetSlot
	if slot != nil {
		netSlot = slot.Index
	}
	if err := m.cfg.Store.PutSandbox(ctx, store.Sandbox{ID: info.ID, Tenant: info.Tenant, Template: info.Template,
		Metadata: info.Metadata, State: store.StateRunning, CreatedAt: info.CreatedAt, Deadline: info.Deadline,
		PID: v.PID(), StateDir: v.StateDir(), ParentID: info.ParentID, Egress: eg,
		NetSlot: netSlot, Jailed: info.Jailed}); err != nil {
		return nil, fmt.Errorf("persist sandbox %s: %w", info.ID, err)
	}
	l := newLive(info, v, slot, exec)
	m.mu.Lock()
	m.reserved--
	m.sandboxes[info.ID] = l
	n := len(m.sandboxes)
	m.mu.Unlock()
	m.cfg.Metrics.SetRunning(n)
	m.goWatch(l)
	return l, nil
}

func copyMap(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// lookup finds a running sandbox of tenant. Another tenant's sandbox is
// NotFound, exactly like a missing one, so ids leak nothing.
func (m *Manager) lookup(tenant, id string) (*live, error) {
	if l := m.liveOf(tenant, id); l != nil {
		return l, nil
	}
	return nil, m.notLive(tenant, id)
}

// liveOf is the tenant's running sandbox id, nil if there is none.
func (m *Manager) liveOf(tenant, id string) *live {
	m.mu.Lock()
	l := m.sandboxes[id]
	m.mu.Unlock()
	if l == nil || l.infoCopy().Tenant != tenant {
		return nil
	}
	return l
}

// notLive is the error for a call to a sandbox that is not running: one
// of the tenant's that ended is failed_precondition naming its state
// ("sandbox X is expired (ended 2026-...)"), so a script can tell a TTL
// from a typo; a missing one, or another tenant's, is not_found.
func (m *Manager) notLive(tenant, id string) error {
	if tenant == "" {
		return errdefs.NotFound("sandbox %s not found", id) // the store would look across tenants
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	sb, err := m.cfg.Store.GetSandbox(ctx, tenant, id)
	if err != nil || sb.State == store.StateRunning {
		return errdefs.NotFound("sandbox %s not found", id)
	}
	if sb.EndedAt != nil {
		return errdefs.FailedPrecondition("sandbox %s is %s (ended %s)", id, sb.State, sb.EndedAt.UTC().Format(time.RFC3339))
	}
	return errdefs.FailedPrecondition("sandbox %s is %s", id, sb.State)
}

// ending is the error for a call that found l ending or ended under it.
func ending(l *live, what string) error {
	if st := l.infoCopy().State; st != store.StateRunning {
		return errdefs.FailedPrecondition("sandbox %s is %s%s", l.id, st, what)
	}
	return errdefs.FailedPrecondition("sandbox %s is ending%s", l.id, what)
}

// use runs fn as a call into the sandbox; it fails if the sandbox is
// ending. If the sandbox ends while fn runs, fn's guest calls fail. A call
// to a sandbox a restarted daemon is still re-attaching to waits for that
// (see awaitAttached).
func (m *Manager) use(ctx context.Context, tenant, id string, fn func(l *live) error) error {
	l, err := m.lookup(tenant, id)
	if err != nil {
		return err
	}
	if err := l.awaitAttached(ctx); err != nil {
		return err
	}
	l.ops.RLock()
	defer l.ops.RUnlock()
	if l.ending.Load() {
		return ending(l, "")
	}
	if l.infoCopy().State == StatePaused {
		return errdefs.FailedPrecondition("sandbox %s is paused: resume it first", id)
	}
	err = fn(l)
	if err != nil && l.ending.Load() {
		// The VM was destroyed under the call: say so, not "transport closing".
		return ending(l, ": it ended while the call was running")
	}
	return err
}

// Get returns a sandbox of tenant, running or ended.
func (m *Manager) Get(ctx context.Context, tenant, id string) (Info, error) {
	if l := m.liveOf(tenant, id); l != nil {
		return l.withUsage(), nil
	}
	sb, err := m.cfg.Store.GetSandbox(ctx, tenant, id)
	if err != nil {
		return Info{}, err
	}
	return infoFromStore(sb), nil
}

func infoFromStore(sb store.Sandbox) Info {
	info := Info{ID: sb.ID, Tenant: sb.Tenant, Template: sb.Template, ParentID: sb.ParentID,
		Metadata: sb.Metadata, State: sb.State, CreatedAt: sb.CreatedAt, Deadline: sb.Deadline, EndedAt: sb.EndedAt,
		Jailed: sb.Jailed}
	if sb.State == store.StateRunning && sb.PausedDir != "" {
		info.State = StatePaused
	}
	if info.Metadata == nil {
		info.Metadata = map[string]string{}
	}
	if err := json.Unmarshal(sb.Egress, &info.Egress); err != nil || info.Egress.Default == "" {
		info.Egress = netpool.DenyAll()
	}
	return info
}

// List returns the tenant's sandboxes matching f.
func (m *Manager) List(ctx context.Context, f ListFilter) ([]Info, error) {
	states := f.States
	if len(states) == 0 {
		states = []string{store.StateRunning}
	}
	// "lost" is a cluster catalog's state (a node written off); no
	// sandbox of one host is ever in it.
	states = slices.DeleteFunc(slices.Clone(states), func(s string) bool { return s == StateLost })
	if len(states) == 0 {
		return []Info{}, nil
	}
	sbs, err := m.cfg.Store.ListSandboxes(ctx, store.SandboxFilter{Tenant: f.Tenant, Metadata: f.Metadata, States: states})
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(sbs))
	for _, sb := range sbs {
		if l := m.liveOf(f.Tenant, sb.ID); l != nil {
			out = append(out, l.infoCopy())
			continue
		}
		out = append(out, infoFromStore(sb))
	}
	return out, nil
}

// Prewarm fills the warm pool of the named template and waits until it is
// full, so the creates that follow are identity pushes rather than
// restores (a batch run in-process, which knows how many it will make,
// calls PrewarmFor instead); a daemon's pools fill on first use and stay
// full. It fails as Create would for a template that cannot be opened
// (not baked, baked for another kernel or QEMU), and with the warm-up's
// error when no clone comes up.
func (m *Manager) Prewarm(ctx context.Context, template string) error {
	tmpl, err := m.templates.Open(template)
	if err != nil {
		return err
	}
	return m.pools.waitFull(ctx, tmpl)
}

// PrewarmFor is Prewarm for a batch that will make exactly uses sandboxes
// of the named template (a batch run in-process): the pool keeps no more
// ready than that, waits only for those, and restores no clone beyond
// them, so a one-document batch waits for one restore rather than a full
// pool, and no clone is restored only to be destroyed at exit. Creates
// beyond uses still work: they restore their own clone, as from an empty
// pool.
func (m *Manager) PrewarmFor(ctx context.Context, template string, uses int) error {
	tmpl, err := m.templates.Open(template)
	if err != nil {
		return err
	}
	p, want := m.pools.limit(tmpl, max(uses, 0))
	if p == nil {
		return nil
	}
	return m.pools.waitReady(ctx, p, func() int { return want })
}

// Templates lists the baked templates.
func (m *Manager) Templates(ctx context.Context) ([]TemplateInfo, error) {
	ts, err := m.templates.List()
	if err != nil {
		return nil, err
	}
	out := make([]TemplateInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, TemplateInfo{Name: t.Name, Hash: t.SpecHash, MemoryMiB: t.MemoryMiB, VCPUs: t.VCPUs,
			DefaultTTLSeconds: t.DefaultTTLSeconds, BuiltAt: t.BuiltAt})
	}
	return out, nil
}

// checkSize refuses a machine larger than the daemon allows.
func (m *Manager) checkSize(memoryMiB, vcpus int) error {
	if m.cfg.MaxMemoryMiB > 0 && memoryMiB > m.cfg.MaxMemoryMiB {
		return errdefs.FailedPrecondition("%d MiB of guest memory exceeds this server's maximum of %d MiB", memoryMiB, m.cfg.MaxMemoryMiB)
	}
	if m.cfg.MaxVCPUs > 0 && vcpus > m.cfg.MaxVCPUs {
		return errdefs.FailedPrecondition("%d vCPUs exceeds this server's maximum of %d", vcpus, m.cfg.MaxVCPUs)
	}
	return nil
}

// jailWord is how audit records say whether a sandbox's VMM is jailed.
func jailWord(jailed bool) string {
	if jailed {
		return "on"
	}
	return "off"
}

// stamp is the time a sandbox is created or ends, at the store's
// resolution (milliseconds): what a caller is told must be what a later
// read, or a restarted daemon, reports, or a sandbox could appear to have
// expired before the deadline it was given.
func stamp() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// reaper kills sandboxes at their deadline.
func (m *Manager) reaper() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		for _, l := range m.all() {
			if !l.ending.Load() && !now.Before(l.infoCopy().Deadline) {
				// Each in its own goroutine: one slow teardown must not
				// delay another sandbox's deadline. ending guards repeats.
				m.wg.Add(1)
				go func() {
					defer m.wg.Done()
					m.end(context.Background(), l, store.StateExpired, store.EventExpire, reasonExpired)
				}()
			}
		}
	}
}
