package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestOneShotInterleavesAndReports(t *testing.T) {
	cs := []Contender{{Name: "a", Argv: []string{"sh", "-c", "echo a >> " + t.TempDir() + "/log"}}, {Name: "b", Argv: []string{"true"}}}
	rs, err := OneShot(context.Background(), cs, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Name != "a" || rs[0].Wall.N != 3 || rs[1].Wall.N != 3 || rs[0].Wall.P50 <= 0 || rs[0].MaxRSSKiB <= 0 {
		t.Fatalf("results %+v", rs)
	}
	var out bytes.Buffer
	PrintOneShot(&out, rs, 1)
	if !strings.Contains(out.String(), "a/b ") {
		t.Fatalf("no ratio in:\n%s", out.String())
	}
	// Two ways of ours (airlock in-process and through a daemon): each
	// against the other and against the rival, the rival against none.
	out.Reset()
	PrintOneShot(&out, append(rs, OneShotResult{Name: "c", Wall: rs[1].Wall}), 2)
	if s := out.String(); !strings.Contains(s, "a/b ") || !strings.Contains(s, "a/c ") || !strings.Contains(s, "b/c ") || strings.Contains(s, "c/") {
		t.Fatalf("ratios of two of ours:\n%s", s)
	}
	_, err = OneShot(context.Background(), []Contender{{Name: "bad", Argv: []string{"sh", "-c", "echo broken >&2; exit 3"}}}, 2, nil)
	if err == nil || !strings.Contains(err.Error(), "bad, run 1 of 2") || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("a failing contender: %v", err)
	}
}
