//go:build linux

package procstat

import (
	"bufio"
	"errors"
	"io/fs"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPUNameWithParens(t *testing.T) {
	// comm "a) b (c" holds spaces and both parentheses.
	stat := "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3 0 12345 1000 10 18446744073709551615\n"
	got, err := parseStatCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Fatalf("cpu = %v, want %v (utime 250 + stime 75 ticks)", got, want)
	}
	for _, bad := range []string{"", "4242 (x S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 -5 1 0"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseStatCPU(%q) accepted", bad)
		}
	}
}

func TestParseSmapsRollup(t *testing.T) {
	in := `55d0c0000000-7ffd00000000 ---p 00000000 00:00 0                          [rollup]
Rss:               48000 kB
Pss:               30000 kB
Pss_Anon:          20000 kB
Shared_Clean:      18000 kB
Private_Clean:      1000 kB
Private_Dirty:     29000 kB
`
	u, err := parseSmapsRollup(bufio.NewScanner(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	if u.RSS != 48000<<10 || u.PSS != 30000<<10 || u.Private != 30000<<10 {
		t.Fatalf("got %+v", u)
	}
	if _, err := parseSmapsRollup(bufio.NewScanner(strings.NewReader("Rss: 1 kB\n"))); err == nil {
		t.Fatal("rollup without Pss accepted")
	}
}

// TestReadChildBurningCPU reads a real process that spins and holds memory.
func TestReadChildBurningCPU(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var u Usage
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		if u, err = Read(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		if u.CPU > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if u.CPU <= 0 {
		t.Fatalf("a spinning shell used no CPU: %+v", u)
	}
	if u.RSS <= 0 || u.PSS <= 0 || u.PSS > u.RSS {
		t.Fatalf("memory figures %+v: want 0 < PSS <= RSS", u)
	}
	if _, err := Read(1 << 30); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read of a missing pid: %v, want not-exist", err)
	}
}
