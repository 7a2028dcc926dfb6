package invoice

import (
	"testing"

	"github.com/airlock-dev/airlock/internal/docs/invoice/hidden"
	"github.com/airlock-dev/airlock/internal/docs/invoice/result"
)

// Letterheads the first corpus did not have, as invoicecorpus2 draws them:
// rows and the hidden-text screen.

// withInk extracts with an ink render of the runs (skip: runs that draw
// no ink).
func withInk(t *testing.T, runs []tx, skip map[string]bool) *Result {
	t.Helper()
	doc := textDoc(runs)
	return mustExtract(t, doc, Options{Renders: map[int]*hidden.Render{1: inkFor(doc.Pages[0], runs, skip)}})
}

func wantFields(t *testing.T, res *Result, want map[string]string) {
	t.Helper()
	for f, v := range want {
		if got := field(res, f); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
}

// TestTightLetterheadIsNotInterleaved: a small address set just under a
// large name is its own line. Built from boxes alone, the two lines made
// one row, read as "Acme 12 Main Street, Springfield Widgets Inc.", and
// their boxes' overlap (ascent and descent, no ink) was taken for text
// printed over text.
func TestTightLetterheadIsNotInterleaved(t *testing.T) {
	runs := []tx{
		{x: 72, y: 62, text: "Acme Widgets Inc.", size: 20},
		{x: 72, y: 67.5, text: "12 Main Street, Springfield", size: 7.5},
		{x: 540, y: 62, text: "INVOICE", size: 16, right: true},
		{x: 72, y: 120, text: "Invoice No.:"}, {x: 200, y: 120, text: "AW-2210"},
		{x: 360, y: 300, text: "Total"}, {x: 540, y: 300, text: "$410.00", right: true},
	}
	res := withInk(t, runs, nil)
	wantFields(t, res, map[string]string{result.FieldVendorName: "Acme Widgets Inc.", result.FieldInvoiceNumber: "AW-2210"})
	if len(res.HiddenText) != 0 {
		t.Errorf("tight leading reported as hidden text: %+v", res.HiddenText)
	}
}

// TestNameBesideItsAddress: an address in 7.5 pt set beside a 15 pt name
// is another block, however close.
func TestNameBesideItsAddress(t *testing.T) {
	name := "Brunner Präzision AG"
	ax := 72 + float64(len([]rune(name)))*charW(15) + 10
	runs := []tx{
		{x: 72, y: 60, text: name, size: 15},
		{x: ax, y: 52, text: "Werkstrasse 31", size: 7.5},
		{x: ax, y: 61, text: "8400 Winterthur", size: 7.5},
		{x: ax, y: 70, text: "Tel. +41 52 555 01 00", size: 7.5},
		{x: 340, y: 130, text: "Rechnungsnummer:"}, {x: 540, y: 130, text: "RE2603170-05", right: true},
	}
	wantFields(t, withInk(t, runs, nil), map[string]string{result.FieldVendorName: name})
}

// TestRightAlignedLetterheadOverItsAddress: the case, a name
// right-aligned over its address (both right-aligned, the address just
// under), beside a large title the address must not join.
func TestRightAlignedLetterheadOverItsAddress(t *testing.T) {
	runs := []tx{
		{x: 540, y: 56, text: "Crestline Fastener Co.", size: 14, right: true},
		{x: 540, y: 62, text: "7710 Quarry Road", size: 8, right: true},
		{x: 540, y: 71, text: "Duluth, MN 55811", size: 8, right: true},
		{x: 72, y: 62, text: "Invoice", size: 24},
		{x: 120, y: 127, text: "Invoice No.", size: 7.5}, {x: 120, y: 144, text: "20265796"},
		{x: 360, y: 300, text: "Total"}, {x: 540, y: 300, text: "$410.00", right: true},
	}
	wantFields(t, withInk(t, runs, nil), map[string]string{result.FieldVendorName: "Crestline Fastener Co.", result.FieldInvoiceNumber: "20265796"})
}

// TestSeparatorsAreNotHiddenText: the "·" of a 6.5 pt sender line draws
// almost no ink; a word without a letter or digit is no hidden text.
func TestSeparatorsAreNotHiddenText(t *testing.T) {
	runs := []tx{
		{x: 72, y: 60, text: "Müller GmbH", size: 16},
		{x: 72, y: 133, text: "Müller GmbH", size: 6.5}, {x: 115, y: 133, text: "·", size: 6.5},
		{x: 120, y: 133, text: "Hauptstr. 5", size: 6.5}, {x: 160, y: 133, text: "·", size: 6.5},
		{x: 165, y: 133, text: "10115 Berlin", size: 6.5},
	}
	res := withInk(t, runs, map[string]bool{"·": true})
	if len(res.HiddenText) != 0 || len(res.Injection) != 0 {
		t.Errorf("separators reported: hidden %+v injection %+v", res.HiddenText, res.Injection)
	}
	// The sender line's name is a candidate, not the letterhead's reading.
	if got := field(res, result.FieldVendorName); got != "Müller GmbH" {
		t.Errorf("vendor %q", got)
	}
}
