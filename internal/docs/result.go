package docs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvelopeVersion is the version of the result format; the host refuses
// other versions.
const EnvelopeVersion = 1

// Job error codes. They are part of the output contract: the host runner
// passes them through to NDJSON lines, so never rename one.
const (
	CodeEncrypted   = "encrypted"     // the PDF needs a password
	CodeUnreadable  = "unreadable"    // not a document of a supported kind, truncated, corrupt, empty
	CodeTooLarge    = "too_large"     // over a page, pixel, byte or nesting limit
	CodeTimeout     = "timeout"       // a tool (or the job) ran past its time limit
	CodeUnsupported = "unsupported"   // a well-formed input of a kind this job does not handle
	CodeInvalidArg  = "invalid_input" // a job input other than the document is invalid (playbook, policy, ...)
	CodeInternal    = "internal"      // a bug or an environment problem in the guest
)

// Risks a document carries, whatever the job: active content and hidden
// payloads a person should know about before opening the original. They
// are reported, never acted on: nothing in a sandbox runs a document's
// scripts or opens its attachments. Part of the output contract.
const (
	RiskPDFJavaScript      = "pdf_javascript"        // scripts in the PDF (document or form actions)
	RiskPDFXFAForm         = "pdf_xfa_form"          // an XFA form: a second, scriptable document inside
	RiskPDFEmbeddedFiles   = "pdf_embedded_files"    // attachments (any file type) inside the PDF
	RiskPDFDataBeforeStart = "pdf_data_before_start" // bytes before %PDF-: another format's header (a polyglot)
	RiskPDFDataAfterEnd    = "pdf_data_after_end"    // bytes after the last %%EOF: an appended file (a polyglot)
)

// RiskText says what a Risk name means, for reports.
func RiskText(r string) string {
	switch r {
	case RiskPDFJavaScript:
		return "The PDF carries JavaScript (it runs in some readers when the file is opened)."
	case RiskPDFXFAForm:
		return "The PDF carries an XFA form: a second, scriptable document some readers show instead of the pages."
	case RiskPDFEmbeddedFiles:
		return "The PDF carries embedded files (attachments of any type)."
	case RiskPDFDataBeforeStart:
		return "The file has other data before the PDF starts: it may also open as another kind of file (a polyglot)."
	case RiskPDFDataAfterEnd:
		return "The file has other data after the PDF ends: another file may be appended to it (a polyglot)."
	}
	return r
}

// KnownRisk reports whether r is one of the Risk names.
func KnownRisk(r string) bool {
	switch r {
	case RiskPDFJavaScript, RiskPDFXFAForm, RiskPDFEmbeddedFiles, RiskPDFDataBeforeStart, RiskPDFDataAfterEnd:
		return true
	}
	return false
}

// Error is a classified job failure. Message is for humans and must not
// quote document content.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns a classified error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns err's classification: the *Error it wraps, or an
// internal error carrying its text.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// Envelope is the one JSON document a job writes. Result holds the job's
// own fields (review.Result, invoice.Result, ...); it is null when Error is
// set before the job produced anything.
type Envelope struct {
	Version  int    `json:"version"`
	Job      string `json:"job"`
	OK       bool   `json:"ok"`
	Error    *Error `json:"error"`
	Pages    int    `json:"pages"`
	OCRPages int    `json:"ocr_pages"`
	// TimingsMS are the guest-side phases (extract, ocr, analyse, write).
	TimingsMS map[string]int64 `json:"timings_ms"`
	// Risks are the Risk* names the document carries, sorted, each once.
	Risks []string `json:"risks,omitempty"`
	// OCRLang is the tesseract model(s) OCR pages were read with;
	// PageMS how long each page's OCR took (0 for text pages), when any
	// page was OCRed.
	OCRLang string          `json:"ocr_lang,omitempty"`
	PageMS  []int64         `json:"page_ms,omitempty"`
	Result  json.RawMessage `json:"result"`
}

// WriteEnvelope writes env to path atomically (temp file + rename), so the
// host never reads half a result.
func WriteEnvelope(path string, env *Envelope) error {
	env.Version = EnvelopeVersion
	if env.TimingsMS == nil {
		env.TimingsMS = map[string]int64{}
	}
	b, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("result dir: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("publish result: %w", err)
	}
	return nil
}

// MaxEnvelopeBytes bounds a result the host reads back; jobs with larger
// results pass a larger limit to DecodeEnvelope.
const MaxEnvelopeBytes = 4 << 20

// DecodeEnvelope is the host's strict reading of a result: one JSON
// object, no unknown fields, this version, the expected job, a closed set
// of error codes, ok consistent with error. Result is left raw for the
// job's own strict decoder.
func DecodeEnvelope(b []byte, job string, maxBytes int) (*Envelope, error) {
	if maxBytes <= 0 {
		maxBytes = MaxEnvelopeBytes
	}
	if len(b) > maxBytes {
		return nil, fmt.Errorf("result is %d bytes, over the %d limit", len(b), maxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var env Envelope
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("result is not a valid envelope: %w", err)
	}
	if dec.More() {
		return nil, errors.New("result has data after the envelope")
	}
	switch {
	case env.Version != EnvelopeVersion:
		return nil, fmt.Errorf("result version %d, want %d", env.Version, EnvelopeVersion)
	case env.Job != job:
		return nil, fmt.Errorf("result is for job %q, want %q", env.Job, job)
	case env.OK != (env.Error == nil):
		return nil, errors.New("result says ok and carries an error, or neither")
	case env.Pages < 0 || env.OCRPages < 0 || env.OCRPages > env.Pages || env.Pages > 1_000_000:
		return nil, fmt.Errorf("result has implausible page counts (%d pages, %d OCR)", env.Pages, env.OCRPages)
	case len(env.TimingsMS) > 32:
		return nil, errors.New("result has too many timings")
	}
	if env.Error != nil {
		if !KnownCode(env.Error.Code) {
			return nil, fmt.Errorf("result has unknown error code %q", env.Error.Code)
		}
		if len(env.Error.Message) > 2048 {
			env.Error.Message = env.Error.Message[:2048]
		}
	}
	for k, v := range env.TimingsMS {
		if len(k) > 32 || v < 0 {
			return nil, fmt.Errorf("result has an invalid timing %q", k)
		}
	}
	if len(env.OCRLang) > 200 || len(env.PageMS) > env.Pages {
		return nil, errors.New("result has an implausible OCR language or page timings")
	}
	for _, ms := range env.PageMS {
		if ms < 0 {
			return nil, errors.New("result has a negative page timing")
		}
	}
	for i, r := range env.Risks {
		if !KnownRisk(r) || (i > 0 && r <= env.Risks[i-1]) {
			return nil, fmt.Errorf("result has an unknown, repeated or unsorted risk %q", r)
		}
	}
	return &env, nil
}

// KnownCode reports whether code is one of the job error codes.
func KnownCode(code string) bool {
	switch code {
	case CodeEncrypted, CodeUnreadable, CodeTooLarge, CodeTimeout, CodeUnsupported, CodeInvalidArg, CodeInternal:
		return true
	}
	return false
}
