//go:build linux

package procstat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mapping is one memory mapping of a process (a block of /proc/PID/smaps).
type Mapping struct {
	Start, End uint64
	Perms      string // "rw-p", "r-xp", ...
	Name       string // the file, "[heap]", "/memfd:airlock-base (deleted)", "" for anonymous
	Size       int64  // bytes
	RSS, PSS   int64
	Private    int64 // private clean + dirty
}

// Mappings returns every mapping of process pid.
func Mappings(pid int) ([]Mapping, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "smaps"))
	if err != nil {
		return nil, fmt.Errorf("procstat: %w", err)
	}
	defer f.Close()
	ms, err := parseSmaps(f)
	if err != nil {
		return nil, fmt.Errorf("procstat: pid %d smaps: %w", pid, err)
	}
	return ms, nil
}

// parseSmaps reads smaps: a header line per mapping ("start-end perms
// offset dev inode [name]") followed by "Key: N kB" lines.
func parseSmaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's header
			m, err := parseHeader(fields)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
			continue
		}
		if len(out) == 0 || len(fields) != 3 || fields[2] != "kB" {
			continue
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q", line)
		}
		m := &out[len(out)-1]
		switch fields[0] {
		case "Rss:":
			m.RSS = v << 10
		case "Pss:":
			m.PSS = v << 10
		case "Private_Clean:", "Private_Dirty:":
			m.Private += v << 10
		}
	}
	return out, sc.Err()
}

func parseHeader(fields []string) (Mapping, error) {
	start, end, ok := strings.Cut(fields[0], "-")
	if !ok || len(fields) < 5 {
		return Mapping{}, fmt.Errorf("mapping header %q", strings.Join(fields, " "))
	}
	s, err1 := strconv.ParseUint(start, 16, 64)
	e, err2 := strconv.ParseUint(end, 16, 64)
	if err1 != nil || err2 != nil || e < s {
		return Mapping{}, fmt.Errorf("mapping range %q", fields[0])
	}
	return Mapping{Start: s, End: e, Perms: fields[1], Name: strings.Join(fields[5:], " "), Size: int64(e - s)}, nil
}
