package tarfs

import (
	"bufio"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// ProcessUmask is this process's umask, read from /proc/self/status (Linux)
// (reading it through umask(2) means setting it, a race with every other
// goroutine creating files). 022 where the kernel does not say.
func ProcessUmask() fs.FileMode {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o022
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(n) & fs.ModePerm
			}
		}
	}
	return 0o022
}
