package daemon

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/nodeagent"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/template"
)

// ClusterOptions make the daemon a cluster node (`airlock serve
// --cluster-api`): Open starts a node agent (internal/cluster/nodeagent)
// over the manager and the store, and Close stops it before the manager.
// The node talks to the API tier only: it opens no database connection
// and holds no tenant key.
type ClusterOptions struct {
	// API is the API tier's internal listener, http://host:port.
	API string
	// TokenFile holds the cluster's join token.
	TokenFile string
	// NodeID names the node; Addr is the host:port the tier reaches the
	// node's API on.
	NodeID, Addr string
	Version      string
	// Capacity is what the node tells placement it can hold.
	Capacity nodewire.Capacity
	// Net: the node runs sandboxes with networking.
	Net bool
	// Blobs is the blob store URL the node pulls published templates
	// from (internal/cluster/blobs); "": it pulls none.
	Blobs string
}

// startAgent starts the node agent (with Cluster), running until Close.
func (d *Daemon) startAgent(o Options) error {
	c := o.Cluster
	tok, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return fmt.Errorf("cluster join token: %w", err)
	}
	token := strings.TrimSpace(string(tok))
	if len(token) < 16 {
		return errdefs.InvalidArgument("cluster join token in %s: want at least 16 characters", c.TokenFile)
	}
	cfg := nodeagent.Config{TierURL: c.API, JoinToken: token, NodeID: c.NodeID, Addr: c.Addr,
		Version: c.Version, StateDir: o.StateDir, Manager: d.Manager, Store: d.Store, Capacity: c.Capacity, Net: c.Net, Log: o.Log,
		HostClass: template.HostClassOf(d.Host)}
	if c.Blobs != "" {
		if cfg.Blobs, err = blobs.Open(c.Blobs, ""); err != nil {
			return err
		}
		cfg.Templates = d.Templates
	}
	a, err := nodeagent.New(cfg)
	if err != nil {
		return err
	}
	d.Agent = a
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.Run(ctx); err != nil && ctx.Err() == nil {
			o.Log.Error("cluster node agent stopped", "err", err)
		}
	}()
	d.cu.AddFunc(func() {
		cancel()
		wg.Wait()
	})
	return nil
}

// Handler returns what the daemon serves with cfg (whose Backend and
// Store are filled in): the single-host API over the manager and the
// store, or, for a cluster node, the node's API (the tier's assertions
// only; see internal/cluster/nodeagent).
func (d *Daemon) Handler(cfg api.Config) http.Handler {
	if d.Agent != nil {
		return d.Agent.Handler(cfg)
	}
	cfg.Backend, cfg.Store = d.Manager, d.Store
	return api.New(cfg)
}
