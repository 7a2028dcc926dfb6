package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// These tests cover the runner's own logic (ordering, limits, lines,
// validation of what comes back) against memSandboxes, an in-memory
// stand-in for the platform; the e2e tests run every job through real
// sandboxes.

type memSandboxes struct {
	mu      sync.Mutex
	created int
	killed  int
	probe   error                                       // Create fails with this (an egress self-check failing)
	tool    func(files map[string][]byte) (int, []byte) // exit code, result.json
	delay   func(doc []byte) time.Duration
	opts    []CreateOptions // every Create's options, in order
}

func (m *memSandboxes) Create(_ context.Context, o CreateOptions) (Sandbox, error) {
	if m.probe != nil {
		return nil, m.probe
	}
	m.mu.Lock()
	m.created++
	m.opts = append(m.opts, o)
	m.mu.Unlock()
	return &memSandbox{m: m, files: map[string][]byte{}}, nil
}

type memSandbox struct {
	m     *memSandboxes
	files map[string][]byte
}

func (s *memSandbox) ID() string { return "mem" }
func (s *memSandbox) Write(_ context.Context, p string, r io.Reader) error {
	b, err := io.ReadAll(r)
	s.files[p] = b
	return err
}
func (s *memSandbox) Exec(context.Context, []string, time.Duration) (ExecResult, error) {
	if s.m.delay != nil {
		time.Sleep(s.m.delay(s.files[guestInDir+"/document.pdf"]))
	}
	code, res := s.m.tool(s.files)
	if res != nil {
		s.files[guestResult] = res
	}
	return ExecResult{ExitCode: code}, nil
}
func (s *memSandbox) Read(ctx context.Context, p string, max int64) ([]byte, error) {
	var b bytes.Buffer
	_, err := s.ReadTo(ctx, p, &b, max)
	return b.Bytes(), err
}
func (s *memSandbox) ReadTo(_ context.Context, p string, w io.Writer, max int64) (int64, error) {
	b, ok := s.files[p]
	if !ok {
		return 0, errdefs.NotFound("%s", p)
	}
	if int64(len(b)) > max {
		return 0, errdefs.ResourceExhausted("%s too large", p)
	}
	n, err := w.Write(b)
	return int64(n), err
}
func (s *memSandbox) Kill(context.Context) error {
	s.m.mu.Lock()
	s.m.killed++
	s.m.mu.Unlock()
	return nil
}

// echoJob runs the tool as "echo" and reports the result's pages.
type echoJob struct{ finalized []string }

func (j *echoJob) Name() string         { return "echo" }
func (j *echoJob) Extensions() []string { return []string{".pdf"} }
func (j *echoJob) Templates() []string  { return []string{"t"} }
func (j *echoJob) Process(ctx context.Context, s Sandboxes, d Doc) Outcome {
	env, t, lerr := RunTool(ctx, s, ToolRun{Template: "t", Job: "echo", Doc: d, Timeout: time.Minute})
	o := Outcome{Timings: t, Err: lerr, Fields: map[string]string{"id": d.ID}}
	if env != nil {
		o.Pages = env.Pages
		if env.Error != nil {
			o.Err = &LineError{Code: env.Error.Code, Message: env.Error.Message}
		}
	}
	return o
}
func (j *echoJob) Finalize(_ context.Context, d Doc, _ *Outcome) {
	j.finalized = append(j.finalized, filepath.Base(d.Path))
}
func (j *echoJob) Human(d Doc, o Outcome) string { return d.Path }

