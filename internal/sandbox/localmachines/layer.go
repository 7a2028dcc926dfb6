package localmachines

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/template"
)

// Layer is the machine layer and the template source. It is safe for
// concurrent use, and for use by several Managers at once (one after
// another, as across a daemon restart).
type Layer struct {
	runDir, tmplDir string

	mu       sync.Mutex
	vmms     map[int]*vmm                  // guarded by mu; every stand-in VMM started, by pid
	tmpls    map[string]*template.Template // guarded by mu; by name
	restores int                           // guarded by mu; Restore calls, fork children excluded
}

var (
	_ sandbox.Machines       = (*Layer)(nil)
	_ sandbox.TemplateSource = (*Layer)(nil)
)

// New returns a layer keeping machines in dir/run and templates in
// dir/templates.
func New(dir string) (*Layer, error) {
	l := &Layer{runDir: filepath.Join(dir, "run"), tmplDir: filepath.Join(dir, "templates"),
		vmms: map[int]*vmm{}, tmpls: map[string]*template.Template{}}
	for _, d := range []string{l.runDir, l.tmplDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("localmachines: %w", err)
		}
	}
	return l, nil
}

// AddTemplate bakes template name: files (guest path -> content) make up
// its root, env its exec environment.
func (l *Layer) AddTemplate(name string, files, env map[string]string) (*template.Template, error) {
	dir := filepath.Join(l.tmplDir, name)
	for p, content := range files {
		hp, err := underRoot(filepath.Join(dir, "root"), p)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(hp, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "root"), 0o755); err != nil {
		return nil, err
	}
	t := &template.Template{Dir: dir, Manifest: template.Manifest{Name: name, SpecHash: "local:" + name,
		MemoryMiB: 64, VCPUs: 1, DefaultTTLSeconds: 300, Env: env}}
	l.mu.Lock()
	l.tmpls[name] = t
	l.mu.Unlock()
	return t, nil
}

// Open returns template name.
func (l *Layer) Open(name string) (*template.Template, error) { return l.Get(name) }

// Get returns template name.
func (l *Layer) Get(name string) (*template.Template, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.tmpls[name]
	if !ok {
		return nil, errdefs.NotFound("template %q is not built", name)
	}
	return t, nil
}

// List returns the templates by name.
func (l *Layer) List() ([]*template.Template, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*template.Template, 0, len(l.tmpls))
	for _, t := range l.tmpls {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Jailed is false: nothing here is confined.
func (l *Layer) Jailed() bool { return false }

// RunDir holds the machines' state directories.
func (l *Layer) RunDir() string { return l.runDir }

// Restore starts machine id with a copy of tmpl's root.
func (l *Layer) Restore(ctx context.Context, tmpl *template.Template, id string, tap *os.File) (sandbox.Machine, error) {
	l.mu.Lock()
	l.restores++
	l.mu.Unlock()
	return l.start(id, filepath.Join(tmpl.Dir, "root"), tap)
}

// Restores is how many clones have been restored from templates so far
// (what a warm pool's filler and creates from an empty pool cost).
func (l *Layer) Restores() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.restores
}

// forkBase is a parent's root as it was at the fork.
type forkBase struct{ root string }

func (forkBase) Close() error { return nil } // the manager removes the directory

// SnapshotForFork copies parent's root into dir.
func (l *Layer) SnapshotForFork(ctx context.Context, parent sandbox.Machine, tmpl *template.Template, dir string) (sandbox.ForkBase, error) {
	p, ok := parent.(*machine)
	if !ok {
		return nil, errors.New("localmachines: parent is not a local machine")
	}
	if p.ended() {
		return nil, errdefs.Unavailable("machine %s ended", p.id)
	}
	root := filepath.Join(dir, "root")
	if err := copyTree(p.root, root); err != nil {
		return nil, fmt.Errorf("fork %s: %w", p.id, err)
	}
	return forkBase{root: root}, nil
}

// RestoreChild starts fork child id from base, prepared as id.
func (l *Layer) RestoreChild(ctx context.Context, base sandbox.ForkBase, tmpl *template.Template, id string, tap *os.File) (sandbox.Machine, error) {
	b, ok := base.(forkBase)
	if !ok {
		return nil, errors.New("localmachines: not a local fork base")
	}
	m, err := l.start(id, b.root, tap)
	if err != nil {
		return nil, err
	}
	if err := m.Prepare(ctx, id); err != nil {
		m.Destroy(context.WithoutCancel(ctx))
		return nil, err
	}
	return m, nil
}

