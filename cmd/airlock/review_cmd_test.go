package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-dev/airlock/internal/jobs"
)

func TestSetFactsFlags(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "parties.csv")
	if err := os.WriteFile(list, []byte("adverse,Globex Industries Inc.,Globex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("partner,Globex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	job := &jobs.Review{}
	if err := setFactsFlags(job, list, "2026-12-01", 45, filepath.Join(dir, "o.csv"), filepath.Join(dir, "o.ics")); err != nil {
		t.Fatal(err)
	}
	if job.Conflicts == nil || len(job.Conflicts.Entries) != 1 || job.AsOf.Format("2006-01-02") != "2026-12-01" ||
		job.DueWithinDays != 45 || !job.Track {
		t.Errorf("job %+v", job)
	}
	for name, args := range map[string][5]any{
		"parties missing":    {filepath.Join(dir, "none.csv"), "", 30, "", ""},
		"parties bad kind":   {bad, "", 30, "", ""},
		"as-of not a date":   {"", "12/01/2026", 30, "", ""},
		"due-within too big": {"", "2026-12-01", 100000, "", ""},
		"csv unwritable":     {"", "", 30, filepath.Join(dir, "no", "o.csv"), ""},
		"ics unwritable":     {"", "", 30, "", filepath.Join(dir, "no", "o.ics")},
	} {
		err := setFactsFlags(&jobs.Review{}, args[0].(string), args[1].(string), args[2].(int), args[3].(string), args[4].(string))
		var ee exitError
		if !errors.As(err, &ee) || ee.code != exitUsageCode {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}
