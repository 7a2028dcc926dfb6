package jobs

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/docs/review/result"
	"github.com/airlock-dev/airlock/internal/jobs/conflicts"
)

func factsResult() *result.Result {
	return &result.Result{
		Parties: []result.Party{{Name: "Globex Industries, Inc.", Role: "Customer"}, {Name: "Initech Software LLC", Role: "Provider", ShortName: "Initech"}},
		KeyDates: result.KeyDates{EffectiveDate: "2025-03-03", ExpirationDate: "2027-03-03",
			NoticeDeadlines: []result.NoticeDeadline{{Event: "non-renewal", Notice: "sixty (60) days", Date: "2027-01-02", Page: 2}}},
		Obligations: []result.Obligation{
			{Party: "Provider", Action: "deliver the plan", Deadline: "within fifteen (15) days after the Effective Date", DueDate: "2025-03-18", Page: 1},
			{Party: "Provider", Action: "deliver the report", Deadline: "on or before June 30, 2025", DueDate: "2025-06-30", Page: 2},
			{Party: "Customer", Action: "pay each invoice", Deadline: "within thirty (30) days after receipt"},
		},
	}
}

func TestDueWithin(t *testing.T) {
	res := factsResult()
	got := DueWithin(res, time.Date(2025, 3, 10, 15, 0, 0, 0, time.UTC), 30)
	if len(got) != 1 || got[0].What != "deliver the plan" || got[0].InDays != 8 {
		t.Errorf("as of 2025-03-10, 30 days: %+v, want the plan in 8 days", got)
	}
	got = DueWithin(res, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 120)
	if len(got) != 2 || got[0].Kind != "notice_deadline" || got[1].Kind != "expiration" {
		t.Errorf("as of 2026-12-01, 120 days: %+v, want the notice deadline then the expiration", got)
	}
	if got := DueWithin(res, time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC), 30); len(got) != 0 {
		t.Errorf("nothing falls due in July 2025, got %+v", got)
	}
}

func TestReviewFactsLineAndExport(t *testing.T) {
	l, err := conflicts.Parse(strings.NewReader("adverse,Initech Software,Initech\nclient,Acme Corp\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Review{Conflicts: l, AsOf: time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC), DueWithinDays: 30, Track: true}
	line := ReviewLine{Findings: []result.Finding{}}
	r.addFacts(&line, factsResult())
	if len(line.Conflicts) != 1 || line.Conflicts[0].Kind != conflicts.KindAdverse || adverse(line.Conflicts) != 1 {
		t.Errorf("conflicts %+v, want the adverse Initech once", line.Conflicts)
	}
	b, err := json.Marshal(line)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"parties":[`, `"key_dates":{"effective_date":"2025-03-03"`, `"defined_terms":[]`, `"obligations":[`, `"due_soon":[`, `"conflicts":[`} {
		if !strings.Contains(string(b), f) {
			t.Errorf("the line has no %s: %s", f, b)
		}
	}
	if note := factsNote(line); !strings.Contains(note, "CONFLICT") || !strings.Contains(note, "due 2025-03-18") {
		t.Errorf("human note %q", note)
	}
	r.track(Doc{Path: "in/msa.pdf", ID: "0123456789abcdef"}, &Outcome{Fields: line})
	r.track(Doc{Path: "in/failed.pdf", ID: "1"}, &Outcome{Err: &LineError{Code: "timeout"}})
	dir := t.TempDir()
	csvPath, icsPath := filepath.Join(dir, "o.csv"), filepath.Join(dir, "o.ics")
	rows, events, err := r.WriteTracker(csvPath, icsPath, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	// 3 obligations, 1 notice deadline, the expiration; 4 of them dated.
	if rows != 5 || events != 4 {
		t.Errorf("%d rows, %d events, want 5 and 4", rows, events)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 6 || recs[1][0] != "msa.pdf" {
		t.Errorf("csv %q, %v", recs, err)
	}
	ics, _ := os.ReadFile(icsPath)
	if strings.Count(string(ics), "BEGIN:VEVENT\r\n") != 4 {
		t.Errorf("ics:\n%s", ics)
	}
}
