package apitest

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/store"
)

// Env is a running API server for a test: a store in a temp dir, the
// handler over a Backend, listening on a unix socket and on loopback TCP.
type Env struct {
	Store   *store.Store
	Metrics *metrics.Metrics
	Handler http.Handler
	Socket  string // unix socket path
	TCPURL  string // http://127.0.0.1:port
}

// Start serves be until the test ends. cfg's Backend, Store and Metrics are
// filled in when unset.
func Start(t testing.TB, be api.Backend, cfg api.Config) *Env {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Backend, cfg.Store = be, st
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	h := api.New(cfg)
	sock := filepath.Join(dir, "airlock.sock")
	ul, err := api.ListenUnix(sock, -1)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := api.ListenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = api.Serve(ctx, h, api.ServeOptions{Log: cfg.Logger}, ul, tl)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return &Env{Store: st, Metrics: cfg.Metrics, Handler: h, Socket: sock,
		TCPURL: "http://" + tl.Addr().(*net.TCPAddr).String()}
}

// Key creates an API key for tenant.
func (e *Env) Key(t testing.TB, tenant string) string {
	t.Helper()
	k, _, err := e.Store.CreateKey(context.Background(), tenant, "test")
	if err != nil {
		t.Fatal(err)
	}
	return k
}
