//go:build unix

package hidden

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// RenderConfig configures the ghostscript runner.
type RenderConfig struct {
	GS        string        // gs binary; "" = "gs" on PATH
	DPI       int           // 0 = 100
	Timeout   time.Duration // per gs run; 0 = 30s
	MaxPixels int           // per rendered page; 0 = 30 million
	TempDir   string        // "" = os.TempDir()
}

func (c RenderConfig) withDefaults() RenderConfig {
	if c.GS == "" {
		c.GS = "gs"
	}
	if c.DPI <= 0 {
		c.DPI = 100
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxPixels <= 0 {
		c.MaxPixels = 30_000_000
	}
	return c
}

// RenderPages renders pages first..last (1-based, inclusive) of the PDF
// twice, normally and with -dFILTERTEXT, and returns the pairs by page
// number. The PDF is hostile: gs runs with -dSAFER, in its own process
// group, and the whole group is killed when the timeout or ctx ends. The
// caller has already enforced page-count and page-size limits (package
// extract does so before any tool sees the file); MaxPixels is a second
// guard on what comes back.
func RenderPages(ctx context.Context, cfg RenderConfig, pdfPath string, first, last int) (map[int]*Render, error) {
	cfg = cfg.withDefaults()
	if first < 1 || last < first {
		return nil, fmt.Errorf("render pages %d..%d: bad range", first, last)
	}
	abs, err := filepath.Abs(pdfPath)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "inkcheck-")
	if err != nil {
		return nil, fmt.Errorf("render temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	out := make(map[int]*Render, last-first+1)
	for _, pass := range []struct {
		prefix string
		filter bool
	}{{"n", false}, {"t", true}} {
		if err := runGS(ctx, cfg, abs, filepath.Join(dir, pass.prefix+"%d.pgm"), first, last, pass.filter); err != nil {
			return nil, err
		}
	}
	for p := first; p <= last; p++ {
		r, err := loadPair(cfg, dir, p-first+1)
		if err != nil {
			return nil, fmt.Errorf("render page %d: %w", p, err)
		}
		out[p] = r
	}
	return out, nil
}

func loadPair(cfg RenderConfig, dir string, k int) (*Render, error) {
	n, err := readPGMFile(filepath.Join(dir, fmt.Sprintf("n%d.pgm", k)), cfg.MaxPixels)
	if err != nil {
		return nil, err
	}
	t, err := readPGMFile(filepath.Join(dir, fmt.Sprintf("t%d.pgm", k)), cfg.MaxPixels)
	if err != nil {
		return nil, err
	}
	if n.Bounds() != t.Bounds() {
		return nil, fmt.Errorf("renders differ in size: %v vs %v", n.Bounds(), t.Bounds())
	}
	return &Render{DPI: float64(cfg.DPI), Normal: n, NoText: t}, nil
}

func readPGMFile(path string, maxPixels int) (*image.Gray, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open render: %w", err)
	}
	defer f.Close()
	return ReadPGM(f, maxPixels)
}

// runGS runs one gs render pass. Anti-aliasing stays off so a glyph's
// pixels take its exact fill colour, which is what the ink comparison
// measures.
func runGS(ctx context.Context, cfg RenderConfig, pdf, outPattern string, first, last int, filterText bool) error {
	args := []string{
		// The media box, as pdftotext -bbox uses by default, so word boxes
		// and pixels share one origin.
		"-sDEVICE=pgmraw", fmt.Sprintf("-r%d", cfg.DPI),
		"-dTextAlphaBits=1", "-dGraphicsAlphaBits=1",
		fmt.Sprintf("-dFirstPage=%d", first), fmt.Sprintf("-dLastPage=%d", last),
		"-sOutputFile=" + outPattern}
	if filterText {
		args = append(args, "-dFILTERTEXT")
	}
	if err := gsRun(ctx, cfg, append(args, pdf), io.Discard); err != nil {
		return fmt.Errorf("gs render (filter text %v): %w", filterText, err)
	}
	return nil
}

// gsRun runs gs -dSAFER with args in its own process group, killed as a
// whole when the timeout or ctx ends; stdout goes to out.
func gsRun(ctx context.Context, cfg RenderConfig, args []string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	base := []string{"-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-dNOPROMPT"}
	cmd := exec.CommandContext(ctx, cfg.GS, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Negative pid: the whole group, so nothing gs started survives.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{buf: &stderr, max: 4096}
	cmd.Stdout = out
	err := cmd.Run()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("gs timed out after %v: %w", cfg.Timeout, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// limitedWriter keeps the first max bytes: enough to classify a failure,
// never a hostile document's flood of warnings.
type limitedWriter struct {
	buf *bytes.Buffer
	max int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
