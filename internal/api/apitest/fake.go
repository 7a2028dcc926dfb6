// Package apitest provides an in-memory api.Backend for tests of the API,
// the Go client and anything else that speaks to airlock over HTTP without
// booting VMs. It follows the Backend contract (tenant scoping, error
// classes, no writes before a read is known to succeed) so that tests
// written against it hold for the real Manager.
package apitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/sandbox"
)

// Fake is an in-memory Backend. Its exec understands a few shell commands:
//
//	echo WORDS      stdout "WORDS\n"
//	exit N          exit code N
//	fail            stderr "boom\n", exit 1
//	binary          stdout the bytes ff fe 00 41 (not UTF-8)
//	stream N        N stdout chunks "chunk i\n" and one stderr chunk
//	cat             stdin to stdout
//	env             the environment, one KEY=VALUE per line
//	midway-error    one stdout chunk, then an Unavailable error
//	sleep           blocks until the request ends (timeout: times out)
//
// argv runs as "echo" of its arguments. Anything else exits 127. It runs
// no background processes: those calls fail with failed_precondition
// (their tests use the real manager).
type Fake struct {
	mu        sync.Mutex // guards the fields below
	next      int
	sandboxes map[string]*fakeSandbox
	templates []sandbox.TemplateInfo
	// LastWriteRead is how many body bytes the last WriteFile consumed.
	LastWriteRead int64
}

type fakeSandbox struct {
	info  sandbox.Info
	files map[string][]byte
	dirs  map[string]bool
}

// NewFake returns a Fake with one template, "base".
func NewFake() *Fake {
	return &Fake{
		sandboxes: map[string]*fakeSandbox{},
		templates: []sandbox.TemplateInfo{{Name: "base", Hash: "sha256:0", MemoryMiB: 256, VCPUs: 1,
			DefaultTTLSeconds: 300, BuiltAt: time.Unix(1700000000, 0).UTC()}},
	}
}

var _ api.Backend = (*Fake)(nil)

func (f *Fake) get(tenant, id string) (*fakeSandbox, error) {
	sb, ok := f.sandboxes[id]
	if !ok || sb.info.Tenant != tenant {
		return nil, errdefs.NotFound("sandbox %s not found", id)
	}
	return sb, nil
}

func (f *Fake) running(tenant, id string) (*fakeSandbox, error) {
	sb, err := f.get(tenant, id)
	if err != nil {
		return nil, err
	}
	if sb.info.State != "running" {
		return nil, errdefs.FailedPrecondition("sandbox %s is %s", id, sb.info.State)
	}
	return sb, nil
}

func (f *Fake) Create(_ context.Context, req sandbox.CreateRequest) (sandbox.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.TTL < 0 {
		return sandbox.Info{}, errdefs.InvalidArgument("ttl must not be negative")
	}
	if !slices.ContainsFunc(f.templates, func(t sandbox.TemplateInfo) bool { return t.Name == req.Template }) {
		return sandbox.Info{}, errdefs.NotFound("template %q not found", req.Template)
	}
	if req.TTL == 0 {
		req.TTL = 300 * time.Second
	}
	pol := netpool.DenyAll()
	if req.Egress != nil {
		pol = *req.Egress
	}
	f.next++
	now := time.Now().UTC().Truncate(time.Millisecond)
	info := sandbox.Info{
		ID: fmt.Sprintf("sbx-%04d", f.next), Tenant: req.Tenant, Template: req.Template,
		Metadata: maps.Clone(req.Metadata), State: "running", CreatedAt: now, Deadline: now.Add(req.TTL), Egress: pol,
	}
	if info.Metadata == nil {
		info.Metadata = map[string]string{}
	}
	f.sandboxes[info.ID] = &fakeSandbox{info: info, files: map[string][]byte{}, dirs: map[string]bool{"/": true}}
	return info, nil
}

