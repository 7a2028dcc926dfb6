package main

import (
	"context"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"time"

	verifyresult "github.com/airlock-dev/airlock/internal/docs/verify/result"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/verify"
)

// verifyCommand is the independent check of a redacted document, run in a
// sandbox of its own: it re-reads the output (text as it is; PDFs and
// images by OCR, as a person would see them) and scans it with the
// verifier, which shares no code or lists with the redactor, and for the
// batch's canary strings. Its report decides whether the output is
// released.
func verifyCommand() command {
	var canariesPath string
	return command{
		name:    "verify",
		summary: "check a redacted document for personal data and canary strings (independent of redact)",
		common:  true,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&canariesPath, "canaries", "", "JSON list of canary strings that must not appear")
		},
		run: func(ctx context.Context, inv *invocation) *docs.Envelope {
			canaries, err := loadCanaries(canariesPath)
			if err != nil {
				return &docs.Envelope{Error: docs.Errorf(docs.CodeInvalidArg, "canaries: %v", err)}
			}
			ext := strings.ToLower(filepath.Ext(inv.in))
			if _, ok := textFormats[ext]; ok {
				return verifyText(inv, canaries)
			}
			if _, ok := pageFormats[ext]; !ok {
				return &docs.Envelope{Error: docs.Errorf(docs.CodeUnsupported, "files named %q are not a format this job reads", ext)}
			}
			// Every page is OCRed: a redacted PDF is images only, and what
			// counts is what a reader sees, not what a text layer claims.
			doc, env := extractDocument(ctx, inv, extract.Options{ForceOCR: true})
			if env.Error != nil {
				return env
			}
			start := time.Now()
			rep := verify.CheckPages(doc)
			var text strings.Builder
			for _, p := range doc.Pages {
				text.WriteString(p.Text())
				text.WriteByte('\n')
			}
			rep = verify.WithCanaries(rep, verify.FindCanaries(text.String(), canaries))
			env.TimingsMS["verify"] = time.Since(start).Milliseconds()
			return withResult(env, rep)
		},
	}
}

func verifyText(inv *invocation, canaries []string) *docs.Envelope {
	env := &docs.Envelope{TimingsMS: map[string]int64{}}
	b, err := readBounded(inv.in, 64<<20)
	if err != nil {
		env.Error = docs.Errorf(docs.CodeTooLarge, "%v", err)
		return env
	}
	start := time.Now()
	text := string(b)
	rep := verify.WithCanaries(verify.Check(text), verify.FindCanaries(text, canaries))
	env.TimingsMS["verify"] = time.Since(start).Milliseconds()
	return withResult(env, rep)
}

func loadCanaries(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := readBounded(path, 4<<20)
	if err != nil {
		return nil, err
	}
	var cs []string
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, err
	}
	return cs, verifyresult.CheckCanaries(cs)
}
