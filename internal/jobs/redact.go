package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf16"

	redactresult "github.com/airlock-dev/airlock/internal/docs/redact/result"
	verifyresult "github.com/airlock-dev/airlock/internal/docs/verify/result"
)

// RedactTemplate is the template redaction and its verification run in.
const RedactTemplate = "pii-redact"

// Redact redacts documents and releases an output only when an
// independent verifier, run on the output in a second fresh sandbox, finds
// nothing, no canary string shows up in it, and nothing about the run is
// doubtful. Everything else is held: written under HeldDir for a person to
// look at, never under OutDir.
type Redact struct {
	OutDir, HeldDir string
	Policy          []byte // "" = the default policy
	PolicyName      string
	Canaries        []string
	Salt            []byte // for the hash operator, fresh per batch
	Template        string
	Timeout         time.Duration
	OCR             OCROptions // how scanned pages are read
	MaxPages        int
	Metadata        map[string]string
}

// RedactLine is the job's part of an NDJSON line.
type RedactLine struct {
	Output      string                 `json:"output"` // the released file; "" unless released
	Held        bool                   `json:"held"`
	HeldAt      string                 `json:"held_at,omitempty"` // where a held output was put
	HoldReasons []string               `json:"hold_reasons"`
	Verified    bool                   `json:"verified"` // the verifier ran and found nothing
	Counts      map[string]int         `json:"counts"`
	Findings    []redactresult.Finding `json:"findings"`
}

// Hold reasons (stable codes, with a detail after ": ").
const (
	holdVerifier   = "verifier_found"
	holdCanary     = "canary_found"
	holdUnverified = "not_verified"
	holdMismatch   = "output_mismatch"
	holdTooFast    = "suspiciously_fast"
	holdUnchanged  = "output_unchanged"
)

func (j *Redact) Name() string { return "redact" }
func (j *Redact) Extensions() []string {
	return []string{".txt", ".json", ".csv", ".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff"}
}

// Templates implements Job: redaction and verification use the same one.
func (j *Redact) Templates() []string { return []string{j.template()} }

// SandboxesPerDocument implements MultiSandboxJob: the redactor's and the
// verifier's.
func (j *Redact) SandboxesPerDocument() int { return 2 }

func (j *Redact) template() string {
	if j.Template != "" {
		return j.Template
	}
	return RedactTemplate
}

