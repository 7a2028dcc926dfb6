package agent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A path that is not there is "not found" (127, as a shell says), and a
// file that exists but cannot start because its interpreter is missing
// says so instead of "no such file or directory".
func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	if _, err := lookPath(filepath.Join(dir, "nonexistent"), nil); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("missing path: %v", err)
	}
	script := filepath.Join(dir, "hello.sh")
	os.WriteFile(script, []byte("#!/no/such/sh -e\necho hi\n"), 0o755)
	if p, err := lookPath(script, nil); err != nil || p != script {
		t.Fatalf("existing script: %q %v", p, err)
	}
	if msg := startFailure(script, "/hello.sh", syscall.ENOENT); !strings.Contains(msg, "interpreter /no/such/sh is not in this sandbox's template") {
		t.Errorf("script: %s", msg)
	}
	// An ELF whose loader is there: the plain error stays.
	self, _ := os.Executable()
	if got := interpreterOf(self); got != "" {
		if msg := startFailure(self, "x", syscall.ENOENT); strings.Contains(msg, "interpreter") {
			t.Errorf("loader %s exists, yet: %s", got, msg)
		}
	}
	if got := interpreterOf("/bin/ls"); got == "" || !strings.HasPrefix(got, "/lib") {
		t.Errorf("/bin/ls loader: %q", got)
	}
	if msg := startFailure(script, "/hello.sh", syscall.EACCES); strings.Contains(msg, "interpreter") {
		t.Errorf("EACCES: %s", msg)
	}
}
