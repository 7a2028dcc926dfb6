package template

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/image"
	"github.com/airlock-dev/airlock/internal/netpool"
	"github.com/airlock-dev/airlock/internal/vm"
)

// bakeFormat changes whenever the baked layout or the VM shape a bake
// implies changes, so old bakes are not restored into new machines.
const bakeFormat = "bake-v5" // v5: TCG guests keep the TSC clocksource (tsc=reliable); v4: the manifest carries AIRLOCK_ACCEL in the exec environment; v3: every machine has a virtio-net NIC

// Baked files inside a template's directory.
const (
	memFile      = "mem"
	stateFile    = "state"
	manifestFile = "manifest.json"
)

// stepTimeout bounds each build step and the warm-up inside the bake VM.
const stepTimeout = 30 * time.Minute

// Manifest describes one baked template. It is written last, so a
// directory with a manifest is complete.
type Manifest struct {
	Name              string            `json:"name"`
	Key               string            `json:"key"`       // bake cache key (spec + host parts)
	SpecHash          string            `json:"spec_hash"` // Spec.Hash()
	Suite             string            `json:"suite"`
	Packages          []string          `json:"packages"`
	Image             *ImageInfo        `json:"image,omitempty"`  // the container image the root came from
	Source            string            `json:"source,omitempty"` // the spec file it was baked from ("builtin:NAME.yaml" for a shipped one)
	Env               map[string]string `json:"env,omitempty"`
	Workdir           string            `json:"workdir,omitempty"` // default working directory of execs; "" = /
	MemoryMiB         int               `json:"memory_mib"`
	VCPUs             int               `json:"vcpus"`
	KernelArgs        []string          `json:"kernel_args,omitempty"`
	DefaultTTLSeconds int               `json:"default_ttl_seconds"`
	Host              HostParts         `json:"host"`
	RootImage         string            `json:"root_image"`
	RootImageSHA256   string            `json:"root_image_sha256"`
	MemSHA256         string            `json:"mem_sha256"`
	StateSHA256       string            `json:"state_sha256"`
	StateBytes        int64             `json:"state_bytes"`
	BuiltAt           time.Time         `json:"built_at"`
	ColdBootMS        int64             `json:"cold_boot_ms"`
	BuildMS           int64             `json:"build_ms"`
	SnapshotMS        int64             `json:"snapshot_ms"`
}

// ImageInfo names the container image a template's root came from.
type ImageInfo struct {
	Ref string `json:"ref"` // as in the spec, with the path made absolute: "docker-archive:/srv/app.tar"
	ID  string `json:"id"`  // sha256 of the image's config: what the root image is keyed by
}

// HostParts are the host-side pieces a snapshot only restores into
// unchanged: the same kernel and initramfs, QEMU and acceleration.
type HostParts struct {
	Kernel      string `json:"kernel"`        // image.Kernel.CacheKey()
	Initramfs   string `json:"initramfs"`     // path, content-addressed
	QEMUVersion string `json:"qemu_version"`  // e.g. 7.2.22
	Accel       string `json:"accel"`         // kvm or tcg
	CPU         string `json:"cpu,omitempty"` // the -cpu model; "" (before it was recorded) means max
}

// normal fills what older manifests did not record ("" CPU was max).
func (hp HostParts) normal() HostParts {
	if hp.CPU == "" {
		hp.CPU = "max"
	}
	return hp
}

// hostParts reads the parts of h a bake depends on.
func hostParts(h *vm.Host) HostParts {
	return HostParts{Kernel: h.Kernel.CacheKey(), Initramfs: filepath.Base(h.Initrd),
		QEMUVersion: h.Driver.Version(), Accel: string(h.Accel.Accel), CPU: h.Driver.CPUModel(h.Accel.Accel)}
}

func bakeKey(specHash string, hp HostParts) string {
	parts := []string{bakeFormat, specHash, hp.Kernel, hp.Initramfs, hp.QEMUVersion, hp.Accel}
	if hp.CPU != "" && hp.CPU != "max" {
		parts = append(parts, hp.CPU) // bakes for the default model keep their keys
	}
	return image.KeyOf(parts...)
}

// Template is a baked template ready to restore from.
type Template struct {
	Manifest
	Dir string `json:"-"` // immutable directory holding mem, state and manifest.json
}

// MemPath is the RAM file clones map private.
func (t *Template) MemPath() string { return filepath.Join(t.Dir, memFile) }

// StatePath is the device state clones load.
func (t *Template) StatePath() string { return filepath.Join(t.Dir, stateFile) }

// BootOptions is the machine shape clones must be started with.
func (t *Template) BootOptions() vm.BootOptions {
	return vm.BootOptions{MemoryMiB: t.MemoryMiB, VCPUs: t.VCPUs, RootImage: t.RootImage,
		KernelArgs: t.KernelArgs, MemoryFile: t.MemPath(), MemoryPrivate: true}
}

