package invoicecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/airlock-dev/airlock/internal/docs/invoice/schema"
)

// envelopeVersion is the docs envelope version this package reads. The
// envelope is mirrored here rather than imported: the host never imports
// the guest's document packages.
const envelopeVersion = 1

type guestError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type envelope struct {
	Version   int              `json:"version"`
	Job       string           `json:"job"`
	OK        bool             `json:"ok"`
	Error     *guestError      `json:"error"`
	Pages     int              `json:"pages"`
	OCRPages  int              `json:"ocr_pages"`
	TimingsMS map[string]int64 `json:"timings_ms"`
	Result    json.RawMessage  `json:"result"`
}

// guestCodes are the docs job error codes the guest may report.
func guestCodes() []string {
	return []string{"encrypted", "unreadable", "too_large", "timeout", "unsupported", "invalid_input", "internal"}
}

// DecodeEnvelope decodes the guest's whole result file strictly. It
// returns the invoice result when the job ran (ok), or the guest's error
// code when it did not; a malformed envelope is ErrRejected.
func DecodeEnvelope(raw []byte) (res *schema.Result, guestCode string, err error) {
	if len(raw) > schema.MaxResultBytes+4096 {
		return nil, "", reject("envelope over the size limit")
	}
	if err := checkShape(raw, maxDepth+1); err != nil {
		return nil, "", reject("envelope: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var env envelope
	if err := dec.Decode(&env); err != nil {
		return nil, "", reject("envelope: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "", reject("trailing data after the envelope")
	}
	switch {
	case env.Version != envelopeVersion:
		return nil, "", reject("envelope version %d", env.Version)
	case env.Job != schema.Job:
		return nil, "", reject("envelope is for job %q", truncate(env.Job, 20))
	case !env.OK:
		if env.Error == nil || !contains(guestCodes(), env.Error.Code) {
			return nil, "", reject("failed job without a known error code")
		}
		return nil, env.Error.Code, nil
	case env.Error != nil:
		return nil, "", reject("ok envelope carries an error")
	}
	res, err = DecodeResult(env.Result)
	if err != nil {
		return nil, "", err
	}
	return res, "", nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
