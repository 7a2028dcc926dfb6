package templatesync

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/template"
)

// Config configures a Syncer. Registry, Blobs and Report are required.
type Config struct {
	Registry *template.Registry
	Blobs    blobs.Store
	// Report tells the tier a build's state on this node.
	Report func(context.Context, nodewire.BuildReport) error
	// MaxPulls is how many builds are pulled at once; 0: 2.
	MaxPulls int
	// RetryAfter: a failed pull is tried again this long after; 0: 60 s.
	RetryAfter time.Duration
	Log        *slog.Logger
}

// Syncer pulls builds into a registry. Offer starts pulls; Wait waits for
// them.
type Syncer struct {
	cfg Config        // immutable after New
	sem chan struct{} // MaxPulls tokens
	wg  sync.WaitGroup

	mu       sync.Mutex
	active   map[string]bool      // guarded by mu; builds being pulled
	failedAt map[string]time.Time // guarded by mu; when a build's last pull failed
	reported map[string]string    // guarded by mu; the state last reported per build
}

// New returns a Syncer.
func New(cfg Config) *Syncer {
	if cfg.MaxPulls <= 0 {
		cfg.MaxPulls = 2
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Syncer{cfg: cfg, sem: make(chan struct{}, cfg.MaxPulls), active: map[string]bool{},
		failedAt: map[string]time.Time{}, reported: map[string]string{}}
}

// Offer starts pulling each of builds not held, not being pulled and not
// failed within RetryAfter; a held build is made current and reported
// ready (once). The pulls run under ctx.
func (s *Syncer) Offer(ctx context.Context, builds []nodewire.Build) {
	for _, b := range builds {
		if s.cfg.Registry.Has(b.Name, b.ID) {
			s.holdReady(ctx, b)
			continue
		}
		s.mu.Lock()
		start := !s.active[b.ID] && time.Since(s.failedAt[b.ID]) >= s.cfg.RetryAfter
		if start {
			s.active[b.ID] = true
		}
		s.mu.Unlock()
		if start {
			s.wg.Add(1)
			go s.pull(ctx, b)
		}
	}
}

// Wait waits for the pulls started.
func (s *Syncer) Wait() { s.wg.Wait() }

// holdReady points the template at a held build and reports it ready if
// it was not already.
func (s *Syncer) holdReady(ctx context.Context, b nodewire.Build) {
	s.mu.Lock()
	done := s.reported[b.ID] == nodewire.BuildReady
	s.mu.Unlock()
	if done {
		return
	}
	if s.cfg.Registry.Current(b.Name) != b.ID {
		if err := s.cfg.Registry.SetCurrent(b.Name, b.ID); err != nil {
			s.cfg.Log.Warn("template sync: current link", "build", b.ID, "err", err)
			return
		}
	}
	s.report(ctx, b.ID, nodewire.BuildReady, "")
}

func (s *Syncer) report(ctx context.Context, build, state, detail string) {
	if err := s.cfg.Report(ctx, nodewire.BuildReport{Build: build, State: state, Detail: detail}); err != nil {
		s.cfg.Log.Warn("template sync: report", "build", build, "state", state, "err", err)
		return
	}
	s.mu.Lock()
	s.reported[build] = state
	s.mu.Unlock()
}

// pull pulls b, reporting pulling, then ready or failed.
func (s *Syncer) pull(ctx context.Context, b nodewire.Build) {
	defer s.wg.Done()
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		s.finish(b.ID, false)
		return
	}
	defer func() { <-s.sem }()
	s.report(ctx, b.ID, nodewire.BuildPulling, "")
	start := time.Now()
	n, err := s.fetch(ctx, b)
	if err != nil {
		s.finish(b.ID, false)
		if ctx.Err() != nil {
			return // the node stops; the next start pulls again
		}
		s.cfg.Log.Warn("template sync: pull refused", "build", b.ID, "template", b.Name, "err", err)
		s.report(ctx, b.ID, nodewire.BuildFailed, err.Error())
		return
	}
	s.finish(b.ID, true)
	s.cfg.Log.Info("template sync: pulled", "build", b.ID, "template", b.Name, "bytes", n, "seconds", time.Since(start).Seconds())
	s.report(ctx, b.ID, nodewire.BuildReady, "")
}

func (s *Syncer) finish(build string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.active, build)
	if ok {
		delete(s.failedAt, build)
	} else {
		s.failedAt[build] = time.Now()
	}
}

// fetch downloads, verifies and publishes b; the bytes it downloaded.
func (s *Syncer) fetch(ctx context.Context, b nodewire.Build) (int64, error) {
	m, err := manifestOf(b)
	if err != nil {
		return 0, err
	}
	im, err := s.cfg.Registry.BeginImport(m.Name, m.Key)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, f := range []struct{ what, digest, path string }{
		{"memory file", b.MemSHA256, im.MemPath()}, {"device state", b.StateSHA256, im.StatePath()}, {"root image", b.RootSHA256, im.RootPath()},
	} {
		n, err := s.download(ctx, f.digest, f.path)
		total += n
		if err != nil {
			im.Abort()
			return total, fmt.Errorf("%s %s: %w", f.what, f.digest, err)
		}
	}
	if err := im.Commit(m); err != nil {
		im.Abort()
		return total, err
	}
	return total, nil
}

// manifestOf decodes b's manifest and checks it names b: its key, name,
// host class and digests.
func manifestOf(b nodewire.Build) (template.Manifest, error) {
	var m template.Manifest
	if err := json.Unmarshal([]byte(b.Manifest), &m); err != nil {
		return m, fmt.Errorf("manifest: %w", err)
	}
	switch {
	case m.Key != b.ID || m.Name != b.Name:
		return m, fmt.Errorf("manifest names %s/%s, the build is %s/%s", m.Name, m.Key, b.Name, b.ID)
	case template.HostClass(m.Host) != b.HostClass:
		return m, fmt.Errorf("manifest's host parts are of class %s, the build says %s", template.HostClass(m.Host), b.HostClass)
	case m.MemSHA256 != b.MemSHA256 || m.StateSHA256 != b.StateSHA256 || m.RootImageSHA256 != b.RootSHA256:
		return m, fmt.Errorf("manifest's digests differ from the build's")
	}
	return m, nil
}

// download streams blob digest into path, hashing as it goes, and fsyncs
// it; a blob that does not hash to digest is an error.
func (s *Syncer) download(ctx context.Context, digest, path string) (int64, error) {
	rc, size, err := s.cfg.Blobs.Get(ctx, digest)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), rc)
	if err != nil {
		return n, fmt.Errorf("download cut off after %d bytes: %w", n, err)
	}
	if size >= 0 && n != size {
		return n, fmt.Errorf("download cut off: %d of %d bytes", n, size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return n, fmt.Errorf("content hashes to %s: refused", got)
	}
	if err := f.Sync(); err != nil {
		return n, err
	}
	return n, f.Close()
}
