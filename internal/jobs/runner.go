package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/docs"
)

// Doc is one input document as the host sees it: a path to stream bytes
// from, never parsed here.
type Doc struct {
	Path string // as given (or found under a given directory)
	// Open, when set, gives the document's bytes instead of opening Path,
	// which then only names the document (its extension, a report's
	// title): for documents that are not a plain host file, such as bytes
	// a caller sent, or a file opened through an os.Root so that a symlink
	// cannot lead out of an allowed directory. It is called once per read
	// of the document (hashing, upload), each time from the start.
	Open  func() (io.ReadCloser, error)
	Index int // position in the batch, from 0
	Size  int64
	// ID is the first 16 hex digits of the file's SHA-256: what audit
	// records and sandbox metadata name the document by, so an auditor can
	// ask "what touched this file" without the log holding its name.
	ID string
}

// Outcome is a job's answer for one document. The runner adds the common
// NDJSON fields (file, ok, error, pages, ocr_pages, timings_ms); Fields is
// the job's own, merged after them.
type Outcome struct {
	Err      *LineError
	Pages    int
	OCRPages int
	// Risks are what the document carries (docs.Risk* names: scripts,
	// attachments, a polyglot), as the guest found them.
	Risks []string
	// OCRLang and PageMS are how scanned pages were read: the models,
	// and each page's OCR time (0 for text pages).
	OCRLang string
	PageMS  []int64
	Timings Timings
	Fields  any
	// Tally are the counters this document adds to the batch summary
	// ("MATCH": 7, ...).
	Tally map[string]int
}

// Job is one document pipeline.
type Job interface {
	// Name is the job's name ("review").
	Name() string
	// Extensions are the file extensions taken from directories given as
	// inputs (files named explicitly are always taken).
	Extensions() []string
	// Templates are the templates the job's sandboxes are made from.
	Templates() []string
	// Process runs the document through its sandbox(es). It is called
	// concurrently for different documents and must not panic.
	Process(ctx context.Context, sbxs Sandboxes, doc Doc) Outcome
	// Finalize runs on each outcome in input order, one at a time, before
	// the line is written: where a decision depends on earlier documents
	// (duplicate invoices) it is made here.
	Finalize(ctx context.Context, doc Doc, o *Outcome)
	// Human is the one-line terminal rendering of a finished document.
	Human(doc Doc, o Outcome) string
}

// Batch runs a job over documents.
type Batch struct {
	Job         Job
	Sandboxes   Sandboxes
	Concurrency int       // documents in flight (default 2)
	JSON        io.Writer // NDJSON lines, in input order (nil: none)
	Human       io.Writer // a line per document and the summary (nil: none)
	Progress    io.Writer // a live progress line (nil: none); meant for a terminal
	MaxBytes    int64     // larger documents fail too_large before a sandbox is made (default 256 MiB)
	// Collect, if set, sees every outcome in input order after Finalize
	// (evals read the results without re-parsing lines).
	Collect func(Doc, Outcome)
}

// Summary is what a batch did.
type Summary struct {
	Documents int
	OK        int
	Failed    int
	Errors    map[string]int // by code
	Tally     map[string]int
	Elapsed   time.Duration // from the first document started to the last finished
	Warmup    time.Duration // before that: sandboxes warmed in this process (see Prewarmer)
	Timings   Timings       // summed over documents
}

// DocsPerMinute is the batch's throughput.
func (s Summary) DocsPerMinute() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Documents) / s.Elapsed.Minutes()
}

// SandboxShare is the platform's share of the summed document time
// (create + upload + download + destroy over the total).
func (s Summary) SandboxShare() float64 {
	total := s.Timings.Sandbox() + s.Timings.Tool
	if total <= 0 {
		return 0
	}
	return float64(s.Timings.Sandbox()) / float64(total)
}

// Expand turns the command line's paths into documents: files as given,
// directories walked for the job's extensions (sorted, hidden entries
// skipped). A path that does not exist is an error.
func Expand(paths []string, exts []string) ([]Doc, error) {
	var out []Doc
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !fi.IsDir() {
			out = append(out, Doc{Path: p})
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && hasExt(d.Name(), exts) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		sort.Strings(found)
		for _, f := range found {
			out = append(out, Doc{Path: f})
		}
	}
	for i := range out {
		out[i].Index = i
	}
	return out, nil
}

func hasExt(name string, exts []string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range exts {
		if ext == e {
			return true
		}
	}
	return false
}

