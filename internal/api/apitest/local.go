package apitest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/sandbox/localmachines"
	"github.com/airlock-dev/airlock/internal/store"
)

// LocalManager is the real sandbox manager over local machines
// (internal/sandbox/localmachines: directories and process trees on this
// host, no isolation), with one template, "base", recording into st (nil:
// a store of its own). It is shut down when the test ends.
func LocalManager(t testing.TB, st *store.Store) *sandbox.Manager {
	t.Helper()
	dir := t.TempDir()
	if st == nil {
		st = OpenStore(t)
	}
	layer, err := localmachines.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := layer.AddTemplate("base", map[string]string{"/etc/motd": "hello\n"}, nil); err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.New(context.Background(), sandbox.Config{Machines: layer, TemplateSource: layer, Store: st, WarmPool: -1,
		PauseDir: filepath.Join(dir, "paused")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return m
}
