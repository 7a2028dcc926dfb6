//go:build linux

package agent

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airlock-dev/airlock/internal/guest/agentpb"
)

// writeStream is the host's side of one WriteArchive: a header, then the
// stream in small chunks.
type writeStream struct {
	grpc.ServerStream
	msgs []*agentpb.WriteArchiveRequest
	resp *agentpb.WriteArchiveResponse
}

func (w *writeStream) Recv() (*agentpb.WriteArchiveRequest, error) {
	if len(w.msgs) == 0 {
		return nil, io.EOF
	}
	m := w.msgs[0]
	w.msgs = w.msgs[1:]
	return m, nil
}

func (w *writeStream) SendAndClose(r *agentpb.WriteArchiveResponse) error { w.resp = r; return nil }

func newWriteStream(dir string, maxBytes int64, stream []byte) *writeStream {
	w := &writeStream{msgs: []*agentpb.WriteArchiveRequest{{Msg: &agentpb.WriteArchiveRequest_Header{
		Header: &agentpb.WriteArchiveHeader{Path: dir, MaxBytes: maxBytes}}}}}
	for len(stream) > 0 {
		n := min(len(stream), 100)
		w.msgs = append(w.msgs, &agentpb.WriteArchiveRequest{Msg: &agentpb.WriteArchiveRequest_Data{Data: stream[:n]}})
		stream = stream[n:]
	}
	return w
}

type readStream struct {
	grpc.ServerStream
	data bytes.Buffer
}

func (r *readStream) Send(m *agentpb.ReadArchiveResponse) error { r.data.Write(m.Data); return nil }

func oneFileTar(t *testing.T, name, body string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	tw.Close()
	buf.Write(make([]byte, 4096)) // what follows the end blocks is taken and dropped
	return buf.Bytes()
}

// TestArchiveHandlers: the agent's handlers put tarfs behind gRPC codes.
func TestArchiveHandlers(t *testing.T) {
	s := &Server{}
	dir := filepath.Join(t.TempDir(), "job", "in")
	w := newWriteStream(dir, 1<<20, oneFileTar(t, "a/b.txt", "hello"))
	if err := s.WriteArchive(w); err != nil || w.resp.GetEntries() != 1 || w.resp.GetBytes() != 5 {
		t.Fatalf("WriteArchive: %v, %v", w.resp, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a", "b.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("unpacked file: %q %v", b, err)
	}
	for name, tc := range map[string]struct {
		w    *writeStream
		code codes.Code
	}{
		"escape":        {newWriteStream(dir, 1<<20, oneFileTar(t, "../../x", "x")), codes.InvalidArgument},
		"over max":      {newWriteStream(dir, 3, oneFileTar(t, "big", "four")), codes.ResourceExhausted},
		"relative path": {newWriteStream("job", 1<<20, oneFileTar(t, "x", "x")), codes.InvalidArgument},
		"no header":     {&writeStream{msgs: []*agentpb.WriteArchiveRequest{{Msg: &agentpb.WriteArchiveRequest_Data{Data: []byte("x")}}}}, codes.InvalidArgument},
	} {
		if err := s.WriteArchive(tc.w); status.Code(err) != tc.code {
			t.Errorf("%s: %v, want %v", name, err, tc.code)
		}
	}

	var r readStream
	if err := s.ReadArchive(&agentpb.ReadArchiveRequest{Path: dir}, &r); err != nil {
		t.Fatalf("ReadArchive: %v", err)
	}
	tr := tar.NewReader(&r.data)
	var names []string
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name)
	}
	if len(names) != 3 || names[0] != "in/" || names[2] != "in/a/b.txt" {
		t.Errorf("ReadArchive entries %v", names)
	}
	for name, req := range map[string]*agentpb.ReadArchiveRequest{
		"over max": {Path: dir, MaxBytes: 1024},
		"proc":     {Path: "/proc/self"},
		"root":     {Path: "/"},
		"missing":  {Path: filepath.Join(dir, "none")},
	} {
		var r readStream
		err := s.ReadArchive(req, &r)
		want := map[string]codes.Code{"over max": codes.ResourceExhausted, "proc": codes.InvalidArgument,
			"root": codes.InvalidArgument, "missing": codes.NotFound}[name]
		if status.Code(err) != want || r.data.Len() != 0 {
			t.Errorf("ReadArchive %s: %v with %d bytes sent, want %v and none", name, err, r.data.Len(), want)
		}
	}
}
