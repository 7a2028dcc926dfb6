package templatesync_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/templatesync"
	"github.com/airlock-dev/airlock/internal/template"
)

// heldStore is a real blob directory whose Gets wait for release, and
// which counts the Gets in progress.
type heldStore struct {
	*blobs.Dir
	release chan struct{}
	now     atomic.Int32
	max     atomic.Int32
}

func (s *heldStore) Get(ctx context.Context, d string) (io.ReadCloser, int64, error) {
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for m := s.max.Load(); n > m && !s.max.CompareAndSwap(m, n); m = s.max.Load() {
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	return s.Dir.Get(ctx, d)
}

func put(t *testing.T, d *blobs.Dir, b []byte) string {
	t.Helper()
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	if err := d.Put(context.Background(), h, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	return h
}

// build stores three blobs of build i and returns it as offered.
func build(t *testing.T, d *blobs.Dir, i int) nodewire.Build {
	hp := template.HostParts{Kernel: "k", Initramfs: "i", QEMUVersion: "q", Accel: "tcg"}
	m := template.Manifest{Name: fmt.Sprintf("t%d", i), Key: fmt.Sprintf("%024x", i+1), Host: hp, MemoryMiB: 64, VCPUs: 1, DefaultTTLSeconds: 60,
		MemSHA256:       put(t, d, []byte(fmt.Sprintf("mem %d", i))),
		StateSHA256:     put(t, d, []byte(fmt.Sprintf("state %d", i))),
		RootImageSHA256: put(t, d, []byte(fmt.Sprintf("root %d", i)))}
	mj, _ := json.Marshal(m)
	return nodewire.Build{ID: m.Key, Name: m.Name, HostClass: template.HostClass(hp), Manifest: string(mj),
		MemSHA256: m.MemSHA256, StateSHA256: m.StateSHA256, RootSHA256: m.RootImageSHA256}
}

// TestAtMostTwoPulls: five builds offered at once are pulled two at a
// time, each once however often it is offered, and all end ready.
func TestAtMostTwoPulls(t *testing.T) {
	d, err := blobs.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &heldStore{Dir: d, release: make(chan struct{})}
	var builds []nodewire.Build
	for i := range 5 {
		builds = append(builds, build(t, d, i))
	}
	reg, err := template.NewRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	states := map[string][]string{}
	s := templatesync.New(templatesync.Config{Registry: reg, Blobs: store, Report: func(_ context.Context, r nodewire.BuildReport) error {
		mu.Lock()
		defer mu.Unlock()
		states[r.Build] = append(states[r.Build], r.State)
		return nil
	}})
	ctx := context.Background()
	s.Offer(ctx, builds)
	s.Offer(ctx, builds) // a second heartbeat while they pull: nothing new
	deadline := time.Now().Add(30 * time.Second)
	for store.now.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no two pulls started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(store.release)
	s.Wait()
	if got := store.max.Load(); got != 2 {
		t.Fatalf("%d downloads at once, want at most (and here exactly) 2", got)
	}
	s.Offer(ctx, builds) // held now: ready already reported, nothing pulled
	for _, b := range builds {
		if got := states[b.ID]; len(got) != 2 || got[0] != "pulling" || got[1] != "ready" {
			t.Errorf("build %s reported %v, want [pulling ready]", b.ID, got)
		}
		if !reg.Has(b.Name, b.ID) || reg.Current(b.Name) != b.ID {
			t.Errorf("build %s not held as current", b.ID)
		}
	}
}
