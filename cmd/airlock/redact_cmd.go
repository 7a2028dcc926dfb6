package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	verifyresult "github.com/airlock-dev/airlock/internal/docs/verify/result"

	"github.com/spf13/cobra"

	"github.com/airlock-dev/airlock/internal/jobs"
)

func newRedactCmd(g *globalFlags) *cobra.Command {
	jf := &jobFlags{}
	var outDir, heldDir, policy, canaries string
	cmd := &cobra.Command{
		Use:   "redact --out DIR [--held DIR] [--policy FILE] [--canaries FILE] [--json] PATH...",
		Short: "Redact personal data, verify each output independently, release only what passes",
		Long: `Redact text, JSON, CSV, PDF and image files, each in its own pii-redact
sandbox with egress denied, in the same format (PDFs and images are
rasterised and rebuilt with black boxes, so no original string survives in
any layer). Each output is then re-read in a second, fresh sandbox by an
independent verifier (different code and logic from the redactor; PDFs
and images by OCR) and searched for the --canaries strings in any common
rendering. Only an output with no finding, no canary and nothing doubtful
about its run is released into --out under the input's file name; the
rest are held under --held for a person to look at, never in --out.

Exit status: 0 when every document was released, 1 when any was held or
failed (a canary found fails the batch), 2 on usage errors.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if outDir == "" {
				return usageErr("redact: --out is required")
			}
			if heldDir == "" {
				heldDir = filepath.Clean(outDir) + ".held"
			}
			if inside(heldDir, outDir) || inside(outDir, heldDir) {
				return usageErr("redact: --held %s and --out %s must not contain each other", heldDir, outDir)
			}
			job := &jobs.Redact{OutDir: outDir, HeldDir: heldDir, Timeout: jf.timeout, OCR: jf.ocr(), MaxPages: jf.maxPages}
			if err := loadRedactInputs(job, policy, canaries); err != nil {
				return err
			}
			md, err := jf.metadata()
			if err != nil {
				return usageErr("%v", err)
			}
			job.Metadata = md
			for _, d := range []string{outDir, heldDir} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					return usageErr("%v", err)
				}
			}
			ds, err := jobs.Expand(args, job.Extensions())
			if err != nil || len(ds) == 0 {
				return usageErr("redact: no documents (%v)", err)
			}
			if dup := duplicateNames(ds); dup != "" {
				return usageErr("redact: two inputs are named %s; released outputs keep the input's name, so they would collide", dup)
			}
			sum, err := jf.execute(cmd, job, ds, nil)
			if err != nil {
				return err
			}
			if n := sum.Tally["held: canary_found"]; n > 0 {
				fmt.Fprintf(os.Stderr, "airlock: CANARY LEAK: %d document(s) held with a canary string in their redacted output; the batch fails\n", n)
			}
			if sum.Failed > 0 || sum.Tally["held"] > 0 {
				return exitError{code: exitSomeFail}
			}
			return nil
		},
	}
	jf.register(cmd, g)
	fl := cmd.Flags()
	fl.StringVar(&outDir, "out", "", "released outputs go here, under the input's file name (required)")
	fl.StringVar(&heldDir, "held", "", "held outputs go here, with held.json saying why (default: <out>.held)")
	fl.StringVar(&policy, "policy", "", "redaction policy, YAML or JSON: operators (replace, mask, hash, remove) and thresholds per type")
	fl.StringVar(&canaries, "canaries", "", "JSON list of canary strings: any found in an output holds it and fails the batch")
	return cmd
}

// loadRedactInputs checks the policy and canaries on the host (operator
// configuration, not documents) and gives the batch a fresh salt.
func loadRedactInputs(job *jobs.Redact, policyPath, canaries string) error {
	if policyPath != "" {
		b, err := os.ReadFile(policyPath)
		if err != nil {
			return usageErr("--policy: %v", err)
		}
		if _, err := policy.Parse(policyPath, b); err != nil {
			return usageErr("%v", err)
		}
		job.Policy, job.PolicyName = b, filepath.Base(policyPath)
	}
	if canaries != "" {
		b, err := os.ReadFile(canaries)
		if err != nil {
			return usageErr("--canaries: %v", err)
		}
		if err := json.Unmarshal(b, &job.Canaries); err != nil {
			return usageErr("--canaries %s: want a JSON list of strings: %v", canaries, err)
		}
		if err := verifyresult.CheckCanaries(job.Canaries); err != nil {
			return usageErr("--canaries %s: %v", canaries, err)
		}
	}
	job.Salt = make([]byte, 32)
	_, err := rand.Read(job.Salt)
	return err
}

// inside reports whether path is dir or under it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func duplicateNames(ds []jobs.Doc) string {
	seen := map[string]bool{}
	for _, d := range ds {
		n := filepath.Base(d.Path)
		if seen[n] {
			return n
		}
		seen[n] = true
	}
	return ""
}