// Pause copies m's root into dir and destroys m. The bytes saved are
// the root's files'.
func (l *Layer) Pause(ctx context.Context, m sandbox.Machine, tmpl *template.Template, dir string) (int64, error) {
	p, ok := m.(*machine)
	if !ok {
		return 0, errors.New("localmachines: not a local machine")
	}
	if p.ended() {
		return 0, errdefs.Unavailable("machine %s ended", p.id)
	}
	root := filepath.Join(dir, "root")
	if err := copyTree(p.root, root); err != nil {
		os.RemoveAll(root)
		return 0, fmt.Errorf("pause %s: %w", p.id, err)
	}
	var n int64
	_ = filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, p.Destroy(ctx)
}

// Resume starts machine id from the root Pause saved in dir, prepared
// as id.
func (l *Layer) Resume(ctx context.Context, tmpl *template.Template, dir, id string, tap *os.File) (sandbox.Machine, error) {
	m, err := l.start(id, filepath.Join(dir, "root"), tap)
	if err != nil {
		return nil, err
	}
	if err := m.Prepare(ctx, id); err != nil {
		m.Destroy(context.WithoutCancel(ctx))
		return nil, err
	}
	return m, nil
}

// start makes machine id's state directory with a copy of root and starts
// its stand-in VMM. On failure nothing is left.
func (l *Layer) start(id, root string, tap *os.File) (_ *machine, err error) {
	if tap != nil {
		return nil, errdefs.FailedPrecondition("localmachines: machines have no network")
	}
	stateDir := filepath.Join(l.runDir, id)
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("machine %s: %w", id, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(stateDir)
		}
	}()
	m := &machine{id: id, stateDir: stateDir, root: filepath.Join(stateDir, "root"), execs: map[*exec.Cmd]bool{}}
	if err := copyTree(root, m.root); err != nil {
		return nil, fmt.Errorf("machine %s: %w", id, err)
	}
	if m.vmm, err = l.startVMM(stateDir); err != nil {
		return nil, fmt.Errorf("machine %s: %w", id, err)
	}
	return m, nil
}

// Adopt takes over machine id, whose stand-in VMM pid still runs.
func (l *Layer) Adopt(ctx context.Context, id, stateDir string, pid int) (sandbox.Machine, error) {
	if !l.Live(pid, stateDir) {
		return nil, errdefs.NotFound("machine %s: no VMM %d serving %s", id, pid, stateDir)
	}
	l.mu.Lock()
	v := l.vmms[pid]
	l.mu.Unlock()
	return &machine{id: id, stateDir: stateDir, root: filepath.Join(stateDir, "root"), vmm: v, execs: map[*exec.Cmd]bool{}}, nil
}

// Live reports whether pid is the running stand-in VMM of stateDir.
func (l *Layer) Live(pid int, stateDir string) bool {
	l.mu.Lock()
	v := l.vmms[pid]
	if v == nil {
		// Started by another process: a restarted daemon adopts what the
		// one it replaced left running, across processes as in production.
		if v = foreignVMM(pid, stateDir); v != nil {
			l.vmms[pid] = v
		}
	}
	l.mu.Unlock()
	if v == nil || v.hasExited() {
		return false
	}
	b, err := os.ReadFile(filepath.Join(stateDir, "pid"))
	return err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(pid)
}

// KillOrphan ends the machine of stateDir (its VMM only if it still
// serves that directory) and removes the directory.
func (l *Layer) KillOrphan(ctx context.Context, stateDir string) error {
	b, _ := os.ReadFile(filepath.Join(stateDir, "pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if l.Live(pid, stateDir) {
		l.mu.Lock()
		v := l.vmms[pid]
		l.mu.Unlock()
		if err := v.kill(ctx); err != nil {
			return err
		}
	}
	return os.RemoveAll(stateDir)
}

// SweepJails does nothing: there are no jails.
func (l *Layer) SweepJails(func(id string) bool) error { return nil }

// KillVMM kills the stand-in VMM of the machine with state directory
// stateDir from outside, as an OOM kill or a crash would end a VM's.
func (l *Layer) KillVMM(stateDir string) error {
	b, err := os.ReadFile(filepath.Join(stateDir, "pid"))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	return syscall.Kill(-pid, syscall.SIGKILL)
}

// underRoot maps guest path p (absolute) under root.
func underRoot(root, p string) (string, error) {
	if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return "", errdefs.InvalidArgument("path %q is not absolute", p)
	}
	return filepath.Join(root, filepath.Clean(p)), nil
}

// copyTree copies the regular files, directories and symlinks under src
// to dst (created).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil // devices, sockets, fifos: not part of a guest's files here
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
