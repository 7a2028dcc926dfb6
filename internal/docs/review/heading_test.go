package review

import (
	"strings"
	"testing"
)

func TestParseHeading(t *testing.T) {
	tests := []struct {
		in                   string
		style, number, title string // style "" means: not a heading
		body                 string
	}{
		// Positives, one per style the contracts use.
		{"7. LIMITATION OF LIABILITY", "dotted-1", "7", "LIMITATION OF LIABILITY", ""},
		{"7.1 Limitation of liability", "dotted-2", "7.1", "Limitation of liability", ""},
		{"7.1.2 Cap on Damages", "dotted-3", "7.1.2", "Cap on Damages", ""},
		{"Section 7 - Limitation of Liability.", "section-1", "7", "Limitation of Liability", ""},
		{"SECTION 7. LIMITATION OF LIABILITY", "section-1", "7", "LIMITATION OF LIABILITY", ""},
		{"Section 7.01 Cap. The total liability is capped.", "section-2", "7.01", "Cap", "The total liability is capped."},
		{"ARTICLE VII", "article", "VII", "", ""},
		{"Article 7 - Limitation of Liability", "article", "7", "Limitation of Liability", ""},
		{"ARTICLE VII LIMITATION OF LIABILITY", "article", "VII", "LIMITATION OF LIABILITY", ""},
		{"7. Limitation of Liability. In no event shall either party be liable.", "dotted-1", "7", "Limitation of Liability", "In no event shall either party be liable."},
		{"(a) Exclusion of Damages. Neither party is liable.", "paren", "a", "Exclusion of Damages", "Neither party is liable."},
		{"VII. GENERAL PROVISIONS", "roman", "VII", "GENERAL PROVISIONS", ""},
		{"LIMITATION OF LIABILITY", "caps", "", "LIMITATION OF LIABILITY", ""},
		{"Governing Law", "title", "", "Governing Law", ""},
		{"Choice of Law; Venue.", "title", "", "Choice of Law; Venue", ""},
		{"Governing Law. This Agreement is governed by the laws of New York.", "title-runin", "", "Governing Law", "This Agreement is governed by the laws of New York."},
		{"GOVERNING LAW: This Agreement is governed by the laws of New York.", "caps-runin", "", "GOVERNING LAW", "This Agreement is governed by the laws of New York."},
		{"Laws That Apply. This Agreement is governed by Texas law.", "title-runin", "", "Laws That Apply", "This Agreement is governed by Texas law."},
		{"7.2 Customer shall pay all fees.", "dotted-2", "7.2", "", "Customer shall pay all fees."},
		// OCR damage the headings survive.
		{"l2. GOVERNING LAW", "dotted-1", "12", "GOVERNING LAW", ""},
		{"Artide 7 - Term", "article", "7", "Term", ""},
		{"Sectio n 4.02 Notices. All notices must be in writing.", "section-2", "4.02", "Notices", "All notices must be in writing."},
		{"7.Intellectual Property", "dotted-1", "7", "Intellectual Property", ""},
		{"Notices.All notices must be in writing.", "title-runin", "", "Notices", "All notices must be in writing."},
		{"Insuran ce. Provider shall maintain insurance.", "title-runin", "", "Insuran ce", "Provider shall maintain insurance."},
		{"3.02 I nsurance. Provider shall maintain insurance.", "dotted-2", "3.02", "I nsurance", "Provider shall maintain insurance."},
		{"Section 6 -- Notices.", "section-1", "6", "Notices", ""},
		{"Section 6 ~ Notices.", "section-1", "6", "Notices", ""},
		{"Article 5 -- THE SERVICES", "article", "5", "THE SERVICES", ""},
		{"_5. Export Compliance", "dotted-1", "5", "Export Compliance", ""},
		{"~Section 6 - Notices.", "section-1", "6", "Notices", ""},
		{"(©) Limitation of Liability. In no event shall either party be liable.", "paren", "c", "Limitation of Liability", "In no event shall either party be liable."},
		{"'INTELLECTUAL PROPERTY", "caps", "", "INTELLECTUAL PROPERTY", ""},
		{"_ Assignment; Change of Control. Neither party may assign it.", "title-runin", "", "Assignment; Change of Control", "Neither party may assign it."},
		{"\" SECTION 16. DURATION OF CONFIDENTIALITY OBLIGATIONS", "section-1", "16", "DURATION OF CONFIDENTIALITY OBLIGATIONS", ""},
		{"DATA PROTECTION . c .", "caps", "", "DATA PROTECTION", ""},
		{"SCHEDULE A", "caps", "", "SCHEDULE A", ""},
		// Near misses: none of these is a heading.
		{"30 days after the Effective Date, the parties shall meet.", "", "", "", ""},
		{"(a) any breach of confidentiality;", "", "", "", ""},
		{"(b) Customer Data;", "", "", "", ""},
		{"1. the categories of personal data are described in the addendum;", "", "", "", ""},
		{"\"Affiliate\" means any entity that controls a party.", "", "", "", ""},
		{"Section 5 applies to all statements of work.", "", "", "", ""},
		{"Article 3 of the Convention applies.", "", "", "", ""},
		{"IN NO EVENT SHALL EITHER PARTY BE LIABLE FOR ANY INDIRECT DAMAGES.", "", "", "", ""},
		{"Acme Corp. shall deliver the Services.", "", "", "", ""},
		{"The fees are due monthly. Customer shall pay them.", "", "", "", ""},
		{"Customer shall pay each invoice within thirty (30) days.", "", "", "", ""},
		{"1.5x the fees paid.", "", "", "", ""},
		{"2024 Annual Plan", "", "", "", ""},
		{"_ _ _ Signature", "", "", "", ""},
		{"'5 days' notice applies.", "", "", "", ""},
		{"Section 5 -- see above for the fees.", "", "", "", ""},
		{"© 2025 Acme Corp. All rights reserved.", "", "", "", ""},
		{"\"Services\" means the services described in each statement of work.", "", "", "", ""},
		{"\"1. the categories of personal data are described in the addendum;", "", "", "", ""},
		{"_ the parties agree as follows", "", "", "", ""},
		{"Data protection . c .", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			h, body := parseHeading(cleanText(tt.in))
			if tt.style == "" {
				if h != nil {
					t.Fatalf("got heading %+v, want none", *h)
				}
				return
			}
			if h == nil {
				t.Fatalf("no heading, want %s %q", tt.style, tt.title)
			}
			if h.style != tt.style || h.number != tt.number || h.title != tt.title || body != tt.body {
				t.Errorf("got (%s, %q, %q, body %q), want (%s, %q, %q, body %q)",
					h.style, h.number, h.title, body, tt.style, tt.number, tt.title, tt.body)
			}
		})
	}
}

