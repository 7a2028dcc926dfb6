package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func TestTemplates(t *testing.T) {
	s, _ := newTestStore(t)
	a := Template{Name: "invoice-ocr", Hash: "sha256:aa", Spec: json.RawMessage(`{"packages":["tesseract-ocr"]}`),
		Dir: "/var/lib/airlock/templates/aa", BuiltAt: t0, SizeBytes: 1 << 30}
	b := Template{Name: "legal-doc-review", Hash: "sha256:bb", Spec: json.RawMessage(`{}`),
		Dir: "/var/lib/airlock/templates/bb", BuiltAt: t0, SizeBytes: 0}
	for _, tpl := range []Template{b, a} {
		if err := s.PutTemplate(ctx, tpl); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetTemplate(ctx, "invoice-ocr")
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Errorf("GetTemplate = %+v, %v; want %+v", got, err, a)
	}

	// Upsert replaces every field.
	a2 := a
	a2.Hash, a2.Dir, a2.BuiltAt, a2.SizeBytes = "sha256:a2", "/var/lib/airlock/templates/a2", t0.Add(time.Hour), 5
	if err := s.PutTemplate(ctx, a2); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListTemplates(ctx)
	if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0], a2) || list[1].Name != "legal-doc-review" {
		t.Errorf("ListTemplates = %+v, %v", list, err)
	}

	// In use by a running sandbox: refused until it ends.
	sb := sandbox("sb-1", "firm-a", nil)
	sb.Template = "invoice-ocr"
	mustPut(t, s, sb)
	if err := s.DeleteTemplate(ctx, "invoice-ocr"); !errdefs.IsFailedPrecondition(err) {
		t.Errorf("delete template in use = %v, want FailedPrecondition", err)
	}
	if err := s.UpdateSandboxState(ctx, "sb-1", StateKilled, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTemplate(ctx, "invoice-ocr"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := s.GetTemplate(ctx, "invoice-ocr"); !errdefs.IsNotFound(err) {
		t.Errorf("get deleted = %v, want NotFound", err)
	}
	if err := s.DeleteTemplate(ctx, "invoice-ocr"); !errdefs.IsNotFound(err) {
		t.Errorf("delete twice = %v, want NotFound", err)
	}

	for _, tc := range []struct {
		name string
		edit func(*Template)
	}{
		{"bad name", func(t *Template) { t.Name = "Bad/Name" }},
		{"no hash", func(t *Template) { t.Hash = "" }},
		{"no dir", func(t *Template) { t.Dir = "" }},
		{"no build time", func(t *Template) { t.BuiltAt = time.Time{} }},
		{"negative size", func(t *Template) { t.SizeBytes = -1 }},
		{"bad spec", func(t *Template) { t.Spec = json.RawMessage(`{"a":`) }},
		{"no spec", func(t *Template) { t.Spec = nil }},
	} {
		tpl := b
		tc.edit(&tpl)
		if err := s.PutTemplate(ctx, tpl); !errdefs.IsInvalidArgument(err) {
			t.Errorf("%s: PutTemplate = %v, want InvalidArgument", tc.name, err)
		}
	}
}