func (f *Fake) Get(_ context.Context, tenant, id string) (sandbox.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.get(tenant, id)
	if err != nil {
		return sandbox.Info{}, err
	}
	return sb.info, nil
}

func (f *Fake) List(_ context.Context, flt sandbox.ListFilter) ([]sandbox.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	states := flt.States
	if len(states) == 0 {
		states = []string{"running"}
	}
	var out []sandbox.Info
	for _, sb := range f.sandboxes {
		if sb.info.Tenant != flt.Tenant || !slices.Contains(states, sb.info.State) {
			continue
		}
		match := true
		for k, v := range flt.Metadata {
			match = match && sb.info.Metadata[k] == v
		}
		if match {
			out = append(out, sb.info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (f *Fake) Kill(_ context.Context, tenant, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	sb.info.State, sb.info.EndedAt = "killed", &now
	return nil
}

func (f *Fake) Fork(_ context.Context, tenant, id string, count int) ([]sandbox.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return nil, err
	}
	var out []sandbox.Info
	for range count {
		f.next++
		child := &fakeSandbox{info: sb.info, files: maps.Clone(sb.files), dirs: maps.Clone(sb.dirs)}
		child.info.ID = fmt.Sprintf("sbx-%04d", f.next)
		child.info.ParentID = sb.info.ID
		child.info.Metadata = maps.Clone(sb.info.Metadata)
		f.sandboxes[child.info.ID] = child
		out = append(out, child.info)
	}
	return out, nil
}

func (f *Fake) Exec(ctx context.Context, tenant, id string, opts guest.ExecOptions, stdout, stderr io.Writer) (guest.ExecResult, error) {
	f.mu.Lock()
	_, err := f.running(tenant, id)
	f.mu.Unlock()
	if err != nil {
		return guest.ExecResult{}, err
	}
	start := time.Now()
	res := guest.ExecResult{}
	out := func(w io.Writer, s string) error {
		if w == stdout {
			res.StdoutBytes += int64(len(s))
		} else {
			res.StderrBytes += int64(len(s))
		}
		_, err := io.WriteString(w, s)
		return err
	}
	cmd := opts.Shell
	if len(opts.Argv) > 0 {
		cmd = "echo " + strings.Join(opts.Argv, " ")
	}
	word, rest, _ := strings.Cut(cmd, " ")
	switch word {
	case "echo":
		err = out(stdout, rest+"\n")
	case "exit":
		res.ExitCode, _ = strconv.Atoi(rest)
	case "fail":
		err = out(stderr, "boom\n")
		res.ExitCode = 1
	case "binary":
		err = out(stdout, "\xff\xfe\x00A")
	case "stream":
		n, _ := strconv.Atoi(rest)
		for i := 0; i < n && err == nil; i++ {
			err = out(stdout, fmt.Sprintf("chunk %d\n", i))
		}
		if err == nil {
			err = out(stderr, "done\n")
		}
	case "cat":
		if opts.Stdin != nil {
			var b bytes.Buffer
			_, _ = io.Copy(&b, opts.Stdin)
			err = out(stdout, b.String())
		}
	case "env":
		err = out(stdout, strings.Join(opts.Env, "\n")+"\n")
	case "midway-error":
		if err = out(stdout, "partial\n"); err == nil {
			return res, errdefs.Unavailable("agent went away")
		}
	case "sleep":
		if opts.Timeout > 0 {
			select {
			case <-time.After(opts.Timeout):
				res.TimedOut, res.ExitCode, res.Signal = true, 137, "SIGKILL"
			case <-ctx.Done():
				return res, ctx.Err()
			}
		} else {
			<-ctx.Done()
			return res, ctx.Err()
		}
	default:
		res.ExitCode = 127
	}
	if err != nil {
		return res, fmt.Errorf("deliver output: %w", err)
	}
	res.Duration = time.Since(start)
	return res, nil
}

func (f *Fake) WriteFile(_ context.Context, tenant, id, p string, r io.Reader, mode uint32) (int64, error) {
	f.mu.Lock()
	_, err := f.running(tenant, id)
	f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	var b bytes.Buffer
	n, err := io.Copy(&b, r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.LastWriteRead = n
	if err != nil {
		return 0, fmt.Errorf("read source: %w", err)
	}
	sb, err := f.running(tenant, id)
	if err != nil {
		return 0, err
	}
	if sb.dirs[p] {
		return 0, errdefs.FailedPrecondition("%s is a directory", p)
	}
	for d := path.Dir(p); ; d = path.Dir(d) {
		sb.dirs[d] = true
		if d == "/" {
			break
		}
	}
	sb.files[p] = b.Bytes()
	return n, nil
}

func (f *Fake) ReadFile(_ context.Context, tenant, id, p string, w io.Writer, maxBytes int64) (int64, error) {
	f.mu.Lock()
	sb, err := f.running(tenant, id)
	var data []byte
	var ok bool
	if err == nil {
		data, ok = sb.files[p]
	}
	f.mu.Unlock()
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 0, errdefs.NotFound("%s: no such file", p)
	case maxBytes > 0 && int64(len(data)) > maxBytes:
		return 0, errdefs.ResourceExhausted("%s is larger than %d bytes", p, maxBytes)
	}
	n, err := w.Write(data)
	return int64(n), err
}

func (f *Fake) StatFile(_ context.Context, tenant, id, p string) (sandbox.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return sandbox.FileInfo{}, err
	}
	return sb.stat(p)
}

// fakeModTime is every fake path's modification time.
var fakeModTime = time.Unix(0, 0).UTC()

func (sb *fakeSandbox) stat(p string) (sandbox.FileInfo, error) {
	if data, ok := sb.files[p]; ok {
		return sandbox.FileInfo{Path: p, Name: path.Base(p), Size: int64(len(data)), Mode: 0o644, ModTime: fakeModTime}, nil
	}
	if sb.dirs[p] {
		return sandbox.FileInfo{Path: p, Name: path.Base(p), IsDir: true, Mode: fs.ModeDir | 0o755, ModTime: fakeModTime}, nil
	}
	return sandbox.FileInfo{}, errdefs.NotFound("%s: no such file or directory", p)
}

func (f *Fake) ListFiles(_ context.Context, tenant, id, p string) ([]sandbox.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return nil, err
	}
	if !sb.dirs[p] {
		return nil, errdefs.NotFound("%s: no such directory", p)
	}
	var names []string
	for q := range sb.files {
		if path.Dir(q) == p {
			names = append(names, q)
		}
	}
	for q := range sb.dirs {
		if q != "/" && path.Dir(q) == p {
			names = append(names, q)
		}
	}
	sort.Strings(names)
	var out []sandbox.FileInfo
	for _, q := range names {
		fi, _ := sb.stat(q)
		out = append(out, fi)
	}
	return out, nil
}

func (f *Fake) RemoveFile(_ context.Context, tenant, id, p string, recursive bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return err
	}
	if _, ok := sb.files[p]; ok {
		delete(sb.files, p)
		return nil
	}
	if !sb.dirs[p] {
		return errdefs.NotFound("%s: no such file or directory", p)
	}
	prefix := p + "/"
	for q := range sb.files {
		if strings.HasPrefix(q, prefix) {
			if !recursive {
				return errdefs.FailedPrecondition("%s: directory not empty", p)
			}
			delete(sb.files, q)
		}
	}
	for q := range sb.dirs {
		if strings.HasPrefix(q, prefix) {
			if !recursive {
				return errdefs.FailedPrecondition("%s: directory not empty", p)
			}
			delete(sb.dirs, q)
		}
	}
	delete(sb.dirs, p)
	return nil
}

