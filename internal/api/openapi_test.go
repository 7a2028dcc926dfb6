package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/client"
)

type openAPIDocument struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

func loadOpenAPI(t *testing.T) openAPIDocument {
	t.Helper()
	var doc openAPIDocument
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") {
		t.Errorf("openapi version %q, want 3.0.x", doc.OpenAPI)
	}
	return doc
}

var httpMethods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

// TestOpenAPICoversRoutes checks the route table and the document agree in
// both directions.
func TestOpenAPICoversRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	registered := map[string]bool{}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		key := strings.ToLower(method) + " " + path
		registered[key] = true
		ops, ok := doc.Paths[path]
		if !ok {
			t.Errorf("route %s: path missing from openapi.json", rt.pattern)
			continue
		}
		if _, ok := ops[strings.ToLower(method)]; !ok {
			t.Errorf("route %s: method missing from openapi.json", rt.pattern)
		}
	}
	for path, ops := range doc.Paths {
		for m := range ops {
			if !slices.Contains(httpMethods, m) {
				continue // "parameters" and other path-level keys
			}
			if !registered[m+" "+path] {
				t.Errorf("openapi.json documents %s %s, which is not registered", strings.ToUpper(m), path)
			}
		}
	}
}

// TestOpenAPIRefsResolve checks every $ref names a defined component.
func TestOpenAPIRefsResolve(t *testing.T) {
	var raw any
	if err := json.Unmarshal(openAPIDoc, &raw); err != nil {
		t.Fatal(err)
	}
	root := raw.(map[string]any)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
				var cur any = root
				for _, p := range parts {
					m, _ := cur.(map[string]any)
					cur = m[p]
				}
				if cur == nil {
					t.Errorf("unresolved $ref %s", ref)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(root)
}

// TestOpenAPISchemasMatchTypes checks each documented schema has exactly the
// JSON fields of the Go type it describes.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	doc := loadOpenAPI(t)
	for name, typ := range map[string]any{
		"Error":                wire.ErrorBody{},
		"ErrorResponse":        wire.ErrorResponse{},
		"Health":               wire.HealthResponse{},
		"CreateSandboxRequest": wire.CreateSandboxRequest{},
		"Sandbox":              wire.Sandbox{},
		"SandboxList":          wire.SandboxList{},
		"ForkRequest":          wire.ForkRequest{},
		"EgressPolicy":         wire.EgressPolicy{},
		"EgressRule":           wire.EgressRule{},
		"ExecRequest":          wire.ExecRequest{},
		"ExecResult":           wire.ExecResponse{},
		"StreamEvent":          wire.StreamEvent{},
		"WriteFileResult":      wire.WriteFileResponse{},
		"WriteArchiveResult":   wire.WriteArchiveResponse{},
		"FileInfo":             wire.FileInfo{},
		"FileList":             wire.FileList{},
		"Template":             wire.TemplateInfo{},
		"TemplateList":         wire.TemplateList{},
		"AuditRecord":          wire.AuditRecord{},
		"AuditList":            wire.AuditList{},
		"ProbeResult":          wire.ProbeResult{},
		"ProbeResponse":        wire.ProbeResponse{},
		"Usage":                wire.Usage{},
		"Key":                  wire.Key{},
		"KeyList":              wire.KeyList{},
		"ProcessRequest":       wire.ProcessRequest{},
		"Process":              wire.Process{},
		"ProcessList":          wire.ProcessList{},
		"ProcessOutput":        wire.ProcessOutput{},
		"ProcessStdinRequest":  wire.ProcessStdinRequest{},
		"WindowSize":           wire.WindowSize{},
	} {
		got, want, ok := schemaAndType(t, doc, name, typ)
		if ok && !slices.Equal(got, want) {
			t.Errorf("schema %s has properties %v, Go type has %v", name, got, want)
		}
	}
}

// TestOpenAPISchemasMatchClientTypes: the Go client's types are the wire
// types (aliases), so the schema test above covers them; ExecResult, the
// client's own (it keeps the output out of its JSON), has only fields of
// its schema.
func TestOpenAPISchemasMatchClientTypes(t *testing.T) {
	doc := loadOpenAPI(t)
	got, want, ok := schemaAndType(t, doc, "ExecResult", client.ExecResult{})
	if !ok {
		return
	}
	for _, f := range want {
		if !slices.Contains(got, f) {
			t.Errorf("client.ExecResult field %q is not in schema ExecResult %v", f, got)
		}
	}
	var _ = []any{ // the client's names are the wire types themselves
		func(v client.SandboxInfo) wire.Sandbox { return v },
		func(v client.Template) wire.TemplateInfo { return v },
		func(v client.AuditRecord) wire.AuditRecord { return v },
		func(v client.ProcessInfo) wire.Process { return v },
		func(v client.ArchiveResult) wire.WriteArchiveResponse { return v },
	}
}

// schemaAndType returns the sorted properties of schema name and JSON
// fields of typ; ok is false (and the test failed) without the schema.
func schemaAndType(t *testing.T, doc openAPIDocument, name string, typ any) (props, fields []string, ok bool) {
	t.Helper()
	s, ok := doc.Components.Schemas[name]
	if !ok {
		t.Errorf("schema %s missing", name)
		return nil, nil, false
	}
	for p := range s.Properties {
		props = append(props, p)
	}
	fields = jsonFields(reflect.TypeOf(typ))
	sort.Strings(props)
	sort.Strings(fields)
	return props, fields, true
}

func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			out = append(out, jsonFields(ft)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}
