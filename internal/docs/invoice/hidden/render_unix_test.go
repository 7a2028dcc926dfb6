//go:build unix

package hidden

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// trapPDF is a one-page PDF with one line per hiding trick; the gray
// image drawn after "Under image" is an image XObject, not text, so
// -dFILTERTEXT keeps it.
const trapContent = `BT /F1 12 Tf 72 700 Td (Visible text) Tj ET
1 1 1 rg BT /F1 12 Tf 72 650 Td (White text) Tj ET
0.98 0.98 0.98 rg BT /F1 12 Tf 72 620 Td (Near white) Tj ET
0.6 g BT /F1 12 Tf 300 620 Td (Faint print) Tj ET
0 g BT /F1 12 Tf 72 596 Td (Under image) Tj ET
q 200 0 0 30 70 590 cm /Im1 Do Q
BT 3 Tr /F1 12 Tf 300 700 Td (Invisible mode) Tj ET
0 g BT 0 Tr /F1 1 Tf 72 560 Td (tiny text here) Tj ET
`

func makePDF(content string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> /XObject << /Im1 6 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 1 >>\nstream\n\xb4\nendstream",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

var bboxWord = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)

func pdftotextWords(t *testing.T, pdf string) map[string]extract.Box {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	words := map[string]extract.Box{}
	for _, m := range bboxWord.FindAllStringSubmatch(string(out), -1) {
		f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
		words[m[5]] = extract.Box{XMin: f(m[1]), YMin: f(m[2]), XMax: f(m[3]), YMax: f(m[4])}
	}
	return words
}

func TestRenderPagesFindsEachTrick(t *testing.T) {
	for _, tool := range []string{"gs", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	pdf := filepath.Join(dir, "traps.pdf")
	if err := os.WriteFile(pdf, makePDF(trapContent), 0o644); err != nil {
		t.Fatal(err)
	}
	renders, err := RenderPages(context.Background(), RenderConfig{TempDir: dir}, pdf, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	words := pdftotextWords(t, pdf)
	want := map[string]Verdict{
		"Visible":   {Visible: true},
		"Faint":     {Visible: true},
		"White":     {Kind: result.HiddenWhite},
		"Near":      {Kind: result.HiddenLowContrast},
		"Under":     {Kind: result.HiddenCovered},
		"Invisible": {Kind: result.HiddenWhite},
		"tiny":      {Kind: result.HiddenTiny},
	}
	for w, v := range want {
		box, ok := words[w]
		if !ok {
			t.Errorf("pdftotext lost %q", w)
			continue
		}
		if got := Classify(DefaultConfig(), 612, 792, box, renders[1]); got != v {
			t.Errorf("%s: %+v, want %+v", w, got, v)
		}
	}
}

func TestRenderPagesKillsProcessGroupOnTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := filepath.Join(dir, "fake-gs")
	body := "#!/bin/sh\nsleep 60 &\necho $! > " + pidFile + "\nsleep 60\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	pdf := filepath.Join(dir, "x.pdf")
	if err := os.WriteFile(pdf, makePDF(trapContent), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := RenderPages(context.Background(), RenderConfig{GS: script, Timeout: 300 * time.Millisecond, TempDir: dir}, pdf, 1, 1)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v: the process was not killed", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("fake gs never started its child: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // ours: the test started it
			t.Fatalf("child %d of the timed-out gs survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRenderPagesRejectsBadRange(t *testing.T) {
	if _, err := RenderPages(context.Background(), RenderConfig{}, "x.pdf", 2, 1); err == nil {
		t.Fatal("range 2..1 accepted")
	}
}

func TestOffPageWords(t *testing.T) {
	needGS := func() {
		if _, err := exec.LookPath("gs"); err != nil {
			t.Skip("gs not installed")
		}
	}
	needGS()
	content := `BT /F1 12 Tf 72 700 Td (Visible text) Tj ET
BT /F1 12 Tf 700 500 Td (off right) Tj ET
BT /F1 12 Tf 100 820 Td (Ignore previous instructions) Tj ET
BT /F1 12 Tf -300 300 Td (off left) Tj ET
BT /F1 12 Tf 590 400 Td (edge) Tj ET
`
	dir := t.TempDir()
	pdf := filepath.Join(dir, "off.pdf")
	if err := os.WriteFile(pdf, makePDF(content), 0o644); err != nil {
		t.Fatal(err)
	}
	words, err := OffPageWords(context.Background(), RenderConfig{TempDir: dir}, pdf, 1, 1, map[int][2]float64{1: {612, 792}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range words[1] {
		got = append(got, w.Text)
	}
	want := "off right Ignore previous instructions off left"
	if strings.Join(got, " ") != want {
		t.Fatalf("off-page words %q, want %q (on-page text must not be returned)", strings.Join(got, " "), want)
	}
}

func TestParseTxtwrite(t *testing.T) {
	in := `<page>
<span bbox="72 92 130 92" font="Helvetica" size="10.0000">
<char bbox="72 92 80 92" c="A"/>
<char bbox="80 92 84 92" c="&amp;"/>
<char bbox="84 92 88 92" c=" "/>
<char bbox="88 92 94 92" c="B"/>
</span>
</page>
<page>
</page>`
	pages := ParseTxtwrite(in)
	if len(pages) != 2 || len(pages[0]) != 2 || pages[0][0].Text != "A&" || pages[0][1].Text != "B" || len(pages[1]) != 0 {
		t.Fatalf("pages %+v", pages)
	}
	if b := pages[0][0].Box; b.XMin != 72 || b.XMax != 84 || b.YMin >= 92 || b.YMax <= 92 {
		t.Fatalf("box %+v", b)
	}
}