func (f *Fake) MakeDir(_ context.Context, tenant, id, p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return err
	}
	if _, ok := sb.files[p]; ok {
		return errdefs.AlreadyExists("%s exists and is a file", p)
	}
	for d := p; ; d = path.Dir(d) {
		sb.dirs[d] = true
		if d == "/" {
			break
		}
	}
	return nil
}

func (f *Fake) SetEgress(_ context.Context, tenant, id string, p netpool.Policy) (sandbox.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return sandbox.Info{}, err
	}
	if err := p.Validate(); err != nil {
		return sandbox.Info{}, err
	}
	sb.info.Egress = p
	return sb.info, nil
}

func (f *Fake) SetTTL(_ context.Context, tenant, id string, ttl time.Duration) (sandbox.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return sandbox.Info{}, err
	}
	sb.info.Deadline = time.Now().UTC().Add(ttl).Truncate(time.Millisecond)
	return sb.info, nil
}

// Probe answers as a deny-all sandbox would, or, when its policy allows
// anything, as the real check would for an open sandbox.
func (f *Fake) Probe(_ context.Context, tenant, id string) ([]sandbox.ProbeResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, err := f.running(tenant, id)
	if err != nil {
		return nil, err
	}
	open := sb.info.Egress.Default == netpool.DefaultAllow || len(sb.info.Egress.Allow) > 0
	rs := []sandbox.ProbeResult{
		{Name: "tcp-gateway", Target: "172.30.0.1:22"},
		{Name: "tcp-public", Target: "1.1.1.1:443", Reachable: open},
		{Name: "tcp-metadata", Target: "169.254.169.254:80"},
		{Name: "dns-denied", Target: "probe.airlock-probe.invalid"},
	}
	if open {
		return rs, errdefs.FailedPrecondition("egress self-check failed: tcp-public")
	}
	return rs, nil
}

