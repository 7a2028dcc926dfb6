// Command airlock-testnode is a test-only cluster node: the real node
// agent (internal/cluster/nodeagent) and the real sandbox Manager and API
// handler over internal/sandbox/localmachines (directories and host
// processes, no VMs, no isolation), with its own store in its state
// directory. The multi-process cluster tests (internal/cluster/clustertest/multiproc)
// start several, next to real `airlock api` processes and PostgreSQL, so
// that registration, heartbeats, fencing, shipping and routing run
// between real processes in seconds.
//
// It is a separate binary rather than a flag of `airlock serve` so that
// the production binary never contains a machine layer without
// isolation: nothing but tests builds this.
//
// Usage: airlock-testnode -state-dir DIR -api URL -token-file F -node-id ID -listen ADDR
//
// It prints one JSON line on stdout once it listens ({"addr": "..."}) and
// serves until SIGTERM or SIGINT. Sandboxes survive its death (their
// stand-in VMMs are processes of their own), so a restarted node adopts
// them, as a restarted daemon does.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/nodeagent"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/sandbox/localmachines"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/template"
)

func main() {
	var o opts
	flag.StringVar(&o.stateDir, "state-dir", "", "state directory (store, identity, machines)")
	flag.StringVar(&o.api, "api", "", "the API tier's internal listener")
	flag.StringVar(&o.tokenFile, "token-file", "", "cluster join token")
	flag.StringVar(&o.nodeID, "node-id", "", "node id")
	flag.StringVar(&o.listen, "listen", "127.0.0.1:0", "node API address")
	flag.StringVar(&o.advertise, "advertise", "", "address the tier calls the node on (default: -listen's; a fault proxy's in tests)")
	flag.IntVar(&o.maxSandboxes, "max-sandboxes", 256, "capacity in sandboxes")
	flag.IntVar(&o.warmPool, "warm-pool", -1, "warm clones per template (-1: none)")
	flag.StringVar(&o.hostClass, "host-class", "", "host class the node reports (published builds of it are pulled)")
	flag.StringVar(&o.blobs, "blobs", "", "blob store to pull published builds from (file:// or http://)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "airlock-testnode:", err)
		os.Exit(1)
	}
}

type opts struct {
	stateDir, api, tokenFile, nodeID, listen, advertise string
	hostClass, blobs                                    string
	maxSandboxes, warmPool                              int
}

func run(o opts) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := os.MkdirAll(o.stateDir, 0o700); err != nil {
		return err
	}
	st, err := store.Open(filepath.Join(o.stateDir, "airlock.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	layer, err := localmachines.New(o.stateDir)
	if err != nil {
		return err
	}
	if _, err := layer.AddTemplate("base", map[string]string{"/etc/motd": "hello\n"}, map[string]string{"JOB": "test"}); err != nil {
		return err
	}
	reg, err := template.NewRegistry(filepath.Join(o.stateDir, "templates"))
	if err != nil {
		return err
	}
	m := metrics.New()
	mgr, err := sandbox.New(ctx, sandbox.Config{Machines: layer, TemplateSource: pulled{layer, reg, &sync.Mutex{}}, Store: st, Metrics: m, Logger: log,
		WarmPool: o.warmPool, MaxSandboxes: o.maxSandboxes, MaxTTL: time.Hour,
		PauseDir: filepath.Join(o.stateDir, "paused")})
	if err != nil {
		return err
	}
	defer mgr.Close() // sandboxes outlive the process, as a daemon's do
	tok, err := os.ReadFile(o.tokenFile)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	addr := o.advertise
	if addr == "" {
		addr = l.Addr().String()
	}
	cfg := nodeagent.Config{TierURL: o.api, JoinToken: strings.TrimSpace(string(tok)), NodeID: o.nodeID,
		Addr: addr, Version: "testnode", StateDir: o.stateDir, Manager: mgr, Store: st,
		Capacity: nodewire.Capacity{Slots: o.maxSandboxes, MemMiB: int64(64 * o.maxSandboxes), VCPUs: 4 * o.maxSandboxes}, Log: log,
		HostClass: o.hostClass}
	if o.blobs != "" {
		if cfg.Blobs, err = blobs.Open(o.blobs, ""); err != nil {
			l.Close()
			return err
		}
		cfg.Templates = reg
	}
	a, err := nodeagent.New(cfg)
	if err != nil {
		l.Close()
		return err
	}
	go func() {
		if err := a.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("agent", "err", err)
		}
	}()
	line, _ := json.Marshal(map[string]any{"addr": l.Addr().String(), "pid": os.Getpid()})
	fmt.Printf("%s\n", line)
	return api.Serve(ctx, a.Handler(api.Config{Logger: log, Metrics: m}), api.ServeOptions{Log: log}, l)
}

// pulled is the node's templates: the local machines' own, and each
// build the node's template syncer pulled into reg, which is then made
// a local machines template of the same name (stand-in VMMs restore no
// snapshot: the pulled files are checked and published by the real
// syncer, and only their presence decides that the node can create).
type pulled struct {
	layer *localmachines.Layer
	reg   *template.Registry
	mu    *sync.Mutex // serializes adding a pulled build to layer
}

func (p pulled) Open(name string) (*template.Template, error) { return p.Get(name) }

func (p pulled) Get(name string) (*template.Template, error) {
	t, err := p.reg.Get(name)
	if err != nil {
		return p.layer.Get(name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if have, err := p.layer.Get(name); err == nil && have.Key == t.Key {
		return have, nil
	}
	lt, err := p.layer.AddTemplate(name, map[string]string{"/etc/airlock-build": t.Key + "\n"}, t.Env)
	if err != nil {
		return nil, err
	}
	lt.Key, lt.MemoryMiB, lt.VCPUs, lt.DefaultTTLSeconds = t.Key, t.MemoryMiB, t.VCPUs, t.DefaultTTLSeconds
	return lt, nil
}

func (p pulled) List() ([]*template.Template, error) { return p.layer.List() }