// EnvList is the template's exec environment as KEY=VALUE pairs.
func (t *Template) EnvList() []string {
	keys := make([]string, 0, len(t.Env))
	for k := range t.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+t.Env[k])
	}
	return out
}

// Bake builds (or finds cached) the template for a resolved spec: root
// image, cold boot with RAM in a shared file, build steps, warm-up, then a
// snapshot of device state. An unchanged spec on an unchanged host is
// never rebuilt. A failed bake leaves nothing behind.
func (r *Registry) Bake(ctx context.Context, h *vm.Host, spec *Spec, progress image.Progress) (_ *Template, err error) {
	if !spec.Resolved() {
		return nil, errdefs.FailedPrecondition("template %s: spec not resolved", spec.Name)
	}
	specHash, err := spec.Hash()
	if err != nil {
		return nil, err
	}
	hp := hostParts(h)
	key := bakeKey(specHash, hp)
	final := filepath.Join(r.root, spec.Name, key)
	if t, err := r.load(final); err == nil {
		progress.Say("template %s: up to date (%s)", spec.Name, key)
		return t, r.setCurrent(spec.Name, key)
	}
	rootImage, err := BuildRootfs(ctx, spec, h.CacheDir, progress)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(r.root, spec.Name), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Join(r.root, spec.Name), ".bake-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	m := Manifest{Name: spec.Name, Key: key, SpecHash: specHash, Suite: spec.Suite, Source: spec.Source(),
		MemoryMiB: spec.MemoryMiB, VCPUs: spec.VCPUs,
		KernelArgs: spec.KernelArgs, DefaultTTLSeconds: spec.DefaultTTLSeconds, Host: hp,
		RootImage: rootImage}
	if err := execDefaults(spec, &m); err != nil {
		return nil, err
	}
	platformEnv(&m, hp)
	if m.RootImageSHA256, err = image.FileSHA256(rootImage); err != nil {
		return nil, err
	}
	if err := r.runBake(ctx, h, spec, tmp, &m, progress); err != nil {
		return nil, err
	}
	for _, f := range []string{memFile, stateFile} {
		// The bake's jailed VMM owned its memory file; a baked template
		// belongs to this process's user alone, and nobody writes it.
		if err := os.Lchown(filepath.Join(tmp, f), os.Geteuid(), os.Getegid()); err != nil {
			return nil, err
		}
		if err := os.Chmod(filepath.Join(tmp, f), 0o444); err != nil {
			return nil, err
		}
	}
	mb, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, manifestFile), mb, 0o444); err != nil {
		return nil, err
	}
	if err := image.Publish(tmp, final); err != nil {
		return nil, err
	}
	if err := r.setCurrent(spec.Name, key); err != nil {
		return nil, err
	}
	r.prune(spec.Name, key)
	return r.load(final)
}

// AccelEnv is the variable every exec in a sandbox finds its host's
// acceleration in ("kvm" or "tcg"): tools that pick a code path by CPU
// (tesseract's dot product, page time limits) read it. A bake records it,
// since a bake restores only on the same acceleration.
const AccelEnv = "AIRLOCK_ACCEL"

// platformEnv adds what the platform tells every exec to m's env (over
// the spec's own).
func platformEnv(m *Manifest, hp HostParts) {
	env := make(map[string]string, len(m.Env)+1)
	for k, v := range m.Env {
		env[k] = v
	}
	env[AccelEnv] = hp.Accel
	m.Env = env
}

// execDefaults fills m's packages, image, env and working directory:
// for a template from a container image, the image's Env and WorkingDir
// under the spec's env and workdir.
func execDefaults(spec *Spec, m *Manifest) error {
	m.Env, m.Workdir = spec.Env, spec.Workdir
	if !spec.Image.IsSet() {
		m.Packages = packageList(spec)
		return nil
	}
	si, err := openImage(spec.Image)
	if err != nil {
		return err
	}
	env, wd, err := si.execDefaults()
	if err != nil {
		return err
	}
	for k, v := range spec.Env {
		env[k] = v
	}
	if len(env) > 0 {
		m.Env = env
	}
	if m.Workdir == "" {
		m.Workdir = wd
	}
	m.Image = &ImageInfo{Ref: spec.Image.String(), ID: si.idString()}
	return nil
}

// Cwd is the working directory of execs that name none: the template's
// workdir, else /.
func (m *Manifest) Cwd() string {
	if m.Workdir == "" {
		return "/"
	}
	return m.Workdir
}

