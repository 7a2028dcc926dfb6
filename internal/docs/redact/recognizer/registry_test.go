package recognizer_test

import (
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/redact/policy"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/address"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/ocr"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/pattern"
	"github.com/airlock-dev/airlock/internal/docs/redact/recognizer/person"
)

func kinds() map[string]recognizer.Factory {
	return map[string]recognizer.Factory{"pattern": pattern.New, "address": address.New, "person": person.New,
		"ocr_label": ocr.NewLabel, "ocr_email": ocr.NewEmail}
}

// TestRegistryCoversEveryType: the registry loads, every entity type has
// a recognizer for every text, and the OCR-only ones are apart.
func TestRegistryCoversEveryType(t *testing.T) {
	reg, err := recognizer.Load(kinds())
	if err != nil {
		t.Fatal(err)
	}
	found := map[policy.Type]bool{}
	for _, r := range reg.Recognizers {
		for _, typ := range r.Types() {
			found[typ] = true
		}
	}
	for _, typ := range policy.AllTypes() {
		if !found[typ] {
			t.Errorf("no recognizer finds %s", typ)
		}
	}
	var ocrNames []string
	for _, r := range reg.OCR {
		ocrNames = append(ocrNames, r.Name())
	}
	if strings.Join(ocrNames, ",") != "ocr_label,ocr_email" {
		t.Errorf("OCR-only recognizers %v", ocrNames)
	}
}

// TestRegistryRefusesWhatItDoesNotKnow: a kind the analyzer does not
// implement, or an entry with a field its kind does not read, fails the
// load rather than switching a detector off quietly.
func TestRegistryRefusesWhatItDoesNotKnow(t *testing.T) {
	ks := kinds()
	delete(ks, "address")
	if _, err := recognizer.Load(ks); err == nil || !strings.Contains(err.Error(), `unknown kind "address"`) {
		t.Fatalf("missing kind: %v", err)
	}
	ks = kinds()
	ks["pattern"] = func(spec *recognizer.Spec, _ *recognizer.Env) (recognizer.Recognizer, error) {
		var only struct {
			recognizer.Common `yaml:",inline"`
		}
		return nil, spec.Decode(&only) // pattern entries have fields Common lacks
	}
	if _, err := recognizer.Load(ks); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown field: %v", err)
	}
}