// Run processes every document and writes the lines and the summary. It
// returns the summary; an error only for a failure of the batch itself
// (writing output).
func (b *Batch) Run(ctx context.Context, ds []Doc) (Summary, error) {
	conc := b.Concurrency
	if conc <= 0 {
		conc = 2
	}
	warmup, err := b.prewarm(ctx, len(ds))
	if err != nil {
		return Summary{}, err
	}
	began := time.Now()
	results := make([]chan Outcome, len(ds))
	for i := range results {
		results[i] = make(chan Outcome, 1)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(conc, max(len(ds), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] <- b.process(ctx, &ds[i])
			}
		}()
	}
	go func() {
		defer close(work)
		for i := range ds {
			select {
			case work <- i:
			case <-ctx.Done():
				for j := i; j < len(ds); j++ {
					results[j] <- Outcome{Err: lineErr(CodeSandbox, "batch cancelled before this document started")}
				}
				return
			}
		}
	}()
	sum := Summary{Documents: len(ds), Errors: map[string]int{}, Tally: map[string]int{}, Warmup: warmup}
	prog := newProgress(b.Progress, b.Job.Name(), len(ds))
	var werr error
	for i := range ds {
		o := <-results[i]
		b.Job.Finalize(ctx, ds[i], &o)
		if b.Collect != nil {
			b.Collect(ds[i], o)
		}
		sum.add(o)
		prog.update(sum)
		if err := b.emit(ds[i], o); err != nil && werr == nil {
			werr = err
		}
	}
	wg.Wait()
	sum.Elapsed = time.Since(began)
	prog.done()
	if b.Human != nil {
		PrintSummary(b.Human, b.Job.Name(), sum)
	}
	return sum, werr
}

// Prewarmer is implemented by Sandboxes that can get a template's
// sandboxes ready before a batch starts: a manager in this process starts
// with an empty warm pool, and without this the first documents of every
// batch would wait for restores. A daemon's pools are warm already.
type Prewarmer interface {
	// Prewarm returns once creates from template will not wait for a
	// restore, or with the error a create would get (template not baked,
	// or baked for another kernel). uses is how many sandboxes of template
	// the batch will create: no more are made ready than that.
	Prewarm(ctx context.Context, template string, uses int) error
}

// MultiSandboxJob is implemented by a job that makes more than one
// sandbox of its template per document (redaction: the redactor's and the
// independent verifier's). Other jobs make one.
type MultiSandboxJob interface {
	SandboxesPerDocument() int
}

// sandboxesPerDocument is how many sandboxes job makes per document.
func sandboxesPerDocument(job Job) int {
	if m, ok := job.(MultiSandboxJob); ok {
		return max(1, m.SandboxesPerDocument())
	}
	return 1
}

// prewarm readies the job's templates when the sandboxes can be
// prewarmed, so that a template that cannot be used fails the batch once,
// before any document, rather than every document in turn.
func (b *Batch) prewarm(ctx context.Context, docs int) (time.Duration, error) {
	w, ok := b.Sandboxes.(Prewarmer)
	if !ok {
		return 0, nil
	}
	start := time.Now()
	uses := docs * sandboxesPerDocument(b.Job)
	for _, t := range b.Job.Templates() {
		if b.Progress != nil {
			fmt.Fprintf(b.Progress, "\r\x1b[K%s: warming %s sandboxes", b.Job.Name(), t)
		}
		if err := w.Prewarm(ctx, t, uses); err != nil {
			if b.Progress != nil {
				fmt.Fprint(b.Progress, "\r\x1b[K")
			}
			return 0, fmt.Errorf("%s: %s sandboxes: %w", b.Job.Name(), t, err)
		}
	}
	return time.Since(start), nil
}

func (s *Summary) add(o Outcome) {
	if o.Err != nil {
		s.Failed++
		s.Errors[o.Err.Code]++
	} else {
		s.OK++
	}
	for k, v := range o.Tally {
		s.Tally[k] += v
	}
	s.Timings.Add(o.Timings)
}

// process hashes and size-checks the document, then hands it to the job.
func (b *Batch) process(ctx context.Context, d *Doc) Outcome {
	maxBytes := b.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 256 << 20
	}
	id, size, err := fileID(*d, maxBytes)
	if err != nil {
		return Outcome{Err: asLineErr(err)}
	}
	d.ID, d.Size = id, size
	return b.Job.Process(ctx, b.Sandboxes, *d)
}

