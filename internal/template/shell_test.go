package template

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShellWarning(t *testing.T) {
	mk := func(links map[string]string, files ...string) string {
		root := t.TempDir()
		for _, f := range files {
			os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755)
			os.WriteFile(filepath.Join(root, f), []byte("x"), 0o755)
		}
		for l, target := range links {
			os.MkdirAll(filepath.Join(root, filepath.Dir(l)), 0o755)
			os.Symlink(target, filepath.Join(root, l))
		}
		return root
	}
	for name, tc := range map[string]struct {
		root string
		want bool // a warning
	}{
		"debian usrmerge": {mk(map[string]string{"/bin": "usr/bin", "/usr/bin/sh": "dash"}, "/usr/bin/dash"), false},
		"busybox":         {mk(map[string]string{"/bin/sh": "/bin/busybox"}, "/bin/busybox"), false},
		"distroless":      {mk(nil, "/hello", "/etc/passwd"), true},
		"dangling":        {mk(map[string]string{"/bin/sh": "/bin/dash"}), true},
		"loop":            {mk(map[string]string{"/bin/sh": "/bin/sh2", "/bin/sh2": "/bin/sh"}), true},
	} {
		w := shellWarning("hello", tc.root)
		if (w != "") != tc.want {
			t.Errorf("%s: warning %q, want one: %v", name, w, tc.want)
		}
		if w != "" && !strings.Contains(w, "by argv") {
			t.Errorf("%s: the warning says no way forward: %s", name, w)
		}
	}
	// An absolute link is read inside the root, never on the host (which
	// has a /bin/sh).
	if root := mk(map[string]string{"/bin/sh": "/bin/dash"}); inRoot(root, "/bin/sh") {
		t.Error("resolved /bin/sh through the host")
	}
}