// Process implements Job: redact in one sandbox, verify in another, then
// release or hold.
func (j *Redact) Process(ctx context.Context, sbxs Sandboxes, doc Doc) Outcome {
	line := RedactLine{HoldReasons: []string{}, Findings: []redactresult.Finding{}, Counts: map[string]int{}}
	o := Outcome{Fields: line}
	staged, res, lerr := j.redact(ctx, sbxs, doc, &o)
	if staged != "" {
		defer os.Remove(staged) // moved away on release or hold
	}
	if lerr != nil {
		o.Err = lerr
		return o
	}
	line.Findings, line.Counts = res.Findings, res.Counts
	reasons := j.checkOutput(ctx, sbxs, doc, staged, res, &o)
	line.Verified = len(reasons) == 0
	line.HoldReasons = reasons
	dest, err := j.place(doc, staged, reasons)
	if err != nil {
		o.Err = lineErr(CodeSandbox, "place the output: %v", err)
		o.Fields = line
		return o
	}
	if len(reasons) == 0 {
		line.Output = dest
	} else {
		line.Held, line.HeldAt = true, dest
	}
	o.Fields = line
	o.Tally = map[string]int{"released": b2i(!line.Held), "held": b2i(line.Held)}
	codes := map[string]bool{}
	for _, r := range reasons {
		code, _, _ := strings.Cut(r, ": ")
		codes[code] = true
	}
	for c := range codes {
		o.Tally["held: "+c]++
	}
	for t, n := range res.Counts {
		o.Tally["found "+t] += n
	}
	return o
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// redact runs the redactor and stages its output on the host, checked
// against what the result claims about it.
func (j *Redact) redact(ctx context.Context, sbxs Sandboxes, doc Doc, o *Outcome) (string, *redactresult.Result, *LineError) {
	if err := os.MkdirAll(j.HeldDir, 0o700); err != nil {
		return "", nil, lineErr(CodeSandbox, "held dir: %v", err)
	}
	name := GuestName(doc.Path)
	f, err := os.CreateTemp(j.HeldDir, ".staging-*"+filepath.Ext(name))
	if err != nil {
		return "", nil, lineErr(CodeSandbox, "stage: %v", err)
	}
	defer f.Close()
	run := ToolRun{Template: j.template(), Job: "redact", Doc: doc, Timeout: j.Timeout, MaxPages: j.MaxPages, OCR: j.OCR,
		MaxResult: redactresult.MaxResultBytes, Metadata: docMetadata(j.Metadata, "redact", doc),
		Args:    []string{"--output", "/job/out/" + name},
		Outputs: []Output{{GuestPath: "/job/out/" + name, Dst: f, Max: 64<<20 + 8*doc.Size}}}
	if len(j.Policy) > 0 {
		pn := "policy" + strings.ToLower(filepath.Ext(j.PolicyName))
		run.Inputs = append(run.Inputs, Input{Name: pn, Data: j.Policy})
		run.Args = append(run.Args, "--policy", guestInDir+"/"+pn)
	}
	if len(j.Salt) > 0 {
		run.Args = append(run.Args, "--salt", hex.EncodeToString(j.Salt))
	}
	env, t, lerr := RunTool(ctx, sbxs, run)
	o.Timings.Add(t)
	if env != nil {
		o.Pages, o.OCRPages, o.Risks, o.OCRLang, o.PageMS = env.Pages, env.OCRPages, env.Risks, env.OCRLang, env.PageMS
	}
	switch {
	case lerr != nil:
		return f.Name(), nil, lerr
	case env.Error != nil:
		return f.Name(), nil, &LineError{Code: env.Error.Code, Message: env.Error.Message}
	}
	res, err := redactresult.DecodeBytes(env.Result)
	if err != nil {
		return f.Name(), nil, lineErr(CodeInvalidResult, "%v", err)
	}
	return f.Name(), res, nil
}

// checkOutput returns the reasons to hold the staged output (none means
// release): the output must be what the result says, must not be the input
// unchanged, must not have come back impossibly fast, must carry no canary
// string, and must pass the independent verifier in its own sandbox.
func (j *Redact) checkOutput(ctx context.Context, sbxs Sandboxes, doc Doc, staged string, res *redactresult.Result, o *Outcome) []string {
	var reasons []string
	sum, size, err := sha256File(staged)
	if err != nil || sum != res.Output.SHA256 || size != res.Output.Bytes {
		return []string{holdMismatch + ": the output is not the file the result describes"}
	}
	if in, _, err := sha256Doc(doc); err == nil && in == sum && res.InputFormat != "text" && res.InputFormat != "json" && res.InputFormat != "csv" {
		reasons = append(reasons, holdUnchanged+": a page document came back byte for byte (it was not rebuilt)")
	}
	// Reading and rewriting cannot go faster than this, even for a file
	// with nothing to redact; a tool that did is not the tool we think.
	if floor := time.Duration(float64(doc.Size) / (100 << 20) * float64(time.Second)); o.Timings.Tool < floor {
		reasons = append(reasons, fmt.Sprintf("%s: %d bytes redacted in %s", holdTooFast, doc.Size, o.Timings.Tool))
	}
	if hits := j.hostCanaries(staged, res.Output.Format); len(hits) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s: %d canary string(s) in the output bytes", holdCanary, len(hits)))
	}
	return append(reasons, j.verify(ctx, sbxs, doc, staged, o)...)
}

