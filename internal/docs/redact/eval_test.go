package redact_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus/redactsim"

	"github.com/airlock-dev/airlock/internal/docs/redact"
	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/verify"
	"github.com/airlock-dev/airlock/internal/docs/verify/result"
	"github.com/airlock-dev/airlock/internal/docseval/redactcorpus"
	"github.com/airlock-dev/airlock/internal/docseval/redactworld"
)

// corpusSeed and corpusSize fix the corpus the targets are measured on.
const (
	corpusSeed = 20240611
	corpusSize = 40
)

// redactDoc runs the redactor on a corpus document in its format.
func redactDoc(r *redact.Redactor, d redactcorpus.Doc) (*redact.Output, error) {
	switch d.Format {
	case "json":
		return r.JSON([]byte(d.Text))
	case "csv":
		return r.CSV([]byte(d.Text))
	}
	return r.Text([]byte(d.Text))
}

// predictions runs the redactor on each document: text formats through
// the format's redactor, page documents through the page pipeline on the
// corpus's own word boxes (the real extraction is the pipeline harness's
// business).
func predictions(r *redact.Redactor, docs []redactcorpus.Doc) ([]redactcorpus.Prediction, error) {
	out := make([]redactcorpus.Prediction, len(docs))
	for i, d := range docs {
		if d.Page != nil {
			out[i].Findings = r.Pages(redactsim.Document(d.Page))
			continue
		}
		o, err := redactDoc(r, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		out[i].Findings = o.Findings
	}
	return out, nil
}

// TestCorpusTargets measures the detectors on the corpus (page documents
// on their synthetic word boxes) and holds them to the targets: recall 1.00 for the checksum- and
// format-backed types, 0.97 for names and addresses, precision 0.90.
func TestCorpusTargets(t *testing.T) {
	r, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seed, size := int64(corpusSeed), corpusSize
	if v := os.Getenv("REDACT_EVAL_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
		size = 200
	}
	docs := redactcorpus.Generate(seed, size)
	preds, err := predictions(r, docs)
	if err != nil {
		t.Fatal(err)
	}
	rep := redactcorpus.Score(redactcorpus.Truths(docs), preds)
	var b strings.Builder
	rep.Print(&b)
	t.Log("\n" + b.String())
	if os.Getenv("REDACT_EVAL_PRINT") != "" {
		fmt.Print(b.String())
	}
	for typ, s := range rep.Types {
		want := 0.97
		switch typ {
		case redactcorpus.SSN, redactcorpus.CreditCard, redactcorpus.IBAN, redactcorpus.BankRouting, redactcorpus.Email, redactcorpus.Phone:
			want = 1
		}
		if s.TruthSpans > 0 && s.Recall < want {
			t.Errorf("%s recall %.3f, want >= %.2f", typ, s.Recall, want)
		}
		if s.Predicted > 0 && s.Precision < 0.90 {
			t.Errorf("%s precision %.3f, want >= 0.90", typ, s.Precision)
		}
	}
}

// corpusRun is a corpus redacted in process and the verifier's verdict
// on each output (pages: the page as re-extraction would read it, the
// words under a box gone).
type corpusRun struct {
	rep         *redactcorpus.Report
	docs, held  int
	canaryLeaks int
	// falseHolds are documents held although nothing was left;
	// leakedReleased documents that would be released with a value left.
	falseHolds, leakedReleased int
	heldByKind                 map[string]int
	holdRules                  map[string]int
	// sabotage: each document redacted again with one of its types
	// switched off in turn; per type, the outputs that leaked and those
	// of them the verifier held.
	sabotageLeaked, sabotageHeld map[string]int
}

// verdict runs the verifier and the canary search on what a redaction
// of d with findings released: the output text, or the page as read
// without the boxed words.
func verdict(t *testing.T, r *redact.Redactor, d redactcorpus.Doc, fs []redact.Finding, canaries []string) (*result.Report, bool) {
	t.Helper()
	var rep *result.Report
	var text string
	if d.Page != nil {
		ext := unboxedWords(d, fs)
		rep = verify.CheckPages(ext)
		for _, p := range ext.Pages {
			text += p.Text() + "\n"
		}
	} else {
		out, err := redactDoc(r, d)
		if err != nil {
			t.Fatal(err)
		}
		text = string(out.Data)
		rep = verify.Check(text)
	}
	return rep, len(verify.FindCanaries(text, canaries)) > 0
}

// runCorpus redacts docs, scores them and runs the verifier and the
// canary search on every output, as the job's second sandbox would.
func runCorpus(t *testing.T, r *redact.Redactor, docs []redactcorpus.Doc, canaries []string) corpusRun {
	t.Helper()
	preds, err := predictions(r, docs)
	if err != nil {
		t.Fatal(err)
	}
	truths := redactcorpus.Truths(docs)
	run := corpusRun{rep: redactcorpus.Score(truths, preds), docs: len(docs), heldByKind: map[string]int{}, holdRules: map[string]int{},
		sabotageLeaked: map[string]int{}, sabotageHeld: map[string]int{}}
	for i, d := range docs {
		rep, leak := verdict(t, r, d, preds[i].Findings, canaries)
		one := redactcorpus.Score(truths[i:i+1], preds[i:i+1])
		complete := one.ValuesGone == one.Values
		held := rep.Verdict == result.Suspicious || leak
		if held && complete {
			run.falseHolds++
		}
		if !held && !complete {
			run.leakedReleased++
		}
		if held {
			run.held++
			run.heldByKind[truths[i].Kind()]++
			for _, f := range rep.Findings {
				run.holdRules[f.Type+"/"+f.Rule]++
			}
		}
		if leak {
			run.canaryLeaks++
		}
		run.sabotage(t, d, truths[i])
	}
	return run
}

// sabotage redacts d once per entity type it holds with that type
// switched off, and counts the outputs that leaked and were held.
func (c *corpusRun) sabotage(t *testing.T, d redactcorpus.Doc, tr redactcorpus.Truth) {
	t.Helper()
	types := map[string]bool{}
	for _, s := range d.Spans {
		types[s.Type] = true
	}
	if d.Page != nil {
		for _, w := range d.Page.Words {
			if w.Type != "" {
				types[w.Type] = true
			}
		}
	}
	for typ := range types {
		pol := policy.Default()
		pol.Types[redact.Type(typ)] = policy.TypePolicy{Disabled: true}
		r, err := redact.New(redact.Options{Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		preds, err := predictions(r, []redactcorpus.Doc{d})
		if err != nil {
			t.Fatal(err)
		}
		if one := redactcorpus.Score([]redactcorpus.Truth{tr}, preds); one.ValuesGone == one.Values {
			continue
		}
		c.sabotageLeaked[typ]++
		if rep, _ := verdict(t, r, d, preds[0].Findings, nil); rep.Verdict == result.Suspicious {
			c.sabotageHeld[typ]++
		}
	}
}

func (c corpusRun) print(w *strings.Builder, title string) {
	fmt.Fprintf(w, "== %s: %d documents\n", title, c.docs)
	c.rep.Print(w)
	fmt.Fprintf(w, "held by the verifier: %d of %d documents (%.1f%%) %v, %d of them with nothing left; released with a value left: %d; canary leaks: %d\nhold findings by rule: %v\n",
		c.held, c.docs, 100*float64(c.held)/float64(c.docs), c.heldByKind, c.falseHolds, c.leakedReleased, c.canaryLeaks, c.holdRules)
	leaked, held := 0, 0
	var per []string
	for _, typ := range redactcorpus.Types {
		if n := c.sabotageLeaked[typ]; n > 0 {
			per = append(per, fmt.Sprintf("%s %d/%d", typ, c.sabotageHeld[typ], n))
			leaked, held = leaked+n, held+c.sabotageHeld[typ]
		}
	}
	fmt.Fprintf(w, "verifier on outputs redacted with one type switched off: held %d of %d that leaked (%s)\n\n", held, leaked, strings.Join(per, ", "))
}

// worldSize is how many documents of each format each split of the
// second corpus has in TestWorldCorpus.
const worldSize = 24

// TestWorldCorpus measures the redactor and the verifier on the second
// corpus (internal/docseval/redactworld), written apart from the first:
// its Dev split (tuned on) and its Test split (held out), and the first
// corpus for the held share beside them. REDACT_WORLD_SEED draws another
// second corpus (seed 1 is the one the README reports).
func TestWorldCorpus(t *testing.T) {
	r, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	worldSeed := int64(1)
	if v := os.Getenv("REDACT_WORLD_SEED"); v != "" {
		var err error
		if worldSeed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	first := runCorpus(t, r, redactcorpus.Generate(corpusSeed, corpusSize), redactcorpus.Canaries(corpusSeed))
	first.print(&b, fmt.Sprintf("first corpus (redactcorpus, seed %d, tuned on)", corpusSeed))
	runs := map[redactworld.Split]corpusRun{}
	for _, split := range []redactworld.Split{redactworld.Dev, redactworld.Test} {
		runs[split] = runCorpus(t, r, redactworld.Generate(worldSeed, worldSize, split), redactworld.Canaries(worldSeed, split))
		runs[split].print(&b, fmt.Sprintf("second corpus (redactworld, seed %d), %s split", worldSeed, split))
	}
	t.Log("\n" + b.String())
	if os.Getenv("REDACT_EVAL_PRINT") != "" {
		fmt.Print(b.String())
	}
	first.hold(t, "first corpus")
	for split, run := range runs {
		run.hold(t, "redactworld "+string(split))
	}
}

// hold fails the test when a run falls below issue 33's targets: 98% of
// values gone, precision 0.9, no canary in any output, and no output
// with nothing left in it held.
func (c corpusRun) hold(t *testing.T, title string) {
	t.Helper()
	if g := c.rep.GoneShare(); g < 0.98 {
		t.Errorf("%s: %.1f%% of values gone, want >= 98%%", title, 100*g)
	}
	if p := c.rep.Precision(); p < 0.9 {
		t.Errorf("%s: precision %.3f, want >= 0.9", title, p)
	}
	if c.canaryLeaks > 0 {
		t.Errorf("%s: %d outputs carry a canary", title, c.canaryLeaks)
	}
	if c.falseHolds > 0 {
		t.Errorf("%s: %d complete outputs held", title, c.falseHolds)
	}
}
