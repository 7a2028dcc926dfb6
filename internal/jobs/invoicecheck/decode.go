package invoicecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// ErrRejected wraps every reason a guest result is refused as a whole.
var ErrRejected = errors.New("guest result rejected")

func reject(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRejected, fmt.Sprintf(format, args...))
}

// maxDepth bounds JSON nesting: the result is at most result > fields >
// line_items > item, one more inside the envelope.
const maxDepth = 5

// keyPattern is the only shape a key may have. Go's decoder matches keys
// case-insensitively, so without it "TOTAL" and "total" could both reach
// one field, and a duplicate check on raw keys would miss it.
var keyPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

var templatePattern = regexp.MustCompile(`^[a-z0-9_-]*$`)

// DecodeResult decodes the guest's invoice result strictly. Any structural
// problem (size, invalid UTF-8, duplicate or unknown keys, wrong types,
// trailing data, unknown enum values, out-of-range pages or confidences,
// over-long lists) refuses the whole result with ErrRejected. Field values
// are not judged here; Clamp does that.
func DecodeResult(raw []byte) (*result.Result, error) {
	if len(raw) > result.MaxResultBytes {
		return nil, reject("%d bytes, over the %d byte limit", len(raw), result.MaxResultBytes)
	}
	if !utf8.Valid(raw) {
		return nil, reject("not valid UTF-8")
	}
	if err := checkShape(raw, maxDepth); err != nil {
		return nil, reject("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var r result.Result
	if err := dec.Decode(&r); err != nil {
		return nil, reject("decode: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, reject("trailing data after the result")
	}
	if err := validateStructure(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// shapeFrame is one open JSON container during checkShape.
type shapeFrame struct {
	object  bool
	wantKey bool
	keys    map[string]bool
}

// checkShape walks the tokens once: one top-level object, bounded depth,
// keys in keyPattern, no key twice in an object (encoding/json would
// silently keep the last one: {"total":"1","total":"9000"}).
func checkShape(raw []byte, maxDepth int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*shapeFrame
	values := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("syntax: %w", err)
		}
		top := (*shapeFrame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.object && top.wantKey {
			if !keyPattern.MatchString(s) {
				return fmt.Errorf("key %q is not a result key", truncate(s, 40))
			}
			if top.keys[s] {
				return fmt.Errorf("duplicate key %q", s)
			}
			top.keys[s] = true
			top.wantKey = false
			continue
		}
		if len(stack) == 0 {
			values++
			if values > 1 {
				return fmt.Errorf("more than one JSON value")
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= maxDepth {
				return fmt.Errorf("nested deeper than %d", maxDepth)
			}
			stack = append(stack, &shapeFrame{object: tok == json.Delim('{'), wantKey: true, keys: map[string]bool{}})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
	}
	if values != 1 || len(stack) != 0 {
		return fmt.Errorf("want exactly one JSON object")
	}
	if len(raw) > 0 && bytes.TrimSpace(raw)[0] != '{' {
		return fmt.Errorf("the result is not a JSON object")
	}
	return nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// validateStructure checks the parts of the result that are the guest's
// own bookkeeping: lists bounded, enums known, pages and confidences in
// range. Unlike field values these cannot be clamped one by one: a guest
// that gets them wrong is not to be believed at all.
func validateStructure(r *result.Result) error {
	if err := validatePages(r.Pages); err != nil {
		return err
	}
	maxPage := result.MaxPages
	if len(r.Pages) > 0 {
		maxPage = len(r.Pages)
	}
	if len(r.Fields.LineItems) > result.MaxLineItems {
		return reject("%d line items, over %d", len(r.Fields.LineItems), result.MaxLineItems)
	}
	if err := validateSources(r.FieldSources, maxPage); err != nil {
		return err
	}
	if err := validateHidden(r.HiddenText, maxPage); err != nil {
		return err
	}
	if err := validateInjections(r.Injection, maxPage); err != nil {
		return err
	}
	if err := validateCandidates(r.Candidates, maxPage); err != nil {
		return err
	}
	if len(r.Template) > result.MaxTemplateRunes || !templatePattern.MatchString(r.Template) {
		return reject("template name is not a template name")
	}
	return nil
}

func validatePages(pages []result.PageInfo) error {
	if len(pages) > result.MaxPages {
		return reject("%d pages, over %d", len(pages), result.MaxPages)
	}
	for i, p := range pages {
		if p.Number != i+1 {
			return reject("pages[%d] has number %d", i, p.Number)
		}
		if p.Method != "text" && p.Method != "ocr" {
			return reject("pages[%d]: unknown method %q", i, truncate(p.Method, 20))
		}
		if badFloat(p.OCRConfidence) || p.OCRConfidence < -1 || p.OCRConfidence > 100 {
			return reject("pages[%d]: ocr_confidence out of range", i)
		}
		if p.Method == "ocr" && (p.InkChecked || p.InvisibleLayer) {
			return reject("pages[%d]: an OCR page has no text layer to check", i)
		}
	}
	return nil
}

func validateSources(srcs map[string]result.FieldSource, maxPage int) error {
	valid := append(result.ScalarFields(), result.FieldLineItems)
	for k, s := range srcs {
		if !slices.Contains(valid, k) {
			return reject("field_sources: unknown field %q", truncate(k, 40))
		}
		if !slices.Contains(result.Methods(), s.Method) {
			return reject("field_sources.%s: unknown method %q", k, truncate(s.Method, 20))
		}
		if badFloat(s.Confidence) || s.Confidence < 0 || s.Confidence > 1 {
			return reject("field_sources.%s: confidence out of range", k)
		}
		if s.Page < 1 || s.Page > maxPage {
			return reject("field_sources.%s: page %d out of range", k, s.Page)
		}
		if len(s.Issues) > result.MaxIssuesPerField {
			return reject("field_sources.%s: too many issues", k)
		}
		for _, is := range s.Issues {
			if !slices.Contains(result.Issues(), is) {
				return reject("field_sources.%s: unknown issue %q", k, truncate(is, 40))
			}
		}
	}
	return nil
}

func validateHidden(hs []result.HiddenText, maxPage int) error {
	if len(hs) > result.MaxHiddenEntries {
		return reject("%d hidden_text entries, over %d", len(hs), result.MaxHiddenEntries)
	}
	for i, h := range hs {
		if h.Page < 1 || h.Page > maxPage || !slices.Contains(result.HiddenKinds(), h.Kind) {
			return reject("hidden_text[%d]: bad page or kind", i)
		}
		if h.Chars < 0 || h.Chars > 10_000_000 {
			return reject("hidden_text[%d]: chars out of range", i)
		}
		if utf8.RuneCountInString(h.Excerpt) > result.MaxExcerptRunes || hasControl(h.Excerpt) {
			return reject("hidden_text[%d]: excerpt too long or has control characters", i)
		}
	}
	return nil
}

func validateInjections(is []result.Injection, maxPage int) error {
	if len(is) > result.MaxInjections {
		return reject("%d injection entries, over %d", len(is), result.MaxInjections)
	}
	for i, in := range is {
		if in.Page < 1 || in.Page > maxPage || !slices.Contains(result.PhraseCodes(), in.PhraseCode) {
			return reject("injection[%d]: bad page or phrase code", i)
		}
		if in.Visible != (in.HiddenKind == "") || in.HiddenKind != "" && !slices.Contains(result.HiddenKinds(), in.HiddenKind) {
			return reject("injection[%d]: visible and hidden_kind disagree", i)
		}
	}
	return nil
}

// validateCandidates checks the further readings' bookkeeping; their
// values are judged like the fields' own where the host uses them.
func validateCandidates(cs map[string][]result.Candidate, maxPage int) error {
	for k, list := range cs {
		if !slices.Contains(result.CandidateFields(), k) {
			return reject("candidates: %q is not a candidate field", truncate(k, 40))
		}
		if len(list) > result.MaxCandidates {
			return reject("candidates.%s: %d, over %d", k, len(list), result.MaxCandidates)
		}
		for i, c := range list {
			if !slices.Contains(result.Methods(), c.Method) || badFloat(c.Confidence) || c.Confidence < 0 || c.Confidence > 1 ||
				c.Page < 1 || c.Page > maxPage {
				return reject("candidates.%s[%d]: bad method, confidence or page", k, i)
			}
		}
	}
	return nil
}

func badFloat(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// hasControl reports control characters and invisible format characters
// (bidi overrides, zero-width), which have no place in an extracted value.
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}
