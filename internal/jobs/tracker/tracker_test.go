package tracker

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"
)

func items() []Item {
	return []Item{
		{Document: "msa.pdf", DocID: "0123456789abcdef", Kind: KindObligation, Party: "Provider",
			Action: "deliver the final report to the Steering Committee, in writing; with copies", Deadline: "on or before June 30, 2025",
			DueDate: "2025-06-30", Page: 2, TextSpan: "Provider shall deliver the final report to the Steering Committee on or before June 30, 2025. " +
				strings.Repeat("Ünïcödé text that is long enough to need folding more than once. ", 3)},
		{Document: "msa.pdf", DocID: "0123456789abcdef", Kind: KindObligation, Party: "Customer",
			Action: "pay each undisputed invoice", Deadline: "within thirty (30) days after receipt of the invoice"},
		// A hostile contract: a formula for the spreadsheet, a new
		// component and property for the calendar.
		{Document: "evil.pdf", DocID: "fedcba9876543210", Kind: KindNoticeDeadline, Party: "=HYPERLINK(\"http://x\")",
			Action: "x\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:injected", DueDate: "2026-01-02", Page: 1},
	}
}

func TestCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, items()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != "document,doc_sha256,kind,party,action,deadline,due_date,page,text_span" {
		t.Fatalf("rows %q", rows)
	}
	if rows[2][6] != "" || rows[2][7] != "" || rows[2][5] != "within thirty (30) days after receipt of the invoice" {
		t.Errorf("an obligation without a due date: %q", rows[2])
	}
	if got := rows[3][3]; !strings.HasPrefix(got, "'=") {
		t.Errorf("formula not neutralised: %q", got)
	}
	if strings.ContainsAny(rows[3][4], "\r\n") {
		t.Errorf("control characters kept: %q", rows[3][4])
	}
}

// unfold reverses RFC 5545 folding.
func unfold(s string) []string {
	return strings.Split(strings.TrimSuffix(strings.ReplaceAll(s, "\r\n ", ""), "\r\n"), "\r\n")
}

func TestICS(t *testing.T) {
	var b bytes.Buffer
	stamp := time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)
	n, err := WriteICS(&b, items(), stamp)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d events, want 2 (the item without a due date has no day)", n)
	}
	out := b.String()
	if !strings.HasSuffix(out, "\r\n") || strings.Contains(strings.ReplaceAll(out, "\r\n", ""), "\n") {
		t.Fatal("lines must end in CRLF, and only there")
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n") {
		if len(l) > 75 {
			t.Errorf("a line of %d octets: %q", len(l), l)
		}
		if !strings.ContainsRune(l, '\uFFFD') && !bytes.Equal([]byte(l), []byte(strings.ToValidUTF8(l, "!"))) {
			t.Errorf("a fold split a UTF-8 sequence: %q", l)
		}
	}
	lines := unfold(out)
	count := func(prefix string) int {
		c := 0
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				c++
			}
		}
		return c
	}
	if count("BEGIN:VEVENT") != 2 || count("END:VEVENT") != 2 || count("SUMMARY:") != 2 || count("DTSTAMP:20261203T160000Z") != 2 {
		t.Errorf("the hostile item added components or properties:\n%s", strings.Join(lines, "\n"))
	}
	if lines[0] != "BEGIN:VCALENDAR" || lines[len(lines)-1] != "END:VCALENDAR" {
		t.Errorf("not one VCALENDAR: %q ... %q", lines[0], lines[len(lines)-1])
	}
	want := []string{"DTSTART;VALUE=DATE:20250630", "DTEND;VALUE=DATE:20250701",
		`SUMMARY:Provider: deliver the final report to the Steering Committee\, in writing\; with copies`}
	for _, w := range want {
		if count(w) != 1 {
			t.Errorf("no line %q in\n%s", w, strings.Join(lines, "\n"))
		}
	}
	var uids []string
	for _, l := range lines {
		if strings.HasPrefix(l, "UID:") {
			uids = append(uids, l)
		}
	}
	var again bytes.Buffer
	if _, err := WriteICS(&again, items(), stamp.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if len(uids) != 2 || uids[0] == uids[1] || !strings.Contains(again.String(), uids[0]) {
		t.Errorf("UIDs %q: want distinct, and stable across exports", uids)
	}
}

func TestFold(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("a", 75), strings.Repeat("a", 76), strings.Repeat("é", 100)} {
		f := fold(s)
		for _, l := range strings.Split(strings.TrimSuffix(f, "\r\n"), "\r\n") {
			if len(l) > 75 {
				t.Errorf("fold(%d bytes): a line of %d", len(s), len(l))
			}
		}
		if got := strings.ReplaceAll(strings.TrimSuffix(f, "\r\n"), "\r\n ", ""); got != s {
			t.Errorf("unfolding gives %q, want %q", got, s)
		}
	}
}