// hostCanaries is defence in depth for text outputs: a plain byte search
// for each canary as written (the verifier does the real, rendering-aware
// search in the guest). The host does not interpret the file.
func (j *Redact) hostCanaries(path, format string) []int {
	if len(j.Canaries) == 0 || (format != "text" && format != "json" && format != "csv") {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	low := bytes.ToLower(utf16ToUTF8(b))
	var hits []int
	for i, c := range j.Canaries {
		if bytes.Contains(low, bytes.ToLower([]byte(c))) {
			hits = append(hits, i)
		}
	}
	return hits
}

// verify runs the independent verifier on the staged output in a fresh
// sandbox. Any doubt is a reason to hold.
func (j *Redact) verify(ctx context.Context, sbxs Sandboxes, doc Doc, staged string, o *Outcome) []string {
	canaries := []byte("[]")
	if len(j.Canaries) > 0 {
		canaries, _ = json.Marshal(j.Canaries)
	}
	run := ToolRun{Template: j.template(), Job: "verify", Doc: Doc{Path: staged}, Timeout: j.Timeout, MaxPages: j.MaxPages, OCR: j.OCR,
		MaxResult: verifyresult.MaxBytes, Metadata: docMetadata(j.Metadata, "verify", doc),
		Inputs: []Input{{Name: "canaries.json", Data: canaries}}, Args: []string{"--canaries", guestInDir + "/canaries.json"}}
	env, t, lerr := RunTool(ctx, sbxs, run)
	o.Timings.Add(t)
	switch {
	case lerr != nil:
		return []string{holdUnverified + ": the verifier did not run: " + lerr.Code}
	case env.Error != nil:
		return []string{holdUnverified + ": the verifier failed: " + env.Error.Code}
	}
	rep, err := verifyresult.Decode(bytes.NewReader(env.Result))
	if err != nil {
		return []string{holdUnverified + ": the verifier's report was refused"}
	}
	var reasons []string
	if len(rep.Canaries) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s: %d canary string(s) in the output", holdCanary, len(rep.Canaries)))
	}
	if rep.Verdict != verifyresult.Clean {
		for _, r := range rep.Reasons {
			reasons = append(reasons, holdVerifier+": "+r)
		}
	}
	return reasons
}

// place moves the staged output to OutDir (released) or HeldDir (held).
func (j *Redact) place(doc Doc, staged string, reasons []string) (string, error) {
	if len(reasons) == 0 {
		dest := filepath.Join(j.OutDir, filepath.Base(doc.Path))
		return dest, moveFile(staged, dest)
	}
	dir := filepath.Join(j.HeldDir, doc.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	dest := filepath.Join(dir, filepath.Base(doc.Path))
	if err := moveFile(staged, dest); err != nil {
		return "", err
	}
	why, _ := json.MarshalIndent(map[string]any{"file": doc.Path, "hold_reasons": reasons}, "", "  ")
	return dest, os.WriteFile(filepath.Join(dir, "held.json"), append(why, '\n'), 0o600)
}

// moveFile renames src to dst, copying across file systems.
func moveFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func sha256File(path string) (string, int64, error) {
	return sha256Doc(Doc{Path: path})
}

func sha256Doc(d Doc) (string, int64, error) {
	f, err := d.open()
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// Finalize implements Job.
func (j *Redact) Finalize(context.Context, Doc, *Outcome) {}

// Human implements Job.
func (j *Redact) Human(doc Doc, o Outcome) string {
	if o.Err != nil {
		return fmt.Sprintf("%s  FAILED  %s: %s", doc.Path, o.Err.Code, o.Err.Message)
	}
	l := o.Fields.(RedactLine)
	n := 0
	for _, c := range l.Counts {
		n += c
	}
	if l.Held {
		return fmt.Sprintf("%s  HELD (%s)  %d findings  -> %s%s", doc.Path, strings.Join(l.HoldReasons, "; "), n, l.HeldAt, risksNote(o.Risks))
	}
	return fmt.Sprintf("%s  released  %d findings  -> %s%s", doc.Path, n, l.Output, risksNote(o.Risks))
}

// utf16ToUTF8 decodes a BOM-marked UTF-16 file (the redactor writes UTF-16
// input back as UTF-16), so the byte search sees its characters; any other
// bytes come back as they are.
func utf16ToUTF8(b []byte) []byte {
	if len(b) < 2 || len(b)%2 != 0 {
		return b
	}
	var be bool
	switch {
	case b[0] == 0xFE && b[1] == 0xFF:
		be = true
	case b[0] == 0xFF && b[1] == 0xFE:
	default:
		return b
	}
	u := make([]uint16, 0, len(b)/2-1)
	for i := 2; i+1 < len(b); i += 2 {
		if be {
			u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			u = append(u, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	return []byte(string(utf16.Decode(u)))
}