func (f *Fake) Templates(context.Context) ([]sandbox.TemplateInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.templates), nil
}

// errNoProcesses is the Fake's answer to every background-process call:
// background processes need the real sandbox manager, and the API's and
// the client's tests of them run on one (over internal/sandbox/localmachines).
func (f *Fake) errNoProcesses(tenant, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.running(tenant, id); err != nil {
		return err
	}
	return errdefs.FailedPrecondition("apitest.Fake does not run background processes")
}

// StartProcess fails: see errNoProcesses.
func (f *Fake) StartProcess(_ context.Context, tenant, id string, _ guest.ExecOptions) (sandbox.ProcessInfo, error) {
	return sandbox.ProcessInfo{}, f.errNoProcesses(tenant, id)
}

// Processes fails: see errNoProcesses.
func (f *Fake) Processes(_ context.Context, tenant, id string) ([]sandbox.ProcessInfo, error) {
	return nil, f.errNoProcesses(tenant, id)
}

// Process fails: see errNoProcesses.
func (f *Fake) Process(_ context.Context, tenant, id, _ string) (sandbox.ProcessInfo, error) {
	return sandbox.ProcessInfo{}, f.errNoProcesses(tenant, id)
}

// WaitProcess fails: see errNoProcesses.
func (f *Fake) WaitProcess(_ context.Context, tenant, id, _ string, _ time.Duration) (sandbox.ProcessInfo, error) {
	return sandbox.ProcessInfo{}, f.errNoProcesses(tenant, id)
}

// ReadProcessOutput fails: see errNoProcesses.
func (f *Fake) ReadProcessOutput(_ context.Context, tenant, id, _, _ string, _ int64, _ int, _ time.Duration) (sandbox.ProcessOutput, error) {
	return sandbox.ProcessOutput{}, f.errNoProcesses(tenant, id)
}

// KillProcess fails: see errNoProcesses.
func (f *Fake) KillProcess(_ context.Context, tenant, id, _, _ string) (sandbox.ProcessInfo, error) {
	return sandbox.ProcessInfo{}, f.errNoProcesses(tenant, id)
}
