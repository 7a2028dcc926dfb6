package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlock-dev/airlock/internal/cleanup"
	"github.com/airlock-dev/airlock/internal/cluster/nodeagent"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vm"
)

// Options say what to open.
type Options struct {
	// StateDir holds the store and the baked templates (made if missing).
	StateDir string
	// Host configures the VM host: cache and run directories, accelerator,
	// jail.
	Host vm.Config
	// StoreDir is where the store lives when it is not the state
	// directory's (a benchmark's throwaway store); "" = StateDir.
	StoreDir string
	// Exclusive locks the state and run directories for this process: a
	// daemon, or a batch that runs sandboxes in-process. LockHint is added
	// to the error when another process holds them.
	Exclusive bool
	LockHint  string
	// Net sets up sandbox networking; nil: every sandbox's NIC is attached
	// to nothing (deny-all).
	Net *NetOptions
	// Manager configures the sandbox manager; Host, Templates, Store, Net,
	// Credentials and Logger are filled in here, and PauseDir, if unset,
	// is StateDir/paused (on disk, beside the store).
	Manager sandbox.Config
	// KillOnClose kills every sandbox on Close; otherwise they keep
	// running for the next daemon to adopt.
	KillOnClose bool
	Log         *slog.Logger
	// Cluster, when set, makes this daemon a cluster node (see
	// ClusterOptions); nil: a single host, exactly as without clusters.
	Cluster *ClusterOptions
}

// Daemon is what Open made. Close undoes it.
type Daemon struct {
	Host      *vm.Host
	Store     *store.Store
	Templates *template.Registry
	Manager   *sandbox.Manager
	// Agent is the cluster node agent; nil on a single host.
	Agent *nodeagent.Agent
	cu    cleanup.Stack
}

// Open opens everything, in order; on failure what was opened is closed
// again and nothing is left.
func Open(ctx context.Context, o Options) (_ *Daemon, err error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{}
	defer func() {
		if err != nil {
			_ = d.Close(ctx)
		}
	}()
	if err := d.openState(ctx, &o); err != nil {
		return nil, err
	}
	if err := d.startManager(ctx, o); err != nil {
		return nil, err
	}
	if o.Cluster != nil {
		if err := d.startAgent(o); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Close undoes Open in reverse order: the proxy and the network pool
// outlive the manager's shutdown (which releases slots); the store and the
// host outlive everything.
func (d *Daemon) Close(ctx context.Context) error {
	return d.cu.Clean(ctx)
}

// openState opens the host, takes the directory locks, and opens and
// checks the store.
func (d *Daemon) openState(ctx context.Context, o *Options) error {
	o.StateDir = filepath.Clean(o.StateDir)
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return err
	}
	host, err := vm.NewHost(ctx, o.Host)
	if err != nil {
		return err
	}
	d.Host = host
	d.cu.AddFunc(func() { host.Close() })
	if o.Exclusive {
		for _, dir := range []struct{ path, what string }{{o.StateDir, "state directory"}, {host.RunDir, "run directory"}} {
			lock, err := lockExclusive(dir.path, dir.what)
			if err != nil {
				if o.LockHint != "" {
					err = fmt.Errorf("%w (%s)", err, o.LockHint)
				}
				return err
			}
			d.cu.AddFunc(func() { lock.Close() })
		}
	}
	if d.Templates, err = template.NewRegistry(filepath.Join(o.StateDir, "templates")); err != nil {
		return err
	}
	storeDir := o.StoreDir
	if storeDir == "" {
		storeDir = o.StateDir
	}
	st, err := store.Open(filepath.Join(storeDir, "airlock.db"))
	if err != nil {
		return err
	}
	d.Store = st
	d.cu.AddFunc(func() { st.Close() })
	if err := st.AuditIntegrity(); err != nil {
		// Every sandbox operation is audited; a process that went on would
		// bury the evidence under new records, so it does not start.
		o.Log.Error("AUDIT LOG TAMPERED WITH: refusing to start", "err", err, "state_dir", storeDir)
		return fmt.Errorf("audit log: %w", err)
	}
	if !st.SealAuditAnchor() {
		o.Log.Warn("audit anchor cannot be made append-only on this filesystem; truncation is still detected unless the anchor is cut too")
	}
	return nil
}

// startManager sets up host networking (with Net) and starts the sandbox
// manager, then the egress proxy.
func (d *Daemon) startManager(ctx context.Context, o Options) error {
	var hn *hostNet
	if o.Net != nil {
		var err error
		if hn, err = setupNet(*o.Net, o.Log, o.StateDir); err != nil {
			return err
		}
		d.cu.AddFunc(func() { hn.close(o.Log) })
	}
	cfg := o.Manager
	cfg.Host, cfg.Templates, cfg.Store, cfg.Logger = d.Host, d.Templates, d.Store, o.Log
	if cfg.PauseDir == "" {
		cfg.PauseDir = filepath.Join(o.StateDir, "paused")
	}
	if hn != nil {
		cfg.Net, cfg.Credentials = hn.pool, hn.credentials
	}
	if cfg.Failpoint != "" {
		o.Log.Warn("AIRLOCK_FAILPOINT is set: this daemon will kill itself at that step (fault-injection tests only)", "failpoint", cfg.Failpoint)
	}
	mgr, err := sandbox.New(ctx, cfg)
	if err != nil {
		return err
	}
	d.Manager = mgr
	d.cu.AddFunc(func() {
		if o.KillOnClose {
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			mgr.Shutdown(sctx)
			cancel()
		} else {
			mgr.Close()
		}
	})
	if hn != nil {
		return hn.startProxy(ctx, o.Log, mgr)
	}
	return nil
}

// lockExclusive holds an exclusive lock on dir itself until the returned
// file is closed (or the process dies: the kernel drops it). Locking the
// directory leaves nothing behind in it.
// LockStateDir takes the lock a daemon holds on its state directory for
// as long as it runs, without waiting: a directory a daemon (or a batch
// running sandboxes in-process) uses is FailedPrecondition. Closing the
// file releases it. Tools that must not run beside a daemon take it.
func LockStateDir(dir string) (*os.File, error) { return lockExclusive(dir, "state directory") }

func lockExclusive(dir, what string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", what, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errdefs.FailedPrecondition("another airlock process is using the %s %s; give each daemon its own (--state-dir, --run-dir)", what, dir)
		}
		return nil, fmt.Errorf("lock %s: %w", what, err)
	}
	return f, nil
}