// open returns the document's bytes from the start.
func (d Doc) open() (io.ReadCloser, error) {
	if d.Open != nil {
		return d.Open()
	}
	return os.Open(d.Path)
}

// fileID hashes a document's bytes (never interpreting them) and refuses
// one over maxBytes before any sandbox is made.
func fileID(d Doc, maxBytes int64) (string, int64, error) {
	f, err := d.open()
	if err != nil {
		return "", 0, lineErr(docs.CodeUnreadable, "open: %v", err)
	}
	defer f.Close()
	if st, ok := f.(interface{ Stat() (fs.FileInfo, error) }); ok {
		fi, err := st.Stat()
		if err != nil {
			return "", 0, lineErr(docs.CodeUnreadable, "stat: %v", err)
		}
		if !fi.Mode().IsRegular() {
			return "", 0, lineErr(docs.CodeUnreadable, "not a regular file")
		}
		if fi.Size() > maxBytes {
			return "", 0, lineErr(docs.CodeTooLarge, "%d bytes, over the %d limit", fi.Size(), maxBytes)
		}
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxBytes+1))
	if err != nil {
		return "", 0, lineErr(docs.CodeUnreadable, "read: %v", err)
	}
	if n > maxBytes {
		return "", 0, lineErr(docs.CodeTooLarge, "grew past the %d limit while read", maxBytes)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], n, nil
}

// line is the common part of every NDJSON line.
type line struct {
	File      string           `json:"file"`
	OK        bool             `json:"ok"`
	Error     *LineError       `json:"error"`
	Pages     int              `json:"pages"`
	OCRPages  int              `json:"ocr_pages"`
	Risks     []string         `json:"risks"`
	OCRLang   string           `json:"ocr_lang,omitempty"`
	PageMS    []int64          `json:"page_ms,omitempty"`
	TimingsMS map[string]int64 `json:"timings_ms"`
}

func (b *Batch) emit(d Doc, o Outcome) error {
	if b.Human != nil {
		fmt.Fprintln(b.Human, b.Job.Human(d, o))
	}
	if b.JSON == nil {
		return nil
	}
	l, err := encodeLine(d, o)
	if err != nil {
		return err
	}
	_, err = b.JSON.Write(l)
	return err
}

// risksNote is what a human line adds for a document's risks: the
// original carries active content (the released output never does).
func risksNote(risks []string) string {
	if len(risks) == 0 {
		return ""
	}
	return "  RISKS in the original: " + strings.Join(risks, ", ")
}

func nonNilRisks(r []string) []string {
	if r == nil {
		return []string{}
	}
	return r
}

// encodeLine writes the common fields, then the job's, as one object.
func encodeLine(d Doc, o Outcome) ([]byte, error) {
	common, err := json.Marshal(line{File: d.Path, OK: o.Err == nil, Error: o.Err, Pages: o.Pages,
		OCRPages: o.OCRPages, Risks: nonNilRisks(o.Risks), OCRLang: o.OCRLang, PageMS: o.PageMS, TimingsMS: o.Timings.MS()})
	if err != nil {
		return nil, err
	}
	out := common
	if o.Fields != nil {
		extra, err := json.Marshal(o.Fields)
		if err != nil {
			return nil, fmt.Errorf("encode the %s line: %w", d.Path, err)
		}
		if len(extra) > 2 && extra[0] == '{' {
			out = append(append(bytes.TrimSuffix(common, []byte("}")), ','), extra[1:]...)
		}
	}
	return append(out, '\n'), nil
}

// PrintSummary writes the human summary of a batch.
func PrintSummary(w io.Writer, job string, s Summary) {
	fmt.Fprintf(w, "\n%s: %d documents, %d ok, %d failed in %s (%.1f documents/min; sandbox share %.0f%%)\n",
		job, s.Documents, s.OK, s.Failed, s.Elapsed.Round(time.Millisecond), s.DocsPerMinute(), 100*s.SandboxShare())
	if s.Warmup > 0 {
		fmt.Fprintf(w, "  sandboxes warmed in %s before the first document\n", s.Warmup.Round(time.Millisecond))
	}
	for _, k := range sortedKeys(s.Tally) {
		fmt.Fprintf(w, "  %-28s %d\n", k, s.Tally[k])
	}
	for _, k := range sortedKeys(s.Errors) {
		fmt.Fprintf(w, "  error %-22s %d\n", k, s.Errors[k])
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
