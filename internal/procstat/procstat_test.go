//go:build linux

package procstat

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
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

func TestParseSmaps(t *testing.T) {
	in := `7f0000000000-7f0010000000 rw-p 00000000 00:01 12 /memfd:airlock-base (deleted)
Size:             262144 kB
Rss:               40000 kB
Pss:               20000 kB
Private_Clean:         0 kB
Private_Dirty:      4000 kB
55d000000000-55d000100000 rw-p 00000000 00:00 0                          [heap]
Rss:                1024 kB
Pss:                1024 kB
Private_Dirty:      1024 kB
7f1000000000-7f1000001000 rwxp 00000000 00:00 0 
Rss:                   4 kB
Pss:                   4 kB
Private_Dirty:         4 kB
`
	ms, err := parseSmaps(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 {
		t.Fatalf("%d mappings: %+v", len(ms), ms)
	}
	if m := ms[0]; m.Name != "/memfd:airlock-base (deleted)" || m.Size != 256<<20 || m.RSS != 40000<<10 || m.PSS != 20000<<10 || m.Private != 4000<<10 || m.Perms != "rw-p" {
		t.Errorf("memfd mapping %+v", m)
	}
	if ms[1].Name != "[heap]" || ms[2].Name != "" || ms[2].Perms != "rwxp" {
		t.Errorf("heap / anonymous: %+v %+v", ms[1], ms[2])
	}
	if _, err := parseSmaps(strings.NewReader("zz-yy rw-p 0 0 0\n")); err == nil {
		t.Error("a bad range was accepted")
	}
}

func TestMappingsOfThisProcess(t *testing.T) {
	ms, err := Mappings(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var rss int64
	for _, m := range ms {
		rss += m.RSS
	}
	u, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 5 || rss <= 0 || rss > 2*u.RSS {
		t.Fatalf("%d mappings summing to RSS %d; rollup says %d", len(ms), rss, u.RSS)
	}
}
