// Command apiserver is a test-only airlock API server: the real
// internal/api handler over a real sandbox.Manager whose machines are
// internal/sandbox/localmachines (directories and host processes, no VMs,
// no isolation), with a store in a fresh temporary directory and one API
// key for each of two tenants. The Python SDK's unit tests
// (sdk/python/tests) start it so that they run against the daemon's own
// routes, validation and error codes instead of a hand-written fake.
//
// Usage: apiserver [-v] [-max-upload-bytes N]
//
// It listens on a unix socket and on a loopback TCP port, prints one JSON
// line on stdout:
//
//	{"url": "http://127.0.0.1:PORT", "socket": "unix:///.../api.sock",
//	 "keys": {"acme": "alk_...", "globex": "alk_..."}, "templates": ["base"]}
//
// and serves until its standard input closes (the test process ended),
// then kills every sandbox and removes the directory.
//
// Commands run by exec are host processes with the sandbox's directory as
// their working directory: this program must never run anything
// untrusted, and nothing but tests uses it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/sandbox/localmachines"
	"github.com/airlock-dev/airlock/internal/store"
)

// tenants get one key each, named in the JSON line.
var tenants = []string{"acme", "globex"}

// ready is the JSON line printed once the server listens.
type ready struct {
	URL       string            `json:"url"`
	Socket    string            `json:"socket"`
	Keys      map[string]string `json:"keys"`
	Templates []string          `json:"templates"`
}

func main() {
	maxUpload := flag.Int64("max-upload-bytes", 0, "largest single file upload (0: the API's default)")
	verbose := flag.Bool("v", false, "log failed requests and warnings to stderr")
	flag.Parse()
	if err := run(*maxUpload, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
}

func run(maxUpload int64, verbose bool) error {
	dir, err := os.MkdirTemp("", "airlock-apiserver-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(filepath.Join(dir, "airlock.db"))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	layer, err := localmachines.New(dir)
	if err != nil {
		return err
	}
	if _, err := layer.AddTemplate("base", map[string]string{"/etc/motd": "hello\n"}, map[string]string{"JOB": "test"}); err != nil {
		return fmt.Errorf("template: %w", err)
	}
	log := slog.New(slog.DiscardHandler)
	if verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	m := metrics.New()
	mgr, err := sandbox.New(context.Background(), sandbox.Config{Machines: layer, TemplateSource: layer,
		Store: st, Metrics: m, Logger: log, WarmPool: -1, MaxTTL: time.Hour, PauseDir: filepath.Join(dir, "paused")})
	if err != nil {
		return fmt.Errorf("start manager: %w", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		mgr.Shutdown(ctx)
	}()
	return serve(dir, st, api.New(api.Config{Backend: mgr, Store: st, Logger: log, Metrics: m, MaxUploadBytes: maxUpload}), log)
}

// serve listens, prints the ready line and serves until stdin closes.
func serve(dir string, st *store.Store, h http.Handler, log *slog.Logger) error {
	ctx := context.Background()
	r := ready{Keys: map[string]string{}, Templates: []string{"base"}}
	for _, t := range tenants {
		k, _, err := st.CreateKey(ctx, t, "apiserver")
		if err != nil {
			return fmt.Errorf("key for %s: %w", t, err)
		}
		r.Keys[t] = k
	}
	sock := filepath.Join(dir, "api.sock")
	ul, err := api.ListenUnix(sock, -1)
	if err != nil {
		return err
	}
	tl, err := api.ListenTCP("127.0.0.1:0")
	if err != nil {
		ul.Close()
		return err
	}
	r.URL, r.Socket = "http://"+tl.Addr().(*net.TCPAddr).String(), "unix://"+sock
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := fmt.Printf("%s\n", line); err != nil {
		return fmt.Errorf("print ready line: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return api.Serve(ctx, h, api.ServeOptions{Log: log}, ul, tl)
}
