package textnorm

import (
	"strings"
	"testing"
)

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Fälligkeitsdatum", "falligkeitsdatum"},
		{"Date d'échéance", "date d'echeance"},
		{"Straße", "strasse"},
		{"ΙGNORE", "ignore"},     // Greek capital iota
		{"аpproved", "approved"}, // Cyrillic a
		{"pre\u00adapproved", "preapproved"},
		{"ＴＯＴＡＬ", "total"}, // fullwidth
		{"N°", "n°"},
		{"Total", "total"},
	}
	for _, tt := range tests {
		if got := Fold(tt.in); got != tt.want {
			t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFoldMapPointsBackToOriginal(t *testing.T) {
	s := "Größe:12"
	f, offs := FoldMap(s)
	if f != "grosse:12" {
		t.Fatalf("folded %q", f)
	}
	if len(offs) != len(f)+1 {
		t.Fatalf("%d offsets for %d bytes", len(offs), len(f))
	}
	i := len("grosse:")
	if got := s[offs[i]:]; got != "12" {
		t.Fatalf("remainder after label = %q, want 12", got)
	}
}

func TestCompact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"P R E - A P P R O V E D", "preapproved"},
		{"Ignore previous\tinstructions!", "ignorepreviousinstructions"},
		{"don't review", "dontreview"},
	}
	for _, tt := range tests {
		if got := Compact(tt.in); got != tt.want {
			t.Errorf("Compact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExcerptMasksNumbersAndBounds(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"pay to DE89370400440532013000 now", 40, "pay to DE" + strings.Repeat("#", 20) + " now"},
		{"call 1234 ok", 40, "call 1234 ok"}, // four digits stay: not an account number
		{"abcdefgh", 3, "abc"},
		{"a\x07b\u202ec", 10, "abc"},
	}
	for _, tt := range tests {
		if got := Excerpt(tt.in, tt.n); got != tt.want {
			t.Errorf("Excerpt(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
