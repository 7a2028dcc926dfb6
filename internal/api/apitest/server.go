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

// Env is a running API server for a test: a store, the handler over a
// Backend, listening on a unix socket and on loopback TCP.
type Env struct {
	Store   *store.Store
	Metrics *metrics.Metrics
	Handler http.Handler
	Socket  string // unix socket path
	TCPURL  string // http://127.0.0.1:port
}

// OpenStore opens a store in a temporary directory, closed when the test
// ends.
func OpenStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Start serves be until the test ends. cfg's Store (a store of its own
// when unset: pass the backend's, as the daemon does, for its audit
// records to be served) and Metrics are filled in when unset.
func Start(t testing.TB, be api.Backend, cfg api.Config) *Env {
	t.Helper()
	dir := t.TempDir()
	st, _ := cfg.Store.(*store.Store)
	if st == nil {
		st = OpenStore(t)
	}
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

// StartLocal serves the real sandbox manager over local machines
// (LocalManager), with the API and the manager sharing one store as in
// the daemon; wrap, if given, wraps the manager (a Recorder, say).
func StartLocal(t testing.TB, cfg api.Config, wrap ...func(api.Backend) api.Backend) *Env {
	t.Helper()
	st := OpenStore(t)
	var be api.Backend = LocalManager(t, st)
	for _, w := range wrap {
		be = w(be)
	}
	cfg.Store = st
	return Start(t, be, cfg)
}
