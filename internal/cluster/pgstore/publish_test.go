package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// TestPublishBuild: a publish inserts the build, makes it current and
// notifies in one transaction; the same build again only notifies; other
// content under its id is refused and changes nothing.
func TestPublishBuild(t *testing.T) {
	s, _ := open(t, Options{})
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	notes := make(chan struct{}, 8)
	listening := make(chan error, 1)
	go func() { listening <- s.ListenTemplates(lctx, func() { notes <- struct{}{} }) }()
	sum := strings.Repeat("a", 64)
	b := Build{BuildID: "k1", Name: "base", HostClass: "hc-1", Manifest: `{}`, MemSHA256: sum, StateSHA256: sum, RootSHA256: sum,
		SizeBytes: 3, MemoryMiB: 256, VCPUs: 1, DefaultTTL: 5 * time.Minute}
	// The listener may not have run LISTEN yet: publish until one
	// notification arrives.
	deadline := time.After(30 * time.Second)
	for got := false; !got; {
		must(t, s.PublishBuild(ctx, b))
		select {
		case <-notes:
			got = true
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no notification")
		}
	}
	cur, err := s.CurrentBuilds(ctx)
	must(t, err)
	if len(cur) != 1 || cur[0].BuildID != "k1" || cur[0].HostClass != "hc-1" {
		t.Fatalf("current builds %+v", cur)
	}
	other := b
	other.RootSHA256 = strings.Repeat("b", 64)
	if err := s.PublishBuild(ctx, other); !errors.Is(err, errdefs.ErrAlreadyExists) {
		t.Fatalf("other content under k1: %v", err)
	}
	b2 := b
	b2.BuildID = "k2"
	must(t, s.PublishBuild(ctx, b2))
	if c, _ := s.CurrentBuild(ctx, "base"); c.BuildID != "k2" {
		t.Fatalf("current build %s, want k2", c.BuildID)
	}
	_, err = s.RegisterNode(ctx, spec("n1", "s1", 0))
	must(t, err)
	must(t, s.SetNodeBuild(ctx, "n1", "k1", "ready", ""))
	must(t, s.SetNodeBuild(ctx, "n1", "k2", "failed", "memory file: content hashes to x"))
	nbs, err := s.NodeBuilds(ctx)
	must(t, err)
	if len(nbs) != 1 || nbs[0].Build != "k2" || nbs[0].State != "failed" {
		t.Fatalf("node builds of current builds: %+v", nbs)
	}
	cancel()
	if err := <-listening; err != nil {
		t.Fatalf("listen: %v", err)
	}
}
