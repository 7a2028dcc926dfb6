package multinode

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
	"github.com/airlock-dev/airlock/internal/cluster/nodewire"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// payload is n pseudo-random bytes from a seed, hashed as they are read.
type payload struct {
	rng  *rand.ChaCha8
	left int64
	h    hash.Hash
}

func newPayload(seed byte, n int64) *payload {
	var s [32]byte
	s[0] = seed
	return &payload{rng: rand.NewChaCha8(s), left: n, h: sha256.New()}
}

func (p *payload) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n, _ := p.rng.Read(b)
	p.left -= int64(n)
	p.h.Write(b[:n])
	return n, nil
}

func (p *payload) sum() string { return hex.EncodeToString(p.h.Sum(nil)) }

// peakRSS is a process's peak resident set (VmHWM) in MiB.
func peakRSS(t *testing.T, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// transfer uploads and downloads size bytes through sb, bit-exact, and
// returns the MiB/s of each.
func transfer(t *testing.T, sb *client.Sandbox, size int64, seed byte) (up, down float64) {
	ctx := context.Background()
	src := newPayload(seed, size)
	began := time.Now()
	n, err := sb.Files().Write(ctx, "/big.bin", io.Reader(struct{ io.Reader }{src})) // no declared length: streamed
	if err != nil || n != size {
		t.Fatalf("upload: %d bytes, %v", n, err)
	}
	up = float64(size) / (1 << 20) / time.Since(began).Seconds()
	began = time.Now()
	rc, err := sb.Files().Read(ctx, "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	got, err := io.Copy(h, rc)
	rc.Close()
	if err != nil || got != size {
		t.Fatalf("download: %d bytes, %v", got, err)
	}
	down = float64(size) / (1 << 20) / time.Since(began).Seconds()
	if hex.EncodeToString(h.Sum(nil)) != src.sum() {
		t.Fatal("downloaded bytes differ from uploaded ones")
	}
	if err := sb.Files().Remove(ctx, "/big.bin"); err != nil {
		t.Fatal(err)
	}
	return up, down
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// Every kind of call goes through the tier to the owning node and back:
// exec, exec/stream (events arrive as the process prints them), 256 MiB
// up and down bit-exact without the tier holding the body, an archive
// both ways, a background process followed to its end. The same transfer
// and creates straight to the node give what the tier costs.
func TestClusterRouting(t *testing.T) {
	skipShort(t)
	c := multiproc.StartCluster(t, multiproc.ClusterOptions{APIs: 2, Nodes: 4})
	ctx := context.Background()
	cl := c.Client(0)
	sb, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base", TTLSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Node == "" {
		t.Fatalf("create answer names no node: %+v", sb.SandboxInfo)
	}
	node := -1
	for i, n := range c.Nodes {
		if n.ID == sb.Node {
			node = i
		}
	}
	if got, err := cl.GetSandbox(ctx, sb.ID); err != nil || got.Node != sb.Node || got.State != "running" {
		t.Fatalf("get: %+v, %v", got, err)
	}

	res, err := sb.Exec(ctx, "cat etc/motd; echo err >&2")
	if err != nil || res.Stdout != "hello\n" || res.Stderr != "err\n" || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v", res, err)
	}

	// exec/stream: the first line arrives while the process runs. The
	// process waits until the test has seen that line and made a file; a
	// stream buffered whole would never deliver it, and the call would
	// end at its deadline instead.
	var first time.Time
	var once sync.Once
	released := make(chan error, 1)
	var out bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) {
		once.Do(func() {
			first = time.Now()
			go func() { _, err := cl.Sandbox(sb.ID).Exec(ctx, "touch stream-go"); released <- err }()
		})
		return out.Write(p)
	})
	began := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	sres, err := sb.ExecStream(sctx, client.ExecRequest{Cmd: "echo one; while [ ! -e stream-go ]; do sleep 0.05; done; echo two"}, w, io.Discard)
	cancel()
	ended := time.Now()
	if err != nil || sres.ExitCode != 0 || out.String() != "one\ntwo\n" {
		t.Fatalf("exec stream (an error at the deadline means the tier buffered it): %+v, %q, %v", sres, out.String(), err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	t.Logf("ROUTING exec/stream: first event after %s, end after %s (the end waits for the first)", first.Sub(began).Round(time.Millisecond), ended.Sub(began).Round(time.Millisecond))

	// 256 MiB up and down, through the tier and straight to the node.
	const size = 256 << 20
	api := c.APIs[0].PID()
	before := peakRSS(t, api)
	tierUp, tierDown := transfer(t, sb, size, 1)
	after := peakRSS(t, api)
	direct := c.NodeClient(node).Sandbox(sb.ID)
	nodeUp, nodeDown := transfer(t, direct, size, 2)
	t.Logf("ROUTING 256 MiB bit-exact: via tier up %.0f MiB/s down %.0f MiB/s; direct up %.0f MiB/s down %.0f MiB/s; ratio up %.2f down %.2f",
		tierUp, tierDown, nodeUp, nodeDown, tierUp/nodeUp, tierDown/nodeDown)
	t.Logf("ROUTING API process peak RSS %.0f MiB before, %.0f MiB after 2 x 256 MiB through it", before, after)
	if after-before > 64 {
		t.Errorf("the API process's peak RSS grew %.0f MiB over a 256 MiB transfer: it buffers bodies", after-before)
	}

	// An archive both ways.
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, f := range []string{"a.txt", "d/b.txt"} {
		_ = tw.WriteHeader(&tar.Header{Name: f, Mode: 0o644, Size: int64(len(f))})
		_, _ = tw.Write([]byte(f))
	}
	tw.Close()
	if ar, err := sb.Files().WriteArchive(ctx, "/job", bytes.NewReader(tb.Bytes())); err != nil || ar.Bytes != int64(len("a.txt")+len("d/b.txt")) {
		t.Fatalf("write archive: %+v, %v", ar, err)
	}
	var back bytes.Buffer
	if _, err := sb.Files().ReadArchive(ctx, "/job", &back); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	tr := tar.NewReader(&back)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names[h.Name] = true
	}
	if !names["job/a.txt"] || !names["job/d/b.txt"] {
		t.Fatalf("archive read back: %v", names)
	}

	// A background process, followed through the tier.
	p, err := sb.StartProcess(ctx, client.ProcessRequest{Cmd: "for i in 1 2 3 4 5; do echo line$i; sleep 0.1; done"})
	if err != nil {
		t.Fatal(err)
	}
	var follow bytes.Buffer
	if _, _, err := p.Follow(ctx, client.Stdout, 0, &follow); err != nil || follow.String() != "line1\nline2\nline3\nline4\nline5\n" {
		t.Fatalf("follow: %q, %v", follow.String(), err)
	}
	if err := p.Wait(ctx, 10*time.Second); err != nil || p.ExitCode == nil || *p.ExitCode != 0 {
		t.Fatalf("wait: %+v, %v", p.ProcessInfo, err)
	}
	kids, err := sb.Fork(ctx, 2)
	if err != nil || len(kids) != 2 || kids[0].Node != sb.Node {
		t.Fatalf("fork: %v", err)
	}
	for _, k := range kids {
		if r, err := k.Exec(ctx, "cat etc/motd"); err != nil || r.Stdout != "hello\n" {
			t.Fatalf("exec in fork child: %+v %v", r, err)
		}
		if err := k.Kill(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Create latency: through the tier, and straight to the node.
	const n = 40
	var viaTier, viaNode []time.Duration
	for range n {
		began := time.Now()
		s, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base"})
		if err != nil {
			t.Fatal(err)
		}
		viaTier = append(viaTier, time.Since(began))
		if err := s.Kill(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		id := sandbox.NewSandboxID()
		began := time.Now()
		s, err := c.NodeClient(node, nodewire.HeaderSandboxID, id).CreateSandbox(ctx, client.CreateOptions{Template: "base"})
		if err != nil {
			t.Fatal(err)
		}
		viaNode = append(viaNode, time.Since(began))
		_ = s.Kill(ctx) // no row owns it: the node's orphan check may have killed it already
	}
	t.Logf("ROUTING create latency over %d: via tier p50 %s p99 %s; direct p50 %s p99 %s", n,
		percentile(viaTier, 0.5).Round(time.Millisecond/10), percentile(viaTier, 0.99).Round(time.Millisecond/10),
		percentile(viaNode, 0.5).Round(time.Millisecond/10), percentile(viaNode, 0.99).Round(time.Millisecond/10))
	if err := sb.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
