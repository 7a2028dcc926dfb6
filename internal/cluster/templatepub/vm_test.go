package templatepub_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/blobs"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/cluster/pgstore"
	"github.com/airlock-dev/airlock/internal/cluster/templatepub"
	"github.com/airlock-dev/airlock/internal/cluster/templatesync"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
	"github.com/airlock-dev/airlock/internal/template"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// reports records what a syncer reported, build by build.
type reports struct {
	mu   sync.Mutex
	last map[string]nodewire.BuildReport
	all  []string
}

func (r *reports) report(_ context.Context, rep nodewire.BuildReport) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last[rep.Build] = rep
	r.all = append(r.all, rep.State)
	return nil
}

func (r *reports) state(build string) nodewire.BuildReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[build]
}

// TestPulledTemplateRestoresVM: a template baked on "node A" (its own
// registry and image cache) is published to a blob store and PostgreSQL,
// pulled by "node B" (another state directory, its registry empty) and a
// real VM is restored on B from the pulled files: the manifest's root
// image is B's own copy, Registry.Open verifies every checksum, and the
// file the bake wrote is there in the clone.
func TestPulledTemplateRestoresVM(t *testing.T) {
	regA := vmtest.Registry(t) // node A's bake of test-tiny
	h := vmtest.Host(t)
	ctx := vmtest.Context(t)
	st, err := pgstore.Open(ctx, clustertest.Database(t), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bs, err := blobs.Open("file://"+t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pub, err := templatepub.Publish(ctx, regA, vmtest.TemplateName, bs, st)
	if err != nil {
		t.Fatal(err)
	}
	if pub.Build.HostClass != template.HostClassOf(h) {
		t.Fatalf("build of host class %s, this host is %s", pub.Build.HostClass, template.HostClassOf(h))
	}
	cur, err := st.CurrentBuilds(ctx)
	if err != nil || len(cur) != 1 {
		t.Fatalf("current builds: %v %v", cur, err)
	}

	nodeB := t.TempDir()
	regB, err := template.NewRegistry(filepath.Join(nodeB, "templates"))
	if err != nil {
		t.Fatal(err)
	}
	rep := &reports{last: map[string]nodewire.BuildReport{}}
	s := templatesync.New(templatesync.Config{Registry: regB, Blobs: bs, Report: rep.report})
	s.Offer(ctx, []nodewire.Build{templatepub.Offer(cur[0])})
	s.Wait()
	pulled := time.Since(start)
	if got := rep.state(pub.Build.BuildID); got.State != nodewire.BuildReady {
		t.Fatalf("node B reported %+v, want ready", got)
	}
	t.Logf("publish %d bytes %.2f s; published and pulled on node B in %.2f s", pub.Uploaded, pub.Took.Seconds(), pulled.Seconds())

	a, _ := regA.Get(vmtest.TemplateName)
	b, err := regB.Open(h, vmtest.TemplateName)
	if err != nil {
		t.Fatalf("open the pulled template: %v", err)
	}
	if b.Key != a.Key || !strings.HasPrefix(b.RootImage, regB.Root()) || b.RootImage == a.RootImage {
		t.Fatalf("pulled bake %s with root %s; node A's is %s with root %s", b.Key, b.RootImage, a.Key, a.RootImage)
	}

	stB, err := store.Open(filepath.Join(nodeB, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer stB.Close()
	m, err := sandbox.New(ctx, sandbox.Config{Host: h, Templates: regB, Store: stB})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	restore := time.Now()
	info, err := m.Create(ctx, sandbox.CreateRequest{Tenant: "acme", Template: vmtest.TemplateName})
	if err != nil {
		t.Fatalf("create on node B: %v", err)
	}
	took := time.Since(restore)
	var out, errb bytes.Buffer
	res, err := m.Exec(ctx, "acme", info.ID, guest.ExecOptions{Shell: "cat /etc/airlock/baked-marker", Timeout: time.Minute}, &out, &errb)
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(out.String()) != "written during the bake" {
		t.Fatalf("exec in the restored clone: %v %+v %q %q", err, res, out.String(), errb.String())
	}
	t.Logf("restored %s on node B from pulled blobs in %s", info.ID, took.Round(time.Millisecond))
	if err := m.Kill(ctx, "acme", info.ID); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(regB.Root(), vmtest.TemplateName)); len(entries) != 2 {
		t.Errorf("node B's registry holds %d entries for the template, want the bake and current", len(entries))
	}
}
