package sandbox_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// Archives go in and out through the machine layer, bounded, and are
// audited as archive_write/archive_read with counts and a path digest,
// never names or content.
func TestLifecycleArchive(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	ctx := context.Background()
	info := lcCreate(t, m, sandbox.CreateRequest{})

	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	for _, f := range []struct{ name, body string }{{"secret-name.txt", "secret text"}, {"d/e.txt", "e"}} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o640, Size: int64(len(f.body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(f.body))
	}
	tw.Close()
	st, err := m.WriteArchive(ctx, lcTenant, info.ID, "/job/in", bytes.NewReader(in.Bytes()), 1<<20)
	if err != nil || st.Entries != 2 || st.Bytes != 12 {
		t.Fatalf("WriteArchive: %+v, %v", st, err)
	}
	if out := lcSh(t, m, info.ID, "cat job/in/d/e.txt"); out != "e" {
		t.Errorf("unpacked file reads %q", out)
	}
	if _, err := m.WriteArchive(ctx, lcTenant, info.ID, "/job/in", bytes.NewReader(in.Bytes()), 5); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Errorf("WriteArchive over its byte limit: %v, want resource_exhausted", err)
	}
	if _, err := m.WriteArchive(ctx, "other", info.ID, "/job", bytes.NewReader(in.Bytes()), 1<<20); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("another tenant's WriteArchive: %v, want not_found", err)
	}

	var out bytes.Buffer
	n, err := m.ReadArchive(ctx, lcTenant, info.ID, "/job/in", &out, 0)
	if err != nil || n != int64(out.Len()) {
		t.Fatalf("ReadArchive: %d, %v", n, err)
	}
	var names []string
	tr := tar.NewReader(&out)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
	if strings.Join(names, ",") != "in/,in/d/,in/d/e.txt,in/secret-name.txt" {
		t.Errorf("archive of /job/in holds %v", names)
	}
	out.Reset()
	if _, err := m.ReadArchive(ctx, lcTenant, info.ID, "/job/in", &out, 1024); !errors.Is(err, errdefs.ErrResourceExhausted) || out.Len() != 0 {
		t.Errorf("ReadArchive over its limit: %v with %d bytes written, want resource_exhausted and none", err, out.Len())
	}

	writes, reads := e.audit(t, info.ID, store.EventArchiveWrite), e.audit(t, info.ID, store.EventArchiveRead)
	if len(writes) != 2 || writes[0].Outcome != "ok" || writes[0].Bytes != 12 || writes[0].Detail["entries"] != "2" ||
		len(writes[0].Detail["path_hmac"]) != 32 || writes[1].Outcome != "resource_exhausted" {
		t.Errorf("archive_write records: %+v", writes)
	}
	if len(reads) != 2 || reads[0].Outcome != "ok" || reads[0].Bytes != n || reads[1].Outcome != "resource_exhausted" {
		t.Errorf("archive_read records: %+v", reads)
	}
	for _, r := range append(writes, reads...) {
		for k, v := range r.Detail {
			if strings.Contains(v, "secret") || strings.Contains(v, "/job") {
				t.Errorf("%s detail %s=%q names content or a path", r.Event, k, v)
			}
		}
	}
}

// blockingWriter says on entered that a Write began (the transfer holds
// its slot), then holds it until release is closed.
type blockingWriter struct{ entered, release chan struct{} }

func (w blockingWriter) Write(p []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default: // said already
	}
	<-w.release
	return len(p), nil
}

// A sandbox serves at most four archive transfers at once (60 concurrent
// downloads ran a guest out of memory); the fifth is refused with
// resource_exhausted, and slots come back as transfers end.
func TestArchiveTransfersPerSandboxAreBounded(t *testing.T) {
	e := newLCEnv(t)
	m := e.manager(t, sandbox.Config{})
	ctx := context.Background()
	info := lcCreate(t, m, sandbox.CreateRequest{})
	other := lcCreate(t, m, sandbox.CreateRequest{})
	lcSh(t, m, info.ID, "mkdir -p job/d && echo x > job/d/f")
	release := make(chan struct{})
	done := make(chan error, 4)
	for i := 0; i < 4; i++ {
		w := blockingWriter{entered: make(chan struct{}, 1), release: release}
		go func() {
			_, err := m.ReadArchive(ctx, lcTenant, info.ID, "/job/d", w, 0)
			done <- err
		}()
		// Each transfer holds its slot before the next starts.
		select {
		case <-w.entered:
		case err := <-done:
			t.Fatalf("transfer %d ended before writing: %v", i+1, err)
		}
	}
	if _, err := m.ReadArchive(ctx, lcTenant, info.ID, "/job/d", io.Discard, 0); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("a transfer while four run: %v, want resource_exhausted", err)
	}
	lcSh(t, m, other.ID, "mkdir -p job")
	if _, err := m.ReadArchive(ctx, lcTenant, other.ID, "/job", io.Discard, 0); err != nil {
		t.Errorf("another sandbox's transfer: %v", err)
	}
	close(release)
	for i := 0; i < 4; i++ {
		if err := <-done; err != nil {
			t.Errorf("held transfer: %v", err)
		}
	}
	if _, err := m.ReadArchive(ctx, lcTenant, info.ID, "/job/d", io.Discard, 0); err != nil {
		t.Errorf("a transfer after the others ended: %v", err)
	}
}
