//go:build linux

package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Usage is one reading of a process.
type Usage struct {
	// CPU is the user plus system time of all its threads so far.
	CPU time.Duration
	// PSS is its proportional set size: pages shared with other processes
	// (a template's base mapped by every clone) count divided by their
	// sharers, so the PSS of all clones adds up to what they cost.
	PSS int64
	// RSS counts every resident page in full, shared or not.
	RSS int64
	// Private is what only this process holds (private clean + dirty):
	// what ending it gives back.
	Private int64
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times; 100 on every
// Linux architecture Go supports (the kernel fixes it for userspace).
const clockTicks = 100

// Read returns the usage of process pid.
func Read(pid int) (Usage, error) {
	if pid <= 0 {
		return Usage{}, fmt.Errorf("procstat: no process (pid %d)", pid)
	}
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Usage{}, fmt.Errorf("procstat: %w", err)
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return Usage{}, fmt.Errorf("procstat: pid %d: %w", pid, err)
	}
	f, err := os.Open(filepath.Join(dir, "smaps_rollup"))
	if err != nil {
		return Usage{}, fmt.Errorf("procstat: %w", err)
	}
	defer f.Close()
	u, err := parseSmapsRollup(bufio.NewScanner(f))
	if err != nil {
		return Usage{}, fmt.Errorf("procstat: pid %d smaps_rollup: %w", pid, err)
	}
	u.CPU = cpu
	return u, nil
}

// parseStatCPU returns utime + stime from the contents of /proc/PID/stat.
// The command name (field 2) is in parentheses and may itself hold spaces
// and parentheses, so fields are counted from the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("stat: no command name")
	}
	// After ") ": state(3) ppid(4) ... utime(14) stime(15).
	fields := strings.Fields(string(stat[end+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("stat: %d fields after the command name", len(fields))
	}
	var ticks int64
	for _, i := range []int{utime, stime} {
		v, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("stat: field %d: %q", i+3, fields[i])
		}
		ticks += v
	}
	return time.Duration(ticks) * (time.Second / clockTicks), nil
}

// parseSmapsRollup reads the "Name:  N kB" lines it needs.
func parseSmapsRollup(sc *bufio.Scanner) (Usage, error) {
	var u Usage
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[2] != "kB" {
			continue
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil || v < 0 {
			return Usage{}, fmt.Errorf("%s %q", fields[0], fields[1])
		}
		switch fields[0] {
		case "Pss:":
			u.PSS, seen = v<<10, seen|1
		case "Rss:":
			u.RSS, seen = v<<10, seen|2
		case "Private_Clean:", "Private_Dirty:":
			u.Private += v << 10
		}
	}
	if err := sc.Err(); err != nil {
		return Usage{}, err
	}
	if seen != 3 {
		return Usage{}, fmt.Errorf("no Pss or Rss line")
	}
	return u, nil
}
