// Package tracker exports a review batch's obligations and deadlines for
// a docketing system or a calendar: CSV, and iCalendar (RFC 5545).
//
// Everything it writes comes from guest results (validated, but written
// from hostile documents), so CSV cells that a spreadsheet would run as a
// formula are neutralised, and iCalendar text is escaped, stripped of
// control characters and folded, so a contract cannot add a property or a
// component to the calendar. It only formats; it never reads a document.
package tracker

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kinds of item.
const (
	KindObligation     = "obligation"
	KindNoticeDeadline = "notice_deadline"
	KindExpiration     = "expiration"
)

// Item is one obligation or deadline of one document.
type Item struct {
	Document string // the file's base name
	DocID    string // the document's id (SHA-256 prefix)
	Kind     string
	Party    string
	Action   string // for a deadline: what it is, e.g. "notice of non-renewal"
	Deadline string // as written
	DueDate  string // YYYY-MM-DD or ""
	Page     int
	TextSpan string
}

var csvHeader = []string{"document", "doc_sha256", "kind", "party", "action", "deadline", "due_date", "page", "text_span"}

// WriteCSV writes the items with a header row.
func WriteCSV(w io.Writer, items []Item) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, it := range items {
		page := ""
		if it.Page > 0 {
			page = strconv.Itoa(it.Page)
		}
		row := []string{it.Document, it.DocID, it.Kind, it.Party, it.Action, it.Deadline, it.DueDate, page, it.TextSpan}
		for i := range row {
			row[i] = cell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// cell neutralises a value a spreadsheet would evaluate (OWASP's CSV
// injection advice): a leading =, +, -, @, tab or CR gets a quote mark.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\t' {
			return ' '
		}
		return r
	}, s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// WriteICS writes the items that have a due date as all-day events of
// one VCALENDAR. stamp is the DTSTAMP (the time of the export, UTC).
// Items without a due date cannot be put on a calendar and are skipped;
// the CSV has them.
func WriteICS(w io.Writer, items []Item, stamp time.Time) (int, error) {
	var b strings.Builder
	line := func(s string) { b.WriteString(fold(s)) }
	line("BEGIN:VCALENDAR")
	line("VERSION:2.0")
	line("PRODID:-//airlock//contract review obligations//EN")
	line("CALSCALE:GREGORIAN")
	n := 0
	for _, it := range items {
		day, err := time.Parse("2006-01-02", it.DueDate)
		if err != nil {
			continue
		}
		n++
		summary := it.Action
		if it.Party != "" {
			summary = it.Party + ": " + it.Action
		}
		desc := fmt.Sprintf("%s (%s), page %d", it.Document, it.DocID, it.Page)
		if it.Deadline != "" {
			desc += "\nDeadline: " + it.Deadline
		}
		if it.TextSpan != "" {
			desc += "\n" + it.TextSpan
		}
		line("BEGIN:VEVENT")
		line("UID:" + uid(it))
		line("DTSTAMP:" + stamp.UTC().Format("20060102T150405Z"))
		line("DTSTART;VALUE=DATE:" + day.Format("20060102"))
		line("DTEND;VALUE=DATE:" + day.AddDate(0, 0, 1).Format("20060102"))
		line("SUMMARY:" + escape(summary))
		line("DESCRIPTION:" + escape(desc))
		line("CATEGORIES:" + escape(it.Kind))
		line("TRANSP:TRANSPARENT")
		line("END:VEVENT")
	}
	line("END:VCALENDAR")
	_, err := io.WriteString(w, b.String())
	return n, err
}

// uid is stable across exports of the same document, so a calendar that
// imports the file again updates its events instead of doubling them.
func uid(it Item) string {
	h := sha256.Sum256([]byte(strings.Join([]string{it.DocID, it.Kind, it.Party, it.Action, it.Deadline, it.DueDate,
		strconv.Itoa(it.Page)}, "\x00")))
	return hex.EncodeToString(h[:16]) + "@airlock"
}

// escape is RFC 5545 TEXT (3.3.11): backslash, semicolon, comma and
// newline escaped; other control characters dropped.
func escape(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == ';':
			b.WriteString(`\;`)
		case r == ',':
			b.WriteString(`\,`)
		case r == '\n':
			b.WriteString(`\n`)
		case unicode.IsControl(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fold ends a content line with CRLF, folding it (RFC 5545 3.1) so no
// line is longer than 75 octets, never inside a UTF-8 sequence; each
// continuation starts with a space, which counts.
func fold(s string) string {
	var b strings.Builder
	limit := 75
	for len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		b.WriteString(s[:cut])
		b.WriteString("\r\n ")
		s = s[cut:]
		limit = 74
	}
	b.WriteString(s)
	b.WriteString("\r\n")
	return b.String()
}
