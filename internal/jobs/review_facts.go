package jobs

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
	"github.com/airlock-dev/airlock/internal/jobs/conflicts"
	"github.com/airlock-dev/airlock/internal/jobs/tracker"
)

// DueItem is one entry of the --as-of view: something that falls due
// within the window.
type DueItem struct {
	Kind    string `json:"kind"`  // obligation, notice_deadline, expiration
	Party   string `json:"party"` // "" for the contract's own dates
	What    string `json:"what"`
	DueDate string `json:"due_date"`
	InDays  int    `json:"in_days"`
	Page    int    `json:"page"`
}

// DueWithin lists what falls due from asOf to asOf + days (inclusive),
// soonest first: obligations with a due date, notice deadlines and the
// expiration date. It reads only the validated result.
func DueWithin(res *result.Result, asOf time.Time, days int) []DueItem {
	out := []DueItem{}
	add := func(kind, party, what, date string, page int) {
		d, err := time.Parse("2006-01-02", date)
		if err != nil {
			return
		}
		in := int(d.Sub(asOf.UTC().Truncate(24*time.Hour)).Hours() / 24)
		if in >= 0 && in <= days {
			out = append(out, DueItem{Kind: kind, Party: party, What: what, DueDate: date, InDays: in, Page: page})
		}
	}
	for _, o := range res.Obligations {
		add(tracker.KindObligation, o.Party, o.Action, o.DueDate, o.Page)
	}
	for _, n := range res.KeyDates.NoticeDeadlines {
		add(tracker.KindNoticeDeadline, "", "notice of "+n.Event+" ("+n.Notice+")", n.Date, n.Page)
	}
	add(tracker.KindExpiration, "", "the contract expires", res.KeyDates.ExpirationDate, 0)
	sort.SliceStable(out, func(i, j int) bool { return out[i].DueDate < out[j].DueDate })
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// addFacts copies the validated facts into the line, and runs the
// conflicts check and the --as-of view over them.
func (r *Review) addFacts(line *ReviewLine, res *result.Result) {
	line.Parties, line.KeyDates = nonNil(res.Parties), res.KeyDates
	line.DefinedTerms, line.Obligations = nonNil(res.DefinedTerms), nonNil(res.Obligations)
	line.KeyDates.NoticeDeadlines = nonNil(line.KeyDates.NoticeDeadlines)
	if !r.AsOf.IsZero() {
		line.DueSoon = DueWithin(res, r.AsOf, r.DueWithinDays)
	}
	if r.Conflicts != nil {
		var names []string
		for _, p := range res.Parties {
			names = append(names, p.Name)
			if p.ShortName != "" {
				names = append(names, p.ShortName)
			}
		}
		line.Conflicts = r.Conflicts.Check(names)
	}
}

func adverse(hits []conflicts.Hit) int {
	n := 0
	for _, h := range hits {
		if h.Kind == conflicts.KindAdverse {
			n++
		}
	}
	return n
}

// factsNote is the human summary's line about parties, conflicts and
// what falls due.
func factsNote(l ReviewLine) string {
	var b strings.Builder
	if len(l.Parties) > 0 {
		var names []string
		for _, p := range l.Parties {
			n := p.Name
			if p.Role != "" {
				n += " (" + p.Role + ")"
			}
			names = append(names, n)
		}
		fmt.Fprintf(&b, "\n    parties: %s; %d obligations, %d defined terms", strings.Join(names, ", "), len(l.Obligations), len(l.DefinedTerms))
	}
	for _, h := range l.Conflicts {
		if h.Kind == conflicts.KindAdverse {
			fmt.Fprintf(&b, "\n    CONFLICT: %q is on the adverse parties list as %q", h.Party, h.Entry)
		}
	}
	for _, d := range l.DueSoon {
		fmt.Fprintf(&b, "\n    due %s (in %d days): %s %s", d.DueDate, d.InDays, d.Party, d.What)
	}
	return b.String()
}

// track collects a reviewed document's obligations and deadlines for
// WriteTracker (Finalize runs in input order).
func (r *Review) track(doc Doc, o *Outcome) {
	if !r.Track || o.Err != nil {
		return
	}
	l, ok := o.Fields.(ReviewLine)
	if !ok {
		return
	}
	base := tracker.Item{Document: filepath.Base(doc.Path), DocID: doc.ID}
	var items []tracker.Item
	for _, ob := range l.Obligations {
		it := base
		it.Kind, it.Party, it.Action, it.Deadline, it.DueDate, it.Page, it.TextSpan =
			tracker.KindObligation, ob.Party, ob.Action, ob.Deadline, ob.DueDate, ob.Page, ob.TextSpan
		items = append(items, it)
	}
	for _, n := range l.KeyDates.NoticeDeadlines {
		it := base
		it.Kind, it.Action, it.Deadline, it.DueDate, it.Page, it.TextSpan =
			tracker.KindNoticeDeadline, "last day for notice of "+n.Event, n.Notice, n.Date, n.Page, n.TextSpan
		items = append(items, it)
	}
	if l.KeyDates.ExpirationDate != "" {
		it := base
		it.Kind, it.Action, it.DueDate = tracker.KindExpiration, "the contract expires", l.KeyDates.ExpirationDate
		items = append(items, it)
	}
	r.mu.Lock()
	r.tracked = append(r.tracked, items...)
	r.mu.Unlock()
}

// WriteTracker writes the batch's obligations and deadlines as CSV and
// iCalendar to the paths given ("" skips one); it returns the number of
// rows and of calendar events.
func (r *Review) WriteTracker(csvPath, icsPath string, now time.Time) (rows, events int, err error) {
	r.mu.Lock()
	items := append([]tracker.Item(nil), r.tracked...)
	r.mu.Unlock()
	write := func(path string, fn func(f *os.File) error) error {
		if path == "" {
			return nil
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if err := write(csvPath, func(f *os.File) error { return tracker.WriteCSV(f, items) }); err != nil {
		return 0, 0, fmt.Errorf("--obligations-csv: %w", err)
	}
	err = write(icsPath, func(f *os.File) error {
		var err error
		events, err = tracker.WriteICS(f, items, now)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("--obligations-ics: %w", err)
	}
	return len(items), events, nil
}
