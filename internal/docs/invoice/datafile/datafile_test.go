package datafile

import (
	"strings"
	"testing"
)

type sample struct {
	Name  string   `yaml:"name"`
	Items []string `yaml:"items"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"ok", "name: a\nitems: [x, y]\n", ""},
		{"unknown key", "name: a\nitmes: [x]\n", "f.yml:2: field itmes not found"},
		{"duplicate key", "name: a\nname: b\n", `f.yml:2: mapping key "name" already defined`},
		{"wrong type", "name: a\nitems: 3\n", "f.yml:2: cannot unmarshal"},
		{"syntax", "name: [a\n", "f.yml:"},
		{"two documents", "name: a\n---\nname: b\n", "more than one YAML document"},
		{"empty", "", "empty file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s sample
			_, err := Decode("f.yml", []byte(tt.in), &s)
			if tt.wantErr == "" {
				if err != nil || s.Name != "a" || len(s.Items) != 2 {
					t.Fatalf("got %+v, %v", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestLookupAndErrorf(t *testing.T) {
	var s sample
	root, err := Decode("f.yml", []byte("name: a\nitems:\n  - x\n  - y\n"), &s)
	if err != nil {
		t.Fatal(err)
	}
	err = Errorf("f.yml", Lookup(root, "items", 1), "bad item")
	if err.Error() != "f.yml:4: bad item" {
		t.Fatalf("got %q", err)
	}
	// A missing step stops at the deepest node found.
	if n := Lookup(root, "items", 7); n.Line != 3 {
		t.Fatalf("missing index resolved to line %d, want the sequence at 3", n.Line)
	}
}