func envelope(t *testing.T, env docs.Envelope) []byte {
	t.Helper()
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeDocs(t *testing.T, names ...string) []Doc {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	ds, err := Expand(paths, []string{".pdf"})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestBatchOrderAndLines: documents finish out of order, lines and
// Finalize come in input order, every sandbox is killed, and every line
// carries the common fields.
func TestBatchOrderAndLines(t *testing.T) {
	ds := writeDocs(t, "a.pdf", "b.pdf", "c.pdf", "d.pdf")
	ok := envelope(t, docs.Envelope{Version: 1, Job: "echo", OK: true, Pages: 3, TimingsMS: map[string]int64{}})
	m := &memSandboxes{
		tool:  func(map[string][]byte) (int, []byte) { return 0, ok },
		delay: func(doc []byte) time.Duration { return time.Duration(5-len(doc)) * 20 * time.Millisecond },
	}
	job := &echoJob{}
	var out bytes.Buffer
	sum, err := (&Batch{Job: job, Sandboxes: m, Concurrency: 4, JSON: &out}).Run(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(job.finalized, ",") != "a.pdf,b.pdf,c.pdf,d.pdf" {
		t.Errorf("finalized in %v, want input order", job.finalized)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || sum.OK != 4 || m.created != 4 || m.killed != 4 {
		t.Fatalf("%d lines, summary %+v, created %d, killed %d", len(lines), sum, m.created, m.killed)
	}
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if filepath.Base(v["file"].(string)) != filepath.Base(ds[i].Path) || v["ok"] != true || v["error"] != nil ||
			v["pages"].(float64) != 3 || v["timings_ms"] == nil || v["id"] != ds[i].ID || len(ds[i].ID) != 16 {
			t.Errorf("line %d: %s", i, l)
		}
	}
}

// TestBatchClassifiesFailures: what the platform or the guest does wrong
// becomes a line with a code, and the batch goes on.
func TestBatchClassifiesFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m        *memSandboxes
		maxBytes int64
		want     string
	}{
		{"egress self-check fails", &memSandboxes{probe: errdefs.EgressOpen("egress self-check failed: tcp-public")}, 0, CodeEgressOpen},
		{"sandbox unavailable", &memSandboxes{probe: errdefs.Unavailable("no")}, 0, CodeSandbox},
		{"document over the limit", &memSandboxes{tool: func(map[string][]byte) (int, []byte) {
			return 0, []byte(`{"version":1,"job":"echo","ok":true,"error":null,"pages":1,"ocr_pages":0,"timings_ms":{},"result":null}`)
		}}, 1, docs.CodeTooLarge},
		{"tool exits without a result", &memSandboxes{tool: func(map[string][]byte) (int, []byte) { return 1, nil }}, 0, docs.CodeInternal},
		{"result for another job", &memSandboxes{tool: func(map[string][]byte) (int, []byte) {
			return 0, []byte(`{"version":1,"job":"other","ok":true,"error":null,"pages":1,"ocr_pages":0,"timings_ms":{},"result":null}`)
		}}, 0, CodeInvalidResult},
		{"result with an unknown field", &memSandboxes{tool: func(map[string][]byte) (int, []byte) {
			return 0, []byte(`{"version":1,"job":"echo","ok":true,"error":null,"pages":1,"ocr_pages":0,"timings_ms":{},"result":null,"approved":true}`)
		}}, 0, CodeInvalidResult},
		{"result says ok and carries an error", &memSandboxes{tool: func(map[string][]byte) (int, []byte) {
			return 0, []byte(`{"version":1,"job":"echo","ok":true,"error":{"code":"unreadable","message":"x"},"pages":1,"ocr_pages":0,"timings_ms":{},"result":null}`)
		}}, 0, CodeInvalidResult},
		{"result with an unknown code", &memSandboxes{tool: func(map[string][]byte) (int, []byte) {
			return 0, []byte(`{"version":1,"job":"echo","ok":false,"error":{"code":"pwned","message":"x"},"pages":1,"ocr_pages":0,"timings_ms":{},"result":null}`)
		}}, 0, CodeInvalidResult},
		{"a classified guest error passes through", &memSandboxes{tool: func(map[string][]byte) (int, []byte) {
			return 0, []byte(`{"version":1,"job":"echo","ok":false,"error":{"code":"encrypted","message":"needs a password"},"pages":0,"ocr_pages":0,"timings_ms":{},"result":null}`)
		}}, 0, docs.CodeEncrypted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := writeDocs(t, "a.pdf", "b.pdf")
			var out bytes.Buffer
			sum, err := (&Batch{Job: &echoJob{}, Sandboxes: tc.m, JSON: &out, MaxBytes: tc.maxBytes}).Run(context.Background(), ds)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 2 || sum.Failed < 1 {
				t.Fatalf("lines %q, summary %+v", lines, sum)
			}
			var l struct {
				OK    bool       `json:"ok"`
				Error *LineError `json:"error"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &l); err != nil {
				t.Fatal(err)
			}
			if l.OK || l.Error == nil || l.Error.Code != tc.want {
				t.Errorf("line %s; want error code %s", lines[len(lines)-1], tc.want)
			}
			if tc.m.created != tc.m.killed {
				t.Errorf("created %d sandboxes, killed %d", tc.m.created, tc.m.killed)
			}
		})
	}
}

// TestBatchCancelled: a cancelled batch still answers every document.
func TestBatchCancelled(t *testing.T) {
	ds := writeDocs(t, "a.pdf", "b.pdf", "c.pdf")
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int32
	ok := envelope(t, docs.Envelope{Version: 1, Job: "echo", OK: true, TimingsMS: map[string]int64{}})
	m := &memSandboxes{tool: func(map[string][]byte) (int, []byte) {
		if started.Add(1) == 1 {
			cancel()
		}
		return 0, ok
	}}
	var out bytes.Buffer
	if _, err := (&Batch{Job: &echoJob{}, Sandboxes: m, Concurrency: 1, JSON: &out}).Run(ctx, ds); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Errorf("%d lines after a cancel, want one per document", n)
	}
}

// warmingSandboxes can be prewarmed, and fails to when broken is set.
type warmingSandboxes struct {
	*memSandboxes
	warmed []string
	uses   []int
	broken error
}

func (w *warmingSandboxes) Prewarm(_ context.Context, template string, uses int) error {
	w.warmed = append(w.warmed, template)
	w.uses = append(w.uses, uses)
	return w.broken
}

// TestBatchPrewarms: sandboxes that can be prewarmed are, for the job's
// templates, before the first document; a template that cannot be used
// fails the batch once, with no document started.
func TestBatchPrewarms(t *testing.T) {
	ds := writeDocs(t, "a.pdf", "b.pdf")
	ok := envelope(t, docs.Envelope{Version: 1, Job: "echo", OK: true, TimingsMS: map[string]int64{}})
	w := &warmingSandboxes{memSandboxes: &memSandboxes{tool: func(map[string][]byte) (int, []byte) { return 0, ok }}}
	var human bytes.Buffer
	sum, err := (&Batch{Job: &echoJob{}, Sandboxes: w, Human: &human}).Run(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(w.warmed, ",") != "t" || sum.OK != 2 || sum.Warmup <= 0 {
		t.Errorf("warmed %v, ok %d, warm-up %s; want [t], 2, > 0", w.warmed, sum.OK, sum.Warmup)
	}
	if len(w.uses) != 1 || w.uses[0] != 2 {
		t.Errorf("prewarmed for %v sandboxes, want [2]: one per document", w.uses)
	}
	if !strings.Contains(human.String(), "sandboxes warmed in") {
		t.Errorf("summary does not give the warm-up:\n%s", human.String())
	}

	w = &warmingSandboxes{memSandboxes: &memSandboxes{}, broken: errdefs.FailedPrecondition("template \"t\" was baked for another kernel")}
	var out bytes.Buffer
	_, err = (&Batch{Job: &echoJob{}, Sandboxes: w, JSON: &out}).Run(context.Background(), ds)
	if err == nil || !strings.Contains(err.Error(), "another kernel") || !errdefs.IsFailedPrecondition(err) {
		t.Errorf("Run = %v, want the template's failed_precondition", err)
	}
	if w.created != 0 || out.Len() != 0 {
		t.Errorf("%d sandboxes created and %q written after the warm-up failed", w.created, out.String())
	}
}

// TestBatchPrewarmsPerSandbox: a job that makes two sandboxes per
// document (redaction and its verification) has two readied per document.
func TestBatchPrewarmsPerSandbox(t *testing.T) {
	ds := writeDocs(t, "a.pdf", "b.pdf", "c.pdf")
	w := &warmingSandboxes{memSandboxes: &memSandboxes{}, broken: errdefs.Unavailable("stop before any document")}
	(&Batch{Job: &Redact{}, Sandboxes: w}).Run(context.Background(), ds)
	if len(w.uses) != 1 || w.uses[0] != 6 {
		t.Errorf("a redaction batch of 3 prewarmed for %v sandboxes, want [6]", w.uses)
	}
}

func TestGuestName(t *testing.T) {
	for in, want := range map[string]string{
		"/x/Smith divorce.PDF": "document.pdf", "a.tar.gz": "document.gz", "noext": "document",
		"evil.p$f": "document", "x.toolongext": "document", "../../etc/passwd": "document",
	} {
		if got := GuestName(in); got != want {
			t.Errorf("GuestName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.pdf", "a.PDF", "c.txt", ".hidden.pdf", "sub/d.pdf", ".git/e.pdf"} {
		p := filepath.Join(dir, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	ds, err := Expand([]string{dir, filepath.Join(dir, "c.txt")}, []string{".pdf"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, strings.TrimPrefix(d.Path, dir+"/"))
	}
	if strings.Join(got, ",") != "a.PDF,b.pdf,sub/d.pdf,c.txt" {
		t.Errorf("Expand = %v", got)
	}
	if _, err := Expand([]string{filepath.Join(dir, "missing")}, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Expand of a missing path: %v", err)
	}
}

func TestHostCanariesSeeUTF16(t *testing.T) {
	dir := t.TempDir()
	le := []byte{0xFF, 0xFE}
	for _, r := range "note: Zebulon Quartermaine" {
		le = append(le, byte(r), 0)
	}
	p := filepath.Join(dir, "out.txt")
	os.WriteFile(p, le, 0o644)
	j := &Redact{Canaries: []string{"zebulon quartermaine", "absent-canary"}}
	if got := j.hostCanaries(p, "text"); len(got) != 1 || got[0] != 0 {
		t.Errorf("hostCanaries on UTF-16 = %v, want [0]", got)
	}
}

// TestDocOpen: a document given by an opener (bytes a caller sent, a file
// under an os.Root) is hashed, size-checked and uploaded from the opener;
// Path only names it, and no host file of that name is read.
func TestDocOpen(t *testing.T) {
	body := []byte("%PDF-1.7 sent as bytes")
	opens := 0
	open := func() (io.ReadCloser, error) {
		opens++
		return io.NopCloser(bytes.NewReader(body)), nil
	}
	var uploaded []byte
	m := &memSandboxes{tool: func(files map[string][]byte) (int, []byte) {
		uploaded = files[guestInDir+"/document.pdf"]
		return 0, envelope(t, docs.Envelope{Job: "echo", OK: true, Pages: 1, Result: json.RawMessage(`{}`)})
	}}
	var got Doc
	b := &Batch{Job: &echoJob{}, Sandboxes: m, Collect: func(d Doc, _ Outcome) { got = d }}
	ds := []Doc{{Path: "/nonexistent/contract.pdf", Open: open}}
	if _, err := b.Run(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(uploaded, body) {
		t.Errorf("uploaded %q, want the opener's bytes", uploaded)
	}
	if opens != 2 {
		t.Errorf("opened %d times, want 2 (hash, upload)", opens)
	}
	if got.Size != int64(len(body)) || len(got.ID) != 16 {
		t.Errorf("doc %+v: want size %d and a 16-digit id", got, len(body))
	}

	b.MaxBytes = 4
	var o Outcome
	b.Collect = func(_ Doc, out Outcome) { o = out }
	if _, err := b.Run(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	if o.Err == nil || o.Err.Code != docs.CodeTooLarge {
		t.Errorf("over MaxBytes from an opener: %+v, want too_large", o.Err)
	}
}
