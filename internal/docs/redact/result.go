package redact

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/airlock-dev/airlock/internal/docs/redact/result"
)

// NewResult builds the job's result for an output written to outPath
// (relative to the job's output directory): digest, size, findings and
// per-type counts. It is validated when encoded (result.Encode).
func NewResult(inputFormat, outPath, outFormat string, data []byte, findings []Finding, truncated bool, timingsMS map[string]int) *result.Result {
	sum := sha256.Sum256(data)
	r := &result.Result{
		Version:     result.Version,
		InputFormat: inputFormat,
		Output: result.Output{Path: outPath, Format: outFormat, Bytes: int64(len(data)),
			SHA256: hex.EncodeToString(sum[:])},
		Findings:  findings,
		Truncated: truncated,
		TimingsMS: timingsMS,
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.TimingsMS == nil {
		r.TimingsMS = map[string]int{}
	}
	r.Count()
	return r
}