// outline renders a section tree as "depth:title" lines.
func outline(d *document) string {
	var b strings.Builder
	var walk func(s *section, depth int)
	walk = func(s *section, depth int) {
		for _, c := range s.children {
			b.WriteString(strings.Repeat("  ", depth) + c.h.title + "\n")
			walk(c, depth+1)
		}
	}
	walk(d.root, 0)
	return b.String()
}

func paras(texts ...string) []Paragraph {
	out := make([]Paragraph, len(texts))
	for i, t := range texts {
		out[i] = Paragraph{Text: t, Pages: []int{1 + i/10}}
	}
	return out
}

func TestBuildDocument(t *testing.T) {
	tests := []struct {
		name  string
		paras []Paragraph
		want  string
	}{
		{"articles with sections, list items, a signature block", paras(
			"MASTER SERVICES AGREEMENT",
			"ARTICLE VII", "RISK ALLOCATION",
			"Section 7.01 Limitation of Liability. In no event shall either party be liable for:",
			"(a) any indirect damages;", "(b) lost profits.",
			"1. The cap applies to all claims.",
			"Section 7.02 Indemnification. Provider shall defend Customer.",
			"ARTICLE VIII", "GENERAL",
			"Section 8.01 Notices. All notices must be in writing.",
			"IN WITNESS WHEREOF, the parties have executed this Agreement.",
			"ACME CORPORATION",
		// "1." starts a numbered level inside 7.01: an untitled child,
		// still inside the clause it belongs to.
		), "MASTER SERVICES AGREEMENT\n  RISK ALLOCATION\n    Limitation of Liability\n      \n    Indemnification\n  GENERAL\n    Notices\nACME CORPORATION\n"},
		{"numbered sections with subsections and untitled numbered paragraphs", paras(
			"1. DEFINITIONS", "Terms have the meanings below.",
			"2. FEES", "2.1 Customer shall pay all fees.", "2.2 Late fees apply.",
			"3. GENERAL PROVISIONS", "3.1 Governing Law. New York law governs.", "3.2 Assignment. No assignment.",
			"4. TERM", "This Agreement lasts one year.",
		), "DEFINITIONS\nFEES\n  \n  \nGENERAL PROVISIONS\n  Governing Law\n  Assignment\nTERM\n"},
		{"run-in headings without numbers", paras(
			"Governing Law. New York law governs.", "Notices. Notices must be in writing.", "Assignment. No assignment.",
		), "Governing Law\nNotices\nAssignment\n"},
		{"a numbered list inside a section is not a section", paras(
			"7. LIMITATION OF LIABILITY", "The cap is fixed.", "1. The cap applies to claims.", "2. The cap applies to costs.", "8. NOTICES", "In writing.",
		), "LIMITATION OF LIABILITY\nNOTICES\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := buildDocument(tt.paras)
			if got := outline(d); got != tt.want {
				t.Errorf("outline:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// sectionBody is the text a section holds, headings left out.
func sectionBody(d *document, s *section) string {
	var out []string
	for _, u := range d.units[s.first:s.end] {
		if strings.TrimSpace(u.body) != "" {
			out = append(out, u.body)
		}
	}
	return strings.Join(out, "|")
}

func TestSectionBodyExcludesSignatureBlock(t *testing.T) {
	for _, sig := range []string{"IN WITNESS WHEREOF, the parties sign.", "Signed by the authorised representatives of the parties.",
		"Signed for and on behalf of Müller Logistik GmbH", "EXECUTED AS A DEED BY the parties"} {
		d := buildDocument(paras("9. NOTICES", "Notices must be in writing.", sig, "By: ____"))
		if got := sectionBody(d, d.sections[0]); got != "Notices must be in writing." {
			t.Errorf("%q: body %q", sig, got)
		}
	}
}

// TestStructureOfOtherDrafters: "Clause 7 - Liability" headings, a
// heading wrapped in a table cell or narrow column, a run-in heading
// whose text starts with its paragraph's number, and a sentence an
// extraction cut into lines of capitals.
func TestStructureOfOtherDrafters(t *testing.T) {
	tests := []struct {
		name    string
		paras   []Paragraph
		outline string
		bodies  []string
	}{
		{"clause headings", paras("Clause 7 \u2013 Liability", "7.1 The cap is fixed.", "Clause 8 - Notices", "Notices are written."),
			"Liability\n  \nNotices\n", []string{"The cap is fixed.", "The cap is fixed.", "Notices are written."}},
		{"a heading wrapped in a cell", paras("8. Liability and", "Indemnities", "Each party indemnifies the other.", "9. Termination Without", "Cause", "Either party may end it."),
			"Liability and Indemnities\nTermination Without Cause\n", []string{"Each party indemnifies the other.", "Either party may end it."}},
		{"a run-in heading's paragraph number", paras("9. Governing Law. 9.1 This Agreement is governed by the laws of New York."),
			"Governing Law\n", []string{"This Agreement is governed by the laws of New York."}},
		{"capitals cut into lines", paras("10. Warranty. PROVIDER WARRANTS THAT THE SERVICES WILL BE", "PERFORMED", "IN A", "WORKMANLIKE MANNER.", "11. NOTICES", "In writing."),
			"Warranty\nNOTICES\n", []string{"PROVIDER WARRANTS THAT THE SERVICES WILL BE PERFORMED IN A WORKMANLIKE MANNER.", "In writing."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := buildDocument(tt.paras)
			if got := outline(d); got != tt.outline {
				t.Errorf("outline:\n%s\nwant:\n%s", got, tt.outline)
			}
			for i, s := range d.sections {
				if i < len(tt.bodies) && sectionBody(d, s) != tt.bodies[i] {
					t.Errorf("section %d body %q, want %q", i, sectionBody(d, s), tt.bodies[i])
				}
			}
		})
	}
}
