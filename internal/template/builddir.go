//go:build linux

package template

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// removeBuildDir removes a build directory, first detaching anything still
// mounted inside it. RemoveAll must never descend into a leftover /dev or
// /proc mount: that would delete the host's device nodes.
func removeBuildDir(dir string) error {
	mounts, err := mountsUnder(dir)
	if err != nil {
		return fmt.Errorf("cannot check %s for leftover mounts, leaving it: %w", dir, err)
	}
	// Deepest first.
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("unmount leftover %s (leaving %s in place): %w", m, dir, err)
		}
	}
	if left, err := mountsUnder(dir); err != nil || len(left) > 0 {
		return fmt.Errorf("mounts remain under %s (%v), leaving it in place: %v", dir, left, err)
	}
	return os.RemoveAll(dir)
}

// mountsUnder lists mount points at or below dir, from /proc/self/mountinfo.
func mountsUnder(dir string) ([]string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == real || strings.HasPrefix(mp, real+"/") {
			out = append(out, mp)
		}
	}
	return out, nil
}

// unescapeMountinfo decodes the \ooo octal escapes mountinfo uses for
// spaces, tabs, newlines and backslashes.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
