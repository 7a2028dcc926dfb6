package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/review/playbook"

	"github.com/airlock-dev/airlock/internal/docs"
	"github.com/airlock-dev/airlock/internal/docs/extract"
	"github.com/airlock-dev/airlock/internal/docs/review"
	"github.com/airlock-dev/airlock/internal/docs/review/facts"
	"github.com/airlock-dev/airlock/internal/docs/review/result"
)

// maxPlaybookBytes bounds the playbook file the tool reads.
const maxPlaybookBytes = 1 << 20

// reviewCommand reviews a contract against a playbook: the result is a
// review.Result (findings per playbook clause, with redlines).
func reviewCommand() command {
	var playbookPath string
	var o extract.Options
	return command{
		name:    "review",
		summary: "review a contract PDF against a playbook (JSON or YAML)",
		common:  true,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&playbookPath, "playbook", "", "playbook file (default: the built-in playbook)")
			fs.BoolVar(&o.ForceOCR, "force-ocr", false, "OCR every page, ignoring any text layer")
		},
		run: func(ctx context.Context, inv *invocation) *docs.Envelope {
			pb, err := loadPlaybook(playbookPath)
			if err != nil {
				return &docs.Envelope{Error: docs.Errorf(docs.CodeInvalidArg, "%v", err)}
			}
			doc, env := extractDocument(ctx, inv, o)
			if env.Error != nil {
				return env
			}
			start := time.Now()
			paras := review.FromExtract(doc)
			fparas := make([]facts.Paragraph, 0, len(paras))
			for _, p := range paras {
				fparas = append(fparas, facts.Paragraph{Text: p.Text, Pages: p.Pages})
			}
			res, err := review.Analyze(paras, pb)
			if err == nil {
				facts.Extract(fparas).Into(res)
				facts.Fit(res, result.MaxResultBytes-64<<10)
			}
			env.TimingsMS["analyse"] = time.Since(start).Milliseconds()
			if err != nil {
				env.Error = docs.AsError(err)
				return env
			}
			return withResult(env, res)
		},
	}
}

// loadPlaybook reads the playbook (bounded), or the built-in one.
func loadPlaybook(path string) (*playbook.Playbook, error) {
	if path == "" {
		return playbook.DefaultPlaybook()
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxPlaybookBytes {
		return nil, errors.New("playbook is larger than 1 MiB")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return playbook.ParsePlaybook(path, data)
}