func (r *Registry) runBake(ctx context.Context, h *vm.Host, spec *Spec, dir string, m *Manifest, progress image.Progress) error {
	progress.Say("template %s: cold boot (%d MiB, %d vCPU, %s)", spec.Name, spec.MemoryMiB, spec.VCPUs, h.Accel.Accel)
	t0 := time.Now()
	v, err := h.Boot(ctx, vm.BootOptions{MemoryMiB: spec.MemoryMiB, VCPUs: spec.VCPUs, RootImage: m.RootImage,
		KernelArgs: spec.KernelArgs, MemoryFile: filepath.Join(dir, memFile), Timeout: 5 * time.Minute})
	if err != nil {
		return fmt.Errorf("template %s: cold boot: %w", spec.Name, err)
	}
	defer v.Destroy(context.Background())
	m.ColdBootMS = time.Since(t0).Milliseconds()
	t1 := time.Now()
	if err := runBakeSteps(ctx, v, spec, m, progress); err != nil {
		return err
	}
	m.BuildMS = time.Since(t1).Milliseconds()
	// The network is configured once, here, and not per clone: every
	// sandbox's guest has the same address behind its own namespace
	// (netpool), so the snapshot's configuration is right in any slot, and
	// a clone needs no in-guest network work before its first job. It runs
	// after the build steps so that no step can leave it changed.
	if err := v.ConfigureNetwork(ctx, netpool.Guest()); err != nil {
		return fmt.Errorf("template %s: %w", spec.Name, err)
	}
	t2 := time.Now()
	if err := v.SaveTemplate(ctx, filepath.Join(dir, stateFile)); err != nil {
		return fmt.Errorf("template %s: snapshot: %w", spec.Name, err)
	}
	m.SnapshotMS = time.Since(t2).Milliseconds()
	// The VM is paused; nothing more can touch the memory file. Kill it
	// before hashing so the hash is of the final bytes.
	if err := v.Destroy(ctx); err != nil {
		return err
	}
	if err := sealBake(dir, spec.Name, m, progress); err != nil {
		return err
	}
	m.BuiltAt = time.Now().UTC()
	progress.Say("template %s: baked (boot %d ms, build %d ms, snapshot %d ms, state %d bytes)",
		spec.Name, m.ColdBootMS, m.BuildMS, m.SnapshotMS, m.StateBytes)
	return nil
}

// bakeStep is one command run in the template's VM while it is baked.
type bakeStep struct {
	name string
	exec guest.ExecOptions
}

// bakeSteps lists a spec's build steps, then its warm-up (one shell
// script, then argv lists), in the order they run.
func bakeSteps(spec *Spec) []bakeStep {
	steps := make([]bakeStep, 0, len(spec.Build)+len(spec.WarmupExec)+1)
	for i, step := range spec.Build {
		steps = append(steps, bakeStep{fmt.Sprintf("build[%d]", i), guest.ExecOptions{Shell: step}})
	}
	if spec.Warmup != "" {
		steps = append(steps, bakeStep{"warmup", guest.ExecOptions{Shell: spec.Warmup}})
	}
	for i, argv := range spec.WarmupExec {
		steps = append(steps, bakeStep{fmt.Sprintf("warmup[%d]", i), guest.ExecOptions{Argv: argv}})
	}
	return steps
}

// runBakeSteps runs the spec's build and warm-up steps in v with the
// template's environment and working directory; any step that fails or
// times out fails the bake with the tail of its output.
func runBakeSteps(ctx context.Context, v *vm.VM, spec *Spec, m *Manifest, progress image.Progress) error {
	env := (&Template{Manifest: *m}).EnvList()
	steps := bakeSteps(spec)
	for i, st := range steps {
		progress.Say("template %s: step %d/%d: %s", spec.Name, i+1, len(steps), st.name)
		var out bytes.Buffer
		o := st.exec
		o.Env, o.Timeout, o.Cwd = env, stepTimeout, m.Cwd()
		res, err := v.Agent.Exec(ctx, o, &out, &out)
		if err != nil {
			return fmt.Errorf("template %s: %s: %w", spec.Name, st.name, err)
		}
		if res.ExitCode != 0 || res.TimedOut {
			timedOut := ""
			if res.TimedOut {
				timedOut = " (timed out)"
			}
			return errdefs.FailedPrecondition("template %s: %s exited %d%s: %s", spec.Name, st.name, res.ExitCode,
				timedOut, tail(out.String(), 2000))
		}
	}
	return nil
}

// sealBake finishes a baked template's files once its VM is gone: zero
// pages of the memory file become holes (every clone base and one-shot
// run copies only data extents), and the manifest records both files'
// hashes and the state file's size.
func sealBake(dir, name string, m *Manifest, progress image.Progress) error {
	punched, err := vm.PunchZeroPages(filepath.Join(dir, memFile))
	if err != nil {
		return fmt.Errorf("template %s: %w", name, err)
	}
	progress.Say("template %s: %d MiB of zero pages left out of the memory file", name, punched>>20)
	if m.MemSHA256, err = image.FileSHA256(filepath.Join(dir, memFile)); err != nil {
		return err
	}
	if m.StateSHA256, err = image.FileSHA256(filepath.Join(dir, stateFile)); err != nil {
		return err
	}
	fi, err := os.Stat(filepath.Join(dir, stateFile))
	if err != nil {
		return err
	}
	m.StateBytes = fi.Size()
	return nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

func validName(name string) bool { return nameRE.MatchString(name) }
