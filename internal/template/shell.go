package template

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// inRoot reports whether the absolute path p names an existing file in the
// tree at root, following symlinks as the guest would (an absolute link
// target is read inside root, never on the host).
func inRoot(root, p string) bool {
	for hops := 0; hops < 40; hops++ {
		parts := strings.Split(strings.Trim(path.Clean(p), "/"), "/")
		resolved, next := "/", ""
		for i, part := range parts {
			cur := path.Join(resolved, part)
			fi, err := os.Lstat(filepath.Join(root, cur))
			if err != nil {
				return false
			}
			if fi.Mode()&os.ModeSymlink == 0 {
				resolved = cur
				continue
			}
			target, err := os.Readlink(filepath.Join(root, cur))
			if err != nil {
				return false
			}
			if !path.IsAbs(target) {
				target = path.Join(resolved, target)
			}
			next = path.Join(append([]string{target}, parts[i+1:]...)...)
			break
		}
		if next == "" {
			return true
		}
		p = next
	}
	return false // a symlink loop
}

// shellWarning is what a template build says about a root without
// /bin/sh: exec with a shell command and #! scripts cannot run in it, only
// programs started directly by argv. "" when the root has one.
func shellWarning(name, root string) string {
	if inRoot(root, "/bin/sh") {
		return ""
	}
	return "template " + name + " has no /bin/sh: a shell command (exec --cmd, sandbox exec \"...\") and #! scripts cannot run in it; start programs by argv (airlock run -- /prog args), or add a shell to the image"
}
